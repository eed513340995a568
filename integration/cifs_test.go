package integration

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"

	"github.com/blobshare/blobshare/filerest"
)

// cifsDialects are the mounts TestLinuxCIFSClient makes, one share each:
// the README's line as it stands (the client's default dialect), 3.1.1
// signed and sealed (AES-GCM), 3.0 signed (AES-CMAC), 2.1 signed
// (HMAC-SHA256).
var cifsDialects = []struct{ name, opts, share string }{
	{"readme", "", "cifsreadme"},
	{"3.1.1-seal", "vers=3.1.1,seal,", "cifs311"},
	{"3.0", "vers=3.0,", "cifs30"},
	{"2.1", "vers=2.1,", "cifs21"},
}

// cifsShares are the shares of cifsDialects.
func cifsShares() []string {
	var out []string
	for _, d := range cifsDialects {
		out = append(out, d.share)
	}
	return out
}

// TestLinuxCIFSClient: the Linux kernel's SMB client (cifs.ko of Debian's
// kernel, in a QEMU guest) mounts the SMB endpoint of `blobshare serve`
// as the README's `mount -t cifs` line does, on each dialect, and a Linux
// program's system calls on the mount meet FileREST (the azfile SDK on the
// host) through the one lock table: files, trees, renames, odd names,
// fcntl and flock locks against REST reads and writes, a handle against
// REST Delete File, delete-pending, REST leases, the ReadOnly attribute,
// Force Close Handles. The guest answers each system call with "ok" or
// the errno's name; REST is called between two answers, so every step
// happens in order without sleeps.
func TestLinuxCIFSClient(t *testing.T) {
	k, err := findGuestKit()
	if err != nil {
		if requireAll() {
			t.Fatalf("the Linux SMB client test needs its QEMU guest (make cifs): %v", err)
		}
		t.Skipf("the Linux SMB client test needs its QEMU guest (make cifs): %v", err)
	}
	start := time.Now()
	data := t.TempDir()
	s := startServe(t, data)
	svc := serviceClient(t, s)
	for _, share := range append(cifsShares(), leaseShare) {
		if _, err := svc.NewShareClient(share).Create(testCtx(t), nil); err != nil {
			t.Fatal(err)
		}
	}
	g := bootGuest(t, k, s.SMBAddr)
	host, port, _ := strings.Cut(guestSMB, ":")
	for _, d := range cifsDialects {
		// The README's options; ip= is what mount.cifs adds for the kernel.
		opts := fmt.Sprintf("%sport=%s,username=%s,password=%s,ip=%s", d.opts, port, filerest.DevAccount, devKey, host)
		if got := g.do("mount //%s/%s /mnt/%s %s", host, d.share, d.share, opts); got != "ok" {
			t.Fatalf("mount -t cifs %s: %s", d.opts, got)
		}
	}
	// A second mount of the first share on a connection and session of its
	// own (nosharesock): another SMB client for the SMB-against-SMB rows.
	second := fmt.Sprintf("nosharesock,port=%s,username=%s,password=%s,ip=%s", port, filerest.DevAccount, devKey, host)
	if got := g.do("mount //%s/%s /mnt/second %s", host, cifsDialects[0].share, second); got != "ok" {
		t.Fatalf("second mount -t cifs: %s", got)
	}
	mountLeaseShares(t, g, port, host)
	// restrict=on: the guest reaches nothing but the SMB endpoint through
	// guestfwd; the host's REST and SMB ports, open on its loopback, are
	// refused through QEMU's gateway (without restrict=on they connect).
	for _, addr := range []string{s.Addr, s.SMBAddr} {
		_, p, _ := strings.Cut(addr, ":")
		g.expect("err ECONNREFUSED", "dial 10.0.2.2:%s 1000", p)
	}
	g.expect("ok", "dial %s 1000", guestSMB)
	checks := time.Now()
	for _, d := range cifsDialects {
		c := &cifsCase{g: g, sh: svc.NewShareClient(d.share), mnt: "/mnt/" + d.share}
		t.Run(d.name, func(t *testing.T) {
			for _, check := range []struct {
				name string
				run  func(*testing.T, *cifsCase)
			}{
				{"Files", cifsFiles},
				{"Trees", cifsTrees},
				{"Renames", cifsRenames},
				{"Names", cifsNames},
				{"FcntlAgainstREST", cifsFcntl},
				{"FlockAgainstREST", cifsFlock},
				{"OpenAgainstRESTDelete", cifsOpenVsDelete},
				{"DeletePending", cifsDeletePending},
				{"RESTLease", cifsLease},
				{"ReadOnly", cifsReadOnly},
				{"ForceClose", cifsForceClose},
				{"WriteVisibility", cifsWriteVisibility},
			} {
				t.Run(check.name, func(t *testing.T) { check.run(t, c.on(t)) })
			}
		})
	}
	t.Run("SMBAgainstSMB", func(t *testing.T) {
		cifsTwoClients(t, &cifsCase{t: t, g: g.on(t), sh: svc.NewShareClient(cifsDialects[0].share), mnt: "/mnt/" + cifsDialects[0].share})
	})
	t.Run("Leases", func(t *testing.T) {
		cifsLeases(t, &cifsCase{t: t, g: g.on(t), sh: svc.NewShareClient(leaseShare), mnt: leaseMount}, s, data)
	})
	g.expect("ok", "umount /mnt/second")
	g.expect("ok", "umount %s", leaseSecond)
	g.expect("ok", "umount %s", leaseMount)
	t.Logf("checks on %d mounts: %v", len(cifsDialects), time.Since(checks).Round(100*time.Millisecond))
	for _, d := range cifsDialects {
		g.expect("ok", "umount /mnt/%s", d.share)
	}
	off := time.Now()
	if err := g.poweroff(); err != nil {
		t.Error(err)
	}
	t.Logf("poweroff: %v; whole test: %v", time.Since(off).Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond))
}

// cifsCase is one dialect's mount in the guest and its share over REST.
type cifsCase struct {
	t   *testing.T
	g   *vm
	sh  *share.Client
	mnt string
}

func (c *cifsCase) on(t *testing.T) *cifsCase {
	d := *c
	d.t, d.g = t, c.g.on(t)
	return &d
}

// path is a guest path on the mount, quoted for the agent.
func (c *cifsCase) path(name string) string { return strconv.QuoteToASCII(c.mnt + "/" + name) }

// guest runs a command whose arguments are already formatted.
func (c *cifsCase) expect(want, format string, args ...any) {
	c.t.Helper()
	c.g.expect(want, format, args...)
}

func (c *cifsCase) file(name string) *file.Client {
	dir, base := "", name
	if i := strings.LastIndex(name, "/"); i >= 0 {
		dir, base = name[:i], name[i+1:]
	}
	if dir == "" {
		return c.sh.NewRootDirectoryClient().NewFileClient(base)
	}
	return c.sh.NewDirectoryClient(dir).NewFileClient(base)
}

// put creates name over REST with content.
func (c *cifsCase) put(name string, content []byte) {
	c.t.Helper()
	fc := c.file(name)
	if _, err := fc.Create(testCtx(c.t), int64(len(content)), nil); err != nil {
		c.t.Fatalf("REST create %s: %v", name, err)
	}
	if len(content) > 0 {
		if err := uploadAt(testCtx(c.t), fc, 0, content); err != nil {
			c.t.Fatalf("REST upload %s: %v", name, err)
		}
	}
}

// get reads name (a range of it when count > 0) over REST; the error code
// is "" on success.
func (c *cifsCase) get(name string, off, count int64) (string, string) {
	c.t.Helper()
	resp, err := c.file(name).DownloadStream(testCtx(c.t), &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: off, Count: count}})
	if err != nil {
		return "", restCode(c.t, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("REST read %s: %v", name, err)
	}
	return string(b), ""
}

// wantGet fails unless REST reads want from name.
func (c *cifsCase) wantGet(name, want string) {
	c.t.Helper()
	if got, code := c.get(name, 0, 0); code != "" || got != want {
		c.t.Errorf("REST read %s = %q (%s), want %q", name, got, code, want)
	}
}

// wantCode fails unless a REST call answered the error code want ("" for
// success).
func (c *cifsCase) wantCode(what, got, want string) {
	c.t.Helper()
	if got != want {
		c.t.Errorf("%s: error code %q, want %q", what, got, want)
	}
}

// code is a REST call's error code ("" for success).
func (c *cifsCase) code(err error) string {
	c.t.Helper()
	return restCode(c.t, err)
}

// restCode is the x-ms-error-code of a REST failure, "" for none; a
// failure that is not a REST answer fails the test.
func restCode(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	if code := errorCode(err); code != "" {
		return code
	}
	t.Fatalf("REST call failed without an error code: %v", err)
	return ""
}

// list is the names in a directory over REST, sorted, directories ending
// in "/".
func (c *cifsCase) list(dir string) []string {
	c.t.Helper()
	d := c.sh.NewRootDirectoryClient()
	if dir != "" {
		d = c.sh.NewDirectoryClient(dir)
	}
	var names []string
	pager := d.NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{})
	for pager.More() {
		page, err := pager.NextPage(testCtx(c.t))
		if err != nil {
			c.t.Fatalf("REST list %q: %v", dir, err)
		}
		for _, f := range page.Segment.Files {
			names = append(names, *f.Name)
		}
		for _, f := range page.Segment.Directories {
			names = append(names, *f.Name+"/")
		}
	}
	slices.Sort(names)
	return names
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// Files: whole files both ways (one larger than SMB's 1 MiB read and 8
// MiB write sizes would split, several MiB), an append, a truncate.
func cifsFiles(t *testing.T, c *cifsCase) {
	c.expect("ok", "writefile %s %s", c.path("hello.txt"), strconv.Quote("hello from cifs"))
	c.wantGet("hello.txt", "hello from cifs")
	c.put("rest.txt", []byte("hello from REST"))
	c.expect(`ok "hello from REST"`, "readfile %s", c.path("rest.txt"))

	const big = 9<<20 + 12345
	c.expect("ok", "mkfile %s %d", c.path("big.bin"), big)
	if got, code := c.get("big.bin", 0, 0); code != "" || !bytes.Equal([]byte(got), pattern(big)) {
		t.Errorf("REST read of the %d bytes cifs wrote: %d bytes (%s), not the pattern", big, len(got), code)
	}
	c.put("restbig.bin", pattern(3<<20+7))
	c.expect("ok", "checkfile %s %d", c.path("restbig.bin"), 3<<20+7)

	c.expect("ok", "open a %s w+append", c.path("hello.txt"))
	c.expect("ok 4", "write a 0 %s", strconv.Quote(", ok"))
	c.expect("ok", "close a")
	c.wantGet("hello.txt", "hello from cifs, ok")
	c.expect("ok", "open a %s w+trunc", c.path("hello.txt"))
	c.expect("ok", "close a")
	c.wantGet("hello.txt", "")
	c.expect("ok 0 file", "stat %s", c.path("hello.txt"))
}

// Trees: directories made by cifs are directories to REST, and a tree made
// over REST walks the same in the guest; rmdir of a non-empty directory is
// ENOTEMPTY.
func cifsTrees(t *testing.T, c *cifsCase) {
	for _, d := range []string{"t", "t/a", "t/a/b", "t/c"} {
		c.expect("ok", "mkdir %s", c.path(d))
	}
	for _, f := range []string{"t/1.txt", "t/a/2.txt", "t/a/b/3.txt"} {
		c.expect("ok", "writefile %s %s", c.path(f), strconv.Quote(f))
	}
	if got, want := c.list("t"), []string{"1.txt", "a/", "c/"}; !slices.Equal(got, want) {
		t.Errorf("REST list t = %q, want %q", got, want)
	}
	if got, want := c.list("t/a"), []string{"2.txt", "b/"}; !slices.Equal(got, want) {
		t.Errorf("REST list t/a = %q, want %q", got, want)
	}
	c.wantGet("t/a/b/3.txt", "t/a/b/3.txt")

	for _, d := range []string{"r", "r/x", "r/x/y"} {
		if _, err := c.sh.NewDirectoryClient(d).Create(testCtx(t), nil); err != nil {
			t.Fatalf("REST create directory %s: %v", d, err)
		}
	}
	c.put("r/x/y/deep.txt", []byte("deep"))
	c.put("r/top.txt", []byte("top!!"))
	c.expect(`ok "top.txt:5" "x/" "x/y/" "x/y/deep.txt:4"`, "tree %s", c.path("r"))

	c.expect("err ENOTEMPTY", "rmdir %s", c.path("t/a/b"))
	c.expect("ok", "unlink %s", c.path("t/a/b/3.txt"))
	c.expect("ok", "rmdir %s", c.path("t/a/b"))
	if got, want := c.list("t/a"), []string{"2.txt"}; !slices.Equal(got, want) {
		t.Errorf("REST list t/a after rmdir = %q, want %q", got, want)
	}
}

// Renames: within a directory, across directories, a directory with its
// contents, over an existing file (replaced); and a REST rename the guest
// sees.
func cifsRenames(t *testing.T, c *cifsCase) {
	c.expect("ok", "mkdir %s", c.path("mv"))
	c.expect("ok", "mkdir %s", c.path("mv/d"))
	c.expect("ok", "writefile %s one", c.path("mv/one.txt"))
	c.expect("ok", "rename %s %s", c.path("mv/one.txt"), c.path("mv/uno.txt"))
	c.expect("ok", "rename %s %s", c.path("mv/uno.txt"), c.path("mv/d/eins.txt"))
	c.expect("ok", "writefile %s two", c.path("mv/two.txt"))
	c.expect("ok", "rename %s %s", c.path("mv/two.txt"), c.path("mv/d/eins.txt"))
	c.wantGet("mv/d/eins.txt", "two")
	c.expect("ok", "rename %s %s", c.path("mv/d"), c.path("mv/e"))
	if got, want := c.list("mv"), []string{"e/"}; !slices.Equal(got, want) {
		t.Errorf("REST list mv = %q, want %q", got, want)
	}
	c.wantGet("mv/e/eins.txt", "two")

	if _, err := c.file("mv/e/eins.txt").Rename(testCtx(t), "mv/renamed-by-rest.txt", nil); err != nil {
		t.Fatalf("REST rename: %v", err)
	}
	c.expect(`ok "e" "renamed-by-rest.txt"`, "ls %s", c.path("mv"))
	c.expect(`ok "two"`, "readfile %s", c.path("mv/renamed-by-rest.txt"))
}

// cifsOddNames are names Azure Files and SMB both allow that often go
// wrong somewhere between a Linux program and a URL.
var cifsOddNames = []string{
	"with space.txt", "ümlaut-ñ-日本語.txt", "emoji-😀.txt", "semi;colon,comma.txt",
	"hash#percent%20.txt", "plus+equals=amp&.txt", "brackets[{()}].txt", "tick'`~!@$^.txt",
	strings.Repeat("l", 255),
}

// Names: each odd name written by cifs reads back over REST under that
// name, and each one created over REST reads in the guest.
func cifsNames(t *testing.T, c *cifsCase) {
	c.expect("ok", "mkdir %s", c.path("names"))
	c.expect("ok", "mkdir %s", c.path("rnames"))
	for i, name := range cifsOddNames {
		c.expect("ok", "writefile %s %d", c.path("names/"+name), i)
		c.put("rnames/"+name, []byte(strconv.Itoa(i)))
	}
	want := slices.Sorted(slices.Values(cifsOddNames))
	if got := c.list("names"); !slices.Equal(got, want) {
		t.Errorf("REST list of the names cifs made = %q, want %q", got, want)
	}
	var quoted []string
	for _, n := range want {
		quoted = append(quoted, strconv.QuoteToASCII(n))
	}
	slices.Sort(quoted)
	c.expect("ok "+strings.Join(quoted, " "), "ls %s", c.path("rnames"))
	for i, name := range cifsOddNames {
		c.wantGet("names/"+name, strconv.Itoa(i))
		c.expect("ok "+strconv.Quote(strconv.Itoa(i)), "readfile %s", c.path("rnames/"+name))
	}
}

// FcntlAgainstREST: an fcntl lock through cifs is an SMB byte-range lock:
// REST reads and writes that overlap a write lock get 409
// FileLockConflict, those beside it succeed; a read lock refuses writes
// only; after unlock REST gets through.
func cifsFcntl(t *testing.T, c *cifsCase) {
	c.put("fcntl.txt", pattern(100))
	ctx := testCtx(t)
	c.expect("ok", "open l %s rw", c.path("fcntl.txt"))
	c.expect("ok", "fcntl l 10 20 wr")
	_, code := c.get("fcntl.txt", 0, 10)
	c.wantCode("REST read beside the lock", code, "")
	_, code = c.get("fcntl.txt", 15, 5)
	c.wantCode("REST read inside the lock", code, "FileLockConflict")
	c.wantCode("REST write overlapping the lock", c.code(uploadAt(ctx, c.file("fcntl.txt"), 25, []byte("xxxxxxxxxx"))), "FileLockConflict")
	c.wantCode("REST write beside the lock", c.code(uploadAt(ctx, c.file("fcntl.txt"), 40, []byte("y"))), "")
	c.expect("ok", "fcntl l 10 20 un")
	_, code = c.get("fcntl.txt", 15, 5)
	c.wantCode("REST read after unlock", code, "")
	c.expect("ok", "fcntl l 50 10 rd")
	_, code = c.get("fcntl.txt", 50, 10)
	c.wantCode("REST read of a read-locked range", code, "")
	c.wantCode("REST write to a read-locked range", c.code(uploadAt(ctx, c.file("fcntl.txt"), 55, []byte("z"))), "FileLockConflict")
	c.expect("ok", "close l")
	c.wantCode("REST write after close", c.code(uploadAt(ctx, c.file("fcntl.txt"), 55, []byte("z"))), "")
}

// FlockAgainstREST: cifs turns flock into a whole-file byte-range lock:
// LOCK_EX refuses REST reads and writes anywhere in the file, LOCK_SH
// writes only (the README's lock table).
func cifsFlock(t *testing.T, c *cifsCase) {
	c.put("flock.txt", []byte("0123456789"))
	ctx := testCtx(t)
	c.expect("ok", "open f %s rw", c.path("flock.txt"))
	c.expect("ok", "flock f ex")
	_, code := c.get("flock.txt", 8, 2)
	c.wantCode("REST read under flock LOCK_EX", code, "FileLockConflict")
	c.wantCode("REST write under flock LOCK_EX", c.code(uploadAt(ctx, c.file("flock.txt"), 0, []byte("a"))), "FileLockConflict")
	c.expect("ok", "flock f un")
	c.wantCode("REST write after LOCK_UN", c.code(uploadAt(ctx, c.file("flock.txt"), 0, []byte("a"))), "")
	c.expect("ok", "flock f sh")
	_, code = c.get("flock.txt", 0, 0)
	c.wantCode("REST read under flock LOCK_SH", code, "")
	c.wantCode("REST write under flock LOCK_SH", c.code(uploadAt(ctx, c.file("flock.txt"), 0, []byte("b"))), "FileLockConflict")
	c.expect("ok", "close f")
	c.wantGet("flock.txt", "a123456789")
}

// OpenAgainstRESTDelete: a file the guest holds open (cifs opens sharing
// read, write and delete) refuses REST Delete File with 409
// SharingViolation; REST writes, which its share mode allows, go through.
func cifsOpenVsDelete(t *testing.T, c *cifsCase) {
	c.put("held.txt", []byte("held"))
	ctx := testCtx(t)
	c.expect("ok", "open h %s rw", c.path("held.txt"))
	_, err := c.file("held.txt").Delete(ctx, nil)
	c.wantCode("REST Delete File while cifs holds the file", c.code(err), "SharingViolation")
	c.wantCode("REST write while cifs holds the file", c.code(uploadAt(ctx, c.file("held.txt"), 0, []byte("H"))), "")
	c.expect(`ok "Held"`, "read h 0 10")
	c.expect("ok", "close h")
	_, err = c.file("held.txt").Delete(ctx, nil)
	c.wantCode("REST Delete File after close", c.code(err), "")
}

// DeletePending: unlink of a file the guest still holds open makes it
// delete-pending: REST answers 409 SMBDeletePending and lists it no more,
// the open descriptor keeps working, and the last close deletes it (404).
func cifsDeletePending(t *testing.T, c *cifsCase) {
	c.put("pending.txt", []byte("still here"))
	c.expect("ok", "open p %s r", c.path("pending.txt"))
	c.expect("ok", "unlink %s", c.path("pending.txt"))
	_, err := c.file("pending.txt").GetProperties(testCtx(t), nil)
	c.wantCode("REST Get File Properties of a delete-pending file", c.code(err), "SMBDeletePending")
	if slices.Contains(c.list(""), "pending.txt") {
		t.Errorf("REST lists the delete-pending file")
	}
	c.expect(`ok "still here"`, "read p 0 100")
	c.expect("ok", "close p")
	_, err = c.file("pending.txt").GetProperties(testCtx(t), nil)
	c.wantCode("REST Get File Properties after the last close", c.code(err), "ResourceNotFound")
}

// RESTLease: a REST lease refuses the guest's opens for writing (EBUSY,
// STATUS_SHARING_VIOLATION) but not for reading; a lease cannot be
// acquired while the guest holds the file open for writing (409
// SharingViolation).
func cifsLease(t *testing.T, c *cifsCase) {
	c.put("leased.txt", []byte("leased"))
	ctx := testCtx(t)
	lc, err := lease.NewFileClient(c.file("leased.txt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lc.Acquire(ctx, nil); err != nil {
		t.Fatalf("REST acquire lease: %v", err)
	}
	c.expect("err EBUSY", "open w %s w", c.path("leased.txt"))
	c.expect("ok", "open r %s r", c.path("leased.txt"))
	c.expect(`ok "leased"`, "read r 0 100")
	c.expect("ok", "close r")
	if _, err := lc.Release(ctx, nil); err != nil {
		t.Fatalf("REST release lease: %v", err)
	}
	c.expect("ok", "open w %s w", c.path("leased.txt"))
	_, err = lc.Acquire(ctx, nil)
	c.wantCode("REST acquire lease while cifs holds the file for writing", c.code(err), "SharingViolation")
	c.expect("ok", "close w")
}

// ReadOnly: the ReadOnly attribute set over REST refuses the guest's opens
// for writing (EACCES); unlink works (cifs clears the attribute and
// deletes again).
func cifsReadOnly(t *testing.T, c *cifsCase) {
	c.put("ro.txt", []byte("read only"))
	_, err := c.file("ro.txt").SetHTTPHeaders(testCtx(t), &file.SetHTTPHeadersOptions{
		SMBProperties: &file.SMBProperties{Attributes: &file.NTFSFileAttributes{ReadOnly: true}}})
	if err != nil {
		t.Fatalf("REST set ReadOnly: %v", err)
	}
	c.expect("err EACCES", "open w %s w", c.path("ro.txt"))
	c.expect(`ok "read only"`, "readfile %s", c.path("ro.txt"))
	c.expect("ok", "unlink %s", c.path("ro.txt"))
	_, err = c.file("ro.txt").GetProperties(testCtx(t), nil)
	c.wantCode("REST Get File Properties after unlink", c.code(err), "ResourceNotFound")
}

// ForceClose: REST lists the guest's open handle and force-closes it; the
// descriptor's next read fails, and the file, no longer held, can be
// deleted over REST.
func cifsForceClose(t *testing.T, c *cifsCase) {
	c.put("forced.txt", []byte("forced"))
	ctx := testCtx(t)
	c.expect("ok", "open x %s rw", c.path("forced.txt"))
	hs, err := c.file("forced.txt").ListHandles(ctx, nil)
	if err != nil {
		t.Fatalf("REST list handles: %v", err)
	}
	if len(hs.Handles) != 1 {
		t.Fatalf("REST lists %d handles on the file the guest holds, want 1", len(hs.Handles))
	}
	fc, err := c.file("forced.txt").ForceCloseHandles(ctx, "*", nil)
	if err != nil {
		t.Fatalf("REST force close: %v", err)
	}
	if fc.NumberOfHandlesClosed == nil || *fc.NumberOfHandlesClosed != 1 {
		t.Errorf("REST force close: %v handles closed, want 1", fc.NumberOfHandlesClosed)
	}
	c.expect("err EBADF", "read x 0 10")
	t.Logf("close(2) of the force-closed descriptor: %s", c.g.do("close x")) // cifs's business
	_, err = c.file("forced.txt").Delete(ctx, nil)
	c.wantCode("REST Delete File after Force Close", c.code(err), "")
}

// WriteVisibility: FileREST reads what a write(2) through cifs wrote as
// soon as it has returned, with no fsync and the descriptor still open: on
// Azure Files and Samba's smbd an answered SMB WRITE is in the file at once,
// and blobshare commits an SMB handle's staged writes before any reader
// reads (issue 26). blobshare grants no oplock or lease, so cifs caches no
// writes: write(2) returns once the server answered its WRITE.
func cifsWriteVisibility(t *testing.T, c *cifsCase) {
	c.put("log.txt", []byte("old!"))
	c.expect("ok", "open w %s rw", c.path("log.txt"))
	c.expect("ok 4", "write w 0 new!")
	c.wantGet("log.txt", "new!")
	c.expect("ok 5", "write w 4 +more")
	c.wantGet("log.txt", "new!+more")
	c.expect("ok", "fsync w")
	c.expect("ok", "close w")
	c.wantGet("log.txt", "new!+more")
}

// SMBAgainstSMB: two SMB clients (two mounts of one share, each with its
// own connection and session) meet through the lock table: an fcntl lock
// taken through one refuses an overlapping fcntl lock and reads and
// writes of the range through the other (STATUS_LOCK_NOT_GRANTED and
// STATUS_FILE_LOCK_CONFLICT, which cifs makes EACCES); beside the range
// they go through; after unlock the other client takes the lock.
func cifsTwoClients(t *testing.T, c *cifsCase) {
	c.put("two.txt", pattern(100))
	other := strconv.QuoteToASCII("/mnt/second/two.txt")
	c.expect("ok", "open a %s rw", c.path("two.txt"))
	c.expect("ok", "open b %s rw", other)
	c.expect("ok", "fcntl a 0 10 wr")
	c.expect("err EACCES", "fcntl b 5 10 wr")
	c.expect("err EACCES", "read b 0 4")
	c.expect("err EACCES", "write b 8 xx")
	c.expect("ok 2", "write b 10 xx")
	c.expect("ok", "fcntl a 0 10 un")
	c.expect("ok", "fcntl b 5 10 wr")
	c.expect("ok", "close b")
	c.expect("ok", "close a")
}
