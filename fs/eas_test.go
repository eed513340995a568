package fs

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/locks"
)

// TestExtendedAttributes: EAs given at create are kept with the entry
// across processes; Setattr replaces, adds and removes them by name
// without case; an overwrite with EAs replaces them; bad names and sets
// over MaxEASize change nothing.
func TestExtendedAttributes(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.share("eas")
	open := func(disp Disposition, eas []EA) (*Handle, Attr) {
		t.Helper()
		h, a, _, err := e.fs.OpenEntry(ctx, OpenEntryRequest{OpenPathRequest: OpenPathRequest{Path: "eas/f", Disposition: disp,
			Open: OpenOptions{Access: locks.AccessRead | locks.AccessWrite, Share: locks.ShareRead | locks.ShareWrite | locks.ShareDelete}}, EAs: eas})
		if err != nil {
			t.Fatalf("open s/f: %v", err)
		}
		return h, a
	}
	names := func(eas []EA) string {
		var s []string
		for _, ea := range eas {
			s = append(s, ea.Name+"="+string(ea.Value))
		}
		return strings.Join(s, ",")
	}
	h, a := open(DispositionCreate, []EA{{Name: "EAONE", Value: []byte("VALUE1")}, {Name: "SecondEA", Value: []byte("ValueTwo")}})
	if got := names(a.EAs); got != "EAONE=VALUE1,SecondEA=ValueTwo" {
		t.Fatalf("EAs at create: %s", got)
	}
	h.Close(ctx)

	// A second process sees them.
	other := openEnv(t, e.dir)
	got, err := other.fs.Lookup(ctx, a.Parent, "f")
	mustNil(t, err, "lookup")
	if names(got.EAs) != "EAONE=VALUE1,SecondEA=ValueTwo" {
		t.Fatalf("EAs seen by another process: %s", names(got.EAs))
	}

	set := func(eas []EA) (Attr, error) {
		return e.fs.Setattr(ctx, a.ID, SetattrRequest{EAs: eas})
	}
	na, err := set([]EA{{Name: "eaone", Value: []byte("new")}, {Name: "secondea"}, {Name: "third", Flags: 0x80, Value: []byte{0, 1}}})
	mustNil(t, err, "set EAs")
	if got := names(na.EAs); got != "eaone=new,third=\x00\x01" || na.EAs[1].Flags != 0x80 {
		t.Fatalf("EAs after set: %q %+v", got, na.EAs)
	}
	for _, bad := range []EA{{Name: "", Value: []byte("x")}, {Name: "a:b", Value: []byte("x")}, {Name: "é", Value: []byte("x")}} {
		_, err := set([]EA{{Name: "ok", Value: []byte("x")}, bad})
		wantErr(t, err, ErrInvalidEAName, "name "+bad.Name)
	}
	_, err = set([]EA{{Name: "big", Value: bytes.Repeat([]byte{1}, MaxEASize)}})
	wantErr(t, err, ErrEATooLarge, "a set over MaxEASize")
	got, err = e.fs.Lookup(ctx, a.Parent, "f")
	mustNil(t, err, "lookup")
	if names(got.EAs) != "eaone=new,third=\x00\x01" {
		t.Fatalf("EAs after refused sets: %q", names(got.EAs))
	}

	// Overwrite without EAs keeps them; with EAs replaces them.
	h, a = open(DispositionOverwriteIf, nil)
	h.Close(ctx)
	if names(a.EAs) != "eaone=new,third=\x00\x01" {
		t.Fatalf("EAs after overwrite without EAs: %q", names(a.EAs))
	}
	h, a = open(DispositionOverwriteIf, []EA{{Name: "only", Value: []byte("1")}})
	h.Close(ctx)
	if names(a.EAs) != "only=1" {
		t.Fatalf("EAs after overwrite with EAs: %q", names(a.EAs))
	}
	na, err = set([]EA{{Name: "ONLY"}})
	mustNil(t, err, "remove the last EA")
	if na.EAs != nil {
		t.Fatalf("EAs after removing the last: %+v", na.EAs)
	}
}

// TestMergeEAsBounded: a set of more EAs than MaxEASize could hold is
// refused before any is looked at (the merge runs in the write
// transaction every protocol shares), and a large legal set merges in
// linear time with deletions and case-insensitive replacement.
func TestMergeEAsBounded(t *testing.T) {
	huge := make([]EA, MaxEASize/9+1)
	for i := range huge {
		huge[i] = EA{Name: strconv.Itoa(i), Value: []byte{1}}
	}
	if _, err := mergeEAs(nil, huge); !errors.Is(err, ErrEATooLarge) {
		t.Fatalf("a set of %d EAs: %v, want ErrEATooLarge", len(huge), err)
	}
	many := make([]EA, 3000)
	for i := range many {
		many[i] = EA{Name: "n" + strconv.Itoa(i), Value: []byte{1}}
	}
	got, err := mergeEAs(nil, many)
	if err != nil || len(got) != 3000 {
		t.Fatalf("3,000 EAs: %d, %v", len(got), err)
	}
	got, err = mergeEAs(got, []EA{{Name: "N0"}, {Name: "N1", Value: []byte("x")}, {Name: "new", Value: []byte("y")}})
	if err != nil || len(got) != 3000 || got[0].Name != "N1" || string(got[0].Value) != "x" || got[len(got)-1].Name != "new" {
		t.Fatalf("delete n0, replace n1, add new: %d entries, first %+v, last %+v, %v", len(got), got[0], got[len(got)-1], err)
	}
}
