package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/urfave/cli/v2"
)

// newLogger is the one log format of every subcommand: slog's text format
// (time=… level=… msg=… key=value) on w, standard error in production. The
// lock table, the file system, the FUSE binding, the REST server and the
// HTTP server's own error log all receive this logger, so no line of
// blobshare's comes out in another shape.
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// logLevel is debug with --debug, else info.
func logLevel(debug bool) slog.Level {
	if debug {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// logFailedRequests wraps an HTTP service so that every request answered
// with a status of 400 or more is logged at level, with its method, path,
// status, Azure error code (x-ms-error-code) and request id: what a user
// debugging a 409 needs, without a packet capture. Nothing is logged
// unless the logger is enabled at level (serve logs them at debug level).
func logFailedRequests(next http.Handler, logger *slog.Logger, level slog.Level) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !logger.Enabled(r.Context(), level) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		if sw.status < 400 {
			return
		}
		h := w.Header()
		logger.Log(r.Context(), level, "request failed",
			"method", r.Method, "path", r.URL.EscapedPath(), "status", sw.status,
			"code", h.Get("x-ms-error-code"), "request_id", h.Get("x-ms-request-id"),
			"client", r.RemoteAddr, "duration", time.Since(start))
	})
}

// statusWriter remembers the status a handler wrote. Unwrap lets
// http.ResponseController reach the connection's deadlines and flushing
// through it.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader && code >= 200 { // 1xx are interim answers
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serveLogger is serve's logger: standard error at info (debug with
// --debug), and with --debug-log FILE (Azurite's --debug FILE) every
// debug line also appended to FILE. close closes the file.
func serveLogger(c *cli.Context) (logger *slog.Logger, close func() error, err error) {
	path := c.String("debug-log")
	if path == "" {
		return newLogger(c.App.ErrWriter, logLevel(c.Bool("debug"))), func() error { return nil }, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("--debug-log: %w", err)
	}
	h := slog.NewMultiHandler(
		slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: logLevel(c.Bool("debug"))}),
		slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return slog.New(h), f.Close, nil
}
