package storagehttp

import (
	"errors"
	"net/http"
	"testing"
)

// TestCheckUnsupported: a listed header is refused with its code, name,
// value and reason whatever its value, except its benign one; an empty
// value counts as sent; unlisted headers pass.
func TestCheckUnsupported(t *testing.T) {
	table := []Unsupported{
		{Name: "x-ms-encryption-key", Reason: "no CPK"},
		{Name: "x-ms-legal-hold", Reason: "no holds", Benign: "false"},
		{Name: "x-ms-mode", Reason: "NFS", Code: CodeInvalidHeaderValue},
	}
	for _, tc := range []struct {
		name string
		h    http.Header
		code string
	}{
		{"nothing", http.Header{"X-Ms-Meta-A": {"b"}}, ""},
		{"key", http.Header{"X-Ms-Encryption-Key": {"a2V5"}}, CodeUnsupportedHeader},
		{"empty key", http.Header{"X-Ms-Encryption-Key": {""}}, CodeUnsupportedHeader},
		{"hold true", http.Header{"X-Ms-Legal-Hold": {"true"}}, CodeUnsupportedHeader},
		{"hold false", http.Header{"X-Ms-Legal-Hold": {"False"}}, ""},
		{"mode", http.Header{"X-Ms-Mode": {"0644"}}, CodeInvalidHeaderValue},
	} {
		err := CheckUnsupported(tc.h, table)
		var e *Error
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.code != "" && (!errors.As(err, &e) || e.Code != tc.code || e.Status != http.StatusBadRequest || len(e.Details) != 3 || e.Details[2].Value == ""):
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
}
