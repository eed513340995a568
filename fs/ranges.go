package fs

import (
	"encoding/json"
	"fmt"
	"sort"
)

// rangeSet is the set of byte ranges of a file that hold written data, as
// List Ranges reports them: sorted, disjoint, non-adjacent half-open
// intervals. Writes add their range; a clear removes the 512-byte-aligned
// interior of its range (the unaligned head and tail are zeroed but stay
// listed, as Azure does); truncation cuts it.
type rangeSet []iv

// maxRanges bounds the stored set; beyond it neighbouring ranges merge
// (reporting some zeros as data, which is read-correct).
const maxRanges = 4096

func (rs rangeSet) add(lo, hi int64) rangeSet {
	if lo >= hi {
		return rs
	}
	out := make(rangeSet, 0, len(rs)+1)
	i := 0
	for ; i < len(rs) && rs[i].hi < lo; i++ {
		out = append(out, rs[i])
	}
	for ; i < len(rs) && rs[i].lo <= hi; i++ {
		lo, hi = min(lo, rs[i].lo), max(hi, rs[i].hi)
	}
	out = append(out, iv{lo, hi})
	return append(out, rs[i:]...)
}

func (rs rangeSet) sub(lo, hi int64) rangeSet {
	if lo >= hi {
		return rs
	}
	out := make(rangeSet, 0, len(rs)+1)
	for _, r := range rs {
		if r.hi <= lo || r.lo >= hi {
			out = append(out, r)
			continue
		}
		if r.lo < lo {
			out = append(out, iv{r.lo, lo})
		}
		if r.hi > hi {
			out = append(out, iv{hi, r.hi})
		}
	}
	return out
}

// clip drops everything at or past size.
func (rs rangeSet) clip(size int64) rangeSet {
	return rs.sub(max(size, 0), 1<<62)
}

// compact merges the closest neighbours until at most maxRanges remain.
func (rs rangeSet) compact() rangeSet { return rs.compactTo(maxRanges) }

// compactTo merges the closest neighbours until at most limit remain.
func (rs rangeSet) compactTo(maxRanges int) rangeSet {
	for len(rs) > maxRanges {
		gaps := make([]int64, len(rs)-1)
		for i := range gaps {
			gaps[i] = rs[i+1].lo - rs[i].hi
		}
		sorted := append([]int64(nil), gaps...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
		limit := sorted[len(rs)-maxRanges-1]
		out := rangeSet{rs[0]}
		for i := 1; i < len(rs); i++ {
			if rs[i].lo-out[len(out)-1].hi <= limit {
				out[len(out)-1].hi = rs[i].hi
				continue
			}
			out = append(out, rs[i])
		}
		rs = out
	}
	return rs
}

func (rs rangeSet) encode() string {
	if len(rs) == 0 {
		return "[]"
	}
	flat := make([]int64, 0, 2*len(rs))
	for _, r := range rs {
		flat = append(flat, r.lo, r.hi)
	}
	b, _ := json.Marshal(flat) // []int64 always marshals
	return string(b)
}

// decodeRanges returns the data ranges of a stored ranges column (either
// form: a bare set, or a set with its write log, writelog.go).
func decodeRanges(s string) (rangeSet, error) {
	st, err := decodeStored(s)
	return st.data, err
}

// decodeSet decodes a bare set: a flat JSON array of interval bounds.
func decodeSet(s string) (rangeSet, error) {
	if s == "" || s == "[]" {
		return nil, nil
	}
	var flat []int64
	if err := json.Unmarshal([]byte(s), &flat); err != nil || len(flat)%2 != 0 {
		return nil, fmt.Errorf("stored ranges %q: bad encoding (%v)", s, err)
	}
	rs := make(rangeSet, 0, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		rs = append(rs, iv{flat[i], flat[i+1]})
	}
	return rs, nil
}

// clearAlign is the granularity a clear deallocates at.
const clearAlign = 512

// applyRanges is op's effect on a file's data ranges.
func (op commitOp) applyRanges(rs rangeSet, newSize int64) rangeSet {
	if op.ranges != nil {
		rs = append(rangeSet(nil), (*op.ranges)...)
	}
	if op.reset && op.ranges == nil {
		rs = nil
	}
	if op.truncate != nil {
		rs = rs.clip(*op.truncate)
	}
	if s := op.stage; s != nil && op.ranges == nil {
		for idx, id := range s.full {
			if id != zeroBlockID {
				rs = rs.add(idx*BlockSize, (idx+1)*BlockSize)
			}
		}
		for idx, pt := range s.parts {
			for _, v := range pt.ivs {
				rs = rs.add(idx*BlockSize+v.lo, idx*BlockSize+v.hi)
			}
		}
		for _, c := range s.cleared {
			lo := (c.lo + clearAlign - 1) / clearAlign * clearAlign
			hi := c.hi / clearAlign * clearAlign
			rs = rs.sub(lo, hi)
		}
	}
	return rs.clip(newSize).compact()
}

// updateRanges rewrites a file's stored ranges.
func (q *q) updateRanges(id FileID, op commitOp, newSize int64) error {
	var enc string
	if err := q.queryRow(`SELECT ranges FROM ns_entries WHERE id = ?`, int64(id)).Scan(&enc); err != nil {
		return err
	}
	enc, err := op.rangesAfter(enc, newSize)
	if err != nil {
		return err
	}
	_, err = q.exec(`UPDATE ns_entries SET ranges = ? WHERE id = ?`, enc, int64(id))
	return err
}

// rangesAfter returns the encoded data ranges of a file after op, given
// those before it (enc) and the file's new size, with what op wrote
// appended to the file's write log (writelog.go).
func (op commitOp) rangesAfter(enc string, newSize int64) (string, error) {
	st, err := decodeStored(enc)
	if err != nil {
		return "", err
	}
	before := st.data
	st.data = op.applyRanges(before, newSize)
	touched := op.written(before, newSize)
	if st.logID == "" && len(touched) > 0 {
		// The log begins: what was written before it is unknown, so all
		// the data there was counts as written in its first item.
		for _, r := range before {
			touched = touched.add(r.lo, r.hi)
		}
	}
	st.record(touched)
	return st.encode(), nil
}
