package blob_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	blobsrv "github.com/blobshare/blobshare/blob"
	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/sqlstore"
)

// tokenCred hands out an unsigned JWT for oid in tenant tid, valid around
// the clock's now (what --oauth basic checks: issuer, audience, lifetime).
type tokenCred struct {
	clock    *fakeClock
	oid, tid string
}

func (c tokenCred) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	now := c.clock.Now()
	part := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	tok := part(map[string]any{"alg": "none", "typ": "JWT"}) + "." + part(map[string]any{
		"iss": "https://sts.windows.net/" + c.tid + "/", "aud": "https://storage.azure.com",
		"oid": c.oid, "tid": c.tid, "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
	}) + ".unsigned"
	return azcore.AccessToken{Token: tok, ExpiresOn: now.Add(time.Hour)}, nil
}

// oauthEnv is a Blob service over TLS with --oauth basic (as serve runs
// it), on a settable clock, with its own data directory; key is the
// account key (several envs may share a data directory and a key).
type oauthEnv struct {
	url    string
	srv    *httptest.Server
	client *http.Client
	clock  *fakeClock
}

func newOAuthEnv(t *testing.T, clock *fakeClock, dir, key string) *oauthEnv {
	t.Helper()
	meta, err := sqlstore.Open(context.Background(), filepath.Join(dir, sqlstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	content, err := local.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := blobsrv.New(blobsrv.Config{Service: blobsvc.New(meta, content, clock.Now), Key: key, OAuth: true, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(h)
	t.Cleanup(func() {
		srv.Close()
		meta.Close()
	})
	// Production-style URLs, as on Azure: the SDK takes the account for a
	// user delegation SAS from the host's first label. Every connection
	// goes to the test server, whose certificate names example.com.
	tr := srv.Client().Transport.(*http.Transport).Clone()
	addr := srv.Listener.Addr().String()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	tr.TLSClientConfig.ServerName = "example.com"
	_, port, _ := net.SplitHostPort(addr)
	return &oauthEnv{url: "https://" + blobsrv.DevAccount + ".blob.localhost:" + port, srv: srv,
		client: &http.Client{Transport: tr}, clock: clock}
}

func (e *oauthEnv) opts() policy.ClientOptions {
	return policy.ClientOptions{Transport: e.client, Retry: policy.RetryOptions{MaxRetries: -1}}
}

func (e *oauthEnv) service(t *testing.T, cred azcore.TokenCredential) *service.Client {
	t.Helper()
	c, err := service.NewClient(e.url+"/", cred, &service.ClientOptions{ClientOptions: e.opts()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sasBlob is a client for container/name with the SAS query q and no
// credential of its own (cred nil) or a bearer token as well.
func (e *oauthEnv) sasBlob(t *testing.T, container, name, q string, cred azcore.TokenCredential) *blockblob.Client {
	t.Helper()
	u := e.url + "/" + container + "/" + name + "?" + q
	var c *blockblob.Client
	var err error
	if cred != nil {
		c, err = blockblob.NewClient(u, cred, &blockblob.ClientOptions{ClientOptions: e.opts()})
	} else {
		c, err = blockblob.NewClientWithNoCredential(u, &blockblob.ClientOptions{ClientOptions: e.opts()})
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const (
	udTenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
	udOid    = "aaaaaaaa-0000-0000-0000-000000000001"
)

// keyInfo is a Get User Delegation Key body from start for life.
func keyInfo(start time.Time, life time.Duration) service.KeyInfo {
	return service.KeyInfo{Start: to.Ptr(start.UTC().Format(sas.TimeFormat)), Expiry: to.Ptr(start.Add(life).UTC().Format(sas.TimeFormat))}
}

// TestGetUserDelegationKey: only a bearer token gets a key; the answer
// names the token's oid and tid, the Blob service and the times asked;
// an expiry more than seven days ahead, or not after the start, is 400
// InvalidXmlNodeValue; a delegated user tenant other than the token's is
// 403 AuthenticationFailed.
func TestGetUserDelegationKey(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	e := newOAuthEnv(t, clock, t.TempDir(), blobsrv.DevKey)
	svc := e.service(t, tokenCred{clock: clock, oid: udOid, tid: udTenant})
	now := clock.Now()

	udc, err := svc.GetUserDelegationCredential(ctx, keyInfo(now, time.Hour), nil)
	if err != nil {
		t.Fatalf("with a bearer token: %v", err)
	}
	if udc == nil {
		t.Fatal("no credential")
	}

	// The raw answer: fields as Azure names them.
	req, _ := http.NewRequest(http.MethodPost, e.url+"/?restype=service&comp=userdelegationkey",
		strings.NewReader("<KeyInfo><Start>"+now.Format(sas.TimeFormat)+"</Start><Expiry>"+now.Add(time.Hour).Format(sas.TimeFormat)+"</Expiry></KeyInfo>"))
	tok, _ := tokenCred{clock: clock, oid: udOid, tid: udTenant}.GetToken(ctx, policy.TokenRequestOptions{})
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	req.Header.Set("x-ms-version", "2025-11-05")
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	for _, want := range []string{"<SignedOid>" + udOid + "</SignedOid>", "<SignedTid>" + udTenant + "</SignedTid>",
		"<SignedStart>" + now.Format(sas.TimeFormat) + "</SignedStart>",
		"<SignedExpiry>" + now.Add(time.Hour).Format(sas.TimeFormat) + "</SignedExpiry>",
		"<SignedService>b</SignedService>", "<SignedVersion>2025-11-05</SignedVersion>", "<Value>"} {
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Fatalf("answer %d %s: want %s", resp.StatusCode, body, want)
		}
	}

	shared := newEnvClientFor(t, e)
	for _, tt := range []struct {
		name string
		svc  *service.Client
		info service.KeyInfo
		code string
	}{
		{"SharedKey", shared, keyInfo(now, time.Hour), "AuthenticationFailed"},
		{"expiry beyond seven days", svc, keyInfo(now, 7*24*time.Hour+time.Hour), "InvalidXmlNodeValue"},
		{"expiry before start", svc, keyInfo(now, -time.Minute), "InvalidXmlNodeValue"},
		{"another tenant's delegated user", svc, func() service.KeyInfo {
			k := keyInfo(now, time.Hour)
			k.DelegatedUserTenantID = to.Ptr("00000000-0000-0000-0000-000000000000")
			return k
		}(), "AuthenticationFailed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.svc.GetUserDelegationCredential(ctx, tt.info, nil); code(err) != tt.code {
				t.Fatalf("got %v, want %s", err, tt.code)
			}
		})
	}
}

// newEnvClientFor is a SharedKey service client for e.
func newEnvClientFor(t *testing.T, e *oauthEnv) *service.Client {
	t.Helper()
	cred, err := service.NewSharedKeyCredential(blobsrv.DevAccount, blobsrv.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := service.NewClientWithSharedKeyCredential(e.url+"/", cred, &service.ClientOptions{ClientOptions: e.opts()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// TestUserDelegationSAS: a SAS signed with a user delegation key is
// accepted within its permissions, by any server with the account key
// (nothing is stored per key) and by no server with another key; the
// key's expiry ends the SAS even before the SAS's own; sduoid requires
// the named user's bearer token; signed request headers (srh) must be
// sent as signed; a create-only SAS cannot overwrite (403
// UnauthorizedBlobOverwrite).
func TestUserDelegationSAS(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	dir := t.TempDir()
	e := newOAuthEnv(t, clock, dir, blobsrv.DevKey)
	other := newOAuthEnv(t, clock, dir, blobsrv.DevKey) // another process on the same data
	const otherKey = "b3RoZXIga2V5IG90aGVyIGtleSBvdGhlciBrZXkgb3RoZXIga2V5IG90aGVyIGtleQ=="
	foreign := newOAuthEnv(t, clock, t.TempDir(), otherKey)
	user := tokenCred{clock: clock, oid: udOid, tid: udTenant}
	svc := e.service(t, user)
	if _, err := svc.CreateContainer(ctx, "docs", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.NewContainerClient("docs").NewBlockBlobClient("a.txt").UploadBuffer(ctx, []byte("hello"), nil); err != nil {
		t.Fatal(err)
	}
	now := clock.Now()
	udc, err := svc.GetUserDelegationCredential(ctx, keyInfo(now.Add(-time.Minute), time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(v sas.BlobSignatureValues) string {
		t.Helper()
		v.Protocol = sas.ProtocolHTTPS
		v.StartTime, v.ExpiryTime = now.Add(-time.Minute), now.Add(24*time.Hour) // beyond the key's hour
		v.ContainerName = "docs"
		q, err := v.SignWithUserDelegation(udc)
		if err != nil {
			t.Fatal(err)
		}
		return q.Encode()
	}
	read := sign(sas.BlobSignatureValues{Permissions: (&sas.ContainerPermissions{Read: true}).String()})

	for _, tt := range []struct {
		name string
		env  *oauthEnv
		code string // "" success
	}{
		{"same server", e, ""},
		{"another server with the account key", other, ""},
		{"a server with another account key", foreign, "AuthenticationFailed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.env.sasBlob(t, "docs", "a.txt", read, nil).GetProperties(ctx, nil)
			if code(err) != tt.code && !(tt.code == "" && err == nil) {
				t.Fatalf("got %v, want %q", err, tt.code)
			}
		})
	}
	if _, err := e.sasBlob(t, "docs", "b.txt", read, nil).UploadBuffer(ctx, []byte("x"), nil); code(err) != "AuthorizationPermissionMismatch" {
		t.Fatalf("write with a read SAS: %v", err)
	}
	// A tampered key field (another oid) no longer matches the signature.
	if _, err := e.sasBlob(t, "docs", "a.txt", strings.Replace(read, "skoid="+udOid, "skoid=bbbbbbbb-0000-0000-0000-000000000002", 1), nil).GetProperties(ctx, nil); code(err) != "AuthenticationFailed" {
		t.Fatalf("tampered skoid: %v", err)
	}

	// sduoid: the SAS is for one user, who must present a token too.
	delegated := sign(sas.BlobSignatureValues{Permissions: (&sas.ContainerPermissions{Read: true}).String(), SignedDelegatedUserObjectID: udOid})
	for _, tt := range []struct {
		name string
		cred azcore.TokenCredential
		code string
	}{
		{"no token", nil, "AuthenticationFailed"},
		{"another user's token", tokenCred{clock: clock, oid: "cccccccc-0000-0000-0000-000000000003", tid: udTenant}, "AuthenticationFailed"},
		{"the user's token", user, ""},
	} {
		t.Run("sduoid/"+tt.name, func(t *testing.T) {
			_, err := e.sasBlob(t, "docs", "a.txt", delegated, tt.cred).GetProperties(ctx, nil)
			if code(err) != tt.code && !(tt.code == "" && err == nil) {
				t.Fatalf("got %v, want %q", err, tt.code)
			}
		})
	}

	// srh: the signed header must arrive with the signed value.
	withHeader := sign(sas.BlobSignatureValues{Permissions: (&sas.ContainerPermissions{Read: true}).String(),
		SignedRequestHeaders: map[string]string{"x-app": "reports"}})
	for _, tt := range []struct {
		name, value, code string
	}{
		{"missing", "", "AuthenticationFailed"},
		{"other value", "other", "AuthenticationFailed"},
		{"as signed", "reports", ""},
	} {
		t.Run("srh/"+tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodHead, e.url+"/docs/a.txt?"+withHeader, nil)
			req.Header.Set("x-ms-version", "2026-12-06")
			if tt.value != "" {
				req.Header.Set("x-app", tt.value)
			}
			resp, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.Header.Get("x-ms-error-code"); got != tt.code {
				t.Fatalf("%d %q, want %q", resp.StatusCode, got, tt.code)
			}
		})
	}

	// Create without write: a new blob, never an overwrite.
	create := sign(sas.BlobSignatureValues{Permissions: (&sas.ContainerPermissions{Create: true}).String()})
	if _, err := e.sasBlob(t, "docs", "new.txt", create, nil).UploadBuffer(ctx, []byte("new"), nil); err != nil {
		t.Fatalf("create-only SAS, new blob: %v", err)
	}
	if _, err := e.sasBlob(t, "docs", "a.txt", create, nil).UploadBuffer(ctx, []byte("over"), nil); code(err) != "UnauthorizedBlobOverwrite" {
		t.Fatalf("create-only SAS, existing blob: %v", err)
	}

	// The key's expiry (an hour) ends the SAS (a day) early.
	clock.Advance(2 * time.Hour)
	if _, err := e.sasBlob(t, "docs", "a.txt", read, nil).GetProperties(ctx, nil); code(err) != "AuthenticationFailed" {
		t.Fatalf("after the key expired: %v", err)
	}
}
