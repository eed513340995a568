package sdklive

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// tunnel is the HTTPS forward proxy the SDK test processes use
// (HTTPS_PROXY): it answers CONNECT ACCOUNT.SERVICE.core.windows.net:443
// by opening a TCP connection to the local endpoint of SERVICE and
// copying bytes both ways. TLS runs end to end between the SDK and the
// emulator (which serves a certificate for *.SERVICE.core.windows.net), so
// the Host header, the URL and everything the SDK signed arrive as sent.
type tunnel struct {
	ln       net.Listener
	backends map[string]string // service label or full host name → host:port
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	refused  []string
}

func startTunnel(backends map[string]string) (*tunnel, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy listen: %w", err)
	}
	t := &tunnel{ln: ln, backends: backends, conns: map[net.Conn]struct{}{}}
	t.wg.Add(1)
	go t.accept()
	return t, nil
}

// URL is the proxy's address for HTTPS_PROXY.
func (t *tunnel) URL() string { return "http://" + t.ln.Addr().String() }

// Refused lists the CONNECT targets that named no known service.
func (t *tunnel) Refused() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.refused...)
}

// Close stops accepting, closes every open connection and waits for the
// copying goroutines.
func (t *tunnel) Close() {
	t.ln.Close()
	t.mu.Lock()
	for c := range t.conns {
		c.Close()
	}
	t.conns = nil
	t.mu.Unlock()
	t.wg.Wait()
}

func (t *tunnel) track(c net.Conn, add bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if add {
		if t.conns == nil {
			return false
		}
		t.conns[c] = struct{}{}
	} else {
		delete(t.conns, c)
	}
	return true
}

func (t *tunnel) accept() {
	defer t.wg.Done()
	for {
		c, err := t.ln.Accept()
		if err != nil {
			return
		}
		if !t.track(c, true) {
			c.Close()
			return
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			defer t.track(c, false)
			defer c.Close()
			t.serve(c)
		}()
	}
}

// backend maps "ACCOUNT.SERVICE.core.windows.net:443" to the endpoint of
// SERVICE, and a host named in full in backends (the token service) to
// its address.
func (t *tunnel) backend(hostport string) (string, bool) {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", false
	}
	if addr, ok := t.backends[host]; ok {
		return addr, addr != ""
	}
	labels := strings.SplitN(host, ".", 3)
	if len(labels) != 3 || labels[2] != "core.windows.net" {
		return "", false
	}
	addr, ok := t.backends[labels[1]]
	return addr, ok && addr != ""
}

func (t *tunnel) serve(c net.Conn) {
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	if req.Method != http.MethodConnect {
		t.forwardPlain(c, req)
		return
	}
	addr, ok := t.backend(req.Host)
	if !ok {
		t.mu.Lock()
		t.refused = append(t.refused, req.Host)
		t.mu.Unlock()
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	up, ok := t.dial(c, addr)
	if !ok {
		return
	}
	defer t.track(up, false)
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	// Whichever side ends first ends the tunnel: HTTP over TLS has
	// nothing to say after either side closes.
	done := make(chan struct{}, 2)
	go func() {
		io.Copy(up, br) // bytes sent after CONNECT are buffered in br
		done <- struct{}{}
	}()
	go func() {
		io.Copy(c, up)
		done <- struct{}{}
	}()
	<-done
	c.Close()
	up.Close()
	<-done
}

// forwardPlain passes a plain HTTP request for http://ACCOUNT.SERVICE.core.windows.net/…
// (HTTP_PROXY's absolute form) to SERVICE's endpoint as it is, in origin
// form: the endpoint serves TLS, so it answers what Azure answers an
// account that requires secure transfer (400 AccountRequiresHttps), as
// the SDKs' TestServiceClientWithHTTP expects. Anything else is 405.
func (t *tunnel) forwardPlain(c net.Conn, req *http.Request) {
	defer c.Close()
	addr, ok := "", req.URL.Scheme == "http"
	if ok {
		addr, ok = t.backend(net.JoinHostPort(req.URL.Hostname(), "80"))
	}
	if !ok {
		io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	up, ok := t.dial(c, addr)
	if !ok {
		return
	}
	defer t.track(up, false)
	defer up.Close()
	req.Close = true
	if err := req.Write(up); err != nil {
		return
	}
	io.Copy(c, up) // the endpoint closes after its answer
}

// dial connects to a backend and tracks the connection (Close ends it);
// a backend that cannot be reached is answered 502 on c.
func (t *tunnel) dial(c net.Conn, addr string) (net.Conn, bool) {
	var d net.Dialer
	up, err := d.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return nil, false
	}
	if !t.track(up, true) {
		up.Close()
		return nil, false
	}
	return up, true
}
