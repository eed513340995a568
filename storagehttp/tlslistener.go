package storagehttp

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
)

// An endpoint served over TLS is an account that requires secure transfer:
// Azure answers a request sent to it over plain HTTP with 400
// AccountRequiresHttps ("The account being accessed does not support
// http."), where Go's TLS server would answer its own bare 400 ("Client
// sent an HTTP request to an HTTPS server"). TLSListener tells the two
// apart by the connection's first byte — a TLS client's first record is
// a handshake (0x16) — hands TLS connections on as *tls.Conn (the
// http.Server sees r.TLS, on which SAS spr=https and bearer tokens
// depend) and answers a plain HTTP request itself, then closes.

// plainHTTPTimeout bounds how long a connection may take to send its
// first byte, and a plain HTTP request its header.
const plainHTTPTimeout = 10 * time.Second

// CodeAccountRequiresHTTPS is the answer to plain HTTP on a TLS endpoint.
const CodeAccountRequiresHTTPS = "AccountRequiresHttps"

type tlsListener struct {
	inner  net.Listener
	cfg    *tls.Config
	conns  chan net.Conn // TLS connections for Accept
	done   chan struct{} // closed by Close
	failed chan struct{} // closed when inner's Accept fails, err set
	err    error
	once   sync.Once
	wg     sync.WaitGroup // the accept loop and the connections being sorted

	mu      sync.Mutex
	sorting map[net.Conn]struct{} // connections not yet handed on or answered: Close closes them
}

// TLSListener serves TLS on inner with cfg, and answers plain HTTP
// requests with 400 AccountRequiresHttps (see above). Close closes inner
// and waits for the connections it is still sorting.
func TLSListener(inner net.Listener, cfg *tls.Config) net.Listener {
	l := &tlsListener{inner: inner, cfg: cfg, conns: make(chan net.Conn), done: make(chan struct{}), failed: make(chan struct{}),
		sorting: map[net.Conn]struct{}{}}
	l.wg.Add(1)
	go l.acceptLoop()
	return l
}

func (l *tlsListener) acceptLoop() {
	defer l.wg.Done()
	for {
		c, err := l.inner.Accept()
		if err != nil {
			l.err = err
			close(l.failed)
			return
		}
		l.mu.Lock()
		l.sorting[c] = struct{}{}
		select {
		case <-l.done: // Close ran between Accept and here
			c.Close()
		default:
		}
		l.mu.Unlock()
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.sort(c)
			l.mu.Lock()
			delete(l.sorting, c)
			l.mu.Unlock()
		}()
	}
}

// sort reads c's first byte: a TLS handshake goes to Accept, anything else
// is answered as plain HTTP.
func (l *tlsListener) sort(c net.Conn) {
	br := bufio.NewReaderSize(c, 4096)
	c.SetReadDeadline(time.Now().Add(plainHTTPTimeout))
	first, err := br.Peek(1)
	if err != nil {
		c.Close()
		return
	}
	if first[0] == 0x16 {
		c.SetReadDeadline(time.Time{})
		select {
		case l.conns <- tls.Server(&peekedConn{Conn: c, r: br}, l.cfg):
		case <-l.done:
			c.Close()
		case <-l.failed:
			c.Close()
		}
		return
	}
	defer c.Close()
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	req.Body.Close()
	id := uuid.NewString()
	now := time.Now().UTC()
	body := fmt.Sprintf(`<?xml version="1.0" encoding="utf-8"?><Error><Code>%s</Code><Message>The account being accessed does not support http.&#xA;RequestId:%s&#xA;Time:%s</Message></Error>`,
		CodeAccountRequiresHTTPS, id, now.Format("2006-01-02T15:04:05.0000000Z"))
	c.SetWriteDeadline(time.Now().Add(plainHTTPTimeout))
	fmt.Fprintf(c, "HTTP/1.1 400 The account being accessed does not support http.\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n"+
		"x-ms-error-code: %s\r\nx-ms-request-id: %s\r\nDate: %s\r\nConnection: close\r\n\r\n%s",
		len(body), CodeAccountRequiresHTTPS, id, now.Format(http.TimeFormat), body)
}

func (l *tlsListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-l.failed:
		return nil, l.err
	}
}

// Close closes the inner listener and the connections still being sorted,
// and waits for the accept loop and the sorting to end.
func (l *tlsListener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.done)
		err = l.inner.Close()
		l.mu.Lock()
		for c := range l.sorting {
			c.Close()
		}
		l.mu.Unlock()
		l.wg.Wait()
	})
	return err
}

func (l *tlsListener) Addr() net.Addr { return l.inner.Addr() }

// peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
