package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
)

// The soak: 8 writers on the mount and 8 REST clients on a few files, while
// one process per file keeps taking flock(LOCK_EX) for short moments.
//
// A flock on the mount is a lock only other flocks refuse: to the mount's
// own opens and I/O it is advisory, as on a local disk, and to REST and SMB
// it is a whole-file byte-range lock, as the Linux SMB client makes it
// (locking.md). The oracle knows when each exclusive flock was held
// (between flock returning and LOCK_UN being called). A REST write whose
// whole duration lies inside a held interval must be refused with
// FileLockConflict; one that overlaps no held interval must succeed; one
// that straddles an edge may go either way. Mount writers are never
// refused. Every writer owns a slot of its file and the file's final
// content must hold, in every slot, exactly the last write its owner saw
// acknowledged.

const (
	soakFiles    = 3
	soakWriters  = 8 // per side
	soakSlotSize = 4096
)

// A held flock seen from the test: the server took the whole-file lock at
// some moment between callStart and locked (flock returned), and released it
// between unlocking (LOCK_UN called) and unlocked (LOCK_UN returned). Zero
// times are still in the future.
type interval struct{ callStart, locked, unlocking, unlocked time.Time }

// heldLog records when the exclusive flock of one file was held.
type heldLog struct {
	mu  sync.Mutex
	ivs []interval
}

// record adds a completed or ongoing interval and returns its index.
func (h *heldLog) record(iv interval) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ivs = append(h.ivs, iv)
	return len(h.ivs) - 1
}

func (h *heldLog) update(i int, f func(*interval)) {
	h.mu.Lock()
	f(&h.ivs[i])
	h.mu.Unlock()
}

// judge says whether an operation running over [from, to] must be refused
// (mustFail: wholly inside a span where the lock was surely held) or must
// succeed (mustPass: it overlaps no span where the lock may have been held).
func (h *heldLog) judge(from, to time.Time) (mustFail, mustPass bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	future := to.Add(time.Hour)
	or := func(t time.Time) time.Time {
		if t.IsZero() {
			return future
		}
		return t
	}
	mustPass = true
	for _, iv := range h.ivs {
		if !iv.locked.IsZero() && !iv.locked.After(from) && !or(iv.unlocking).Before(to) {
			return true, false
		}
		if iv.callStart.Before(to) && or(iv.unlocked).After(from) {
			mustPass = false
		}
	}
	return false, mustPass
}

type soakStats struct {
	mu                          sync.Mutex
	ok, refused, checked, flock int
}

func (s *soakStats) add(ok, refused, checked int) {
	s.mu.Lock()
	s.ok += ok
	s.refused += refused
	s.checked += checked
	s.mu.Unlock()
}

func soakDuration() time.Duration {
	if v := os.Getenv("BLOBSHARE_SOAK"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	if testing.Short() {
		return 10 * time.Second
	}
	return 60 * time.Second
}

func slotData(writer, seq int) []byte {
	line := fmt.Sprintf("writer %02d seq %08d|", writer, seq)
	return bytes.Repeat([]byte(line), soakSlotSize/len(line)+1)[:soakSlotSize]
}

func TestSoakMountAndRESTUnderFlock(t *testing.T) {
	m := startMixed(t)
	dur := soakDuration()
	names := make([]string, soakFiles)
	held := make([]*heldLog, soakFiles)
	for i := range names {
		names[i] = "soak" + strconv.Itoa(i) + ".bin"
		m.putFile(t, names[i], make([]byte, 2*soakWriters*soakSlotSize))
		held[i] = &heldLog{}
	}
	stop := time.Now().Add(dur)
	var stats soakStats
	var wg sync.WaitGroup
	errc := make(chan error, 4*soakWriters+soakFiles)
	last := make([]int, 2*soakWriters) // last acknowledged seq per writer (0: none)

	fail := func(format string, args ...any) {
		select {
		case errc <- fmt.Errorf(format, args...):
		default:
		}
	}

	// One flocker per file.
	for f := 0; f < soakFiles; f++ {
		wg.Add(1)
		go func(f int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(1000 + f)))
			path := filepath.Join(m.dir, names[f])
			for time.Now().Before(stop) {
				fd, err := os.Open(path)
				if err != nil {
					fail("flocker %d: open: %v", f, err)
					return
				}
				i := held[f].record(interval{callStart: time.Now()})
				err = syscall.Flock(int(fd.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
				switch {
				case err == nil:
					held[f].update(i, func(iv *interval) { iv.locked = time.Now() })
					time.Sleep(time.Duration(20+rng.Intn(40)) * time.Millisecond)
					held[f].update(i, func(iv *interval) { iv.unlocking = time.Now() })
					err := syscall.Flock(int(fd.Fd()), syscall.LOCK_UN)
					held[f].update(i, func(iv *interval) { iv.unlocked = time.Now() })
					if err != nil {
						fail("flocker %d: unlock: %v", f, err)
					}
					stats.mu.Lock()
					stats.flock++
					stats.mu.Unlock()
				case errors.Is(err, syscall.EWOULDBLOCK):
					// Refused: no lock was taken.
					held[f].update(i, func(iv *interval) { iv.unlocked = iv.callStart })
				default:
					fail("flocker %d: flock: %v (want success or EWOULDBLOCK)", f, err)
				}
				fd.Close()
				time.Sleep(time.Duration(30+rng.Intn(70)) * time.Millisecond)
			}
		}(f)
	}

	// Mount writers: open, pwrite the own slot, close (the acknowledgement).
	// A flock held by another process refuses none of it.
	for w := 0; w < soakWriters; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			f := w % soakFiles
			path := filepath.Join(m.dir, names[f])
			rng := rand.New(rand.NewSource(int64(w)))
			for seq := 1; time.Now().Before(stop); seq++ {
				time.Sleep(time.Duration(20+rng.Intn(60)) * time.Millisecond) // pace the load
				fd, err := os.OpenFile(path, os.O_WRONLY, 0)
				if err != nil {
					fail("mount writer %d: open: %v (a flock must not refuse opens)", w, err)
					return
				}
				if _, err := fd.WriteAt(slotData(w, seq), int64(w*soakSlotSize)); err != nil {
					fd.Close()
					fail("mount writer %d: write: %v (a flock must not refuse the mount's I/O)", w, err)
					return
				}
				if err := fd.Close(); err != nil {
					fail("mount writer %d: close: %v", w, err)
					return
				}
				last[w] = seq
				stats.add(1, 0, 1)
			}
		}(w)
	}

	// REST writers: UploadRange the own slot, then read it back.
	for r := 0; r < soakWriters; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			w := soakWriters + r
			f := r % soakFiles
			fc := m.file(names[f])
			for seq := 1; time.Now().Before(stop); seq++ {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				from := time.Now()
				err := uploadAt(ctx, fc, int64(w*soakSlotSize), slotData(w, seq))
				to := time.Now()
				cancel()
				mustFail, mustPass := held[f].judge(from, to)
				if err != nil {
					if !fileerror.HasCode(err, fileerror.FileLockConflict) || mustPass {
						fail("REST writer %d: %v (mustPass=%v)", r, err, mustPass)
						return
					}
					stats.add(0, 1, 1)
					continue
				}
				if mustFail {
					fail("REST writer %d: UploadRange succeeded inside a held flock", r)
					return
				}
				last[w] = seq
				stats.add(1, 0, 1)
			}
		}(r)
	}

	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	// Content: every slot holds its owner's last acknowledged write.
	for f := 0; f < soakFiles; f++ {
		got, err := m.download(t, names[f], file.HTTPRange{})
		if err != nil {
			t.Fatalf("final read of %s: %v", names[f], err)
		}
		for w := 0; w < 2*soakWriters; w++ {
			if w%soakWriters%soakFiles != f {
				continue
			}
			want := make([]byte, soakSlotSize)
			if last[w] > 0 {
				want = slotData(w, last[w])
			}
			slot := got[w*soakSlotSize : (w+1)*soakSlotSize]
			if !bytes.Equal(slot, want) {
				t.Errorf("%s slot %d: holds %q...; want %q...", names[f], w, slot[:24], want[:24])
			}
		}
	}

	hwm := peakRSS(t, m.srv.Cmd.Process.Pid)
	t.Logf("soak %v: %d acknowledged writes, %d REST refusals (all inside or at the edge of held flocks), %d exclusive flocks; server peak RSS %d MiB",
		dur, stats.ok, stats.refused, stats.flock, hwm>>20)
	if stats.ok == 0 || stats.flock == 0 {
		t.Fatalf("the soak did no work: %d writes, %d flocks", stats.ok, stats.flock)
	}
	const rssBound = 256 << 20
	if hwm > rssBound {
		t.Errorf("server peak RSS %d MiB exceeds %d MiB", hwm>>20, rssBound>>20)
	}
}

// peakRSS reads a process's high-water resident set (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}
