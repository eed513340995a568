package storagehttp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// MaxBatchRequests is how many sub-requests one batch may carry.
const MaxBatchRequests = 256

// batchVersionKey marks a batch sub-request's context with the outer
// request's x-ms-version: sub-requests carry none of their own (their
// Shared Key signature is over the headers as sent, so none may be added).
type batchVersionKey struct{}

// requestVersion is r's x-ms-version, or, for a batch sub-request
// without one, its batch's.
func requestVersion(r *http.Request) string {
	if v := r.Header.Get(VersionHeader); v != "" {
		return v
	}
	v, _ := r.Context().Value(batchVersionKey{}).(string)
	return v
}

// BatchPart is one sub-request of a batch, with the Content-ID its part
// carried ("" when none), which its response part echoes.
type BatchPart struct {
	ContentID string
	Request   *http.Request
}

// ReadBatch reads a batch request's body (multipart/mixed, each part an
// application/http request line with headers and an optional body) into
// requests for the service's handler: each keeps its own headers and
// authorization, and takes the outer request's context (with its
// x-ms-version for sub-requests that send none), client address and TLS
// state. More than MaxBatchRequests parts is 400
// ExceedsMaxBatchRequestCount; an empty batch or a part that is no HTTP
// request is 400 InvalidInput.
func ReadBatch(outer *http.Request) ([]BatchPart, error) {
	mt, params, err := mime.ParseMediaType(outer.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" || params["boundary"] == "" {
		return nil, InvalidHeader("Content-Type", outer.Header.Get("Content-Type"))
	}
	ctx := context.WithValue(outer.Context(), batchVersionKey{}, outer.Header.Get(VersionHeader))
	mr := multipart.NewReader(outer.Body, params["boundary"])
	var subs []BatchPart
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, batchInvalid(fmt.Errorf("batch part %d: %w", len(subs), err))
		}
		if len(subs) == MaxBatchRequests {
			return nil, NewError(http.StatusBadRequest, "ExceedsMaxBatchRequestCount",
				"The batch operation exceeds the maximum number of allowed subrequests.")
		}
		// A part's last CRLF belongs to the boundary that follows it, so a
		// sub-request written without a body may arrive one CRLF short of
		// its blank line; supplying one reads both forms.
		sub, err := http.ReadRequest(bufio.NewReader(io.MultiReader(part, strings.NewReader("\r\n"))))
		if err != nil {
			return nil, batchInvalid(fmt.Errorf("batch part %d: %w", len(subs), err))
		}
		body, err := io.ReadAll(sub.Body) // bounded by the outer body's limit
		if err != nil {
			return nil, batchInvalid(fmt.Errorf("batch part %d: %w", len(subs), err))
		}
		sub.Body, sub.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		sub.RemoteAddr, sub.TLS, sub.Host = outer.RemoteAddr, outer.TLS, outer.Host
		sub.RequestURI = ""
		subs = append(subs, BatchPart{ContentID: part.Header.Get("Content-ID"), Request: sub.WithContext(ctx)})
	}
	if len(subs) == 0 {
		return nil, batchInvalid(errors.New("a batch with no sub-requests"))
	}
	return subs, nil
}

func batchInvalid(err error) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidInput,
		Message: "One of the request inputs is not valid.", Err: err}
}

// WriteBatch runs each sub-request through h (the service's whole chain:
// authentication, limits, the operation) as if it had come alone, and
// answers 202 Accepted with a multipart/mixed body of their responses in
// order, each part an application/http response carrying its sub-request's
// Content-ID (its index when the request part had none).
func WriteBatch(w http.ResponseWriter, h http.Handler, subs []BatchPart) error {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if err := mw.SetBoundary("batchresponse_" + uuid.NewString()); err != nil {
		return err
	}
	for i, sub := range subs {
		rec := &subResponse{header: http.Header{}}
		h.ServeHTTP(rec, sub.Request)
		id := sub.ContentID
		if id == "" {
			id = strconv.Itoa(i)
		}
		part, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type": {"application/http"},
			"Content-ID":   {id},
		})
		if err != nil {
			return err
		}
		if err := rec.writeTo(part); err != nil {
			return err
		}
	}
	if err := mw.Close(); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "multipart/mixed; boundary="+mw.Boundary())
	w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
	w.WriteHeader(http.StatusAccepted)
	_, err := w.Write(body.Bytes())
	return err
}

// subResponse records one sub-request's response.
type subResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (s *subResponse) Header() http.Header { return s.header }

func (s *subResponse) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}

func (s *subResponse) Write(p []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	return s.body.Write(p)
}

// writeTo writes the response as HTTP/1.1 text: status line, headers,
// blank line, body.
func (s *subResponse) writeTo(w io.Writer) error {
	s.WriteHeader(http.StatusOK)
	s.header.Set("Content-Length", strconv.Itoa(s.body.Len()))
	if _, err := fmt.Fprintf(w, "HTTP/1.1 %d %s\r\n", s.status, http.StatusText(s.status)); err != nil {
		return err
	}
	if err := s.header.Write(w); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\r\n"); err != nil {
		return err
	}
	_, err := w.Write(s.body.Bytes())
	return err
}
