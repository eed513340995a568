package storeurl

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/azure"
	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
	"github.com/blobshare/blobshare/blobstore/local"
)

func noEnv(string) string { return "" }

func TestOpenLocal(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, url, data, wantDir string
	}{
		{"Default", "", data, filepath.Join(data, "blobs")},
		{"FileURL", "file://" + dir + "/a", "", filepath.Join(dir, "a")},
		{"Localhost", "file://localhost" + dir + "/b", "", filepath.Join(dir, "b")},
		{"Unclean", "file://" + dir + "/c/../d/", "", filepath.Join(dir, "d")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := OpenEnv(ctx, tc.url, tc.data, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			ls, ok := s.(*local.Store)
			if !ok {
				t.Fatalf("Open(%q) = %T, want *local.Store", tc.url, s)
			}
			if ls.Dir() != tc.wantDir {
				t.Fatalf("Open(%q) dir %s, want %s", tc.url, ls.Dir(), tc.wantDir)
			}
		})
	}
}

func TestOpenBadURLs(t *testing.T) {
	for _, raw := range []string{
		"s3://bucket/x",
		"file://relative/dir",
		"file:relative",
		"file:///abs?x=1",
		"azure://",
		"azure://acct",
		"azure://acct/",
		"azure://acct/a/b",
		"azure://acct/cont?endpoint=ftp://x&key=k",
		"azure://acct/cont?endpoint=",
		"azure://acct/cont?key=k&typo=1",
		"azure://acct/cont?key=k&key=j",
		"azure://acct/cont", // no credentials anywhere
		"azure://user@acct/cont?key=k",
		"::nonsense",
	} {
		_, err := OpenEnv(context.Background(), raw, "", noEnv)
		if !errors.Is(err, ErrBadURL) {
			t.Errorf("Open(%q) = %v, want ErrBadURL", raw, err)
		}
	}
	if _, err := OpenEnv(context.Background(), "", "", noEnv); !errors.Is(err, ErrBadURL) {
		t.Errorf("Open with no URL and no data dir = %v, want ErrBadURL", err)
	}
}

func TestKeyRedacted(t *testing.T) {
	_, err := OpenEnv(context.Background(), "azure://acct/cont?key=supersecret&bogus=1", "", noEnv)
	if err == nil || strings.Contains(err.Error(), "supersecret") {
		t.Fatalf("error %v shows the key", err)
	}
}

func TestAzureConfig(t *testing.T) {
	const cs = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=k1;"
	for _, tc := range []struct {
		name, url string
		env       map[string]string
		want      azure.Config
		wantErr   bool
	}{
		{"KeyParam", "azure://acct/cont?key=k0", nil, azure.Config{Account: "acct", Container: "cont", Key: "k0"}, false},
		{"KeyEnv", "azure://acct/cont?endpoint=http://127.0.0.1:10000/acct/", map[string]string{EnvKey: "k2"},
			azure.Config{Account: "acct", Container: "cont", Key: "k2", Endpoint: "http://127.0.0.1:10000/acct"}, false},
		{"ParamBeatsEnv", "azure://acct/cont?key=k0", map[string]string{EnvKey: "k2"}, azure.Config{Account: "acct", Container: "cont", Key: "k0"}, false},
		{"ConnString", "azure://devstoreaccount1/cont", map[string]string{EnvConnectionString: cs},
			azure.Config{Account: "devstoreaccount1", Container: "cont", ConnectionString: cs}, false},
		{"ConnStringPlusEndpoint", "azure://devstoreaccount1/cont?endpoint=http://h:1/devstoreaccount1", map[string]string{EnvConnectionString: cs},
			azure.Config{Account: "devstoreaccount1", Container: "cont", Endpoint: "http://h:1/devstoreaccount1",
				ConnectionString: cs + "BlobEndpoint=http://h:1/devstoreaccount1"}, false},
		{"ConnStringOtherAccount", "azure://other/cont", map[string]string{EnvConnectionString: cs}, azure.Config{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			got, err := AzureConfig(u, func(k string) string { return tc.env[k] })
			if tc.wantErr {
				if !errors.Is(err, ErrBadURL) {
					t.Fatalf("AzureConfig(%q) = %v, want ErrBadURL", tc.url, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("AzureConfig(%q) =\n%+v\nwant\n%+v", tc.url, got, tc.want)
			}
		})
	}
}

// TestOpenAzurite opens a real Azurite container through a URL and round
// trips a blob.
func TestOpenAzurite(t *testing.T) {
	srv := azuritetest.Start(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		url  string
		env  map[string]string
	}{
		{"KeyEnv", "azure://" + srv.Account + "/viaurl?endpoint=" + srv.Endpoint, map[string]string{EnvKey: srv.Key}},
		{"ConnString", "azure://" + srv.Account + "/viaconn", map[string]string{EnvConnectionString: srv.ConnectionString}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := OpenEnv(ctx, tc.url, "", func(k string) string { return tc.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := s.(*azure.Store); !ok {
				t.Fatalf("Open = %T, want *azure.Store", s)
			}
			if _, err := blobstore.Put(ctx, s, "k/1", strings.NewReader("hello"), 0, blobstore.Conditions{}); err != nil {
				t.Fatal(err)
			}
			info, err := s.Stat(ctx, "k/1")
			if err != nil || info.Size != 5 {
				t.Fatalf("Stat = %+v, %v", info, err)
			}
		})
	}
}
