package storagehttp

import (
	"log"
	"net/http"
	"time"
)

// MaxRequestHeaderBytes is how many header bytes net/http reads from a
// request before it gives up. Past it, net/http itself answers "431
// Request Header Fields Too Large" (plain text, no error code) and no
// handler runs; Azure answers such a request 400 (its front end,
// Microsoft-HTTPAPI/2.0, says "Bad Request - Request Too Long ... HTTP
// Error 400. The size of the request headers is too long."; azblob's
// TestUploadPagesFromURLWithMD5 sends a 4 MiB x-ms-source-content-md5,
// 5.6 MB of base64, and expects 400). So net/http's cap sits well above
// every service's own (Limits.MaxHeaderBytes, 64 KiB): a request up to
// this size reaches Limits and gets Azure's status, 400, with the code
// RequestHeaderFieldsTooLarge. The cost is memory only for a client that
// sends that much, one such request per connection, read within
// ReadHeaderTimeout.
const MaxRequestHeaderBytes = 8 << 20

// NewServer is the http.Server of a service endpoint: h behind
// ReadHeaderTimeout (30 s, a slow client cannot hold a connection with a
// partial header), readTimeout for a whole request (0: none, for
// services whose bodies stream), idle connections closed after two
// minutes, and MaxRequestHeaderBytes.
func NewServer(h http.Handler, readTimeout time.Duration, errorLog *log.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		ReadTimeout:       readTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    MaxRequestHeaderBytes,
		ErrorLog:          errorLog,
	}
}
