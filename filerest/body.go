package filerest

import (
	"bytes"
	"container/list"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/blobshare/blobshare/fs"

	"github.com/blobshare/blobshare/storagehttp"
)

// Defaults of Config.BodyBudget and Config.BodyReadTimeout.
const (
	defaultBodyBudget      = 64 << 20
	defaultBodyReadTimeout = 2 * time.Minute
	// smallBody: bodies up to this size are read whole in rest (and
	// charged their length) before fs sees them, so a stalled small upload
	// never holds fs's block-sized staging buffer.
	smallBody = 256 << 10
)

// budget is a server-wide weighted semaphore of request-body bytes held in
// memory. Waiters are served first come, first served, so a large request
// is not starved by a stream of small ones.
type budget struct {
	mu      sync.Mutex
	size    int64
	avail   int64
	waiters list.List // of *budgetWaiter
}

type budgetWaiter struct {
	n     int64
	ready chan struct{} // closed when granted
}

func newBudget(size int64) *budget { return &budget{size: size, avail: size} }

// clamp bounds a charge to the budget's size, so every request can run
// once it is alone.
func (b *budget) clamp(n int64) int64 { return min(max(n, 0), b.size) }

// acquire takes n bytes (already clamped) or fails with ctx's error when
// ctx ends first; a failed acquire holds nothing.
func (b *budget) acquire(ctx context.Context, n int64) error {
	b.mu.Lock()
	if b.waiters.Len() == 0 && b.avail >= n {
		b.avail -= n
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	e := b.waiters.PushBack(w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // granted while ctx ended: give it back
		b.avail += n
	default:
		b.waiters.Remove(e)
	}
	b.grant() // the head may have changed
	return fmt.Errorf("waiting for %d bytes of request-body budget: %w", n, context.Cause(ctx))
}

// tryAcquire takes n bytes if they are free and nobody waits.
func (b *budget) tryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.waiters.Len() == 0 && b.avail >= n {
		b.avail -= n
		return true
	}
	return false
}

// release returns n bytes taken by acquire.
func (b *budget) release(n int64) {
	b.mu.Lock()
	b.avail += n
	b.grant()
	b.mu.Unlock()
}

// grant wakes waiters in order while their charge fits. b.mu is held.
func (b *budget) grant() {
	for e := b.waiters.Front(); e != nil; e = b.waiters.Front() {
		w := e.Value.(*budgetWaiter)
		if b.avail < w.n {
			return
		}
		b.avail -= w.n
		b.waiters.Remove(e)
		close(w.ready)
	}
}

// bodyCharge is what a streamed write of [off, off+n) may hold in memory:
// fs's staging buffer (one block), plus up to n bytes of partial-block
// buffers unless the range covers whole blocks only.
func bodyCharge(off, n int64) int64 {
	c := int64(fs.BlockSize)
	if off%fs.BlockSize != 0 || n%fs.BlockSize != 0 {
		c += n
	}
	return c
}

// bodyReader hands exactly n bytes of a request body to fs. It hashes
// what passes (MD5) and, when a Content-MD5 is to be verified, checks the
// sum before it hands out the last bytes: on a mismatch fs sees a failed
// read and commits nothing. It remembers its first failure, because fs
// reports a failed body only as ErrInvalidArg; the handler returns err
// instead, so a mismatch is 400 Md5Mismatch and a stalled client's
// timeout is reported as such.
type bodyReader struct {
	r       io.Reader
	left    int64
	h       hash.Hash
	want    []byte      // nil: nothing to verify
	crc     hash.Hash64 // nil: no CRC-64 asked for
	wantCRC []byte      // nil: no CRC-64 to verify
	done    func()      // called once when the body is fully read (clears the read deadline)
	err     error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.h.Write(p[:n])
	if b.crc != nil {
		b.crc.Write(p[:n])
	}
	b.left -= int64(n)
	if b.left == 0 {
		if err != nil && !errors.Is(err, io.EOF) {
			// A failure that comes with the last bytes (a structured
			// body's last CRC-64) fails the body: no byte of it is handed
			// out, so no reader (io.ReadFull drops such an error) takes it
			// for complete.
			b.err = fmt.Errorf("read request body: %w", err)
			return 0, b.err
		}
		if b.done != nil {
			b.done()
			b.done = nil
		}
		if b.want != nil {
			if got := b.h.Sum(nil); !bytes.Equal(got, b.want) {
				b.err = storagehttp.MD5Mismatch(b.want, got)
				return 0, b.err
			}
		}
		if b.wantCRC != nil {
			if got := storagehttp.CRC64Bytes(b.crc.Sum64()); !bytes.Equal(got, b.wantCRC) {
				b.err = storagehttp.CRC64Mismatch(b.wantCRC, got)
				return 0, b.err
			}
		}
		return n, nil
	}
	switch {
	case err == io.EOF:
		b.err = fmt.Errorf("request body ended %d bytes short: %w", b.left, io.ErrUnexpectedEOF)
		return n, b.err
	case err != nil:
		b.err = fmt.Errorf("read request body: %w", err)
		return n, b.err
	}
	return n, nil
}

// putBody writes the request's body (req.Length bytes, already checked
// against Content-Length) through fs.PutRange and returns the attributes
// and the body's MD5. With verifyMD5 and a Content-MD5 header the sum is
// checked before anything is committed (400 Md5Mismatch otherwise).
//
// Memory: a request holds a charge from the server-wide body budget while
// its bytes are in memory. Bodies up to smallBody are read whole here,
// charged their length (waiting for budget with the request's context).
// Larger ones stream straight into fs, charged bodyCharge, when the budget
// has room at once; otherwise the body is first spilled to an unlinked
// file in the spill directory (no memory held while the client sends it),
// and only then does the request wait for its charge and feed fs from the
// file. While the body is read the connection has a read deadline of
// BodyReadTimeout, so a stalled client fails and frees what it holds.
func (s *Server) putBody(w http.ResponseWriter, r *http.Request, req fs.PutRangeRequest, verifyMD5 bool) (fs.Attr, []byte, []byte, error) {
	var want []byte
	wantB64 := r.Header.Get("Content-MD5")
	if verifyMD5 && wantB64 != "" {
		sum, err := parseMD5("Content-MD5", wantB64)
		if err != nil {
			return fs.Attr{}, nil, nil, err
		}
		want = sum
	}
	n := req.Length
	ctx := r.Context()
	body := &bodyReader{r: r.Body, left: n, h: md5.New(), want: want}
	if verifyMD5 {
		// Put Range: x-ms-content-crc64 is checked like Content-MD5 and
		// answered with the server's CRC-64.
		wantCRC, err := storagehttp.CRC64Header(r.Header, "x-ms-content-crc64")
		if err != nil {
			return fs.Attr{}, nil, nil, err
		}
		if wantCRC != nil {
			body.crc, body.wantCRC = storagehttp.NewCRC64(), wantCRC
		}
	}
	if s.bodyTimeout > 0 {
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(s.bodyTimeout)); err == nil {
			// Cleared once the body is read, before net/http's background
			// read starts (an expired deadline there would cancel the
			// request's context). A body not read to the end keeps it:
			// net/http may read the rest after the handler to keep the
			// connection, and a stalled client must not block that.
			body.done = func() { _ = rc.SetReadDeadline(time.Time{}) }
		} else if !errors.Is(err, http.ErrNotSupported) {
			s.log.Debug("rest: cannot set the body read deadline", "path", req.Path, "err", err)
		}
	}
	// bodyErr prefers the body's own failure (fs reports it only as
	// ErrInvalidArg) over err.
	bodyErr := func(err error) error {
		if body.err != nil {
			return body.err
		}
		return err
	}

	var charge int64
	switch {
	case n <= smallBody:
		charge = s.bodies.clamp(n)
		if err := s.bodies.acquire(ctx, charge); err != nil {
			return fs.Attr{}, nil, nil, fmt.Errorf("put range %s: %w", req.Path, err)
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			s.bodies.release(charge)
			return fs.Attr{}, nil, nil, bodyErr(err)
		}
		req.Body = bytes.NewReader(buf)
	default:
		charge = s.bodies.clamp(bodyCharge(req.Offset, n))
		if s.bodies.tryAcquire(charge) {
			req.Body = body
			break
		}
		f, err := s.spill(body, req.Path)
		if err != nil {
			return fs.Attr{}, nil, nil, bodyErr(err)
		}
		defer f.Close()
		if err := s.bodies.acquire(ctx, charge); err != nil {
			return fs.Attr{}, nil, nil, fmt.Errorf("put range %s: %w", req.Path, err)
		}
		req.Body = io.NewSectionReader(f, 0, n)
	}
	defer s.bodies.release(charge)
	a, err := s.fs.PutRange(ctx, req)
	if err != nil {
		return fs.Attr{}, nil, nil, bodyErr(err)
	}
	var crc []byte
	if body.crc != nil {
		crc = storagehttp.CRC64Bytes(body.crc.Sum64())
	}
	return a, body.h.Sum(nil), crc, nil
}

// spill copies the whole body into an unlinked temporary file in the
// spill directory and returns it (the caller closes it). A failed body
// (short, timed out, MD5 mismatch) is body.err.
func (s *Server) spill(body *bodyReader, path string) (*os.File, error) {
	f, err := os.CreateTemp(s.spillDir, "blobshare-rest-body-*")
	if err != nil {
		return nil, fmt.Errorf("put range %s: spill file: %w", path, err)
	}
	// Unlinked at once: the kernel reclaims it even after a crash.
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("put range %s: spill file: %w", path, err)
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		if body.err != nil {
			return nil, body.err
		}
		return nil, fmt.Errorf("put range %s: spill file: %w", path, err)
	}
	if body.left != 0 {
		f.Close()
		return nil, fmt.Errorf("put range %s: body ended %d bytes short: %w", path, body.left, io.ErrUnexpectedEOF)
	}
	return f, nil
}
