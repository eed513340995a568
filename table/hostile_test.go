package table_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestWireCases: requests an SDK would not send, each with the documented
// answer (table.md §1, §4, §6, §10), and never a 5xx.
func TestWireCases(t *testing.T) {
	e := newEnv(t, nil)
	raw := newRawClient(t, e.URL)
	if r := raw.do(t, "POST", "/Tables", jsonHeaders(), []byte(`{"TableName":"wire"}`)); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	ins := raw.do(t, "POST", "/wire", jsonHeaders(), []byte(`{"PartitionKey":"p","RowKey":"r","A":"x"}`))
	if ins.Status != 201 || ins.Header.Get("ETag") == "" || ins.Header.Get("Preference-Applied") != "" {
		t.Fatalf("insert: %d %v %s", ins.Status, ins.Header, ins.Body)
	}
	var body map[string]any
	if err := json.Unmarshal(ins.Body, &body); err != nil || body["odata.etag"] != ins.Header.Get("ETag") {
		t.Fatalf("insert body %s: odata.etag must equal ETag %q", ins.Body, ins.Header.Get("ETag"))
	}
	etag := ins.Header.Get("ETag")
	key := "/wire(PartitionKey='p',RowKey='r')"
	big := strings.Repeat("x", 32768)
	for _, tc := range []struct {
		name, method, path string
		header             http.Header
		body               string
		status             int
		code               string
	}{
		{"insert return-no-content", "POST", "/wire", jsonHeaders("Prefer", "return-no-content"), `{"PartitionKey":"p","RowKey":"n1"}`, 204, ""},
		{"insert return-content", "POST", "/wire", jsonHeaders("Prefer", "return-content"), `{"PartitionKey":"p","RowKey":"n2"}`, 201, ""},
		{"insert existing", "POST", "/wire", jsonHeaders(), `{"PartitionKey":"p","RowKey":"r"}`, 409, "EntityAlreadyExists"},
		{"insert without RowKey", "POST", "/wire", jsonHeaders(), `{"PartitionKey":"p"}`, 400, "PropertiesNeedValue"},
		{"insert into a missing table", "POST", "/nosuch", jsonHeaders(), `{"PartitionKey":"p","RowKey":"r"}`, 404, "TableNotFound"},
		{"bad table name", "POST", "/ab", jsonHeaders(), `{"PartitionKey":"p","RowKey":"r"}`, 400, "OutOfRangeInput"},
		{"key with #", "PUT", "/wire(PartitionKey='a%23b',RowKey='r')", jsonHeaders(), `{}`, 400, "OutOfRangeInput"},
		{"key of 2 KiB", "PUT", "/wire(PartitionKey='" + strings.Repeat("k", 2048) + "',RowKey='r')", jsonHeaders(), `{}`, 400, "PropertyValueTooLarge"},
		{"string of 32,769 units", "POST", "/wire", jsonHeaders(), `{"PartitionKey":"p","RowKey":"big","S":"` + big + `x"}`, 400, "PropertyValueTooLarge"},
		{"entity over 1 MiB", "POST", "/wire", jsonHeaders(), `{"PartitionKey":"p","RowKey":"huge"` + strings.Repeat(`,"S`+"%d"+`":"`+big+`"`, 17) + `}`, 400, "EntityTooLarge"},
		{"nested object", "POST", "/wire", jsonHeaders(), `{"PartitionKey":"p","RowKey":"o","A":{"b":1}}`, 400, "InvalidInput"},
		{"malformed JSON", "POST", "/wire", jsonHeaders(), `{"PartitionKey":"p",`, 400, "InvalidInput"},
		{"Int64 that is not a number", "POST", "/wire", jsonHeaders(), `{"PartitionKey":"p","RowKey":"i","N@odata.type":"Edm.Int64","N":"abc"}`, 400, "InvalidInput"},
		{"Atom body", "POST", "/wire", jsonHeaders("Content-Type", "application/atom+xml"), `<entry/>`, 415, "AtomFormatNotSupported"},
		{"Atom accepted", "GET", key, jsonHeaders("Accept", "application/atom+xml"), "", 415, "AtomFormatNotSupported"},
		{"update stale", "PUT", key, jsonHeaders("If-Match", `W/"datetime'2015-01-01T00%3A00%3A00.0000000Z'"`), `{"A":"y"}`, 412, "UpdateConditionNotSatisfied"},
		{"update W/wrong", "PUT", key, jsonHeaders("If-Match", `W/"wrong"`), `{"A":"y"}`, 412, "UpdateConditionNotSatisfied"},
		{"update garbage If-Match", "PUT", key, jsonHeaders("If-Match", "garbage"), `{"A":"y"}`, 400, "InvalidInput"},
		{"merge garbage If-Match", "MERGE", key, jsonHeaders("If-Match", "garbage"), `{"A":"y"}`, 400, "InvalidInput"},
		{"If-None-Match on PUT", "PUT", key, jsonHeaders("If-None-Match", "*"), `{"A":"y"}`, 400, "InvalidInput"},
		{"If-Match and If-None-Match", "PUT", key, jsonHeaders("If-Match", "*", "If-None-Match", "*"), `{"A":"y"}`, 400, "InvalidInput"},
		{"delete without If-Match", "DELETE", key, jsonHeaders(), "", 400, "MissingRequiredHeader"},
		{"If-Match on a missing entity", "PUT", "/wire(PartitionKey='p',RowKey='nope')", jsonHeaders("If-Match", "*"), `{}`, 404, "ResourceNotFound"},
		{"X-HTTP-Method on GET", "GET", key, jsonHeaders("X-HTTP-Method", "MERGE"), "", 400, "XMethodNotUsingPost"},
		{"X-HTTP-Method twice", "POST", key, http.Header{"X-Http-Method": {"MERGE", "DELETE"}, "Content-Type": {"application/json"}}, `{}`, 400, "XMethodIncorrectCount"},
		{"X-HTTP-Method GET", "POST", key, jsonHeaders("X-HTTP-Method", "GET"), `{}`, 400, "XMethodIncorrectValue"},
		{"tunnelled merge", "POST", key, jsonHeaders("X-HTTP-Method", "MERGE", "If-Match", "*"), `{"B":"b"}`, 204, ""},
		{"deep $filter", "GET", "/wire()?$filter=" + strings.Repeat("(", 5000) + "A%20eq%20'x'" + strings.Repeat(")", 5000), jsonHeaders(), "", 400, "InvalidInput"},
		{"16 comparisons", "GET", "/wire()?$filter=" + strings.TrimSuffix(strings.Repeat("A%20eq%20'x'%20or%20", 16), "%20or%20"), jsonHeaders(), "", 400, "InvalidInput"},
		{"$top 0", "GET", "/wire()?$top=0", jsonHeaders(), "", 400, "InvalidInput"},
		{"$top 1001 (taken as 1,000)", "GET", "/wire()?$top=1001", jsonHeaders(), "", 200, ""},
		{"$top not a number", "GET", "/wire()?$top=ten", jsonHeaders(), "", 400, "InvalidInput"},
		{"bad continuation", "GET", "/wire()?NextPartitionKey=%21%21", jsonHeaders(), "", 400, "InvalidInput"},
		{"bad key path", "GET", "/wire(PartitionKey='p'", jsonHeaders(), "", 400, "InvalidUri"},
		{"truncated batch", "POST", "/$batch", http.Header{"Content-Type": {"multipart/mixed; boundary=batch_1"}},
			"--batch_1\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n--cs\r\nContent-Type: application/http\r\n\r\nPOST http://h/devstoreaccount1/wire HTTP/1.1\r\n", 400, "InvalidInput"},
		{"batch without boundary", "POST", "/$batch", http.Header{"Content-Type": {"multipart/mixed"}}, "x", 400, "InvalidInput"},
	} {
		b := tc.body
		if strings.Contains(b, "%d") {
			var parts []any
			for i := range strings.Count(b, "%d") {
				parts = append(parts, i)
			}
			b = fmt.Sprintf(b, parts...)
		}
		var payload []byte
		if tc.method != "GET" && tc.method != "DELETE" {
			payload = []byte(b)
		}
		r := raw.do(t, tc.method, tc.path, tc.header, payload)
		if r.Status != tc.status || r.Code != tc.code {
			t.Errorf("%s: %d %q, want %d %q: %.300s", tc.name, r.Status, r.Code, tc.status, tc.code, r.Body)
			continue
		}
		if tc.code != "" && !json.Valid(r.Body) {
			t.Errorf("%s: error body is not OData JSON: %.300s", tc.name, r.Body)
		}
	}
	// The entity the refused writes addressed is as the insert left it
	// (plus the tunnelled merge's B).
	r := raw.do(t, "GET", key, jsonHeaders(), nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"A":"x"`) || !strings.Contains(string(r.Body), `"B":"b"`) || r.Header.Get("ETag") == etag {
		t.Fatalf("after the refused writes: %d %s", r.Status, r.Body)
	}
}

// TestBodyLimit: an entity or batch body over 4 MiB is 413
// RequestBodyTooLarge.
func TestBodyLimit(t *testing.T) {
	e := newEnv(t, nil)
	raw := newRawClient(t, e.URL)
	raw.do(t, "POST", "/Tables", jsonHeaders(), []byte(`{"TableName":"limit"}`))
	body := []byte(`{"PartitionKey":"p","RowKey":"r","S":"` + strings.Repeat("x", 4<<20) + `"}`)
	if r := raw.do(t, "POST", "/limit", jsonHeaders(), body); r.Status != 413 || r.Code != "RequestBodyTooLarge" {
		t.Fatalf("4 MiB entity: %d %s", r.Status, r.Code)
	}
	if r := raw.do(t, "POST", "/$batch", http.Header{"Content-Type": {"multipart/mixed; boundary=b"}}, append([]byte("--b\r\n"), body...)); r.Status != 413 {
		t.Fatalf("4 MiB batch: %d %s", r.Status, r.Code)
	}
}
