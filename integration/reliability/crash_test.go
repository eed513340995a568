package reliability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
	"github.com/blobshare/blobshare/integration/servetest"
)

const crashShare = "crash"

// crashRig is the state of the crash matrix across kills: the model of
// every file and the acknowledged deletes.
type crashRig struct {
	t    *testing.T
	data string
	mnt  string
	seed uint64

	restSlots  []*slotFile // written by REST only
	mountSlots []*slotFile // written by the mount only
	shared     *slotFile   // even slots by the mount, odd slots by REST
	restWhole  *wholeFile
	mountWhole *wholeFile
	recreated  *wholeFile // replaced in place by REST Create File, properties and all

	mu      sync.Mutex
	deleted []string // names whose delete was acknowledged
	passed  map[string]int
	failed  map[string]int
}

func (r *crashRig) pass(check string) {
	r.mu.Lock()
	r.passed[check]++
	r.mu.Unlock()
}

func (r *crashRig) fail(check string, format string, args ...any) {
	r.t.Helper()
	r.mu.Lock()
	r.failed[check]++
	n := 0
	for _, c := range r.failed {
		n += c
	}
	r.mu.Unlock()
	r.t.Errorf("[%s] "+format, append([]any{check}, args...)...)
	if n > 30 {
		r.t.Fatal("too many failures; stopping the crash matrix")
	}
}

func (r *crashRig) check(check string, err error) {
	r.t.Helper()
	if err != nil {
		r.fail(check, "%v", err)
		return
	}
	r.pass(check)
}

// TestCrashMatrix SIGKILLs `blobshare serve --mount` at seeded random
// moments while REST and mount clients write whole slots, resize, replace
// files by rename and delete open files, then restarts it and checks that
// nothing acknowledged was lost, nothing is torn and nothing of the dead
// process remains. BLOBSHARE_CRASH_KILLS (default 30) and
// BLOBSHARE_CRASH_SEED (default 1) choose the run.
func TestCrashMatrix(t *testing.T) {
	requireMountable(t)
	kills := envInt(t, "BLOBSHARE_CRASH_KILLS", 30)
	seed := uint64(envInt(t, "BLOBSHARE_CRASH_SEED", 1))
	r := &crashRig{
		t: t, data: t.TempDir(), mnt: t.TempDir(), seed: seed,
		restSlots: []*slotFile{
			newSlotFile(1, "p0", 96<<10, 48, 0), // 4.5 MiB: slot 42 straddles the 4 MiB block boundary
			newSlotFile(2, "p1", 4<<10, 12, 0),  // ≤ 48 KiB: stays inline in SQLite
		},
		mountSlots: []*slotFile{
			newSlotFile(3, "s0", 64<<10, 20, 0),
			newSlotFile(4, "s1", 2<<10, 16, 0),
		},
		shared:     newSlotFile(5, "x0", 128<<10, 16, 16*128<<10),
		restWhole:  &wholeFile{id: 6, name: "rw0"},
		mountWhole: &wholeFile{id: 7, name: "mw0"},
		recreated:  &wholeFile{id: 8, name: "cr0"},
		passed:     map[string]int{},
		failed:     map[string]int{},
	}
	ctx := context.Background()
	s := r.start()
	r.setup(ctx, s)
	for k := 0; k < kills; k++ {
		rng := rand.New(rand.NewPCG(seed, uint64(k)))
		delay := time.Duration(50+rng.IntN(1200)) * time.Millisecond
		r.round(ctx, s, k, delay)
		s = r.start()
		r.verify(ctx, s, k)
		if t.Failed() && k > 3 && r.failedTotal() > 30 {
			break
		}
	}
	if err := s.Stop(); err != nil {
		t.Errorf("final serve did not stop cleanly: %v\n%s", err, s.Stderr)
	}
	r.report(kills)
}

func (r *crashRig) failedTotal() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.failed {
		n += c
	}
	return n
}

func (r *crashRig) report(kills int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for n := range r.passed {
		names = append(names, n)
	}
	for n := range r.failed {
		if _, ok := r.passed[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	total, bad := 0, 0
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "  %-22s passed %5d  failed %d\n", n, r.passed[n], r.failed[n])
		total += r.passed[n]
		bad += r.failed[n]
	}
	msg := fmt.Sprintf("crash matrix (seed %d): %d kills, %d checks passed, %d failed\n%s", r.seed, kills, total, bad, b.String())
	r.t.Log(msg)
	fmt.Print(msg)
}

func (r *crashRig) start() *server {
	r.t.Helper()
	s, err := servetest.Start(blobshareBin, r.data, "--mount", r.mnt)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { s.Stop() })
	return s
}

func (r *crashRig) share(s *server) *share.Client {
	return serviceClient(r.t, s.RESTURL, -1).NewShareClient(crashShare)
}

func (r *crashRig) fileClient(s *server, name string) *file.Client {
	return r.share(s).NewRootDirectoryClient().NewFileClient(name)
}

// setup creates the share and every file at its initial size.
func (r *crashRig) setup(ctx context.Context, s *server) {
	t := r.t
	if _, err := serviceClient(t, s.RESTURL, 3).CreateShare(ctx, crashShare, nil); err != nil {
		t.Fatalf("create share: %v", err)
	}
	for _, f := range append(append([]*slotFile{r.shared}, r.restSlots...), r.mountSlots...) {
		if _, err := r.fileClient(s, f.name).Create(ctx, f.state.size, nil); err != nil {
			t.Fatalf("create %s: %v", f.name, err)
		}
	}
	if _, err := r.fileClient(s, "locked").Create(ctx, 8192, nil); err != nil {
		t.Fatalf("create locked: %v", err)
	}
	if err := r.createRecreated(ctx, r.fileClient(s, r.recreated.name), 0); err != nil {
		t.Fatalf("create %s: %v", r.recreated.name, err)
	}
}

// worker is one client loop; it returns the error that stopped it.
type worker func(ctx context.Context, stop *atomic.Bool) error

// round runs every client against s until s is killed after delay.
func (r *crashRig) round(ctx context.Context, s *server, k int, delay time.Duration) {
	t := r.t
	var stop, killed atomic.Bool
	mdir := filepath.Join(s.Mount, crashShare)
	var workers []worker
	for i, f := range r.restSlots {
		workers = append(workers, r.restSlotWriter(s, f, 0, nil, true, r.rng(k, 10+i)))
	}
	for i, f := range r.mountSlots {
		workers = append(workers, r.mountSlotWriter(mdir, f, 0, nil, true, r.rng(k, 20+i)))
	}
	var even, odd []int
	for i := 0; i < r.shared.maxSlots; i++ {
		if i%2 == 0 {
			even = append(even, i)
		} else {
			odd = append(odd, i)
		}
	}
	workers = append(workers,
		r.mountSlotWriter(mdir, r.shared, 0, even, false, r.rng(k, 30)),
		r.restSlotWriter(s, r.shared, 1, odd, false, r.rng(k, 31)),
		r.restRenamer(s, k),
		r.restRecreator(s),
		r.mountRenamer(mdir, k),
		r.deleter(s, mdir, k),
		r.locker(mdir),
	)
	errs := make([]error, len(workers))
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := w(ctx, &stop)
			if err != nil && !killed.Load() {
				errs[i] = err // failed while the server was alive: a spurious failure
			}
		}()
	}
	time.Sleep(delay)
	killed.Store(true)
	stop.Store(true)
	wedged, err := s.Kill()
	if err != nil {
		t.Fatalf("round %d: %v\n%s", k, err, lastLines(s.Stderr.String(), 20))
	}
	var werr error
	if wedged != "" {
		werr = fmt.Errorf("FINDING: round %d: SIGKILLed serve --mount could not exit (a thread stuck in the kernel on its own mount) until its FUSE connection was aborted through fusectl; meanwhile its pid lives, so its handles, locks and commit intents are not reaped. Stuck:\n%s", k, wedged)
	}
	r.check("serve-exits-after-sigkill", werr)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("round %d: clients still blocked 60 s after the kill (dead mount not aborted?)", k)
	}
	for i, err := range errs {
		r.check("client-no-error", wrapf(err, "round %d client %d", k, i))
	}
}

func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

func (r *crashRig) rng(k, w int) *rand.Rand {
	return rand.New(rand.NewPCG(r.seed^uint64(w)<<40, uint64(k)))
}

// restSlotWriter writes whole slots with Put Range and, when resize is
// set, resizes with Set File Properties. slots limits it to some slots (nil:
// all); REST cannot write past the end, so it resizes first when needed.
func (r *crashRig) restSlotWriter(s *server, f *slotFile, w int, slots []int, resize bool, rng *rand.Rand) worker {
	fc := r.fileClient(s, f.name)
	return func(ctx context.Context, stop *atomic.Bool) error {
		for !stop.Load() {
			cur := f.slots()
			var op slotOp
			if resize && (cur == 0 || rng.IntN(6) == 0) {
				op = slotOp{trunc: true, n: rng.IntN(f.maxSlots + 1)}
			} else {
				op = slotOp{slot: pick(rng, slots, cur)}
				if op.slot < 0 {
					continue
				}
			}
			op = f.begin(w, op)
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			var err error
			if op.trunc {
				_, err = fc.Resize(cctx, int64(op.n*f.slotLen), nil)
			} else {
				b := record(f.id, uint32(op.slot), op.ver, f.slotLen)
				_, err = fc.UploadRange(cctx, int64(op.slot*f.slotLen), streaming.NopCloser(bytes.NewReader(b)), nil)
			}
			cancel()
			if err != nil {
				return fmt.Errorf("%s %v: %w", f.name, op, err)
			}
			f.ack(w)
		}
		return nil
	}
}

// pick chooses one of slots (nil: any) below limit, -1 if none.
func pick(rng *rand.Rand, slots []int, limit int) int {
	if slots == nil {
		if limit <= 0 {
			return -1
		}
		return rng.IntN(limit)
	}
	var ok []int
	for _, s := range slots {
		if s < limit {
			ok = append(ok, s)
		}
	}
	if len(ok) == 0 {
		return -1
	}
	return ok[rng.IntN(len(ok))]
}

// mountSlotWriter writes whole slots with pwrite and, when resize is set,
// resizes with ftruncate; every operation is acknowledged by fsync.
func (r *crashRig) mountSlotWriter(mdir string, f *slotFile, w int, slots []int, resize bool, rng *rand.Rand) worker {
	return func(ctx context.Context, stop *atomic.Bool) error {
		fd, err := os.OpenFile(filepath.Join(mdir, f.name), os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer fd.Close()
		for !stop.Load() {
			var op slotOp
			if resize && rng.IntN(6) == 0 {
				op = slotOp{trunc: true, n: rng.IntN(f.maxSlots + 1)}
			} else {
				op = slotOp{slot: pick(rng, slots, f.maxSlots)}
			}
			op = f.begin(w, op)
			if op.trunc {
				err = fd.Truncate(int64(op.n * f.slotLen))
			} else {
				_, err = fd.WriteAt(record(f.id, uint32(op.slot), op.ver, f.slotLen), int64(op.slot*f.slotLen))
			}
			if err == nil {
				err = fd.Sync()
			}
			if err != nil {
				return fmt.Errorf("%s %v: %w", f.name, op, err)
			}
			f.ack(w)
		}
		return nil
	}
}

// restRenamer replaces rw0 by creating a temporary file, writing it with
// one Put Range and renaming it over rw0 (acknowledged by the rename).
func (r *crashRig) restRenamer(s *server, k int) worker {
	f := r.restWhole
	root := r.share(s).NewRootDirectoryClient()
	return func(ctx context.Context, stop *atomic.Bool) error {
		for !stop.Load() {
			v := f.begin()
			b := record(f.id, 0, v, wholeLen(v))
			tmp := fmt.Sprintf("tmp-%s-%d", f.name, v)
			fc := root.NewFileClient(tmp)
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_, err := fc.Create(cctx, int64(len(b)), nil)
			if err == nil {
				_, err = fc.UploadRange(cctx, 0, streaming.NopCloser(bytes.NewReader(b)), nil)
			}
			if err == nil {
				_, err = fc.Rename(cctx, f.name, &file.RenameOptions{ReplaceIfExists: to.Ptr(true)})
			}
			cancel()
			if err != nil {
				return fmt.Errorf("%s version %d: %w", f.name, v, err)
			}
			f.ack()
		}
		return nil
	}
}

// Version v of cr0, as each Create File over it sets it: zeros of
// recreatedLen(v) bytes (past the inline size: a blob commit) with the
// properties of v.
func recreatedLen(v uint32) int64 { return 70_000 + int64(v%5)*30_000 }

func recreatedLastWrite(v uint32) time.Time {
	return time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(v) * time.Second)
}

func (r *crashRig) createRecreated(ctx context.Context, fc *file.Client, v uint32) error {
	_, err := fc.Create(ctx, recreatedLen(v), &file.CreateOptions{
		HTTPHeaders:   &file.HTTPHeaders{ContentType: to.Ptr(fmt.Sprintf("application/x-version-%d", v))},
		Metadata:      map[string]*string{"version": to.Ptr(fmt.Sprint(v))},
		SMBProperties: &file.SMBProperties{LastWriteTime: to.Ptr(recreatedLastWrite(v)), Attributes: &file.NTFSFileAttributes{Hidden: v%2 == 1, Archive: v%2 == 0}},
	})
	return err
}

// restRecreator replaces cr0 in place with REST Create File over it, each
// version with its own size, content type, metadata, attributes and
// last-write time: after a crash the file must be one version whole.
func (r *crashRig) restRecreator(s *server) worker {
	f := r.recreated
	fc := r.fileClient(s, f.name)
	return func(ctx context.Context, stop *atomic.Bool) error {
		for !stop.Load() {
			v := f.begin()
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err := r.createRecreated(cctx, fc, v)
			cancel()
			if err != nil {
				return fmt.Errorf("%s version %d: %w", f.name, v, err)
			}
			f.ack()
		}
		return nil
	}
}

// checkRecreated checks that cr0 is wholly one version, the acknowledged
// one or the one in flight: content, size, content type, metadata,
// attributes and last-write time all of the same version.
func (r *crashRig) checkRecreated(ctx context.Context, s *server) error {
	f := r.recreated
	fc := r.fileClient(s, f.name)
	p, err := fc.GetProperties(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	var v uint32
	if _, err := fmt.Sscanf(deref(p.ContentType), "application/x-version-%d", &v); err != nil {
		return fmt.Errorf("%s: content type %q", f.name, deref(p.ContentType))
	}
	var mismatches []string
	if got := deref(p.Metadata["Version"]) + deref(p.Metadata["version"]); got != fmt.Sprint(v) {
		mismatches = append(mismatches, fmt.Sprintf("metadata version %q", got))
	}
	if p.ContentLength == nil || *p.ContentLength != recreatedLen(v) {
		mismatches = append(mismatches, fmt.Sprintf("size %v (version %d has %d)", deref(p.ContentLength), v, recreatedLen(v)))
	}
	if p.FileLastWriteTime == nil || !p.FileLastWriteTime.Equal(recreatedLastWrite(v)) {
		mismatches = append(mismatches, fmt.Sprintf("last write time %v", p.FileLastWriteTime))
	}
	if attrs := deref(p.FileAttributes); strings.Contains(attrs, "Hidden") != (v%2 == 1) {
		mismatches = append(mismatches, fmt.Sprintf("attributes %q", attrs))
	}
	b, _, err := download(ctx, fc)
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	if int64(len(b)) != recreatedLen(v) || !bytes.Equal(b, make([]byte, len(b))) {
		mismatches = append(mismatches, fmt.Sprintf("content of %d bytes, not %d zeros", len(b), recreatedLen(v)))
	}
	if len(mismatches) > 0 {
		return fmt.Errorf("%s: content type of version %d but %s", f.name, v, strings.Join(mismatches, ", "))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if v != f.acked && v != f.inflight {
		return fmt.Errorf("%s: holds version %d; acknowledged %d, in flight %d", f.name, v, f.acked, f.inflight)
	}
	f.acked, f.inflight = v, 0
	return nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// mountRenamer replaces mw0 the way editors save: write a temporary file,
// fsync (even versions only: a successful close must be enough), close,
// rename over the name.
func (r *crashRig) mountRenamer(mdir string, k int) worker {
	f := r.mountWhole
	return func(ctx context.Context, stop *atomic.Bool) error {
		for !stop.Load() {
			v := f.begin()
			tmp := filepath.Join(mdir, fmt.Sprintf("tmp-%s-%d", f.name, v))
			fd, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			_, err = fd.Write(record(f.id, 0, v, wholeLen(v)))
			if err == nil && v%2 == 0 {
				err = fd.Sync() // odd versions: close alone is the acknowledgement
			}
			if cerr := fd.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = os.Rename(tmp, filepath.Join(mdir, f.name))
			}
			if err != nil {
				return fmt.Errorf("%s version %d: %w", f.name, v, err)
			}
			f.ack()
		}
		return nil
	}
}

// deleter creates files and deletes them: on the mount while a descriptor
// keeps them open (so the delete is pending until the close, which the
// crash prevents), and over REST. Acknowledged deletes are remembered.
func (r *crashRig) deleter(s *server, mdir string, k int) worker {
	root := r.share(s).NewRootDirectoryClient()
	return func(ctx context.Context, stop *atomic.Bool) error {
		var held []*os.File
		defer func() {
			for _, fd := range held {
				fd.Close()
			}
		}()
		for i := 0; !stop.Load(); i++ {
			name := fmt.Sprintf("del-%d-%d", k, i)
			p := filepath.Join(mdir, name)
			if err := os.WriteFile(p, record(99, uint32(i), uint32(k+1), 100_000), 0o644); err != nil {
				return err
			}
			fd, err := os.Open(p)
			if err != nil {
				return err
			}
			held = append(held, fd)
			if err := os.Remove(p); err != nil {
				return err
			}
			r.deletedAck(name)

			name = fmt.Sprintf("rdel-%d-%d", k, i)
			fc := root.NewFileClient(name)
			b := record(98, uint32(i), uint32(k+1), 100_000)
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_, err = fc.Create(cctx, int64(len(b)), nil)
			if err == nil {
				_, err = fc.UploadRange(cctx, 0, streaming.NopCloser(bytes.NewReader(b)), nil)
			}
			if err == nil {
				_, err = fc.Delete(cctx, nil)
			}
			cancel()
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			r.deletedAck(name)
		}
		return nil
	}
}

func (r *crashRig) deletedAck(name string) {
	r.mu.Lock()
	r.deleted = append(r.deleted, name)
	r.mu.Unlock()
}

// locker holds an fcntl write lock on the first 4 KiB of "locked" until the
// crash.
func (r *crashRig) locker(mdir string) worker {
	return func(ctx context.Context, stop *atomic.Bool) error {
		fd, err := os.OpenFile(filepath.Join(mdir, "locked"), os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer fd.Close()
		lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: 0, Len: 4096}
		if err := syscall.FcntlFlock(fd.Fd(), syscall.F_SETLK, &lk); err != nil {
			return fmt.Errorf("F_SETLK on locked: %w", err)
		}
		for !stop.Load() {
			time.Sleep(10 * time.Millisecond)
		}
		return nil
	}
}

// download returns a file's content over REST; exists is false on 404.
func download(ctx context.Context, fc *file.Client) (b []byte, exists bool, err error) {
	resp, err := fc.DownloadStream(ctx, nil)
	if err != nil {
		if errorCode(err) == "ResourceNotFound" {
			return nil, false, nil
		}
		return nil, false, err
	}
	defer resp.Body.Close()
	b, err = io.ReadAll(resp.Body)
	return b, true, err
}

// errorCode is the Azure error code of an SDK error ("" if none).
func errorCode(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// verify runs every check against the restarted server s.
func (r *crashRig) verify(ctx context.Context, s *server, k int) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	db := openDB(r.t, r.data)
	defer db.Close()

	rep, err := integrityCheck(ctx, db)
	if err == nil && rep != "ok" {
		err = fmt.Errorf("integrity_check: %s", rep)
	}
	r.check("sqlite-integrity", wrapf(err, "after kill %d", k))

	mdir := filepath.Join(s.Mount, crashShare)
	for _, f := range append(append([]*slotFile{r.shared}, r.restSlots...), r.mountSlots...) {
		b, exists, err := download(ctx, r.fileClient(s, f.name))
		if err == nil && !exists {
			err = fmt.Errorf("%s is gone", f.name)
		}
		if err != nil {
			r.fail("slot-file-content", "after kill %d: %v", k, err)
			continue
		}
		got, err := f.observe(b)
		if err == nil {
			err = f.settle(got)
		}
		r.check("slot-file-content", wrapf(err, "after kill %d", k))
		mb, err := os.ReadFile(filepath.Join(mdir, f.name))
		if err == nil && !bytes.Equal(mb, b) {
			err = fmt.Errorf("%s: the mount reads %d bytes that differ from REST's %d", f.name, len(mb), len(b))
		}
		r.check("mount-matches-rest", wrapf(err, "after kill %d", k))
	}
	for _, f := range []*wholeFile{r.restWhole, r.mountWhole} {
		b, exists, err := download(ctx, r.fileClient(s, f.name))
		if err == nil {
			err = f.settle(b, exists)
		}
		r.check("whole-file-version", wrapf(err, "after kill %d", k))
	}
	r.check("recreated-file-whole", wrapf(r.checkRecreated(ctx, s), "after kill %d", k))

	r.mu.Lock()
	deleted := append([]string(nil), r.deleted...)
	r.mu.Unlock()
	for _, name := range deleted {
		_, err := r.fileClient(s, name).GetProperties(ctx, nil)
		switch code := errorCode(err); {
		case err == nil:
			err = fmt.Errorf("%s: acknowledged delete, but the file is still there", name)
		case code == "ResourceNotFound":
			err = nil
		default:
			err = fmt.Errorf("%s: acknowledged delete, Get File Properties answers %v", name, err)
		}
		r.check("delete-completed", wrapf(err, "after kill %d", k))
	}
	r.mu.Lock()
	r.deleted = r.deleted[:0] // checked once: their names are never reused
	r.mu.Unlock()

	for _, q := range []struct{ check, sql string }{
		{"no-dead-handles", `SELECT COUNT(*) FROM lk_handles`},
		{"no-dead-locks", `SELECT COUNT(*) FROM lk_locks`},
		{"no-pending-deletes", `SELECT COUNT(*) FROM lk_files WHERE delete_pending != 0`},
		{"no-pending-deletes", `SELECT COUNT(*) FROM ns_entries WHERE unlinked != 0`},
		{"no-open-intents", `SELECT COUNT(*) FROM ns_intents`},
		{"blob-gc-queue-empty", `SELECT COUNT(*) FROM ns_gc`},
	} {
		n, err := queryInt(ctx, db, q.sql)
		// The mount reads above end with a RELEASE, which reaches the live
		// server after close(2) returned and leaves the lock table within
		// a millisecond or so (fs.Handle.Release): its handle is not a
		// dead one, so the count may take a moment to reach 0.
		for deadline := time.Now().Add(5 * time.Second); err == nil && n != 0 && q.check == "no-dead-handles" && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
			n, err = queryInt(ctx, db, q.sql)
		}
		if err == nil && n != 0 {
			err = fmt.Errorf("%s = %d, want 0", q.sql, n)
		}
		r.check(q.check, wrapf(err, "after kill %d", k))
	}

	hs, err := r.share(s).NewRootDirectoryClient().ListHandles(ctx, &directory.ListHandlesOptions{Recursive: to.Ptr(true)})
	if err == nil && len(hs.Handles) != 0 {
		err = fmt.Errorf("List Handles shows %d handles of the dead server", len(hs.Handles))
	}
	r.check("list-handles-empty", wrapf(err, "after kill %d", k))

	// The dead mount's byte-range lock must be gone: REST may write there.
	_, err = r.fileClient(s, "locked").UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader(make([]byte, 4096))), nil)
	r.check("byte-range-lock-released", wrapf(err, "after kill %d: Put Range over the dead mount's lock", k))

	// serve collects orphaned blob data in the background right after it
	// starts: give it a few seconds.
	var errs [2]error
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		errs = r.blobErrors(ctx)
		if (errs[0] == nil && errs[1] == nil) || time.Since(start) > 10*time.Second {
			break
		}
	}
	r.check("orphan-blobs-collected", wrapf(errs[0], "after kill %d", k))
	r.check("staged-leftovers-collected", wrapf(errs[1], "after kill %d", k))
	r.cleanTemps(ctx, s)
}

// blobErrors compares the blob store's keys with the namespace: every key
// must belong to a live file whose content is a blob (errs[0]), and no
// staged or half-written crash leftovers may remain in a key's directory
// (errs[1]).
func (r *crashRig) blobErrors(ctx context.Context) (errs [2]error) {
	db := openDB(r.t, r.data)
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT id FROM ns_entries WHERE kind = 1 AND blob = 1`)
	if err != nil {
		return [2]error{err}
	}
	live := map[string]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return [2]error{err}
		}
		live[fmt.Sprintf("f%016x", uint64(id))] = true
	}
	rows.Close()
	keysDir := filepath.Join(r.data, "blobs", "keys")
	ents, err := os.ReadDir(keysDir)
	if err != nil {
		return [2]error{err}
	}
	var orphans, leftovers []string
	for _, e := range ents {
		files, err := os.ReadDir(filepath.Join(keysDir, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue // collected while we looked
		}
		if err != nil {
			return [2]error{err}
		}
		if !live[e.Name()] {
			// An empty directory or a bare lock file is no blob; a
			// manifest or block data is.
			for _, f := range files {
				if f.Name() != "lock" {
					orphans = append(orphans, e.Name()+"/"+f.Name())
				}
			}
			continue
		}
		for _, f := range files {
			n := f.Name()
			if strings.HasPrefix(n, "s-") || strings.HasPrefix(n, "t-") || strings.HasPrefix(n, "mt-") {
				leftovers = append(leftovers, e.Name()+"/"+n)
			}
		}
	}
	if len(orphans) > 0 {
		errs[0] = fmt.Errorf("%d blob files belong to no live file 10 s after restart: %v", len(orphans), first(orphans, 5))
	}
	if len(leftovers) > 0 {
		errs[1] = fmt.Errorf("%d staged or half-written blob files of dead commits remain 10 s after restart: %v", len(leftovers), first(leftovers, 5))
	}
	return errs
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// cleanTemps deletes temporary files of interrupted renames and files the
// deleter created but had not deleted when the server died.
func (r *crashRig) cleanTemps(ctx context.Context, s *server) {
	root := r.share(s).NewRootDirectoryClient()
	pager := root.NewListFilesAndDirectoriesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			r.t.Errorf("list %s: %v", crashShare, err)
			return
		}
		for _, f := range page.Segment.Files {
			n := *f.Name
			if strings.HasPrefix(n, "tmp-") || strings.HasPrefix(n, "del-") || strings.HasPrefix(n, "rdel-") {
				if _, err := root.NewFileClient(n).Delete(ctx, nil); err != nil {
					r.t.Errorf("delete leftover %s: %v", n, err)
				}
			}
		}
	}
}
