package table_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/blobshare/blobshare/table"
	"github.com/blobshare/blobshare/tablesvc"
	"github.com/blobshare/blobshare/tablesvc/sqlstore"
)

// FuzzTableRequest sends arbitrary methods, paths, queries, If-Match
// values and bodies to the whole handler (authentication off, a real
// SQLite store holding a table and an entity): never a 5xx, and every
// error answer carries an error code.
func FuzzTableRequest(f *testing.F) {
	store, err := sqlstore.Open(context.Background(), filepath.Join(f.TempDir(), sqlstore.FileName))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { store.Close() })
	svc := tablesvc.New(store, nil)
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, "fuzz"); err != nil {
		f.Fatal(err)
	}
	e, err := svc.Apply(ctx, "fuzz", tablesvc.Op{Kind: tablesvc.Insert, Entity: tablesvc.Entity{PartitionKey: "p", RowKey: "r"}})
	if err != nil {
		f.Fatal(err)
	}
	h, err := table.New(table.Config{Service: svc, DisableAuth: true})
	if err != nil {
		f.Fatal(err)
	}
	key := "/devstoreaccount1/fuzz(PartitionKey='p',RowKey='r')"
	for _, s := range []struct {
		method, path, query, ifMatch, body string
	}{
		{"POST", "/devstoreaccount1/Tables", "", "", `{"TableName":"other"}`},
		{"GET", "/devstoreaccount1/Tables", "$filter=TableName%20ge%20'a'&$top=1&NextTableName=f", "", ""},
		{"DELETE", "/devstoreaccount1/Tables('other')", "", "", ""},
		{"POST", "/devstoreaccount1/fuzz", "", "", `{"PartitionKey":"p","RowKey":"n","L@odata.type":"Edm.Int64","L":"5"}`},
		{"GET", "/devstoreaccount1/fuzz()", "$filter=PartitionKey%20eq%20'p'%20and%20L%20gt%203L&$select=L&$top=2", "", ""},
		{"GET", "/devstoreaccount1/fuzz()", "NextPartitionKey=cA%3D%3D&NextRowKey=cg%3D%3D", "", ""},
		{"GET", key, "$format=application/json;odata=fullmetadata", "", ""},
		{"PUT", key, "", e.ETag(), `{"A":"b"}`},
		{"MERGE", key, "", "*", `{"B@odata.type":"Edm.Guid","B":"00000000-0000-0000-0000-000000000000"}`},
		{"PATCH", key, "", "", `{"C":1.5}`},
		{"DELETE", key, "", "garbage", ""},
		{"PUT", "/devstoreaccount1/fuzz", "comp=acl", "", `<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`},
		{"PUT", "/devstoreaccount1/", "restype=service&comp=properties", "", `<StorageServiceProperties><Cors/></StorageServiceProperties>`},
		{"POST", "/devstoreaccount1/$batch", "", "", "--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\nDELETE http://h" + key + " HTTP/1.1\r\nIf-Match: *\r\n\r\n\r\n--c--\r\n--b--\r\n"},
	} {
		f.Add(s.method, s.path, s.query, s.ifMatch, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, path, query, ifMatch string, body []byte) {
		switch method {
		case "GET", "PUT", "POST", "DELETE", "MERGE", "PATCH", "HEAD":
		default:
			return
		}
		if len(path) == 0 || path[0] != '/' {
			return
		}
		u := &url.URL{Path: path, RawQuery: query}
		req, err := http.NewRequest(method, "http://127.0.0.1"+u.RequestURI(), bytes.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		req.Header.Set("x-ms-version", "2019-02-02")
		req.Header.Set("Content-Type", "application/json")
		if method == "POST" && bytes.HasPrefix(body, []byte("--b")) {
			req.Header.Set("Content-Type", "multipart/mixed; boundary=b")
		}
		if ifMatch != "" {
			req.Header.Set("If-Match", ifMatch)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s?%s If-Match %q %q: %d %s", method, path, query, ifMatch, body, w.Code, w.Body)
		}
		if w.Code >= 400 && w.Header().Get("x-ms-error-code") == "" {
			t.Fatalf("%s %s?%s %q: %d without an error code", method, path, query, body, w.Code)
		}
	})
}
