package fs

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// A file's write log answers a range diff (List Ranges with
// prevsharesnapshot) the way Azure does: with the ranges written since the
// previous snapshot, whatever bytes they hold — a range rewritten with the
// same bytes is reported, and a write is reported whole where only some of
// its bytes changed (the azfile SDK's live test
// TestFileGetRangeListSupportRename writes the same 512 bytes again and
// expects them listed). Comparing content cannot tell that.
//
// The log lives in the ranges column next to the data ranges, so it is
// written in the commit transaction with them and a share snapshot copies
// it with the row. Every commit that writes, clears or cuts data appends
// one item: a sequence number and the ranges touched. A diff reports the
// items of the target whose number is past the last number in the
// previous snapshot's copy. The log is bounded: past maxLogItems the two
// oldest items merge (keeping the newer number) and an item's ranges
// merge past maxItemRanges, so an old boundary may report more than was
// written, never less.
//
// A log has a random id. A ranges column without a log (a file from
// before logs, or one whose lost commit was adopted after a crash with
// its written ranges unknown) starts a new log whose first item is all
// its data; a diff across two different log ids falls back to comparing
// content (rangediff.go).

const (
	maxLogItems   = 16
	maxItemRanges = 32
)

// storedRanges is the decoded ranges column.
type storedRanges struct {
	data rangeSet
	// logID names the log ("" when the column had none); n is the last
	// item's number; items are oldest first.
	logID string
	n     uint64
	items []logItem
}

type logItem struct {
	n  uint64
	rs rangeSet
}

// storedJSON is the column's form with a log.
type storedJSON struct {
	Data  []int64   `json:"d"`
	ID    string    `json:"l"`
	N     uint64    `json:"n"`
	Items [][]int64 `json:"w"` // each: number, then interval bounds
}

func decodeStored(s string) (storedRanges, error) {
	if !strings.HasPrefix(s, "{") {
		rs, err := decodeSet(s)
		return storedRanges{data: rs}, err
	}
	var j storedJSON
	if err := json.Unmarshal([]byte(s), &j); err != nil {
		return storedRanges{}, fmt.Errorf("stored ranges %q: bad encoding (%v)", s, err)
	}
	st := storedRanges{logID: j.ID, n: j.N}
	var err error
	if st.data, err = flatSet(j.Data); err != nil {
		return st, fmt.Errorf("stored ranges %q: %w", s, err)
	}
	for _, it := range j.Items {
		if len(it) == 0 {
			return st, fmt.Errorf("stored ranges %q: empty log item", s)
		}
		rs, err := flatSet(it[1:])
		if err != nil {
			return st, fmt.Errorf("stored ranges %q: %w", s, err)
		}
		st.items = append(st.items, logItem{n: uint64(it[0]), rs: rs})
	}
	return st, nil
}

func flatSet(flat []int64) (rangeSet, error) {
	if len(flat)%2 != 0 {
		return nil, fmt.Errorf("odd number of bounds")
	}
	rs := make(rangeSet, 0, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		rs = append(rs, iv{flat[i], flat[i+1]})
	}
	return rs, nil
}

func flat(rs rangeSet, head ...int64) []int64 {
	out := append(make([]int64, 0, len(head)+2*len(rs)), head...)
	for _, r := range rs {
		out = append(out, r.lo, r.hi)
	}
	return out
}

func (st storedRanges) encode() string {
	if st.logID == "" {
		return st.data.encode()
	}
	j := storedJSON{Data: flat(st.data), ID: st.logID, N: st.n, Items: make([][]int64, 0, len(st.items))}
	for _, it := range st.items {
		j.Items = append(j.Items, flat(it.rs, int64(it.n)))
	}
	b, _ := json.Marshal(j) // plain integers and a string always marshal
	return string(b)
}

// record appends one commit's touched ranges to the log (nothing when it
// touched none), starting a log if the column had none.
func (st *storedRanges) record(touched rangeSet) {
	if len(touched) == 0 {
		return
	}
	if st.logID == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic(fmt.Sprintf("fs: crypto/rand: %v", err)) // the runtime guarantees Read does not fail
		}
		st.logID = hex.EncodeToString(b[:])
		st.n = 0
	}
	st.n++
	st.items = append(st.items, logItem{n: st.n, rs: touched.compactTo(maxItemRanges)})
	for len(st.items) > maxLogItems {
		merged := logItem{n: st.items[1].n, rs: st.items[0].rs}
		for _, r := range st.items[1].rs {
			merged.rs = merged.rs.add(r.lo, r.hi)
		}
		merged.rs = merged.rs.compactTo(maxItemRanges)
		st.items = append([]logItem{merged}, st.items[2:]...)
	}
}

// since is the union of the items numbered past n.
func (st storedRanges) since(n uint64) rangeSet {
	var out rangeSet
	for _, it := range st.items {
		if it.n > n {
			for _, r := range it.rs {
				out = out.add(r.lo, r.hi)
			}
		}
	}
	return out
}

// written is what op touches in a file whose data ranges were before:
// the ranges it writes or clears, and the data it cuts off (truncation,
// or a reset that replaces the content).
func (op commitOp) written(before rangeSet, newSize int64) rangeSet {
	var w rangeSet
	if op.reset || op.ranges != nil {
		w = append(w, before...)
		w = w.add(0, newSize)
	}
	if op.truncate != nil {
		for _, r := range before {
			w = w.add(max(r.lo, *op.truncate), r.hi)
		}
	}
	for _, r := range before {
		w = w.add(max(r.lo, newSize), r.hi)
	}
	if s := op.stage; s != nil && op.ranges == nil {
		for idx := range s.full {
			w = w.add(idx*BlockSize, (idx+1)*BlockSize)
		}
		for idx, pt := range s.parts {
			for _, v := range pt.ivs {
				w = w.add(idx*BlockSize+v.lo, idx*BlockSize+v.hi)
			}
		}
		for _, c := range s.cleared {
			w = w.add(c.lo, c.hi)
		}
	}
	return w
}

// storedRanges reads a file's ranges column.
func (q *q) storedRanges(id FileID) (storedRanges, error) {
	var enc string
	if err := q.queryRow(`SELECT ranges FROM ns_entries WHERE id = ?`, int64(id)).Scan(&enc); err != nil {
		return storedRanges{}, err
	}
	return decodeStored(enc)
}
