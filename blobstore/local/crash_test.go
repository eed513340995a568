package local

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/storetest"
)

// The crash test: a child process (this test binary, re-executed) commits
// new versions of crashBlobs blobs round-robin, printing "k v" after each
// commit returns; the parent SIGKILLs it at random moments and then checks
// that every blob reads completely as exactly the last reported version
// or the one in flight, never a mix or a torn block.

const (
	crashBlobs   = 4
	envCrashDir  = "BLOBSHARE_CRASH_CHILD_DIR"
	envCrashNext = "BLOBSHARE_CRASH_CHILD_NEXT"
)

func crashKey(k int) string { return fmt.Sprintf("f/%016d", k) }

// versionBlocks returns the block seeds of version v of blob k. Odd
// versions reuse block 0 of the version before, so commits that mix
// committed and newly staged blocks are crashed too.
func versionBlocks(k, v int) []uint64 {
	n := 1 + (k+v)%4
	seeds := make([]uint64, n)
	for j := range seeds {
		seeds[j] = uint64(k)<<48 | uint64(v)<<8 | uint64(j)
	}
	if v%2 == 1 {
		seeds[0] = uint64(k)<<48 | uint64(v-1)<<8
	}
	return seeds
}

func blockID(seed uint64) string {
	return fmt.Sprintf("v%d-b%d", (seed>>8)&(1<<40-1), seed&0xff)
}

func blockSize(seed uint64) int64 {
	return 1 + int64(rand.New(rand.NewPCG(seed, 7)).IntN(200_000))
}

func versionHash(k, v int) [32]byte {
	h := sha256.New()
	for _, s := range versionBlocks(k, v) {
		_, _ = io.Copy(h, storetest.Data(s, blockSize(s)))
	}
	return [32]byte(h.Sum(nil))
}

// TestCrashChild is the child's body; it does nothing unless started by
// TestCrashMidCommit.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(envCrashDir)
	if dir == "" {
		t.Skip("only run as the crash test's child")
	}
	s, err := New(dir)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	next := make([]int, crashBlobs)
	for i, f := range strings.Split(os.Getenv(envCrashNext), ",") {
		next[i], _ = strconv.Atoi(f)
	}
	ctx := context.Background()
	fmt.Println("ready")
	// Start at a different blob each run so all of them get crashed.
	first := 0
	for _, v := range next {
		first += v
	}
	for {
		for i := range crashBlobs {
			k := (first + i) % crashBlobs
			v := next[k]
			committed := map[string]bool{}
			if bl, _, err := s.Blocks(ctx, crashKey(k)); err == nil {
				for _, b := range bl {
					committed[b.ID] = true
				}
			}
			var ids []string
			for _, seed := range versionBlocks(k, v) {
				id := blockID(seed)
				ids = append(ids, id)
				if committed[id] {
					continue // reuse without staging
				}
				if _, err := s.StageBlock(ctx, crashKey(k), id, storetest.Data(seed, blockSize(seed))); err != nil {
					fmt.Println("error", err)
					os.Exit(2)
				}
			}
			if _, err := s.CommitBlocks(ctx, crashKey(k), ids, blobstore.Conditions{}); err != nil {
				fmt.Println("error", err)
				os.Exit(2)
			}
			fmt.Println(k, v)
			next[k] = v + 1
		}
	}
}

func TestCrashMidCommit(t *testing.T) {
	kills := 60
	if testing.Short() {
		kills = 15
	}
	dir := t.TempDir()
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(20261121, 1))
	hashes := map[[2]int][32]byte{}
	hashOf := func(k, v int) [32]byte {
		if h, ok := hashes[[2]int{k, v}]; ok {
			return h
		}
		h := versionHash(k, v)
		hashes[[2]int{k, v}] = h
		return h
	}
	state := make([]int, crashBlobs) // version each blob holds; -1: none
	for k := range state {
		state[k] = -1
	}
	totalCommits := 0
	for kill := range kills {
		next := make([]string, crashBlobs)
		for k := range next {
			next[k] = strconv.Itoa(state[k] + 1)
		}
		reported := runAndKill(t, dir, strings.Join(next, ","), time.Duration(rng.IntN(40_000))*time.Microsecond)
		for k, v := range reported {
			if v > state[k] {
				totalCommits += v - state[k]
				state[k] = v
			}
		}
		// Every blob holds the last reported version or the one in flight.
		for k := range crashBlobs {
			key := crashKey(k)
			rc, info, err := s.ReadRange(ctx, key, 0, -1)
			if errors.Is(err, blobstore.ErrNotFound) {
				if state[k] != -1 {
					t.Fatalf("kill %d: blob %d missing after version %d was committed", kill, k, state[k])
				}
				continue
			}
			if err != nil {
				t.Fatalf("kill %d: blob %d: %v", kill, k, err)
			}
			h := sha256.New()
			n, err := io.Copy(h, rc)
			rc.Close()
			if err != nil {
				t.Fatalf("kill %d: reading blob %d: %v", kill, k, err)
			}
			if n != info.Size {
				t.Fatalf("kill %d: blob %d read %d bytes, Info.Size %d", kill, k, n, info.Size)
			}
			got := [32]byte(h.Sum(nil))
			switch {
			case state[k] >= 0 && got == hashOf(k, state[k]):
			case got == hashOf(k, state[k]+1):
				state[k]++ // committed, killed before reporting
				totalCommits++
			default:
				t.Fatalf("kill %d: blob %d (%d bytes) is neither version %d nor %d: a torn or mixed commit", kill, k, n, state[k], state[k]+1)
			}
		}
	}
	t.Logf("%d kills, %d commits survived; versions %v", kills, totalCommits, state)
	if totalCommits == 0 {
		t.Fatal("the child never committed anything; the test tested nothing")
	}

	rep, err := s.CollectGarbage(ctx, blobstore.GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("garbage collection: %+v", rep)
	assertNoGarbage(t, dir)
	for k := range crashBlobs {
		if state[k] < 0 {
			continue
		}
		rc, _, err := s.ReadRange(ctx, crashKey(k), 0, -1)
		if err != nil {
			t.Fatalf("after collection: blob %d: %v", k, err)
		}
		h := sha256.New()
		_, err = io.Copy(h, rc)
		rc.Close()
		if err != nil || [32]byte(h.Sum(nil)) != hashOf(k, state[k]) {
			t.Fatalf("after collection: blob %d no longer reads as version %d (%v)", k, state[k], err)
		}
	}
}

// runAndKill starts the child, waits until it is ready plus delay, kills
// it with SIGKILL and returns the last version reported per blob.
func runAndKill(t *testing.T, dir, next string, delay time.Duration) map[int]int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashNext+"="+next)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reported := map[int]int{}
	var mu sync.Mutex
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			line := sc.Text()
			if first && line == "ready" {
				first = false
				close(ready)
				continue
			}
			var k, v int
			if _, err := fmt.Sscanf(line, "%d %d", &k, &v); err == nil {
				mu.Lock()
				reported[k] = v
				mu.Unlock()
				continue
			}
			if strings.HasPrefix(line, "error") {
				done <- errors.New(line)
				return
			}
		}
		done <- nil
	}()
	select {
	case <-ready:
	case err := <-done:
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("crash child ended before ready: %v; stderr: %s", err, stderr.String())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("crash child not ready after 30s; stderr: %s", stderr.String())
	}
	time.Sleep(delay)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("crash child failed: %v", err)
	}
	werr := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("crash child ended with %v, want killed by SIGKILL; stderr: %s", werr, stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	return reported
}

// assertNoGarbage checks the layout after a collection with olderThan 0:
// no temp or staged files, and every block file named by its manifest.
func assertNoGarbage(t *testing.T, dir string) {
	t.Helper()
	keys, err := os.ReadDir(filepath.Join(dir, keysDirName))
	if err != nil {
		t.Fatal(err)
	}
	for _, kdEnt := range keys {
		kd := filepath.Join(dir, keysDirName, kdEnt.Name())
		key, _ := unescapeKey(kdEnt.Name())
		m, err := readManifest(key, kd)
		if err != nil {
			t.Errorf("key dir %s left without a manifest: %v", kdEnt.Name(), err)
			continue
		}
		ref := map[string]bool{}
		for _, b := range m.Blocks {
			ref[b.File] = true
		}
		ents, err := os.ReadDir(kd)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			n := e.Name()
			switch {
			case n == manifestName || n == lockName:
			case strings.HasPrefix(n, blockPrefix) && ref[n]:
			default:
				t.Errorf("garbage left in %s: %s", kdEnt.Name(), n)
			}
		}
	}
}
