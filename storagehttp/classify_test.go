package storagehttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/blobshare/blobshare/meta"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"a database that went away, read as an EOF", fmt.Errorf("store: %w: %w", meta.ErrUnavailable, io.ErrUnexpectedEOF), http.StatusServiceUnavailable, CodeServerBusy},
		{"a short request body", fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), http.StatusBadRequest, CodeInvalidInput},
		{"a cancelled request", context.Canceled, http.StatusBadRequest, CodeInvalidInput},
		{"a body over its limit", &http.MaxBytesError{Limit: 1}, http.StatusRequestEntityTooLarge, CodeRequestBodyTooLarge},
		{"anything else", errors.New("boom"), http.StatusInternalServerError, CodeInternalError},
	} {
		e := Classify(tc.err, nil)
		if e.Status != tc.status || e.Code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, e.Status, e.Code, tc.status, tc.code)
		}
	}
}
