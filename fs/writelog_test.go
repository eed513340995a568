package fs

import (
	"fmt"
	"testing"
)

// TestWriteLog: each commit that writes, clears or cuts data logs what it
// touched; since(n) is what was touched after item n; the log stays
// bounded and merging only ever widens an answer; a column from before
// logs starts a log that counts its data as written.
func TestWriteLog(t *testing.T) {
	write := func(lo, hi int64) commitOp {
		return commitOp{stage: &stage{parts: map[int64]*part{0: {ivs: []iv{{lo, hi}}}}, full: map[int64]string{}}}
	}
	clear := func(lo, hi int64) commitOp {
		return commitOp{stage: &stage{parts: map[int64]*part{}, full: map[int64]string{}, cleared: []iv{{lo, hi}}}}
	}
	cut := func(n int64) commitOp { return commitOp{truncate: &n} }
	apply := func(enc string, op commitOp, size int64) string {
		t.Helper()
		out, err := op.rangesAfter(enc, size)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	st := func(enc string) storedRanges {
		t.Helper()
		s, err := decodeStored(enc)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	enc := apply("", write(0, 100), 100) // item 1
	snap := st(enc)
	if snap.logID == "" || snap.n != 1 || fmt.Sprint(snap.data) != "[{0 100}]" {
		t.Fatalf("after the first write: %+v", snap)
	}
	enc = apply(enc, write(10, 20), 100)    // 2: the same bytes or not, logged
	enc = apply(enc, clear(600, 700), 1000) // 3
	enc = apply(enc, cut(50), 50)           // 4: cuts [50, 100) of data
	for _, c := range []struct {
		since uint64
		want  string
	}{
		{0, "[{0 100} {600 700}]"},
		{1, "[{10 20} {50 100} {600 700}]"},
		{3, "[{50 100}]"},
		{4, "[]"},
	} {
		if got := st(enc).since(c.since); fmt.Sprint(got) != c.want && !(c.want == "[]" && len(got) == 0) {
			t.Errorf("since %d: %v, want %s", c.since, got, c.want)
		}
	}
	if got := st(enc); fmt.Sprint(got.data) != "[{0 50}]" || got.logID != snap.logID {
		t.Fatalf("data %v log %s, want [{0 50}] in log %s", got.data, got.logID, snap.logID)
	}
	// A property change (no stage, no size change) logs nothing.
	if again := apply(enc, commitOp{}, 50); st(again).n != st(enc).n {
		t.Fatalf("a commit that wrote nothing was logged: %s", again)
	}

	// Bounded: 40 writes keep maxLogItems items, and every answer still
	// covers what was written after its boundary.
	enc = ""
	for i := int64(0); i < 40; i++ {
		enc = apply(enc, write(i*10, i*10+5), 400)
	}
	s := st(enc)
	if len(s.items) != maxLogItems || s.n != 40 {
		t.Fatalf("%d items, n %d: want %d items, n 40", len(s.items), s.n, maxLogItems)
	}
	for k := uint64(0); k < 40; k++ {
		got := s.since(k)
		for i := int64(k); i < 40; i++ { // write i+1 is [i*10, i*10+5)
			covered := false
			for _, r := range got {
				if r.lo <= i*10 && r.hi >= i*10+5 {
					covered = true
				}
			}
			if !covered {
				t.Fatalf("since %d misses write %d: %v", k, i+1, got)
			}
		}
	}
	if _, err := decodeStored(`{"d":[1],"l":"x","n":1,"w":[]}`); err == nil {
		t.Fatal("odd data bounds accepted")
	}

	// A column from before logs (or after a crash-adopted commit): its
	// data counts as written in the first item.
	enc = apply("[0,4096]", write(10, 20), 4096)
	if got := st(enc).since(0); fmt.Sprint(got) != "[{0 4096}]" || st(enc).n != 1 {
		t.Fatalf("first item of a log begun on old data: %v", got)
	}
}
