package reliability

import (
	"fmt"
	"slices"
	"sync"
)

// The crash matrix's oracle. A slotFile is a file cut into fixed-length
// slots; each writer owns some slots and writes whole slots (one Put Range
// or one pwrite+fsync each) or, when it is the file's only writer, resizes
// the file to a slot boundary. The model keeps the acknowledged state and
// the operation each writer has in flight; after a crash the file must be
// the acknowledged state with or without the in-flight operations applied,
// never anything else.

// slotOp is one write of one slot, or a resize to n slots.
type slotOp struct {
	trunc bool
	slot  int
	ver   uint32
	n     int
}

func (o slotOp) String() string {
	if o.trunc {
		return fmt.Sprintf("resize to %d slots", o.n)
	}
	return fmt.Sprintf("write slot %d version %d", o.slot, o.ver)
}

// slotState is a file's content seen slot by slot: its size and the version
// each slot holds (0: zeros).
type slotState struct {
	size int64
	vers []uint32
}

func (s slotState) equal(o slotState) bool { return s.size == o.size && slices.Equal(s.vers, o.vers) }

func (s slotState) String() string { return fmt.Sprintf("size %d slots %v", s.size, s.vers) }

type slotFile struct {
	id       uint32
	name     string
	slotLen  int
	maxSlots int

	mu       sync.Mutex
	state    slotState
	inflight map[int]slotOp // by writer
	nextVer  uint32
}

func newSlotFile(id uint32, name string, slotLen, maxSlots int, size int64) *slotFile {
	return &slotFile{id: id, name: name, slotLen: slotLen, maxSlots: maxSlots,
		state: slotState{size: size, vers: make([]uint32, maxSlots)}, inflight: map[int]slotOp{}}
}

// apply returns s after op.
func (f *slotFile) apply(s slotState, op slotOp) slotState {
	n := slotState{size: s.size, vers: slices.Clone(s.vers)}
	L := int64(f.slotLen)
	if op.trunc {
		n.size = int64(op.n) * L
		for i := range n.vers {
			if int64(i)*L >= n.size {
				n.vers[i] = 0
			}
		}
		return n
	}
	n.vers[op.slot] = op.ver
	n.size = max(n.size, int64(op.slot+1)*L)
	return n
}

// begin records op as writer w's operation in flight; a write gets the
// file's next version.
func (f *slotFile) begin(w int, op slotOp) slotOp {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !op.trunc {
		f.nextVer++
		op.ver = f.nextVer
	}
	f.inflight[w] = op
	return op
}

// ack applies writer w's operation to the acknowledged state.
func (f *slotFile) ack(w int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state = f.apply(f.state, f.inflight[w])
	delete(f.inflight, w)
}

// slots returns the current acknowledged size in slots.
func (f *slotFile) slots() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return int(f.state.size / int64(f.slotLen))
}

// observe decodes a file's content into a slotState.
func (f *slotFile) observe(b []byte) (slotState, error) {
	s := slotState{size: int64(len(b)), vers: make([]uint32, f.maxSlots)}
	if len(b)%f.slotLen != 0 || len(b)/f.slotLen > f.maxSlots {
		return s, fmt.Errorf("%s: size %d is not a whole number of %d-byte slots (max %d)", f.name, len(b), f.slotLen, f.maxSlots)
	}
	for i := 0; i < len(b)/f.slotLen; i++ {
		v, err := decodeRecord(b[i*f.slotLen:(i+1)*f.slotLen], f.id, uint32(i))
		if err != nil {
			return s, fmt.Errorf("%s: %w", f.name, err)
		}
		s.vers[i] = v
	}
	return s, nil
}

// settle checks an observed state against the model and, when it is one
// the writers could have left, adopts it as the new acknowledged state.
func (f *slotFile) settle(got slotState) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	ok := false
	switch len(f.inflight) {
	case 0:
		ok = got.equal(f.state)
	case 1:
		for _, op := range f.inflight {
			ok = got.equal(f.state) || got.equal(f.apply(f.state, op))
		}
	default: // several writers, each on its own slots, no resizes
		ok = got.size == f.state.size
		for i := range got.vers {
			slotOK := got.vers[i] == f.state.vers[i]
			for _, op := range f.inflight {
				if op.trunc {
					return fmt.Errorf("%s: resize in flight beside other writers (test bug)", f.name)
				}
				slotOK = slotOK || (op.slot == i && op.ver == got.vers[i])
			}
			ok = ok && slotOK
		}
	}
	if !ok {
		return fmt.Errorf("%s: found %v; acknowledged %v, in flight %v", f.name, got, f.state, f.inflight)
	}
	f.state = got
	clear(f.inflight)
	return nil
}

// wholeFile is a file replaced as a whole by writing a temporary file and
// renaming it over the name; each version has its own length.
type wholeFile struct {
	id   uint32
	name string

	mu       sync.Mutex
	acked    uint32 // 0: never replaced
	inflight uint32
	nextVer  uint32
}

var wholeLens = []int{3000, 40_000, 70_000, 300_000, 1<<20 + 5}

func wholeLen(ver uint32) int { return wholeLens[int(ver)%len(wholeLens)] }

func (f *wholeFile) begin() uint32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextVer++
	f.inflight = f.nextVer
	return f.inflight
}

func (f *wholeFile) ack() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acked, f.inflight = f.inflight, 0
}

// settle checks the observed content (nil: no such file).
func (f *wholeFile) settle(b []byte, exists bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !exists {
		if f.acked != 0 {
			return fmt.Errorf("%s: missing; version %d was acknowledged", f.name, f.acked)
		}
		f.inflight = 0
		return nil
	}
	v, err := decodeRecord(b, f.id, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	if v == 0 || (v != f.acked && v != f.inflight) {
		return fmt.Errorf("%s: holds version %d; acknowledged %d, in flight %d", f.name, v, f.acked, f.inflight)
	}
	f.acked, f.inflight = v, 0
	return nil
}
