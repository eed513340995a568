package rclone

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	_ "github.com/rclone/rclone/backend/azurefiles"
	_ "github.com/rclone/rclone/backend/local"
	"github.com/rclone/rclone/fs"
	"github.com/rclone/rclone/fs/accounting"
	"github.com/rclone/rclone/fs/operations"
	"github.com/rclone/rclone/fs/sync"

	"github.com/blobshare/blobshare/integration/servetest"
	"github.com/blobshare/blobshare/storagehttp"
)

// The development account every blobshare serve accepts by default.
const (
	account = storagehttp.DevAccount
	key     = storagehttp.DevKey
)

var blobshareBin string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	bin, err := servetest.Build("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(filepath.Dir(bin))
	blobshareBin = bin
	return m.Run()
}

// serve starts blobshare serve (FileREST only, plus extra flags) and
// creates share, as a user would before pointing rclone at it.
func serve(t *testing.T, share string, extra ...string) *servetest.Server {
	t.Helper()
	args := append([]string{"--smb", "off", "--queue-addr", "off", "--blob-addr", "off", "--debug"}, extra...)
	s, err := servetest.Start(blobshareBin, t.TempDir(), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stop serve: %v\n%s", err, s.Stderr)
		}
	})
	cred, err := service.NewSharedKeyCredential(account, key)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.NewClientWithSharedKeyCredential(s.RESTURL+"/", cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.NewShareClient(share).Create(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// remote configures rclone's azurefiles backend the way a user's config
// would (account, key, endpoint, share_name), as an on-the-fly remote
// rooted at dir of the share.
func remote(t *testing.T, s *servetest.Server, share, dir string) fs.Fs {
	t.Helper()
	spec := fmt.Sprintf(":azurefiles,account=%s,key=%q,endpoint=%q,share_name=%s:%s", account, key, s.RESTURL, share, dir)
	f, err := fs.NewFs(context.Background(), spec)
	if err != nil {
		t.Fatalf("rclone remote: %v", err)
	}
	return f
}

// no5xx fails t if blobshare answered any request with a 5xx (serve
// --debug logs every failed request): rclone's and the SDK's retries would
// hide it from the operation's result.
func no5xx(t *testing.T, s *servetest.Server) {
	t.Helper()
	for _, line := range strings.Split(s.Stderr.String(), "\n") {
		if strings.Contains(line, " status=5") {
			t.Errorf("blobshare answered a 5xx: %s", line)
		}
	}
}

// start is serve plus the remote at the share's root, with rclone
// logging errors only.
func start(t *testing.T, share string, extra ...string) (*servetest.Server, fs.Fs) {
	t.Helper()
	s := serve(t, share, extra...)
	fs.GetConfig(context.Background()).LogLevel = fs.LogLevelError
	return s, remote(t, s, share, "")
}

func localFs(t *testing.T, dir string) fs.Fs {
	t.Helper()
	f, err := fs.NewFs(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// treeFile is one file of the test tree.
type treeFile struct {
	path string
	size int64
	seed byte
}

// content is the deterministic bytes of a file of size n.
func content(seed byte, n int64) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// base is the files' modification time: far from now, whole seconds plus
// a fraction, so a server that stamps its own time or drops the fraction
// is caught by the second sync.
var base = time.Date(2021, 3, 4, 5, 6, 7, 890_000_000, time.UTC)

func writeTree(t *testing.T, dir string, files []treeFile) {
	t.Helper()
	for i, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content(f.seed, f.size), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}

// stats resets rclone's global counters and returns a function that
// reports what ran since.
func stats() func() (transfers, deletes, errs int64) {
	s := accounting.GlobalStats()
	s.ResetCounters()
	s.ResetErrors()
	return func() (int64, int64, int64) { return s.GetTransfers(), s.GetDeletes(), s.GetErrors() }
}

// syncCounts syncs src to dst and returns what the sync did: transfers,
// deletes and errors. A failed sync ends the test, with serve's log.
func syncCounts(t *testing.T, s *servetest.Server, dst, src fs.Fs) (transfers, deletes, errs int64) {
	t.Helper()
	done := stats()
	if err := sync.Sync(context.Background(), dst, src, true); err != nil {
		t.Fatalf("sync: %v\n%s", err, s.Stderr)
	}
	return done()
}

// syncCopiesNothing syncs src, already synced to dst, again: nothing may
// be transferred, deleted or fail.
func syncCopiesNothing(t *testing.T, s *servetest.Server, dst, src fs.Fs, what string) {
	t.Helper()
	if n, d, e := syncCounts(t, s, dst, src); n != 0 || d != 0 || e != 0 {
		t.Fatalf("%s: %d transfers, %d deletes, %d errors; want none", what, n, d, e)
	}
}

func check(t *testing.T, what string, dst, src fs.Fs) {
	t.Helper()
	var differ, missing bytes.Buffer
	err := operations.Check(context.Background(), &operations.CheckOpt{Fdst: dst, Fsrc: src, Differ: &differ, MissingOnDst: &missing, MissingOnSrc: &missing})
	if err != nil {
		t.Fatalf("%s: rclone check: %v (differ: %q, missing: %q)", what, err, differ.String(), missing.String())
	}
}

// sameTree compares two local directories byte for byte and their files'
// modification times to the second.
func sameTree(t *testing.T, want, got string) {
	t.Helper()
	sum := func(root string) map[string]string {
		out := map[string]string{}
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || p == root {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if d.IsDir() {
				out[rel] = "dir"
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("%x %s", sha256.Sum256(b), info.ModTime().UTC().Truncate(time.Second))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	w, g := sum(want), sum(got)
	for _, k := range slices.Sorted(maps.Keys(w)) {
		if g[k] != w[k] {
			t.Errorf("%s: copied down as %q, want %q", k, g[k], w[k])
		}
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			t.Errorf("%s: copied down but not in the source", k)
		}
	}
}

// A user's round of rclone against blobshare: sync a tree up, check it,
// sync again (nothing copied: sizes and modification times kept), change
// the tree and sync, about, copy down, mkdir/rmdir, moveto.
func TestRcloneAzureFiles(t *testing.T) {
	ctx := context.Background()
	const share = "rclone"
	s, rf := start(t, share)

	src := t.TempDir()
	files := []treeFile{
		{"empty.txt", 0, 1},
		{"one.bin", 1, 2},
		{"small.txt", 300, 3},
		{"docs/inline-edge.bin", 64 << 10, 4},
		{"docs/over-inline.bin", 64<<10 + 1, 5},
		{"docs/deep/er/big.bin", 9<<20 + 17, 6}, // three 4 MiB chunks, in parallel
		{"media/exactly-4MiB.bin", 4 << 20, 7},
	}
	writeTree(t, src, files)
	if err := os.MkdirAll(filepath.Join(src, "empty-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	lf := localFs(t, src)

	if n, _, e := syncCounts(t, s, rf, lf); n != int64(len(files)) || e != 0 {
		t.Fatalf("first sync: %d transfers, %d errors; want %d, 0", n, e, len(files))
	}
	check(t, "after the first sync", rf, lf)
	for i, f := range files {
		o, err := rf.NewObject(ctx, f.path)
		if err != nil {
			t.Fatalf("%s on the share: %v", f.path, err)
		}
		want := base.Add(time.Duration(i) * time.Hour)
		if got := o.ModTime(ctx); !got.Truncate(time.Second).Equal(want.Truncate(time.Second)) {
			t.Errorf("%s: modification time on the share %v, want %v", f.path, got, want)
		}
	}
	if _, err := rf.NewObject(ctx, "empty-dir"); !errors.Is(err, fs.ErrorIsDir) && !errors.Is(err, fs.ErrorObjectNotFound) {
		t.Errorf("empty-dir: %v", err)
	}
	entries, err := rf.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Remote() == "empty-dir" }) {
		t.Errorf("the empty directory was not synced: %v", entries)
	}

	t.Run("SecondSyncCopiesNothing", func(t *testing.T) {
		syncCopiesNothing(t, s, rf, lf, "second sync of an unchanged tree")
	})

	t.Run("ChangesSync", func(t *testing.T) {
		p := filepath.Join(src, "small.txt")
		if err := os.WriteFile(p, []byte("edited, same name, other size"), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(-time.Hour)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
		// Same size, other bytes and time: a size-only check would miss it.
		big := filepath.Join(src, "docs/deep/er/big.bin")
		b := content(6, 9<<20+17)
		copy(b[5<<20:], "changed in the middle")
		if err := os.WriteFile(big, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(big, base.Add(48*time.Hour), base.Add(48*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(src, "one.bin")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, "docs/new.txt"), []byte("new"), 0o644); err != nil {
			t.Fatal(err)
		}
		if n, d, e := syncCounts(t, s, rf, lf); n != 3 || d != 1 || e != 0 {
			t.Fatalf("sync after 2 edits, 1 delete, 1 new file: %d transfers, %d deletes, %d errors; want 3, 1, 0", n, d, e)
		}
		check(t, "after syncing changes", rf, lf)
		if n, _, _ := syncCounts(t, s, rf, lf); n != 0 {
			t.Fatalf("sync after the changes were synced: %d transfers, want 0", n)
		}
	})

	t.Run("About", func(t *testing.T) {
		u, err := rf.Features().About(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		err = filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				info, ierr := d.Info()
				if ierr != nil {
					return ierr
				}
				want += info.Size()
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if u.Used == nil || *u.Used != want {
			t.Fatalf("about: used %v, want the %d bytes of the synced files", u.Used, want)
		}
	})

	t.Run("CopyDown", func(t *testing.T) {
		down := t.TempDir()
		if err := sync.CopyDir(ctx, localFs(t, down), rf, true); err != nil {
			t.Fatal(err)
		}
		check(t, "copied down", localFs(t, down), rf)
		sameTree(t, src, down)
	})

	t.Run("MkdirRmdir", func(t *testing.T) {
		if err := operations.Mkdir(ctx, rf, "made/by/rclone"); err != nil {
			t.Fatal(err)
		}
		entries, err := rf.List(ctx, "made/by")
		if err != nil || len(entries) != 1 || entries[0].Remote() != "made/by/rclone" {
			t.Fatalf("list made/by: %v, %v", entries, err)
		}
		if err := operations.Rmdir(ctx, rf, "made/by"); err == nil {
			t.Fatalf("rmdir of a non-empty directory succeeded")
		}
		for _, d := range []string{"made/by/rclone", "made/by", "made"} {
			if err := operations.Rmdir(ctx, rf, d); err != nil {
				t.Fatalf("rmdir %s: %v", d, err)
			}
		}
		if _, err := rf.List(ctx, "made"); !errors.Is(err, fs.ErrorDirNotFound) {
			t.Fatalf("list of the removed directory: %v, want ErrorDirNotFound", err)
		}
	})

	t.Run("Moveto", func(t *testing.T) {
		before, err := rf.NewObject(ctx, "docs/deep/er/big.bin")
		if err != nil {
			t.Fatal(err)
		}
		done := stats()
		if err := operations.MoveFile(ctx, rf, rf, "archive/big-moved.bin", "docs/deep/er/big.bin"); err != nil {
			t.Fatal(err)
		}
		if _, _, e := done(); e != 0 {
			t.Fatalf("moveto: %d errors", e)
		}
		if _, err := rf.NewObject(ctx, "docs/deep/er/big.bin"); !errors.Is(err, fs.ErrorObjectNotFound) {
			t.Fatalf("source after moveto: %v, want ErrorObjectNotFound", err)
		}
		after, err := rf.NewObject(ctx, "archive/big-moved.bin")
		if err != nil {
			t.Fatal(err)
		}
		if after.Size() != before.Size() || !after.ModTime(ctx).Equal(before.ModTime(ctx)) {
			t.Fatalf("moved file: size %d, time %v; was %d, %v", after.Size(), after.ModTime(ctx), before.Size(), before.ModTime(ctx))
		}
		got := readObject(t, after)
		want, _ := os.ReadFile(filepath.Join(src, "docs/deep/er/big.bin"))
		if !bytes.Equal(got, want) {
			t.Fatalf("moved file's content: %d bytes; want the %d synced", len(got), len(want))
		}
	})

	no5xx(t, s)
	if t.Failed() {
		t.Logf("serve log:\n%s", strings.TrimSpace(s.Stderr.String()))
	}
}
