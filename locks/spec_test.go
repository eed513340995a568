package locks

// Table-driven tests for every table of locking.md, run through a real
// Table on a real SQLite file. Each case works on its own FileID.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// fileSeq hands out fresh file ids within one test binary run.
var fileSeq atomic.Uint64

func newFile() FileID { return FileID(1_000_000 + fileSeq.Add(1)) }

const (
	rd   = AccessRead
	wr   = AccessWrite
	ap   = AccessAppend
	ex   = AccessExecute
	del  = AccessDelete
	attr = AccessReadAttributes
)

// §1.2: the MS-FSA sharing check, rows 1–6 and the no-data-bit cases.
func TestSharingCheckRows(t *testing.T) {
	tab := openTable(t, "", Options{})
	cases := []struct {
		name      string
		eAcc      Access
		eShare    ShareMode
		nAcc      Access
		nShare    ShareMode
		violation bool
	}{
		{"row1 E no share Read, N wants READ_DATA", wr, ShareWrite | ShareDelete, rd, ShareAll, true},
		{"row1 E no share Read, N wants EXECUTE", wr, ShareWrite | ShareDelete, ex, ShareAll, true},
		{"row1 negative: E shares Read", wr, ShareAll, rd, ShareAll, false},
		{"row2 E no share Write, N wants WRITE_DATA", rd, ShareRead | ShareDelete, wr, ShareAll, true},
		{"row2 E no share Write, N wants APPEND_DATA", rd, ShareRead | ShareDelete, ap, ShareAll, true},
		{"row2 negative: E shares Write", rd, ShareAll, ap, ShareAll, false},
		{"row3 E no share Delete, N wants DELETE", rd, ShareRead | ShareWrite, del, ShareAll, true},
		{"row3 negative: E shares Delete", rd, ShareAll, del, ShareAll, false},
		{"row4 E has READ_DATA, N does not share Read", rd, ShareAll, wr, ShareWrite | ShareDelete, true},
		{"row4 E has EXECUTE, N does not share Read", ex, ShareAll, wr, ShareWrite | ShareDelete, true},
		{"row5 E has WRITE_DATA, N does not share Write", wr, ShareAll, rd, ShareRead | ShareDelete, true},
		{"row5 E has APPEND_DATA, N does not share Write", ap, ShareAll, rd, ShareRead | ShareDelete, true},
		{"row6 E has DELETE, N does not share Delete", del, ShareAll, rd, ShareRead | ShareWrite, true},
		{"row6 negative: N shares Delete", del, ShareAll, rd, ShareAll, false},
		{"new open without data bit: no check", rd | wr | del, ShareNone, attr, ShareNone, false},
		{"new open with no access at all: no check", rd | wr | del, ShareNone, 0, ShareNone, false},
		{"existing attribute-only open is skipped", attr, ShareNone, rd | wr | del, ShareNone, false},
		{"both share none, both read", rd, ShareNone, rd, ShareNone, true},
		{"both share all, full access", rd | wr | ap | ex | del, ShareAll, rd | wr | ap | ex | del, ShareAll, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			mustOpen(t, tab, OpenRequest{File: f, Access: c.eAcc, Share: c.eShare})
			_, err := open(t, tab, OpenRequest{File: f, Access: c.nAcc, Share: c.nShare})
			if c.violation != errors.Is(err, ErrSharingViolation) || (!c.violation && err != nil) {
				t.Fatalf("open N(%v/%v) after E(%v/%v): err=%v, want violation=%v", c.nAcc, c.nShare, c.eAcc, c.eShare, err, c.violation)
			}
			if c.violation {
				var ce *ConflictError
				if !errors.As(err, &ce) || len(ce.Handles) != 1 || ce.File != f {
					t.Fatalf("want a ConflictError naming the one existing handle on file %d, got %#v", f, err)
				}
			}
		})
	}
}

// §1.2 worked examples from "Manage file locks".
func TestSharingWorkedExamples(t *testing.T) {
	tab := openTable(t, "", Options{})
	cases := []struct {
		name   string
		aAcc   Access
		aShare ShareMode
		bAcc   Access
		bShare ShareMode
		bFails bool
	}{
		{"A Read/share Write, B Write/share Read: both open", rd, ShareWrite, wr, ShareRead, false},
		{"A Write/share Read, B Write/share Write: B fails (row 2)", wr, ShareRead, wr, ShareWrite, true},
		{"A Write/share Write, B Write/share Read: B fails (row 5)", wr, ShareWrite, wr, ShareRead, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			a := mustOpen(t, tab, OpenRequest{File: f, Access: c.aAcc, Share: c.aShare})
			_, err := open(t, tab, OpenRequest{File: f, Access: c.bAcc, Share: c.bShare})
			if c.bFails != errors.Is(err, ErrSharingViolation) || (!c.bFails && err != nil) {
				t.Fatalf("B: err=%v, want fail=%v", err, c.bFails)
			}
			if c.bFails {
				// Sharing violations exist only while the conflicting handle is open.
				mustClose(t, tab, a.ID)
				if _, err := open(t, tab, OpenRequest{File: f, Access: c.bAcc, Share: c.bShare}); err != nil {
					t.Fatalf("B after A closed: %v", err)
				}
			}
		})
	}
}

// restOps are the §1.4 columns, in order.
var restOps = []struct {
	name string
	op   Op
}{
	{"GetFile", OpGetFile},
	{"ListRanges", OpListRanges},
	{"PutRange", OpPutRange},
	{"SetProps", OpSetProperties},
	{"SetMetadata", OpSetMetadata},
	{"Create", OpCreateOverwrite},
	{"Delete", OpDelete},
	{"LeaseAcquire", 0}, // Lease File acquire
	{"GetProps", OpGetProperties},
	{"List", OpList},
}

// restCall runs one §1.4 column against file f: a CheckREST, or a lease
// acquire (released again so the file stays as it was).
func restCall(t *testing.T, tab *Table, f FileID, op Op) error {
	t.Helper()
	if op == 0 {
		return update(t, tab, func(tx *Tx) error {
			id, err := tx.Lease(LeaseRequest{File: f, Action: LeaseAcquire})
			if err != nil {
				return err
			}
			_, err = tx.Lease(LeaseRequest{File: f, Action: LeaseRelease, LeaseID: id})
			return err
		})
	}
	return checkREST(t, tab, RESTRequest{File: f, Op: op, Range: WholeFile})
}

// §1.4: share mode × REST operation, the full matrix with both footnotes,
// for a Read handle, a Write handle, a Delete handle and an attribute-only
// handle (A12).
func TestShareModeRESTMatrix(t *testing.T) {
	tab := openTable(t, "", Options{})
	// Columns: GetFile ListRanges PutRange SetProps SetMetadata Create Delete Lease GetProps List.
	// 'X' = SharingViolation, '.' = ok, '1'/'2' = the footnoted lease cells.
	matrix := []struct {
		share ShareMode
		row   string
	}{
		{ShareNone, "XXXXXXXX.."},
		{ShareRead, "..XXXXXX.."},
		{ShareWrite, "XX...XXX.."},
		{ShareDelete, "XXXXXXXX.."},
		{ShareRead | ShareWrite, ".....XXX.."},
		{ShareRead | ShareDelete, "..XXXXXX.."},
		{ShareWrite | ShareDelete, "XX....X1.."},
		{ShareAll, "......X2.."},
	}
	for _, acc := range []Access{rd, wr, del, rd | wr, attr} {
		for _, m := range matrix {
			for i, col := range restOps {
				cell := m.row[i]
				want := cell == 'X'
				switch {
				case acc == attr: // A12: attribute-only blocks nothing but Delete File
					want = col.op == OpDelete
				case cell == '1': // only when the handle has Write or Delete access
					want = acc.writes() || acc.deletes()
				case cell == '2': // ok only when the handle's access is Read (or attribute-only)
					want = acc.writes() || acc.deletes()
				}
				t.Run(fmt.Sprintf("access=%v/share=%v/%s", acc, m.share, col.name), func(t *testing.T) {
					f := newFile()
					mustOpen(t, tab, OpenRequest{File: f, Access: acc, Share: m.share})
					err := restCall(t, tab, f, col.op)
					if want != errors.Is(err, ErrSharingViolation) || (!want && err != nil) {
						t.Fatalf("err=%v, want SharingViolation=%v", err, want)
					}
				})
			}
		}
	}
}

// §1.3 direction and doc examples: REST is checked one way only.
func TestRESTOneDirection(t *testing.T) {
	tab := openTable(t, "", Options{})
	cases := []struct {
		name  string
		acc   Access
		share ShareMode
		op    Op
		want  error
	}{
		{"doc: handle Read + share Write → Get File fails", rd, ShareWrite, OpGetFile, ErrSharingViolation},
		{"doc: handle Write + share Read → Put Range fails", wr, ShareRead, OpPutRange, ErrSharingViolation},
		{"handle Write + share Read does not block Get File", wr, ShareRead, OpGetFile, nil},
		{"handle Read+Write+Delete share none does not block Get Properties", rd | wr | del, ShareNone, OpGetProperties, nil},
		{"Copy source is Read", rd, ShareWrite, OpCopySource, ErrSharingViolation},
		{"Copy source ok with share Read", wr, ShareRead, OpCopySource, nil},
		{"Rename source is Delete", rd, ShareRead | ShareWrite, OpRenameSource, ErrSharingViolation},
		{"Rename source ok with share Delete", rd | wr, ShareAll, OpRenameSource, nil},
		{"Rename replace is Write+Delete", rd, ShareRead | ShareWrite, OpRenameReplace, ErrSharingViolation},
		{"Rename replace ok with share Write+Delete", rd, ShareWrite | ShareDelete, OpRenameReplace, nil},
		{"Rename replace ok with share all", rd, ShareAll, OpRenameReplace, nil},
		{"Delete File fails with a share-all handle (A4)", rd, ShareAll, OpDelete, ErrSharingViolation},
		{"Delete File fails with an attribute-only handle (A12)", attr, ShareAll, OpDelete, ErrSharingViolation},
		{"attribute-only share none blocks Put Range? no (A12)", attr, ShareNone, OpPutRange, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			mustOpen(t, tab, OpenRequest{File: f, Access: c.acc, Share: c.share})
			if err := checkREST(t, tab, RESTRequest{File: f, Op: c.op, Range: WholeFile}); !errIs(err, c.want) {
				t.Fatalf("err=%v, want %v", err, c.want)
			}
		})
	}
	t.Run("no handle: Delete File ok", func(t *testing.T) {
		if err := checkREST(t, tab, RESTRequest{File: newFile(), Op: OpDelete}); err != nil {
			t.Fatal(err)
		}
	})
}

// §1.5 / A3: lease acquire against open handles.
func TestLeaseAcquireVsHandles(t *testing.T) {
	tab := openTable(t, "", Options{})
	shares := []struct {
		name  string
		share ShareMode
		full  bool
	}{
		{"RWD", ShareAll, true}, {"RW", ShareRead | ShareWrite, false}, {"RD", ShareRead | ShareDelete, false},
		{"none", ShareNone, false}, {"WD", ShareWrite | ShareDelete, true},
	}
	accesses := []struct {
		name  string
		acc   Access
		class string // none | read | wd
	}{
		{"attr-only", attr, "none"}, {"read", rd, "read"}, {"execute", ex, "read"}, {"read+exec", rd | ex, "read"},
		{"write", wr, "wd"}, {"append", ap, "wd"}, {"delete", del, "wd"}, {"read+write", rd | wr, "wd"},
	}
	for _, s := range shares {
		for _, a := range accesses {
			// The §1.5 table.
			want := false
			switch a.class {
			case "none":
				want = false
			case "read":
				want = !s.full
			case "wd":
				want = true
			}
			t.Run(a.name+"/"+s.name, func(t *testing.T) {
				f := newFile()
				mustOpen(t, tab, OpenRequest{File: f, Access: a.acc, Share: s.share})
				err := update(t, tab, func(tx *Tx) error {
					_, err := tx.Lease(LeaseRequest{File: f, Action: LeaseAcquire})
					return err
				})
				if want != errors.Is(err, ErrSharingViolation) || (!want && err != nil) {
					t.Fatalf("acquire: err=%v, want SharingViolation=%v", err, want)
				}
			})
		}
	}
}

// §1.7 / A5: ReadOnly refuses Create, Set Properties, Set Metadata, Put
// Range (and a replaced rename destination); other operations pass.
func TestReadOnlyREST(t *testing.T) {
	tab := openTable(t, "", Options{})
	cases := []struct {
		op   Op
		want error
	}{
		{OpCreateOverwrite, ErrReadOnly},
		{OpSetProperties, ErrReadOnly},
		{OpSetMetadata, ErrReadOnly},
		{OpPutRange, ErrReadOnly},
		{OpRenameReplace, ErrReadOnly},
		{OpGetFile, nil},
		{OpGetProperties, nil},
		{OpListRanges, nil},
		{OpDelete, nil},
		{OpCopySource, nil},
		{OpRenameSource, nil},
		{OpList, nil},
	}
	for _, c := range cases {
		t.Run(c.op.String(), func(t *testing.T) {
			f := newFile()
			err := checkREST(t, tab, RESTRequest{File: f, Op: c.op, Range: Range{0, 10}, Facts: Facts{ReadOnly: true}})
			if !errIs(err, c.want) {
				t.Fatalf("err=%v, want %v", err, c.want)
			}
			if err := checkREST(t, tab, RESTRequest{File: f, Op: c.op, Range: Range{0, 10}}); err != nil {
				t.Fatalf("without ReadOnly: %v", err)
			}
		})
	}
}

// removeLog records the files Options.Remove was called for.
type removeLog struct {
	mu    sync.Mutex // Remove may run in another Table's goroutine
	files []FileID
	fail  error
}

func (r *removeLog) remove(_ context.Context, tx *Conn, f FileID) error {
	if tx == nil {
		return errors.New("remove without a transaction")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.files = append(r.files, f)
	return nil
}

// removed returns the files removed so far, in order.
func (r *removeLog) removed() []FileID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.files)
}

// §2.1: how a file becomes delete-pending (A8).
func TestDispositionTable(t *testing.T) {
	rm := &removeLog{}
	tab := openTable(t, "", Options{Remove: rm.remove})
	cases := []struct {
		name        string
		acc         Access
		doc         bool
		dispose     *bool // nil: no dispose call
		facts       Facts
		wantErr     error
		wantPending bool // after the call, handle still open
	}{
		{"disposition TRUE with DELETE: pending now", del, false, ptr(true), Facts{}, nil, true},
		{"disposition TRUE without DELETE: access denied", rd | wr, false, ptr(true), Facts{}, ErrAccessDenied, false},
		{"disposition TRUE on ReadOnly: cannot delete", del, false, ptr(true), Facts{ReadOnly: true}, ErrCannotDelete, false},
		{"disposition TRUE on non-empty dir", del, false, ptr(true), Facts{Directory: true, NonEmptyDir: true}, ErrDirectoryNotEmpty, false},
		{"disposition TRUE on empty dir", del, false, ptr(true), Facts{Directory: true}, nil, true},
		{"delete-on-close open: nothing while open", del, true, nil, Facts{}, nil, false},
		{"DELETE access alone: nothing (A8)", del, false, nil, Facts{}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			h := mustOpen(t, tab, OpenRequest{File: f, Access: c.acc, Share: ShareAll, DeleteOnClose: c.doc})
			var err error
			if c.dispose != nil {
				err = update(t, tab, func(tx *Tx) error { return tx.Dispose(h.ID, *c.dispose, c.facts) })
			}
			if !errIs(err, c.wantErr) {
				t.Fatalf("dispose: err=%v, want %v", err, c.wantErr)
			}
			if p := pending(t, tab, f); p != c.wantPending {
				t.Fatalf("pending=%v, want %v", p, c.wantPending)
			}
			res := mustClose(t, tab, h.ID)
			wantRemoved := c.wantPending || c.doc
			if res.Removed != wantRemoved || (len(rm.removed()) > 0 && rm.removed()[len(rm.removed())-1] == f) != wantRemoved {
				t.Fatalf("close: removed=%v remove calls=%v, want removed=%v", res.Removed, rm.removed(), wantRemoved)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func pending(t *testing.T, tab *Table, f FileID) bool {
	t.Helper()
	var p bool
	if err := tab.View(context.Background(), func(tx *Tx) error {
		var err error
		p, err = tx.DeletePending(f)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return p
}

// §2.1: undelete, and delete-on-close surviving an undelete (Win32).
func TestUndelete(t *testing.T) {
	rm := &removeLog{}
	tab := openTable(t, "", Options{Remove: rm.remove})
	t.Run("dispose false clears the mark", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, OpenRequest{File: f, Access: del, Share: ShareAll})
		must(t, update(t, tab, func(tx *Tx) error { return tx.Dispose(h.ID, true, Facts{}) }))
		must(t, update(t, tab, func(tx *Tx) error { return tx.Dispose(h.ID, false, Facts{}) }))
		if pending(t, tab, f) {
			t.Fatal("still pending after undelete")
		}
		if res := mustClose(t, tab, h.ID); res.Removed {
			t.Fatal("removed after undelete")
		}
	})
	t.Run("dispose false without DELETE access is refused", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, OpenRequest{File: f, Access: rd, Share: ShareAll})
		if err := update(t, tab, func(tx *Tx) error { return tx.Dispose(h.ID, false, Facts{}) }); !errors.Is(err, ErrAccessDenied) {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("undelete does not cancel delete-on-close", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, OpenRequest{File: f, Access: del, Share: ShareAll, DeleteOnClose: true})
		must(t, update(t, tab, func(tx *Tx) error { return tx.Dispose(h.ID, true, Facts{}) }))
		must(t, update(t, tab, func(tx *Tx) error { return tx.Dispose(h.ID, false, Facts{}) }))
		if res := mustClose(t, tab, h.ID); !res.Removed {
			t.Fatal("delete-on-close handle did not remove the file")
		}
	})
	t.Run("delete-on-close with another handle open: pending until last close", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, OpenRequest{File: f, Access: del, Share: ShareAll, DeleteOnClose: true})
		o := mustOpen(t, tab, OpenRequest{File: f, Access: rd, Share: ShareAll})
		if res := mustClose(t, tab, h.ID); res.Removed {
			t.Fatal("removed while another handle is open")
		}
		if !pending(t, tab, f) {
			t.Fatal("not pending after the delete-on-close handle closed")
		}
		if res := mustClose(t, tab, o.ID); !res.Removed {
			t.Fatal("last close did not remove")
		}
		if pending(t, tab, f) {
			t.Fatal("state survived the removal")
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// §2.2: while pending.
func TestWhilePending(t *testing.T) {
	rm := &removeLog{}
	tab := openTable(t, "", Options{Remove: rm.remove})
	f := newFile()
	h := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr | del, Share: ShareAll})
	must(t, update(t, tab, func(tx *Tx) error { return tx.Lock(h.ID, Range{0, 10}, LockExclusive) }))
	must(t, update(t, tab, func(tx *Tx) error { return tx.Dispose(h.ID, true, Facts{}) }))
	ops := []Op{OpGetProperties, OpList, OpGetFile, OpListRanges, OpPutRange, OpSetProperties, OpSetMetadata,
		OpCreateOverwrite, OpDelete, OpCopySource, OpRenameSource, OpRenameReplace}
	for _, op := range ops {
		t.Run("REST "+op.String(), func(t *testing.T) {
			if err := checkREST(t, tab, RESTRequest{File: f, Op: op, Range: WholeFile}); !errors.Is(err, ErrDeletePending) {
				t.Fatalf("err=%v, want ErrDeletePending", err)
			}
		})
	}
	for _, a := range []LeaseAction{LeaseAcquire, LeaseBreak} {
		t.Run("lease "+a.String(), func(t *testing.T) {
			err := update(t, tab, func(tx *Tx) error { _, err := tx.Lease(LeaseRequest{File: f, Action: a}); return err })
			if !errors.Is(err, ErrDeletePending) {
				t.Fatalf("err=%v", err)
			}
		})
	}
	for _, acc := range []Access{rd, attr, 0, del} {
		t.Run("new open "+acc.String(), func(t *testing.T) {
			if _, err := open(t, tab, OpenRequest{File: f, Access: acc, Share: ShareAll}); !errors.Is(err, ErrDeletePending) {
				t.Fatalf("err=%v", err)
			}
		})
	}
	t.Run("unlink", func(t *testing.T) {
		if _, err := unlink(t, tab, f, Facts{}); !errors.Is(err, ErrDeletePending) {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("existing handle keeps working", func(t *testing.T) {
		must(t, update(t, tab, func(tx *Tx) error { return tx.CheckIO(h.ID, Range{0, 100}, true) }))
		must(t, update(t, tab, func(tx *Tx) error { return tx.Lock(h.ID, Range{50, 10}, LockShared) }))
		must(t, update(t, tab, func(tx *Tx) error { return tx.Unlock(h.ID, Range{50, 10}) }))
	})
	t.Run("last close removes", func(t *testing.T) {
		if res := mustClose(t, tab, h.ID); !res.Removed {
			t.Fatal("not removed")
		}
		if len(rm.removed()) != 1 || rm.removed()[0] != f {
			t.Fatalf("remove calls %v", rm.removed())
		}
		// Gone: the lock table has no state left; the namespace answers 404.
		err := tab.View(context.Background(), func(tx *Tx) error {
			hs, err := tx.Handles(f)
			if err != nil || len(hs) != 0 {
				return fmt.Errorf("handles %v err %v", hs, err)
			}
			ls, err := tx.Locks(f)
			if err != nil || len(ls) != 0 {
				return fmt.Errorf("locks %v err %v", ls, err)
			}
			return nil
		})
		must(t, err)
	})
}

func unlink(t *testing.T, tab *Table, f FileID, facts Facts) (bool, error) {
	t.Helper()
	var removed bool
	err := update(t, tab, func(tx *Tx) error {
		var err error
		removed, err = tx.UnlinkOpen(f, facts)
		return err
	})
	return removed, err
}

// openOn opens req on f, when req is not nil.
func openOn(t *testing.T, tab *Table, f FileID, req *OpenRequest) {
	t.Helper()
	if req != nil {
		o := *req
		o.File = f
		mustOpen(t, tab, o)
	}
}

// UnlinkOpen (an unlink through the mount).
func TestUnlinkOpen(t *testing.T) {
	rm := &removeLog{}
	tab := openTable(t, "", Options{Remove: rm.remove})
	cases := []struct {
		name        string
		other       *OpenRequest // an open handle, if any
		facts       Facts
		lease       bool
		want        error
		wantRemoved bool
	}{
		{"no handle: removed at once", nil, Facts{}, false, nil, true},
		{"share-delete handle: pending", &OpenRequest{Access: rd, Share: ShareAll}, Facts{}, false, nil, false},
		{"handle not sharing Delete: violation", &OpenRequest{Access: rd, Share: ShareRead | ShareWrite}, Facts{}, false, ErrSharingViolation, false},
		{"attribute-only handle: pending", &OpenRequest{Access: attr, Share: ShareNone}, Facts{}, false, nil, false},
		{"ReadOnly: cannot delete", nil, Facts{ReadOnly: true}, false, ErrCannotDelete, false},
		{"non-empty directory", nil, Facts{Directory: true, NonEmptyDir: true}, false, ErrDirectoryNotEmpty, false},
		{"leased: violation (A14)", nil, Facts{}, true, ErrSharingViolation, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			openOn(t, tab, f, c.other)
			if c.lease {
				must(t, update(t, tab, func(tx *Tx) error { _, err := tx.Lease(LeaseRequest{File: f, Action: LeaseAcquire}); return err }))
			}
			removed, err := unlink(t, tab, f, c.facts)
			if !errIs(err, c.want) {
				t.Fatalf("err=%v, want %v", err, c.want)
			}
			if removed != c.wantRemoved {
				t.Fatalf("removed=%v", removed)
			}
			if wantPending := err == nil && !c.wantRemoved; pending(t, tab, f) != wantPending {
				t.Fatalf("pending=%v, want %v", !wantPending, wantPending)
			}
		})
	}
}

// An unlink that removes a file leaves none of its state behind, whether
// the file had any (a broken lease's lk_files row; a closed handle that
// held byte-range locks) or none: the removal skips deleting state the
// transaction saw did not exist, and must not skip more.
func TestUnlinkLeavesNoState(t *testing.T) {
	tab := openTable(t, "", Options{})
	cases := []struct {
		name    string
		prepare func(t *testing.T, f FileID)
	}{
		{"never opened", func(t *testing.T, f FileID) {}},
		{"broken lease row", func(t *testing.T, f FileID) {
			must(t, update(t, tab, func(tx *Tx) error {
				if _, err := tx.Lease(LeaseRequest{File: f, Action: LeaseAcquire}); err != nil {
					return err
				}
				_, err := tx.Lease(LeaseRequest{File: f, Action: LeaseBreak})
				return err
			}))
		}},
		{"closed handle that held locks", func(t *testing.T, f FileID) {
			h := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
			must(t, update(t, tab, func(tx *Tx) error { return tx.SetPOSIXLock(h.ID, 7, Range{0, 10}, LockExclusive) }))
			must(t, update(t, tab, func(tx *Tx) error { return tx.Lock(h.ID, Range{20, 5}, LockShared) }))
			mustClose(t, tab, h.ID)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			c.prepare(t, f)
			removed, err := unlink(t, tab, f, Facts{})
			if err != nil || !removed {
				t.Fatalf("unlink: removed=%v err=%v", removed, err)
			}
			for _, table := range []string{"lk_files", "lk_handles", "lk_locks"} {
				var n int
				must(t, tab.DB().QueryRow(`SELECT count(*) FROM `+table+` WHERE file = ?`, int64(f)).Scan(&n))
				if n != 0 {
					t.Errorf("%s: %d rows of the removed file left", table, n)
				}
			}
		})
	}
}

// An open of a ReadOnly file (MS-FSA 2.1.5.1.2.1): writing or appending is
// refused with ErrReadOnly (STATUS_ACCESS_DENIED) and delete-on-close with
// ErrCannotDelete, and so is an overwriting open, before the sharing
// check; reading, attributes and plain Delete access are allowed.
func TestOpenReadOnly(t *testing.T) {
	tab := openTable(t, "", Options{})
	cases := []struct {
		name  string
		req   OpenRequest
		other *OpenRequest // an open handle, if any
		want  error
	}{
		{"read", OpenRequest{Access: rd, Share: ShareAll}, nil, nil},
		{"attributes", OpenRequest{Access: attr, Share: ShareAll}, nil, nil},
		{"delete access", OpenRequest{Access: del, Share: ShareAll}, nil, nil},
		{"write", OpenRequest{Access: rd | wr, Share: ShareAll}, nil, ErrReadOnly},
		{"append", OpenRequest{Access: AccessAppend, Share: ShareAll}, nil, ErrReadOnly},
		{"overwrite", OpenRequest{Access: rd, Share: ShareAll, Overwrite: true}, nil, ErrReadOnly},
		{"delete on close", OpenRequest{Access: del, Share: ShareAll, DeleteOnClose: true}, nil, ErrCannotDelete},
		{"write, against a handle sharing nothing: access first", OpenRequest{Access: wr, Share: ShareAll}, &OpenRequest{Access: rd, Share: ShareNone}, ErrReadOnly},
		{"read, against a handle sharing nothing: sharing", OpenRequest{Access: rd, Share: ShareAll}, &OpenRequest{Access: rd, Share: ShareNone}, ErrSharingViolation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			openOn(t, tab, f, c.other)
			req := c.req
			req.File, req.ReadOnly = f, true
			if _, err := open(t, tab, req); !errIs(err, c.want) {
				t.Fatalf("open %+v: %v, want %v", req, err, c.want)
			}
			req.ReadOnly = false
			if c.other == nil {
				if _, err := open(t, tab, req); err != nil {
					t.Fatalf("same open of a file without ReadOnly: %v", err)
				}
			}
		})
	}
}

// An open of a file created in the same transaction (Created) is decided
// on an empty state: it is validated like any open, stored like any
// handle, and conflicts with later opens as usual.
func TestOpenCreated(t *testing.T) {
	tab := openTable(t, "", Options{})
	f := newFile()
	if _, err := open(t, tab, OpenRequest{File: f, Access: rd, Share: 0xff, Created: true}); !errors.Is(err, ErrInvalidParameter) {
		t.Fatalf("invalid share mode with Created: %v, want ErrInvalidParameter", err)
	}
	h := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareNone, Created: true})
	if _, err := open(t, tab, OpenRequest{File: f, Access: rd, Share: ShareAll}); !errors.Is(err, ErrSharingViolation) {
		t.Fatalf("open against a Created handle sharing nothing: %v, want ErrSharingViolation", err)
	}
	mustClose(t, tab, h.ID)
	mustOpen(t, tab, OpenRequest{File: f, Access: rd, Share: ShareAll})
}
