package integration

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/blobshare/blobshare/filerest"
)

// The lease share: mounted twice (two SMB clients, each with a
// connection, a ClientGuid and lease keys of its own), the first with
// closetimeo=60 so that a file the program closes stays open on the
// server, cached under the lease's Handle caching (the kernel's deferred
// close), until a break or a minute later.
const (
	leaseShare  = "cifslease"
	leaseMount  = "/mnt/" + leaseShare
	leaseSecond = "/mnt/leasesecond"
)

// mountLeaseShares mounts the lease share twice.
func mountLeaseShares(t *testing.T, g *vm, port, host string) {
	t.Helper()
	if got := g.do("procfs"); got != "ok" {
		t.Fatalf("mounting /proc in the guest: %s", got)
	}
	opts := fmt.Sprintf("port=%s,username=%s,password=%s,ip=%s", port, filerest.DevAccount, devKey, host)
	if got := g.do("mount //%s/%s %s closetimeo=60,%s", host, leaseShare, leaseMount, opts); got != "ok" {
		t.Fatalf("mount -t cifs closetimeo=60: %s", got)
	}
	if got := g.do("mount //%s/%s %s nosharesock,%s", host, leaseShare, leaseSecond, opts); got != "ok" {
		t.Fatalf("second mount of the lease share: %s", got)
	}
}

// treeRe finds, in /proc/fs/cifs/Stats, a tree's heading; statRe a
// count of requests of one kind it sent, which follows it ("Reads: 3
// total 0 failed", "OplockBreaks: 1 sent 0 failed").
var (
	treeRe = regexp.MustCompile(`^\d+\) \\\\.*\\(\S+)$`)
	statRe = regexp.MustCompile(`^(\w+): (\d+) (?:sent|total)`)
)

// acks is the number of lease break acknowledgments the guest's kernel
// has sent on the lease share's trees: the kernel acknowledges each break
// that asks it to, after flushing what the break takes away.
func (c *cifsCase) acks() int {
	c.t.Helper()
	return c.sent("OplockBreaks")
}

// sent is the number of requests of one kind (Stats' name: OplockBreaks,
// Reads, ...) the guest's kernel has sent on the lease share's trees.
func (c *cifsCase) sent(kind string) int {
	c.t.Helper()
	got := c.g.do("readfile %s", strconv.QuoteToASCII("/proc/fs/cifs/Stats"))
	s, err := strconv.Unquote(strings.TrimPrefix(got, "ok "))
	if err != nil {
		c.t.Fatalf("guest /proc/fs/cifs/Stats: %s", got)
	}
	n, found, tree := 0, false, ""
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if m := treeRe.FindStringSubmatch(line); m != nil {
			tree = m[1]
		} else if m := statRe.FindStringSubmatch(line); m != nil && m[1] == kind && tree == leaseShare {
			v, _ := strconv.Atoi(m[2])
			n, found = n+v, true
		}
	}
	if !found {
		c.t.Fatalf("no %s count for share %s in /proc/fs/cifs/Stats:\n%s", kind, leaseShare, s)
	}
	return n
}

// waitRead reads len(want) bytes at 0 through guest handle h until they
// are want, for at most 10 s: a non-blocking break reaches the client
// after the REST call has answered, and the client drops its cache when
// it has processed the break.
func (c *cifsCase) waitRead(h, want string) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := c.g.do("read %s 0 %d", h, len(want))
		if got == "ok "+strconv.Quote(want) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("guest read %s = %s; want %q within 10 s of the REST write", h, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// timeoutPolicy sends timeout= (seconds) with each request: the REST
// wait for a blocking break is at most the request's timeout.
type timeoutPolicy int

func (p timeoutPolicy) Do(req *policy.Request) (*http.Response, error) {
	q := req.Raw().URL.Query()
	q.Set("timeout", strconv.Itoa(int(p)))
	req.Raw().URL.RawQuery = q.Encode()
	return req.Next()
}

// cifsLeases: the kernel client, a real SMB client in another machine,
// holds leases that FileREST breaks as Azure Files does (spec
// smb-leases.md §1.2), each break seen in the client's own count of the
// acknowledgments it sent:
//   - Get File against the Write caching of a handle with written, cached
//     bytes waits for the client's flush and returns those bytes; so does
//     a read through a `blobshare mount` process (its open breaks the
//     lease, as a local open would);
//   - Put Range against two clients' RH leases breaks them without
//     waiting, and the clients' next reads fetch the new bytes (without
//     the break they would read their cache for ever); so does a write
//     through the `blobshare mount` process;
//   - Delete File of a file the program has closed but the client keeps
//     open under Handle caching (closetimeo) breaks Handle and succeeds;
//     of a file the program holds open, 409 SharingViolation;
//   - a client that does not acknowledge (its machine stopped) makes Get
//     File answer ClientCacheFlushDelay within the request's timeout; once
//     it runs again it flushes, acknowledges, and Get File sees its bytes.
func cifsLeases(t *testing.T, c *cifsCase, s *server, data string) {
	ctx := testCtx(t)

	c.put("flush.txt", []byte("old!"))
	c.expect("ok", "open w %s rw", c.path("flush.txt"))
	c.expect("ok 4", "write w 0 new!")
	before := c.acks()
	c.wantGet("flush.txt", "new!")
	if after := c.acks(); after <= before {
		t.Errorf("Get File against a written handle: the client acknowledged %d breaks before and %d after, want more", before, after)
	}
	c.expect("ok", "close w")

	// A `blobshare mount` process over the same data directory: its open
	// breaks the lease and waits for the flush, as a local open would.
	mnt := t.TempDir()
	startMountProcess(t, data, mnt)
	c.put("mount.txt", []byte("old!"))
	c.expect("ok", "open w %s rw", c.path("mount.txt"))
	c.expect("ok 4", "write w 0 mnt!")
	before = c.acks()
	if got, err := os.ReadFile(filepath.Join(mnt, leaseShare, "mount.txt")); err != nil || string(got) != "mnt!" {
		t.Errorf("read through the mount: %q, %v; want the client's flushed bytes", got, err)
	}
	if after := c.acks(); after <= before {
		t.Errorf("mount open against a written handle: the client acknowledged %d breaks before and %d after, want more", before, after)
	}
	c.expect("ok", "close w")

	c.put("read.txt", []byte("aaaa"))
	second := strconv.QuoteToASCII(leaseSecond + "/read.txt")
	c.expect("ok", "open a %s r", c.path("read.txt"))
	c.expect(`ok "aaaa"`, "read a 0 4")
	c.expect("ok", "open b %s r", second)
	c.expect(`ok "aaaa"`, "read b 0 4")
	before = c.acks()
	if err := uploadAt(ctx, c.file("read.txt"), 0, []byte("bbbb")); err != nil {
		t.Fatalf("REST Put Range: %v", err)
	}
	c.waitRead("a", "bbbb")
	c.waitRead("b", "bbbb")
	if after := c.acks(); after <= before {
		t.Errorf("Put Range against RH leases: the clients acknowledged %d breaks before and %d after, want more", before, after)
	}
	c.expect("ok", "close a")
	c.expect("ok", "close b")

	// A write through the `blobshare mount` process into a file the
	// client reads under an RH lease: the mount's open breaks nothing (the
	// client caches no writes), its write breaks Read caching, and the
	// client's next read fetches the new bytes.
	c.put("mountw.txt", []byte("aaaa"))
	c.expect("ok", "open a %s r", c.path("mountw.txt"))
	c.expect(`ok "aaaa"`, "read a 0 4")
	before = c.acks()
	mf, err := os.OpenFile(filepath.Join(mnt, leaseShare, "mountw.txt"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("open through the mount: %v", err)
	}
	if _, err := mf.WriteAt([]byte("dddd"), 0); err != nil {
		t.Fatalf("write through the mount: %v", err)
	}
	if err := mf.Close(); err != nil {
		t.Fatalf("close through the mount: %v", err)
	}
	c.waitRead("a", "dddd")
	if after := c.acks(); after <= before {
		t.Errorf("mount write against an RH lease: the client acknowledged %d breaks before and %d after, want more", before, after)
	}
	c.expect("ok", "close a")

	// A file read under a Read lease is read from the client's cache: a
	// second open and read sends no READ to the server; after a REST Put
	// Range breaks the lease, the next read does.
	c.put("reread.txt", []byte("rrrr"))
	c.expect("ok", "open a %s r", c.path("reread.txt"))
	c.expect(`ok "rrrr"`, "read a 0 4")
	c.expect("ok", "close a")
	reads := c.sent("Reads")
	c.expect("ok", "open a %s r", c.path("reread.txt"))
	c.expect(`ok "rrrr"`, "read a 0 4")
	if again := c.sent("Reads"); again != reads {
		t.Errorf("a second read of a file under a Read lease sent %d READ requests, want none (the client's cache)", again-reads)
	}
	if err := uploadAt(ctx, c.file("reread.txt"), 0, []byte("ssss")); err != nil {
		t.Fatalf("REST Put Range: %v", err)
	}
	c.waitRead("a", "ssss")
	if after := c.sent("Reads"); after <= reads {
		t.Errorf("a read after the lease's break sent no READ request (%d before, %d after)", reads, after)
	}
	c.expect("ok", "close a")

	c.put("cached.txt", []byte("x"))
	c.expect("ok", "open h %s r", c.path("cached.txt"))
	c.expect(`ok "x"`, "read h 0 1")
	c.expect("ok", "close h")
	hs, err := c.file("cached.txt").ListHandles(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs.Handles) != 1 {
		t.Fatalf("handles of a file closed under Handle caching: %d, want the one the client keeps (deferred close)", len(hs.Handles))
	}
	if _, err := c.file("cached.txt").Delete(ctx, nil); err != nil {
		t.Fatalf("REST Delete File of a file whose handle the client only caches: %v", err)
	}
	if _, err := c.file("cached.txt").GetProperties(ctx, nil); c.code(err) != "ResourceNotFound" {
		t.Fatalf("after Delete File: %v, want ResourceNotFound", err)
	}
	c.put("held.txt", []byte("x"))
	c.expect("ok", "open h %s r", c.path("held.txt"))
	_, err = c.file("held.txt").Delete(ctx, nil)
	c.wantCode("REST Delete File of a file the program holds open", c.code(err), "SharingViolation")
	c.expect("ok", "close h")

	c.put("stuck.txt", []byte("old!"))
	c.expect("ok", "open s %s rw", c.path("stuck.txt"))
	c.expect("ok 4", "write s 0 new!")
	cred, err := service.NewSharedKeyCredential(filerest.DevAccount, devKey)
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 3
	quick, err := file.NewClientWithSharedKeyCredential(s.RESTURL+"/"+leaseShare+"/stuck.txt", cred, &file.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, PerCallPolicies: []policy.Policy{timeoutPolicy(timeout)}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.g.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("stopping the guest: %v", err)
	}
	start := time.Now()
	_, err = quick.DownloadStream(ctx, nil)
	took := time.Since(start)
	if err := c.g.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatalf("resuming the guest: %v", err)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.ErrorCode != filerest.CodeClientCacheFlushDelay {
		t.Fatalf("Get File while the client cannot acknowledge: %v, want %s", err, filerest.CodeClientCacheFlushDelay)
	}
	if took < timeout*time.Second || took > timeout*time.Second+2*time.Second {
		t.Errorf("ClientCacheFlushDelay after %v, want at the request's timeout, %d s", took, timeout)
	}
	c.wantGet("stuck.txt", "new!")
	c.expect("ok", "close s")
}
