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
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
)

// legitimate are, per operation, the refusals a contended operation may
// get: the outcome of a race the client lost or of a lock another client
// holds, never a server failure. An operation not listed may not fail.
var legitimate = map[string][]string{
	"get file":         {"FileLockConflict"}, // the mount's fcntl lock on slot 9
	"delete file":      {"ResourceNotFound"},
	"create directory": {"ResourceAlreadyExists"},
	"delete directory": {"ResourceNotFound", "DirectoryNotEmpty"},
	"rename file":      {"ResourceNotFound"},
	"acquire lease":    {"LeaseAlreadyPresent"},
}

const (
	hotFiles     = 4
	hotSlotLen   = 64 << 10
	hotRESTSlots = 8 // slots 0..7 of each hot file: REST clients
	hotSlots     = 10
	restClients  = 32
)

// tally counts outcomes per operation.
type tally struct {
	mu       sync.Mutex
	ok       map[string]int
	legit    map[string]int
	spurious []string
}

func (t *tally) add(op string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch code := errorCode(err); {
	case err == nil:
		t.ok[op]++
	case slices.Contains(legitimate[op], code):
		t.legit[op+" "+code]++
	default:
		t.spurious = append(t.spurious, fmt.Sprintf("%s: %v", op, err))
	}
}

// TestContention runs 32 REST clients, split over two `blobshare serve`
// processes on one data directory (so SQLite is contended across
// processes), and mount writers holding byte-range locks, all hammering
// four files and one directory. Every failure must be a legitimate lock or
// race outcome; SQLITE_BUSY never surfaces; everything finishes before a
// deadline; every acknowledged write is there at the end.
func TestContention(t *testing.T) {
	requireMountable(t)
	ops := envInt(t, "BLOBSHARE_CONTENTION_OPS", 40)
	data := t.TempDir()
	a := startServe(t, data, "--mount", t.TempDir())
	// No Blob endpoint on the second: this test is about FileREST and
	// the mount (two Blob endpoints on one directory are
	// cmd/blobshare's TestTwoServes* tests).
	b := startServe(t, data, "--blob-addr", "off")
	ctx := context.Background()
	svc := serviceClient(t, a.RESTURL, -1)
	if _, err := svc.CreateShare(ctx, "hot", nil); err != nil {
		t.Fatal(err)
	}
	shares := []*share.Client{
		serviceClient(t, a.RESTURL, -1).NewShareClient("hot"),
		serviceClient(t, b.RESTURL, -1).NewShareClient("hot"),
	}
	root := shares[0].NewRootDirectoryClient()
	for i := 0; i < hotFiles; i++ {
		if _, err := root.NewFileClient(fmt.Sprintf("hot%d", i)).Create(ctx, hotSlots*hotSlotLen, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := root.NewFileClient("leased").Create(ctx, 4096, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := root.NewSubdirectoryClient("d").Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	hot := make([]*slotFile, hotFiles)
	for i := range hot {
		hot[i] = newSlotFile(uint32(10+i), fmt.Sprintf("hot%d", i), hotSlotLen, hotSlots, hotSlots*hotSlotLen)
	}

	tl := &tally{ok: map[string]int{}, legit: map[string]int{}}
	var wg sync.WaitGroup
	stopMount := make(chan struct{})
	for c := 0; c < restClients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			restClient(ctx, c, shares[c%2], hot, ops, tl)
		}()
	}
	var mwg sync.WaitGroup
	mdir := filepath.Join(a.Mount, "hot")
	for w := 0; w < hotFiles; w++ {
		mwg.Add(1)
		go func() {
			defer mwg.Done()
			mountClient(mdir, w, hot[w], stopMount, tl)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(stopMount); mwg.Wait(); close(done) }()
	deadline := time.Duration(envInt(t, "BLOBSHARE_CONTENTION_DEADLINE_S", 180)) * time.Second
	select {
	case <-done:
	case <-time.After(deadline):
		// Ask both servers for their goroutines before failing.
		a.Cmd.Process.Signal(syscall.SIGQUIT)
		b.Cmd.Process.Signal(syscall.SIGQUIT)
		// SIGQUIT makes a Go process print every goroutine and exit:
		// wait for both to have done so.
		for _, s := range []*server{a, b} {
			select {
			case <-s.Done:
			case <-time.After(10 * time.Second):
			}
		}
		t.Fatalf("DEADLOCK: clients not done %v after start\nserver A:\n%s\nserver B:\n%s", deadline, lastLines(a.Stderr.String(), 120), lastLines(b.Stderr.String(), 120))
	}

	// Every acknowledged slot write is there.
	for _, f := range hot {
		bs, _, err := download(ctx, root.NewFileClient(f.name))
		if err != nil {
			t.Fatalf("read %s: %v", f.name, err)
		}
		got, err := f.observe(bs)
		if err == nil {
			err = f.settle(got)
		}
		if err != nil {
			t.Errorf("after contention: %v", err)
		}
	}
	for _, s := range []*server{a, b} {
		log := s.Stderr.String()
		for _, bad := range []string{"SQLITE_BUSY", "database is locked", "database table is locked"} {
			if strings.Contains(log, bad) {
				t.Errorf("server log mentions %q:\n%s", bad, lastLines(log, 20))
			}
		}
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var lines []string
	for op, n := range tl.ok {
		lines = append(lines, fmt.Sprintf("  %-28s ok %d", op, n))
	}
	for op, n := range tl.legit {
		lines = append(lines, fmt.Sprintf("  %-28s refused legitimately %d", op, n))
	}
	sort.Strings(lines)
	msg := fmt.Sprintf("contention: %d REST clients × %d operations over 2 processes + %d mount writers; %d spurious failures\n%s\n",
		restClients, ops, hotFiles, len(tl.spurious), strings.Join(lines, "\n"))
	t.Log(msg)
	fmt.Print(msg)
	for i, s := range tl.spurious {
		if i == 20 {
			t.Errorf("… and %d more", len(tl.spurious)-20)
			break
		}
		t.Errorf("spurious failure: %s", s)
	}
}

// restClient runs ops random operations as client c.
func restClient(ctx context.Context, c int, sh *share.Client, hot []*slotFile, ops int, tl *tally) {
	rng := rand.New(rand.NewPCG(uint64(c), 42))
	root := sh.NewRootDirectoryClient()
	d := root.NewSubdirectoryClient("d")
	mine := hot[c%hotFiles]
	slot := (c / hotFiles) % hotRESTSlots
	leaseID := fmt.Sprintf("00000000-0000-0000-0000-%012d", c+1)
	for i := 0; i < ops; i++ {
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		switch rng.IntN(9) {
		case 0, 1: // write my slot
			op := mine.begin(c, slotOp{slot: slot})
			b := record(mine.id, uint32(slot), op.ver, hotSlotLen)
			_, err := root.NewFileClient(mine.name).UploadRange(cctx, int64(slot*hotSlotLen), streaming.NopCloser(bytes.NewReader(b)), nil)
			if err == nil {
				mine.ack(c)
			} else {
				// Not acknowledged: the slot may hold either version.
				_ = err
			}
			tl.add("put range (own slot)", err)
		case 2: // read a hot file: every slot whole
			f := hot[rng.IntN(hotFiles)]
			bs, _, err := download(cctx, root.NewFileClient(f.name))
			if err == nil {
				_, err = f.observe(bs)
				if err != nil {
					err = fmt.Errorf("torn read: %w", err)
				}
			}
			tl.add("get file", err)
		case 3: // create or delete a file in d
			fc := d.NewFileClient(fmt.Sprintf("n%d", rng.IntN(4)))
			if rng.IntN(2) == 0 {
				_, err := fc.Create(cctx, 1000, nil)
				tl.add("create file", err)
			} else {
				_, err := fc.Delete(cctx, nil)
				tl.add("delete file", err)
			}
		case 4: // create or delete a subdirectory of d
			sc := d.NewSubdirectoryClient(fmt.Sprintf("sub%d", rng.IntN(2)))
			if rng.IntN(2) == 0 {
				_, err := sc.Create(cctx, nil)
				tl.add("create directory", err)
			} else {
				_, err := sc.Delete(cctx, nil)
				tl.add("delete directory", err)
			}
		case 5: // rename in d
			src := d.NewFileClient(fmt.Sprintf("n%d", rng.IntN(4)))
			_, err := src.Rename(cctx, fmt.Sprintf("d/n%d", rng.IntN(4)), &file.RenameOptions{ReplaceIfExists: to.Ptr(true)})
			tl.add("rename file", err)
		case 6: // lease, write under it, release
			fc := root.NewFileClient("leased")
			lc, err := lease.NewFileClient(fc, &lease.FileClientOptions{LeaseID: to.Ptr(leaseID)})
			if err != nil {
				tl.add("lease client", err)
				break
			}
			_, err = lc.Acquire(cctx, nil)
			tl.add("acquire lease", err)
			if err != nil {
				break
			}
			_, err = fc.UploadRange(cctx, 0, streaming.NopCloser(bytes.NewReader(make([]byte, 512))),
				&file.UploadRangeOptions{LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(leaseID)}})
			tl.add("put range under lease", err)
			_, err = lc.Release(cctx, nil)
			tl.add("release lease", err)
			if err != nil && errorCode(err) != "" {
				// A release we cannot make leaves the file leased: fatal for the others.
				tl.add("release lease (must succeed)", fmt.Errorf("%w (lease stuck)", err))
			}
		case 7:
			_, err := root.NewFileClient(hot[rng.IntN(hotFiles)].name).SetMetadata(cctx, &file.SetMetadataOptions{Metadata: map[string]*string{"client": to.Ptr(fmt.Sprint(c))}})
			tl.add("set metadata", err)
		case 8:
			pager := d.NewListFilesAndDirectoriesPager(nil)
			var err error
			for pager.More() && err == nil {
				_, err = pager.NextPage(cctx)
			}
			tl.add("list directory", err)
		}
		cancel()
	}
}

// mountClient writes slots 8 and 9 of f through the mount, fsyncing each
// write, and holds an fcntl lock over slot 9 part of the time, until stop.
func mountClient(mdir string, w int, f *slotFile, stop <-chan struct{}, tl *tally) {
	fd, err := os.OpenFile(filepath.Join(mdir, f.name), os.O_RDWR, 0)
	if err != nil {
		tl.add("mount open", err)
		return
	}
	defer fd.Close()
	writer := 1000 + w
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		slot := hotRESTSlots + i%2
		locked := i%4 == 1
		if locked {
			lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: int64(9 * hotSlotLen), Len: hotSlotLen}
			err := syscall.FcntlFlock(fd.Fd(), syscall.F_SETLKW, &lk)
			tl.add("mount fcntl lock", err)
		}
		op := f.begin(writer, slotOp{slot: slot})
		_, err := fd.WriteAt(record(f.id, uint32(slot), op.ver, hotSlotLen), int64(slot*hotSlotLen))
		if err == nil {
			err = fd.Sync()
		}
		if err == nil {
			f.ack(writer)
		}
		tl.add("mount write+fsync", err)
		if locked {
			lk := syscall.Flock_t{Type: syscall.F_UNLCK, Whence: io.SeekStart, Start: int64(9 * hotSlotLen), Len: hotSlotLen}
			tl.add("mount fcntl unlock", syscall.FcntlFlock(fd.Fd(), syscall.F_SETLK, &lk))
		}
		if errors.Is(err, syscall.ENOTCONN) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
