package storagehttp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestTableStringsToSign(t *testing.T) {
	r := httptest.NewRequest("PUT", "/devstoreaccount1/t(PartitionKey='p',RowKey='r')?comp=acl&timeout=5", nil)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Content-MD5", "md5")
	r.Header.Set("Content-Length", "12")
	r.Header.Set("If-Match", "*")
	r.Header.Set("x-ms-date", "Sat, 28 Nov 2026 08:00:00 GMT")
	r.Header.Set("Date", "Fri, 27 Nov 2026 08:00:00 GMT")
	r.Header.Set("x-ms-version", "2019-02-02")
	res := "/devstoreaccount1/devstoreaccount1/t(PartitionKey='p',RowKey='r')?comp=acl"
	// The documented forms: no Content-Length/If-* lines, no x-ms-*
	// headers, the x-ms-date value on the date line, only comp kept.
	if got, want := TableStringToSign("devstoreaccount1", r), "PUT\nmd5\napplication/json\nSat, 28 Nov 2026 08:00:00 GMT\n"+res; got != want {
		t.Errorf("SharedKey: %q, want %q", got, want)
	}
	if got, want := TableLiteStringToSign("devstoreaccount1", r), "Sat, 28 Nov 2026 08:00:00 GMT\n"+res; got != want {
		t.Errorf("SharedKey Lite: %q, want %q", got, want)
	}
	r.Header.Del("x-ms-date")
	if got := TableLiteStringToSign("devstoreaccount1", r); !strings.HasPrefix(got, "Fri, 27 Nov 2026") {
		t.Errorf("SharedKey Lite without x-ms-date: %q, want the Date header's value", got)
	}
}

func TestTableServiceSAS(t *testing.T) {
	q, _ := url.ParseQuery("sv=2019-02-02&tn=MyTable&sp=raud&se=2026-12-01T00:00:00Z&spk=a&epk=c&srk=1&erk=9")
	sts, res, err := TableServiceSAS("acct", nil, q)
	want := "raud\n\n2026-12-01T00:00:00Z\n/table/acct/mytable\n\n\n\n2019-02-02\na\n1\nc\n9"
	if err != nil || sts != want || res != "mytable" {
		t.Fatalf("TableServiceSAS = %q, %q, %v; want %q, mytable", sts, res, err, want)
	}
	if _, _, err := TableServiceSAS("acct", nil, url.Values{"sv": {"2019-02-02"}}); err == nil {
		t.Fatal("a table SAS without tn was accepted")
	}
}

func TestTableKeyRange(t *testing.T) {
	k := TableKeyRange{StartPK: "b", StartRK: "5", EndPK: "d", EndRK: "2"}
	for _, tc := range []struct {
		pk, rk string
		in     bool
	}{
		{"a", "9", false}, {"b", "4", false}, {"b", "5", true}, {"b", "", false}, {"c", "", true},
		{"c", "zzz", true}, {"d", "2", true}, {"d", "3", false}, {"e", "0", false},
	} {
		if got := k.Contains(tc.pk, tc.rk); got != tc.in {
			t.Errorf("Contains(%q, %q) = %v, want %v", tc.pk, tc.rk, got, tc.in)
		}
	}
	open := TableKeyRange{StartPK: "m"}
	if open.Contains("a", "") || !open.Contains("m", "") || !open.Contains("z", "z") || !(TableKeyRange{}).Unbounded() {
		t.Error("open-ended ranges")
	}
}

func TestErrorFormatODataJSON(t *testing.T) {
	now := time.Date(2026, 11, 28, 6, 36, 14, 598307800, time.UTC)
	fail := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, NewError(http.StatusConflict, "EntityAlreadyExists", "The specified entity already exists."))
	})
	h := RequestID(func() time.Time { return now }, ErrorFormat(func(r *http.Request) ErrorRenderer {
		if r.URL.Query().Get("comp") == "acl" {
			return nil
		}
		return WriteODataError
	}, fail))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/a/t", nil))
	var body odataErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	if rec.Code != 409 || rec.Header().Get(ErrorCodeHeader) != "EntityAlreadyExists" || body.Error.Code != "EntityAlreadyExists" ||
		body.Error.Message.Lang != "en-US" || !strings.HasPrefix(body.Error.Message.Value, "The specified entity already exists.\nRequestId:") ||
		!strings.HasSuffix(body.Error.Message.Value, "\nTime:2026-11-28T06:36:14.5983078Z") ||
		!strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json;odata=minimalmetadata") {
		t.Fatalf("JSON error: %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/a/t?comp=acl", nil))
	if rec.Code != 409 || rec.Header().Get("Content-Type") != "application/xml" || !strings.Contains(rec.Body.String(), "<Code>EntityAlreadyExists</Code>") {
		t.Fatalf("XML error: %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
}
