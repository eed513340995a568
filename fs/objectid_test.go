package fs

import (
	"errors"
	"testing"

	"github.com/blobshare/blobshare/locks"
)

// TestObjectID: a file's object id is made once and then the same through
// every handle, in another process on the same data directory and after a
// restart; two files have different ids; a closed handle is refused.
func TestObjectID(t *testing.T) {
	dir := t.TempDir()
	a := openEnv(t, dir)
	a.share("oid")
	a.putFile("oid/f.txt", []byte("x"))
	a.putFile("oid/g.txt", []byte("y"))
	h := a.mustOpen("oid/f.txt", locks.AccessRead, allShare, DispositionOpen)
	before, err := a.fs.GetAttr(ctxBG, h.File())
	if err != nil {
		t.Fatal(err)
	}
	first, err := h.ObjectID(ctxBG)
	if err != nil {
		t.Fatal(err)
	}
	if first == ([ObjectIDSize]byte{}) {
		t.Fatal("object id is all zeros")
	}
	after, err := a.fs.GetAttr(ctxBG, h.File())
	if err != nil {
		t.Fatal(err)
	}
	if !after.LastWrite.Equal(before.LastWrite) || after.Size != before.Size {
		t.Errorf("making the object id changed the file: %+v, then %+v", before, after)
	}
	again, err := h.ObjectID(ctxBG)
	if err != nil || again != first {
		t.Fatalf("second request: %x, %v; want %x", again, err, first)
	}
	h2 := a.mustOpen("oid/f.txt", locks.AccessRead, allShare, DispositionOpen)
	if got, err := h2.ObjectID(ctxBG); err != nil || got != first {
		t.Fatalf("through another handle: %x, %v; want %x", got, err, first)
	}
	g := a.mustOpen("oid/g.txt", locks.AccessRead, allShare, DispositionOpen)
	if got, err := g.ObjectID(ctxBG); err != nil || got == first {
		t.Fatalf("another file: %x, %v; want an id other than %x", got, err, first)
	}
	// Another process on the same directory sees the same id.
	b := openEnv(t, dir)
	hb := b.mustOpen("oid/f.txt", locks.AccessRead, allShare, DispositionOpen)
	if got, err := hb.ObjectID(ctxBG); err != nil || got != first {
		t.Fatalf("from another process: %x, %v; want %x", got, err, first)
	}
	if err := h.Close(ctxBG); err != nil {
		t.Fatal(err)
	}
	if _, err := h.ObjectID(ctxBG); !errors.Is(err, locks.ErrHandleClosed) {
		t.Fatalf("closed handle: %v, want ErrHandleClosed", err)
	}
	// A restart: both processes end, a new one opens the directory.
	for _, x := range []*Handle{h2, g, hb} {
		if err := x.Close(ctxBG); err != nil {
			t.Fatal(err)
		}
	}
	a.close()
	b.close()
	c := openEnv(t, dir)
	hc := c.mustOpen("oid/f.txt", locks.AccessRead, allShare, DispositionOpen)
	defer hc.Close(ctxBG)
	if got, err := hc.ObjectID(ctxBG); err != nil || got != first {
		t.Fatalf("after a restart: %x, %v; want %x", got, err, first)
	}
}
