package filerest

import (
	"io"
	"net/http"

	"github.com/blobshare/blobshare/storagehttp"
)

// Structured bodies (x-ms-structured-body: XSM/1.0; properties=crc64):
// Put Range and Create File with data may send their bytes framed as a
// structured message with CRC-64s (storagehttp/structmsg.go); Get File
// answers one when asked.

// structuredBody makes r.Body the data of a structured message, decoded
// and checked as it is read, when the request sends one, and returns the
// data's length (x-ms-structured-content-length; otherwise
// Content-Length).
func structuredBody(r *http.Request) (size int64, structured bool, err error) {
	content, ok, err := storagehttp.StructuredRequest(r.Header, r.ContentLength)
	if err != nil || !ok {
		return r.ContentLength, false, err
	}
	r.Body = io.NopCloser(storagehttp.NewStructuredReader(r.Body, r.ContentLength, content))
	return content, true, nil
}
