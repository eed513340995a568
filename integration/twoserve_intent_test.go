package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
	"github.com/blobshare/blobshare/integration/servetest"
)

// commitGate is a reverse proxy to Azurite's Blob service that holds the
// first Put Block List (a content commit of fs, blobstore/azure) once
// armed: the test learns it arrived, then lets it through to Azurite
// (the commit happens, its reply is withheld) or not at all. Every other
// request passes.
type commitGate struct {
	target  *url.URL
	armed   chan struct{} // receive: the next Put Block List is held
	arrived chan struct{} // closed when the held request has arrived whole
	forward chan struct{} // close: send it to Azurite
	sent    chan struct{} // closed when Azurite has answered it
	release chan struct{} // closed at the end: the held request fails
	once    sync.Once
}

func (g *commitGate) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPut || req.URL.Query().Get("comp") != "blocklist" {
		return http.DefaultTransport.RoundTrip(req)
	}
	select {
	case <-g.armed:
	default:
		return http.DefaultTransport.RoundTrip(req)
	}
	// The whole request is here: its sender may be stopped from now on.
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	close(g.arrived)
	select {
	case <-g.forward:
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		close(g.sent)
	case <-g.release:
	}
	<-g.release
	return nil, errors.New("commit gate: the reply is withheld")
}

// startCommitGate serves a gate in front of az for the test.
func startCommitGate(t *testing.T, az *azuritetest.Server) (*commitGate, string) {
	t.Helper()
	target, err := url.Parse(az.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	g := &commitGate{target: target, armed: make(chan struct{}, 1), arrived: make(chan struct{}),
		forward: make(chan struct{}), sent: make(chan struct{}), release: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host}) },
		Transport: g,
		// The held request's withheld reply is the test's doing.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	srv := &http.Server{Handler: proxy}
	go srv.Serve(ln)
	t.Cleanup(func() {
		g.once.Do(func() { close(g.release) })
		srv.Close()
	})
	return g, "http://" + ln.Addr().String() + target.Path
}

// noRetryFile is an azfile client of share "data" on s without retries: a
// request must be answered once, not sent again.
func noRetryFile(t *testing.T, s *server, name string) *file.Client {
	t.Helper()
	c, err := service.NewClientFromConnectionString("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+devKey+
		";FileEndpoint="+s.RESTURL+";", &service.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	return c.NewShareClient("data").NewRootDirectoryClient().NewFileClient(name)
}

// TestTwoServeLiveIntentNotAdopted: a content commit in flight in serve B
// is never adopted by serve A while B is alive, and is resolved whole once
// B is dead (fs/doc.go, "Commits and crashes"; locks/doc.go, "Sessions").
// B's Put Range is held at its Put Block List by a proxy in front of the
// shared Azurite container (--blob-backend azure://), either before
// Azurite has it (the commit did not happen) or after, with the reply
// withheld (it happened, B never learnt it); then B is frozen with
// SIGSTOP, which keeps its flock, and A gets a Put Range of another range
// of the same file. While `blobshare status` reports B alive, A's request
// stays unanswered. B then dies either by SIGKILL (its flock frees: A goes
// on at once) or by its heartbeat expiring while frozen (10 s: a frozen
// owner is dead to the others, flock or not). A's write then succeeds on
// top of one whole version: the old content if B's commit never reached
// the store, B's whole range if it did — never a torn mix — and B's
// unacknowledged write is not half there. A B woken after its expiry
// (SIGCONT) is fenced (locks/doc.go, "Fencing"): its Put Range is not
// acknowledged, its old SMB handle is gone (a share-none open through it
// succeeds), and it serves on as a new owner that reads A's version.
func TestTwoServeLiveIntentNotAdopted(t *testing.T) {
	for _, tc := range []struct {
		name      string
		committed bool // B's Put Block List reached Azurite
		kill      bool // B is killed while frozen; otherwise its heartbeat lapses first
		wake      bool // B, its heartbeat expired, runs again instead of being killed
	}{
		{"not committed, killed", false, true, false},
		{"committed, reply lost, killed", true, true, false},
		{"not committed, heartbeat expired", false, false, false},
		{"committed, reply lost, heartbeat expired", true, false, false},
		{"not committed, heartbeat expired, B wakes", false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			az := azuritetest.Start(t)
			t.Setenv("AZURE_STORAGE_KEY", az.Key)
			gate, gated := startCommitGate(t, az)
			container := "/twoserve"
			data := t.TempDir()
			a := startServe(t, data, "--blob-backend", "azure://"+az.Account+container+"?endpoint="+az.Endpoint)
			b, err := servetest.Start(blobshareBin, data, "--blob-backend", "azure://"+az.Account+container+"?endpoint="+gated,
				"--blob-addr", "off", "--queue-addr", "off", "--table-addr", "off")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				b.Cmd.Process.Signal(syscall.SIGCONT)
				b.Kill()
			})
			ctx := context.Background()
			if _, err := serviceClient(t, a).NewShareClient("data").Create(ctx, nil); err != nil {
				t.Fatal(err)
			}
			// 1 MiB: past the 64 KiB kept inline, so it lives in a blob.
			const size, n = 1 << 20, 64 << 10
			old := bytes.Repeat([]byte{'o'}, size)
			putFile(t, shareOf(t, a), "f.bin", old)
			// B holds a handle, so status shows whether B's session is alive.
			c := dialSmbctl(t, b.SMBAddr, "data")
			putFile(t, shareOf(t, a), "marker.txt", []byte("m"))
			c.expect("ok", "open m marker.txt %s 7 %s %s", smbRead, smbOpen, smbNonDir)

			gate.armed <- struct{}{}
			bWrite := bytes.Repeat([]byte{'B'}, n)
			bDone := make(chan error, 1)
			go func() {
				_, err := noRetryFile(t, b, "f.bin").UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader(bWrite)), nil)
				bDone <- err
			}()
			select {
			case <-gate.arrived:
			case err := <-bDone:
				t.Fatalf("B's Put Range ended (%v) before its commit reached the store", err)
			case <-time.After(time.Minute):
				t.Fatal("B's Put Block List did not arrive in a minute")
			}
			if tc.committed {
				close(gate.forward)
				<-gate.sent
			}
			if err := b.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}

			aWrite := bytes.Repeat([]byte{'A'}, n)
			const aOff = size / 2
			aDone := make(chan error, 1)
			go func() {
				_, err := noRetryFile(t, a, "f.bin").UploadRange(ctx, aOff, streaming.NopCloser(bytes.NewReader(aWrite)), nil)
				aDone <- err
			}()
			// While status reports B alive, A must not have finished: B's
			// liveness only ends (a frozen process renews nothing), so an A
			// finished before such a report finished while B lived.
			aliveSeen := 0
			for {
				finished := len(aDone) > 0
				hs := handlesOf(t, data, b.Pid())
				alive := len(hs) > 0 && hs[0].Owner.Alive
				if alive && finished {
					t.Fatalf("A's Put Range finished while status reports B (its commit in flight) alive: %v", <-aDone)
				}
				if !alive {
					// Killed: its flock is free; frozen: its deadline passed.
					if want := map[bool]string{true: "flock free", false: "heartbeat expired"}[tc.kill]; len(hs) > 0 && hs[0].Owner.Dead != want {
						t.Fatalf("B reported dead by %q, want %s", hs[0].Owner.Dead, want)
					}
					break
				}
				aliveSeen++
				if tc.kill && aliveSeen == 3 {
					if _, err := b.Kill(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if aliveSeen == 0 {
				t.Fatal("status never reported B alive with A's request pending: nothing was shown")
			}
			select {
			case err := <-aDone:
				if err != nil {
					t.Fatalf("A's Put Range once B was dead: %s, want success", outcome(err))
				}
			case <-time.After(time.Minute):
				t.Fatal("A's Put Range still waiting a minute after B died")
			}
			gate.once.Do(func() { close(gate.release) }) // B's held commit fails
			switch {
			case tc.wake:
				// Woken, B is no longer the owner it was (locks/doc.go,
				// "Fencing"): its commit is not acknowledged, its old handle
				// is gone, and it serves on as a new owner.
				if err := b.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
					t.Fatal(err)
				}
				if err := <-bDone; err == nil {
					t.Fatal("B's Put Range succeeded after B's session expired under it and A went on")
				} else {
					t.Logf("B's Put Range, woken: %s", outcome(err))
				}
				c2 := dialSmbctl(t, b.SMBAddr, "data")
				c2.expect("ok", "open x marker.txt %s 0 %s %s", smbReadWrite, smbOpen, smbNonDir)
				c2.expect("ok", "close x")
				defer func() {
					if err := b.Stop(); err != nil {
						t.Errorf("B after SIGTERM: %v\n%s", err, b.Stderr)
					}
				}()
			case !tc.kill:
				if _, err := b.Kill(); err != nil {
					t.Fatal(err)
				}
			}

			want := bytes.Clone(old)
			if tc.committed {
				copy(want, bWrite)
			}
			copy(want[aOff:], aWrite)
			got := readFile(t, shareOf(t, a), "f.bin")
			if tc.wake {
				if got := readFile(t, shareOf(t, b), "f.bin"); !bytes.Equal(got, want) {
					t.Fatalf("f.bin through the woken B: %d bytes, %d of them B's", len(got), bytes.Count(got, []byte{'B'}))
				}
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("f.bin is %d bytes, %d of them B's and %d A's; want %d bytes: the %s, and A's range",
					len(got), bytes.Count(got, []byte{'B'}), bytes.Count(got, []byte{'A'}), len(want),
					map[bool]string{true: "B's whole range (its commit reached the store)", false: "old content (B's commit never did)"}[tc.committed])
			}
		})
	}
}
