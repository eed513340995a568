package storagehttp

import (
	"errors"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestSASWindowFailureDetail: a SAS outside its time window is refused
// the way Azure refuses every authentication failure — the common
// AuthenticationFailed message, the reason in AuthenticationErrorDetail.
func TestSASWindowFailureDetail(t *testing.T) {
	sg, err := NewSigner(DevAccount, DevKey)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ name, st, se string }{
		{"expired", "", "2026-11-28T11:00:00Z"},
		{"not yet valid", "2026-11-28T13:00:00Z", "2026-11-28T14:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := url.Values{"sv": {"2021-08-06"}, "ss": {"q"}, "srt": {"o"}, "sp": {"r"}, "se": {tc.se}}
			if tc.st != "" {
				q.Set("st", tc.st)
			}
			sts := strings.Join([]string{DevAccount, "r", "q", "o", tc.st, tc.se, "", "", "2021-08-06", "", ""}, "\n")
			q.Set("sig", sg.Sign(sts))
			r := httptest.NewRequest("GET", "http://127.0.0.1/"+DevAccount+"/q/messages?"+q.Encode(), nil)
			v, _, err := SAS{Signer: sg, Service: 'q'}.Authenticate(r, now)
			var e *Error
			if v != Fail || !errors.As(err, &e) {
				t.Fatalf("verdict %v, err %v: want a failure", v, err)
			}
			if e.Code != CodeAuthenticationFailed || !strings.HasPrefix(e.Message, "Server failed to authenticate the request.") {
				t.Fatalf("got %s %q", e.Code, e.Message)
			}
			if len(e.Details) != 1 || e.Details[0].Name != "AuthenticationErrorDetail" || !strings.Contains(e.Details[0].Value, "Signed expiry time") {
				t.Fatalf("details %+v: want the window's reason in AuthenticationErrorDetail", e.Details)
			}
		})
	}
}
