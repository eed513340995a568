package blob

import (
	"io"
	"net/http"

	"github.com/blobshare/blobshare/storagehttp"
)

// Structured bodies (x-ms-structured-body: XSM/1.0; properties=crc64):
// Put Blob, Put Block, Append Block and Put Page may send their content
// framed as a structured message with CRC-64s (storagehttp/structmsg.go);
// Get Blob answers one when asked.

// requestBody is what a write stores of its request body: the content of
// a structured message, decoded and checked as the store reads it, or the
// body as sent. size is the content's length (x-ms-structured-content-length
// or Content-Length; -1 for a From-URL write, whose bytes come from its
// source). A From-URL write has no body to frame: the structured headers
// on one are 400 InvalidHeaderValue, never ignored.
func requestBody(r *http.Request, fromURL bool, body io.Reader) (_ io.Reader, size int64, structured bool, _ error) {
	if fromURL {
		return body, -1, false, storagehttp.RefuseStructuredBody(r.Header)
	}
	content, ok, err := storagehttp.StructuredRequest(r.Header, r.ContentLength)
	if err != nil || !ok {
		return body, r.ContentLength, false, err
	}
	return storagehttp.NewStructuredReader(body, r.ContentLength, content), content, true, nil
}
