package table

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/storagehttp"
)

// sampleBatch is a change set as the SDKs write it (absolute URLs, CRLF).
const sampleBatch = "--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_1\r\n\r\n" +
	"--changeset_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
	"POST http://127.0.0.1:10002/acct/tab HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n" +
	"{\"PartitionKey\":\"p\",\"RowKey\":\"a\",\"N\":1}\r\n" +
	"--changeset_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
	"DELETE http://127.0.0.1:10002/acct/tab(PartitionKey='p',RowKey='b') HTTP/1.1\r\nIf-Match: *\r\n\r\n\r\n" +
	"--changeset_1\r\nContent-Type: application/http\r\n\r\n" +
	"POST http://127.0.0.1:10002/acct/tab(PartitionKey='p',RowKey='c') HTTP/1.1\r\nX-HTTP-Method: MERGE\r\n\r\n{\"M\":true}\r\n" +
	"--changeset_1--\r\n--batch_1--\r\n"

func batchRequest(body string) *http.Request {
	r := httptest.NewRequest("POST", "/acct/$batch", strings.NewReader(body))
	r.Header.Set("Content-Type", "multipart/mixed; boundary=batch_1")
	return r
}

func TestReadBatch(t *testing.T) {
	for name, body := range map[string]string{"CRLF": sampleBatch, "LF": strings.ReplaceAll(sampleBatch, "\r\n", "\n")} {
		parts, query, err := readBatch(batchRequest(body), "acct")
		if err != nil || query || len(parts) != 3 {
			t.Fatalf("%s: %d parts, query %v, %v", name, len(parts), query, err)
		}
		if p := parts[0]; p.method != "POST" || p.path.scope != scopeEntities || p.path.table != "tab" ||
			p.header.Get("Prefer") != "return-no-content" || string(p.body) != `{"PartitionKey":"p","RowKey":"a","N":1}` {
			t.Errorf("%s: part 0 %+v body %q", name, p, p.body)
		}
		if p := parts[1]; p.method != "DELETE" || p.path.pk != "p" || p.path.rk != "b" || p.header.Get("If-Match") != "*" || len(p.body) != 0 {
			t.Errorf("%s: part 1 %+v", name, p)
		}
		if p := parts[2]; p.method != "MERGE" || p.path.rk != "c" || string(p.body) != `{"M":true}` {
			t.Errorf("%s: part 2 %+v", name, p)
		}
	}
}

func TestReadBatchRefuses(t *testing.T) {
	op := "--changeset_1\r\nContent-Type: application/http\r\n\r\nDELETE http://h/acct/tab(PartitionKey='p',RowKey='%d') HTTP/1.1\r\nIf-Match: *\r\n\r\n\r\n"
	var many strings.Builder
	many.WriteString("--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_1\r\n\r\n")
	for range 101 {
		many.WriteString(op)
	}
	many.WriteString("--changeset_1--\r\n--batch_1--\r\n")
	for _, tc := range []struct {
		name, body string
		index      int // -1: a top-level error
	}{
		{"truncated", sampleBatch[:len(sampleBatch)/2], -1},
		{"empty", "", -1},
		{"no change set", "--batch_1\r\nContent-Type: text/plain\r\n\r\nhello\r\n--batch_1--\r\n", -1},
		{"empty change set", "--batch_1\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c--\r\n--batch_1--\r\n", -1},
		{"two change sets", strings.Replace(sampleBatch, "--batch_1--", "--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_1\r\n\r\n--changeset_1--\r\n--batch_1--", 1), -1},
		{"101 operations", many.String(), 0},
		{"bad request line", strings.Replace(sampleBatch, "DELETE http", "DELETEhttp", 1), 1},
		{"other account", strings.Replace(sampleBatch, "/acct/tab(PartitionKey='p',RowKey='b')", "/other/tab(PartitionKey='p',RowKey='b')", 1), 1},
		{"bad key path", strings.Replace(sampleBatch, "RowKey='b')", "RowKey='b'", 1), 1},
		{"tunnel on DELETE", strings.Replace(sampleBatch, "If-Match: *\r\n", "If-Match: *\r\nX-HTTP-Method: MERGE\r\n", 1), 1},
	} {
		_, _, err := readBatch(batchRequest(tc.body), "acct")
		var oe *opError
		var se *storagehttp.Error
		switch {
		case tc.index < 0 && (errors.As(err, &oe) || !errors.As(err, &se) || se.Status != 400):
			t.Errorf("%s: %v, want a top-level 400", tc.name, err)
		case tc.index >= 0 && (!errors.As(err, &oe) || oe.index != tc.index || toError(oe.err).Status != 400):
			t.Errorf("%s: %v, want a 400 of operation %d", tc.name, err, tc.index)
		}
	}
}

func FuzzReadBatch(f *testing.F) {
	f.Add(sampleBatch)
	f.Add(strings.ReplaceAll(sampleBatch, "\r\n", "\n"))
	f.Add("--batch_1\r\nContent-Type: application/http\r\n\r\nGET http://h/acct/tab(PartitionKey='p',RowKey='r') HTTP/1.1\r\n\r\n--batch_1--")
	f.Add("--batch_1\r\n\r\n--batch_1--")
	f.Fuzz(func(t *testing.T, body string) {
		r := batchRequest(body)
		r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 1<<16)
		parts, _, err := readBatch(r, "acct")
		if err != nil {
			var oe *opError
			if errors.As(err, &oe) {
				err = oe.err
				if oe.index < 0 || oe.index >= maxBatchOps {
					t.Fatalf("failing index %d", oe.index)
				}
			}
			if e := toError(err); e.Status < 400 || e.Status >= 500 {
				t.Fatalf("readBatch: %v answers %d", err, e.Status)
			}
			return
		}
		if len(parts) == 0 || len(parts) > maxBatchOps {
			t.Fatalf("%d parts", len(parts))
		}
		for _, p := range parts {
			if p.path.account != "acct" || (p.path.scope != scopeEntities && p.path.scope != scopeEntity) || p.target == nil ||
				bytes.Contains([]byte(p.method), []byte(" ")) {
				t.Fatalf("part %+v", p)
			}
		}
	})
}
