package table

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/blobshare/blobshare/storagehttp"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		host  string // "" is path-style (127.0.0.1:10002)
		path  string
		want  resourcePath
		error bool
	}{
		// Production-style hosts: the account from the host, the path
		// starts at the resource segment.
		{host: "acct.table.core.windows.net", path: "/", want: resourcePath{account: "acct", scope: scopeService}},
		{host: "acct.table.core.windows.net", path: "", want: resourcePath{account: "acct", scope: scopeService}},
		{host: "ACCT.table.core.windows.net:443", path: "/Tables", want: resourcePath{account: "acct", scope: scopeTables}},
		{host: "acct.table.localhost:10002", path: "/t1(PartitionKey='p',RowKey='r')", want: resourcePath{account: "acct", table: "t1", pk: "p", rk: "r", scope: scopeEntity}},
		{host: "acct.table.core.windows.net", path: "/$batch", want: resourcePath{account: "acct", scope: scopeBatch}},
		{host: "acct.table.core.windows.net", path: "/acct/t1", error: true},
		// Another service's host is path-style.
		{host: "acct.blob.core.windows.net", path: "/acct/t1", want: resourcePath{account: "acct", table: "t1", scope: scopeEntities}},
		{path: "/acct", want: resourcePath{account: "acct", scope: scopeService}},
		{path: "/acct/", want: resourcePath{account: "acct", scope: scopeService}},
		{path: "/acct/Tables", want: resourcePath{account: "acct", scope: scopeTables}},
		{path: "/acct/Tables()", want: resourcePath{account: "acct", scope: scopeTables}},
		{path: "/acct/Tables('My''Tab')", want: resourcePath{account: "acct", table: "My'Tab", scope: scopeTable}},
		{path: "/acct/Tables(%27abc%27)", want: resourcePath{account: "acct", table: "abc", scope: scopeTable}},
		{path: "/acct/$batch", want: resourcePath{account: "acct", scope: scopeBatch}},
		{path: "/acct/t1", want: resourcePath{account: "acct", table: "t1", scope: scopeEntities}},
		{path: "/acct/t1()", want: resourcePath{account: "acct", table: "t1", scope: scopeEntities}},
		{path: "/acct/t1(PartitionKey='p',RowKey='r')", want: resourcePath{account: "acct", table: "t1", pk: "p", rk: "r", scope: scopeEntity}},
		{path: "/acct/t1(RowKey='r',PartitionKey='p')", want: resourcePath{account: "acct", table: "t1", pk: "p", rk: "r", scope: scopeEntity}},
		{path: "/acct/t1(PartitionKey='',RowKey='')", want: resourcePath{account: "acct", table: "t1", scope: scopeEntity}},
		{path: "/acct/t1(PartitionKey=%27a%20b%27,RowKey=%27it''s%27)", want: resourcePath{account: "acct", table: "t1", pk: "a b", rk: "it's", scope: scopeEntity}},
		{path: "/acct/t1(PartitionKey='a,RowKey=b',RowKey='c)')", want: resourcePath{account: "acct", table: "t1", pk: "a,RowKey=b", rk: "c)", scope: scopeEntity}},
		{path: "/acct/t1(PartitionKey='%C3%A9',RowKey='%E2%82%AC')", want: resourcePath{account: "acct", table: "t1", pk: "é", rk: "€", scope: scopeEntity}},
		{path: "/acct/t1(PartitionKey='p')", error: true},
		{path: "/acct/t1(PartitionKey='p',PartitionKey='q')", error: true},
		{path: "/acct/t1(PartitionKey='p',RowKey='r'", error: true},
		{path: "/acct/t1(PartitionKey='p,RowKey='r')", error: true},
		{path: "/acct/t1(PartitionKey='p',RowKey='r')x", error: true},
		{path: "/acct/t1(PartitionKey=p,RowKey='r')", error: true},
		{path: "/acct/t1/extra", error: true},
		{path: "/acct/t1(PartitionKey='%ZZ',RowKey='r')", error: true},
		{path: "/acct/t1(PartitionKey='%FF',RowKey='r')", error: true},
		{path: "/acct/Tables('a'", error: true},
		{path: "/acct/Tables(a)", error: true},
		{path: "/acct/(PartitionKey='p',RowKey='r')", error: true},
		{path: "acct/t1", error: true},
		{path: "/acct/" + strings.Repeat("a", maxPathBytes), error: true},
	} {
		host := tc.host
		if host == "" {
			host = "127.0.0.1:10002"
		}
		got, err := parsePath(host, tc.path)
		if tc.error {
			var se *storagehttp.Error
			if !errors.As(err, &se) || se.Status != http.StatusBadRequest {
				t.Errorf("parsePath(%q, %q) = %+v, %v; want a 400", host, tc.path, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parsePath(%q, %q) = %+v, %v; want %+v", host, tc.path, got, err, tc.want)
		}
	}
}

// TestEntityPathRoundTrip: the paths the front end writes (odata.id,
// Location) parse back to the same keys.
func TestEntityPathRoundTrip(t *testing.T) {
	for _, k := range [][2]string{{"p", "r"}, {"", ""}, {"it's", "a''b"}, {"a b,c=d", "(x)"}, {"é€", "%41"}} {
		p, err := parsePath("", "/acct/"+entityPath("tab", k[0], k[1]))
		if err != nil || p.pk != k[0] || p.rk != k[1] || p.scope != scopeEntity || p.table != "tab" {
			t.Errorf("keys %q: parsed back as %+v, %v", k, p, err)
		}
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"/acct/t1(PartitionKey='p',RowKey='r')", "/acct/Tables('x')", "/acct/$batch", "/acct/t()",
		"/acct/t1(RowKey='a''b',PartitionKey='%27')", "/acct/t(PartitionKey='", "/a/Tables(''')"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		p, err := parsePath("", path)
		if err != nil {
			var se *storagehttp.Error
			if !errors.As(err, &se) || se.Status != http.StatusBadRequest {
				t.Fatalf("parsePath(%q): %v, want a 400", path, err)
			}
			return
		}
		if p.scope == scopeEntity {
			if !utf8.ValidString(p.pk) || !utf8.ValidString(p.rk) {
				t.Fatalf("parsePath(%q): keys not UTF-8", path)
			}
			// What the front end writes for these keys parses back to them.
			q, err := parsePath("", "/acct/"+entityPath(p.table, p.pk, p.rk))
			if err != nil || q.pk != p.pk || q.rk != p.rk || q.table != p.table {
				t.Fatalf("keys of %q do not round-trip: %+v, %v", path, q, err)
			}
		}
	})
}
