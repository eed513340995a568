package fs

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// TestGroupCommit: REST writes of whole blocks queued on a file while its
// commit lock is held are committed together by whoever takes the lock
// next: each allowed write answered with the same new version, the later
// of two writes of one block winning, a write its check refuses (past the
// end of the file) answered with its own error and left out, and the
// content, size and ranges those of the allowed writes.
func TestGroupCommit(t *testing.T) {
	e := newEnv(t)
	e.share("data")
	const size = 4 * BlockSize
	if _, err := e.fs.CreateFile(ctxBG, CreateFileRequest{Path: "data/f", Size: size}); err != nil {
		t.Fatal(err)
	}
	before, _, err := e.fs.stat(ctxBG, "data/f", "")
	if err != nil {
		t.Fatal(err)
	}
	block := func(c byte) []byte { return bytes.Repeat([]byte{c}, BlockSize) }
	writes := []struct {
		off  int64
		data []byte
		err  error
	}{
		{0, block('a'), nil},
		{2 * BlockSize, block('c'), nil},
		{size, block('x'), ErrInvalidRange}, // past the end: refused
		{BlockSize, block('b'), nil},
	}
	queued := make(chan struct{}, len(writes)+1)
	e.fs.queuedHook = func() { queued <- struct{}{} }

	// Hold the commit lock so that every write queues.
	st := e.fs.acquireFile(before.ID)
	st.commit.Lock()
	type result struct {
		a   Attr
		err error
	}
	results := make([]result, len(writes))
	var wg sync.WaitGroup
	for i, w := range writes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: w.off, Length: BlockSize, Body: bytes.NewReader(w.data)})
			results[i] = result{a, err}
		}()
	}
	for range writes {
		<-queued
	}
	// One more write of block 1, queued last: it wins over 'b'.
	wg.Add(1)
	var last result
	go func() {
		defer wg.Done()
		a, err := e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: BlockSize, Length: BlockSize, Body: bytes.NewReader(block('B'))})
		last = result{a, err}
	}()
	<-queued
	st.commit.Unlock()
	e.fs.releaseFile(before.ID, st)
	wg.Wait()

	var version uint64
	for i, w := range writes {
		r := results[i]
		if !errors.Is(r.err, w.err) {
			t.Errorf("write at %d: %v, want %v", w.off, r.err, w.err)
			continue
		}
		if r.err == nil {
			if version == 0 {
				version = r.a.Version
			}
			if r.a.Version != version || r.a.Version <= before.Version {
				t.Errorf("write at %d answered version %d; want one new version for the group (%d, before %d)", w.off, r.a.Version, version, before.Version)
			}
		}
	}
	if last.err != nil || last.a.Version != version {
		t.Errorf("last write: version %d, %v; want the group's %d", last.a.Version, last.err, version)
	}
	want := append(append(append(block('a'), block('B')...), block('c')...), make([]byte, BlockSize)...)
	if got := e.content("data/f"); !bytes.Equal(got, want) {
		t.Errorf("content differs from the allowed writes' (%d bytes, want %d)", len(got), len(want))
	}
	rs, _, err := e.fs.ListRanges(ctxBG, "data/f", locks.Range{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Start != 0 || rs[0].End != 3*BlockSize-1 {
		t.Errorf("ranges %+v, want bytes 0 to 3 blocks - 1", rs)
	}
}

// gatedBody is a Put Range body that signals its first Read and then
// delivers data only once open is closed.
type gatedBody struct {
	data    []byte
	reading chan struct{}
	open    chan struct{}
	once    sync.Once
}

func newGatedBody(data []byte) *gatedBody {
	return &gatedBody{data: data, reading: make(chan struct{}), open: make(chan struct{})}
}

func (g *gatedBody) Read(p []byte) (int, error) {
	g.once.Do(func() { close(g.reading) })
	<-g.open
	if len(g.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.data)
	g.data = g.data[n:]
	return n, nil
}

// TestGroupCommitWaitsForStaging: a group commit waits for the file's
// REST writes still staging (their bodies on their way), so that they
// join it: a write queued while another is reading its body is answered
// with the same new version once the other arrives. A write that does
// not arrive within the bound (groupWait) is left to the next commit.
func TestGroupCommitWaitsForStaging(t *testing.T) {
	for _, tc := range []struct {
		name      string
		wait      time.Duration
		sameGroup bool
	}{
		{"the staging write joins", time.Minute, true},
		{"a stalled write is not waited for past the bound", 20 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.share("data")
			e.fs.groupWait = tc.wait
			if _, err := e.fs.CreateFile(ctxBG, CreateFileRequest{Path: "data/f", Size: 2 * BlockSize}); err != nil {
				t.Fatal(err)
			}
			queued := make(chan struct{}, 2)
			e.fs.queuedHook = func() { queued <- struct{}{} }
			block := func(c byte) []byte { return bytes.Repeat([]byte{c}, BlockSize) }

			slow := newGatedBody(block('s'))
			slowDone := make(chan Attr, 1)
			go func() {
				a, err := e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: BlockSize, Length: BlockSize, Body: slow})
				if err != nil {
					t.Error(err)
				}
				slowDone <- a
			}()
			<-slow.reading // counted as staging from here on
			fastDone := make(chan Attr, 1)
			go func() {
				a, err := e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 0, Length: BlockSize, Body: bytes.NewReader(block('f'))})
				if err != nil {
					t.Error(err)
				}
				fastDone <- a
			}()
			<-queued // the fast write is queued and about to lead the commit
			var fast Attr
			if !tc.sameGroup {
				fast = <-fastDone // answered while the slow body still stalls
			}
			close(slow.open)
			s := <-slowDone
			if tc.sameGroup {
				fast = <-fastDone
			}
			if same := fast.Version == s.Version; same != tc.sameGroup {
				t.Errorf("versions %d and %d: same group %v, want %v", fast.Version, s.Version, same, tc.sameGroup)
			}
			if got, want := e.content("data/f"), append(block('f'), block('s')...); !bytes.Equal(got, want) {
				t.Errorf("content differs from the two writes (%d bytes)", len(got))
			}
		})
	}
}
