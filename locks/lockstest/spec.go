package lockstest

// Table-driven tests for every table of locking.md, run through a real
// Table on a real database of the engine under test. Each case works on
// its own FileID.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blobshare/blobshare/locks"
)

// fileSeq hands out fresh file ids within one test binary run.
var fileSeq atomic.Uint64

func newFile() locks.FileID { return locks.FileID(1_000_000 + fileSeq.Add(1)) }

const (
	rd   = locks.AccessRead
	wr   = locks.AccessWrite
	ap   = locks.AccessAppend
	ex   = locks.AccessExecute
	del  = locks.AccessDelete
	attr = locks.AccessReadAttributes
)

// writes and deletes: a handle's Write (WRITE_DATA or APPEND_DATA) and
// Delete access, as the matrix of locking.md §1.4 reads them.
func writes(a locks.Access) bool  { return a&(locks.AccessWrite|locks.AccessAppend) != 0 }
func deletes(a locks.Access) bool { return a&locks.AccessDelete != 0 }

// §1.2: the MS-FSA sharing check, rows 1–6 and the no-data-bit cases.
func testSharingCheckRows(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	cases := []struct {
		name      string
		eAcc      locks.Access
		eShare    locks.ShareMode
		nAcc      locks.Access
		nShare    locks.ShareMode
		violation bool
	}{
		{"row1 E no share Read, N wants READ_DATA", wr, locks.ShareWrite | locks.ShareDelete, rd, locks.ShareAll, true},
		{"row1 E no share Read, N wants EXECUTE", wr, locks.ShareWrite | locks.ShareDelete, ex, locks.ShareAll, true},
		{"row1 negative: E shares Read", wr, locks.ShareAll, rd, locks.ShareAll, false},
		{"row2 E no share Write, N wants WRITE_DATA", rd, locks.ShareRead | locks.ShareDelete, wr, locks.ShareAll, true},
		{"row2 E no share Write, N wants APPEND_DATA", rd, locks.ShareRead | locks.ShareDelete, ap, locks.ShareAll, true},
		{"row2 negative: E shares Write", rd, locks.ShareAll, ap, locks.ShareAll, false},
		{"row3 E no share Delete, N wants DELETE", rd, locks.ShareRead | locks.ShareWrite, del, locks.ShareAll, true},
		{"row3 negative: E shares Delete", rd, locks.ShareAll, del, locks.ShareAll, false},
		{"row4 E has READ_DATA, N does not share Read", rd, locks.ShareAll, wr, locks.ShareWrite | locks.ShareDelete, true},
		{"row4 E has EXECUTE, N does not share Read", ex, locks.ShareAll, wr, locks.ShareWrite | locks.ShareDelete, true},
		{"row5 E has WRITE_DATA, N does not share Write", wr, locks.ShareAll, rd, locks.ShareRead | locks.ShareDelete, true},
		{"row5 E has APPEND_DATA, N does not share Write", ap, locks.ShareAll, rd, locks.ShareRead | locks.ShareDelete, true},
		{"row6 E has DELETE, N does not share Delete", del, locks.ShareAll, rd, locks.ShareRead | locks.ShareWrite, true},
		{"row6 negative: N shares Delete", del, locks.ShareAll, rd, locks.ShareAll, false},
		{"new open without data bit: no check", rd | wr | del, locks.ShareNone, attr, locks.ShareNone, false},
		{"new open with no access at all: no check", rd | wr | del, locks.ShareNone, 0, locks.ShareNone, false},
		{"existing attribute-only open is skipped", attr, locks.ShareNone, rd | wr | del, locks.ShareNone, false},
		{"both share none, both read", rd, locks.ShareNone, rd, locks.ShareNone, true},
		{"both share all, full access", rd | wr | ap | ex | del, locks.ShareAll, rd | wr | ap | ex | del, locks.ShareAll, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			mustOpen(t, tab, locks.OpenRequest{File: f, Access: c.eAcc, Share: c.eShare})
			_, err := open(t, tab, locks.OpenRequest{File: f, Access: c.nAcc, Share: c.nShare})
			if c.violation != errors.Is(err, locks.ErrSharingViolation) || (!c.violation && err != nil) {
				t.Fatalf("open N(%v/%v) after E(%v/%v): err=%v, want violation=%v", c.nAcc, c.nShare, c.eAcc, c.eShare, err, c.violation)
			}
			if c.violation {
				var ce *locks.ConflictError
				if !errors.As(err, &ce) || len(ce.Handles) != 1 || ce.File != f {
					t.Fatalf("want a ConflictError naming the one existing handle on file %d, got %#v", f, err)
				}
			}
		})
	}
}

// §1.2 worked examples from "Manage file locks".
func testSharingWorkedExamples(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	cases := []struct {
		name   string
		aAcc   locks.Access
		aShare locks.ShareMode
		bAcc   locks.Access
		bShare locks.ShareMode
		bFails bool
	}{
		{"A Read/share Write, B Write/share Read: both open", rd, locks.ShareWrite, wr, locks.ShareRead, false},
		{"A Write/share Read, B Write/share Write: B fails (row 2)", wr, locks.ShareRead, wr, locks.ShareWrite, true},
		{"A Write/share Write, B Write/share Read: B fails (row 5)", wr, locks.ShareWrite, wr, locks.ShareRead, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			a := mustOpen(t, tab, locks.OpenRequest{File: f, Access: c.aAcc, Share: c.aShare})
			_, err := open(t, tab, locks.OpenRequest{File: f, Access: c.bAcc, Share: c.bShare})
			if c.bFails != errors.Is(err, locks.ErrSharingViolation) || (!c.bFails && err != nil) {
				t.Fatalf("B: err=%v, want fail=%v", err, c.bFails)
			}
			if c.bFails {
				// Sharing violations exist only while the conflicting handle is open.
				mustClose(t, tab, a.ID)
				if _, err := open(t, tab, locks.OpenRequest{File: f, Access: c.bAcc, Share: c.bShare}); err != nil {
					t.Fatalf("B after A closed: %v", err)
				}
			}
		})
	}
}

// restOps are the §1.4 columns, in order.
var restOps = []struct {
	name string
	op   locks.Op
}{
	{"GetFile", locks.OpGetFile},
	{"ListRanges", locks.OpListRanges},
	{"PutRange", locks.OpPutRange},
	{"SetProps", locks.OpSetProperties},
	{"SetMetadata", locks.OpSetMetadata},
	{"Create", locks.OpCreateOverwrite},
	{"Delete", locks.OpDelete},
	{"LeaseAcquire", 0}, // Lease File acquire
	{"GetProps", locks.OpGetProperties},
	{"List", locks.OpList},
}

// restCall runs one §1.4 column against file f: a CheckREST, or a lease
// acquire (released again so the file stays as it was).
func restCall(t *testing.T, tab *locks.Table, f locks.FileID, op locks.Op) error {
	t.Helper()
	if op == 0 {
		return update(t, tab, func(tx *locks.Tx) error {
			id, err := tx.Lease(locks.LeaseRequest{File: f, Action: locks.LeaseAcquire})
			if err != nil {
				return err
			}
			_, err = tx.Lease(locks.LeaseRequest{File: f, Action: locks.LeaseRelease, LeaseID: id})
			return err
		})
	}
	return checkREST(t, tab, locks.RESTRequest{File: f, Op: op, Range: locks.WholeFile})
}

// §1.4: share mode × REST operation, the full matrix with both footnotes,
// for a Read handle, a Write handle, a Delete handle and an attribute-only
// handle (A12).
func testShareModeRESTMatrix(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	// Columns: GetFile ListRanges PutRange SetProps SetMetadata Create Delete Lease GetProps List.
	// 'X' = SharingViolation, '.' = ok, '1'/'2' = the footnoted lease cells.
	matrix := []struct {
		share locks.ShareMode
		row   string
	}{
		{locks.ShareNone, "XXXXXXXX.."},
		{locks.ShareRead, "..XXXXXX.."},
		{locks.ShareWrite, "XX...XXX.."},
		{locks.ShareDelete, "XXXXXXXX.."},
		{locks.ShareRead | locks.ShareWrite, ".....XXX.."},
		{locks.ShareRead | locks.ShareDelete, "..XXXXXX.."},
		{locks.ShareWrite | locks.ShareDelete, "XX....X1.."},
		{locks.ShareAll, "......X2.."},
	}
	for _, acc := range []locks.Access{rd, wr, del, rd | wr, attr} {
		for _, m := range matrix {
			for i, col := range restOps {
				cell := m.row[i]
				want := cell == 'X'
				switch {
				case acc == attr: // A12: attribute-only blocks nothing but Delete File
					want = col.op == locks.OpDelete
				case cell == '1': // only when the handle has Write or Delete access
					want = writes(acc) || deletes(acc)
				case cell == '2': // ok only when the handle's access is Read (or attribute-only)
					want = writes(acc) || deletes(acc)
				}
				t.Run(fmt.Sprintf("access=%v/share=%v/%s", acc, m.share, col.name), func(t *testing.T) {
					f := newFile()
					mustOpen(t, tab, locks.OpenRequest{File: f, Access: acc, Share: m.share})
					err := restCall(t, tab, f, col.op)
					if want != errors.Is(err, locks.ErrSharingViolation) || (!want && err != nil) {
						t.Fatalf("err=%v, want SharingViolation=%v", err, want)
					}
				})
			}
		}
	}
}

// §1.3 direction and doc examples: REST is checked one way only.
func testRESTOneDirection(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	cases := []struct {
		name  string
		acc   locks.Access
		share locks.ShareMode
		op    locks.Op
		want  error
	}{
		{"doc: handle Read + share Write → Get File fails", rd, locks.ShareWrite, locks.OpGetFile, locks.ErrSharingViolation},
		{"doc: handle Write + share Read → Put Range fails", wr, locks.ShareRead, locks.OpPutRange, locks.ErrSharingViolation},
		{"handle Write + share Read does not block Get File", wr, locks.ShareRead, locks.OpGetFile, nil},
		{"handle Read+Write+Delete share none does not block Get Properties", rd | wr | del, locks.ShareNone, locks.OpGetProperties, nil},
		{"Copy source is Read", rd, locks.ShareWrite, locks.OpCopySource, locks.ErrSharingViolation},
		{"Copy source ok with share Read", wr, locks.ShareRead, locks.OpCopySource, nil},
		{"Rename source is Delete", rd, locks.ShareRead | locks.ShareWrite, locks.OpRenameSource, locks.ErrSharingViolation},
		{"Rename source ok with share Delete", rd | wr, locks.ShareAll, locks.OpRenameSource, nil},
		{"Rename replace is Write+Delete", rd, locks.ShareRead | locks.ShareWrite, locks.OpRenameReplace, locks.ErrSharingViolation},
		{"Rename replace ok with share Write+Delete", rd, locks.ShareWrite | locks.ShareDelete, locks.OpRenameReplace, nil},
		{"Rename replace ok with share all", rd, locks.ShareAll, locks.OpRenameReplace, nil},
		{"Delete File fails with a share-all handle (A4)", rd, locks.ShareAll, locks.OpDelete, locks.ErrSharingViolation},
		{"Delete File fails with an attribute-only handle (A12)", attr, locks.ShareAll, locks.OpDelete, locks.ErrSharingViolation},
		{"attribute-only share none blocks Put Range? no (A12)", attr, locks.ShareNone, locks.OpPutRange, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			mustOpen(t, tab, locks.OpenRequest{File: f, Access: c.acc, Share: c.share})
			if err := checkREST(t, tab, locks.RESTRequest{File: f, Op: c.op, Range: locks.WholeFile}); !errIs(err, c.want) {
				t.Fatalf("err=%v, want %v", err, c.want)
			}
		})
	}
	t.Run("no handle: Delete File ok", func(t *testing.T) {
		if err := checkREST(t, tab, locks.RESTRequest{File: newFile(), Op: locks.OpDelete}); err != nil {
			t.Fatal(err)
		}
	})
}

// §1.5 / A3: lease acquire against open handles.
func testLeaseAcquireVsHandles(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	shares := []struct {
		name  string
		share locks.ShareMode
		full  bool
	}{
		{"RWD", locks.ShareAll, true}, {"RW", locks.ShareRead | locks.ShareWrite, false}, {"RD", locks.ShareRead | locks.ShareDelete, false},
		{"none", locks.ShareNone, false}, {"WD", locks.ShareWrite | locks.ShareDelete, true},
	}
	accesses := []struct {
		name  string
		acc   locks.Access
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
				mustOpen(t, tab, locks.OpenRequest{File: f, Access: a.acc, Share: s.share})
				err := update(t, tab, func(tx *locks.Tx) error {
					_, err := tx.Lease(locks.LeaseRequest{File: f, Action: locks.LeaseAcquire})
					return err
				})
				if want != errors.Is(err, locks.ErrSharingViolation) || (!want && err != nil) {
					t.Fatalf("acquire: err=%v, want SharingViolation=%v", err, want)
				}
			})
		}
	}
}

// §1.7 / A5: ReadOnly refuses Create, Set Properties, Set Metadata, Put
// Range (and a replaced rename destination); other operations pass.
func testReadOnlyREST(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	cases := []struct {
		op   locks.Op
		want error
	}{
		{locks.OpCreateOverwrite, locks.ErrReadOnly},
		{locks.OpSetProperties, locks.ErrReadOnly},
		{locks.OpSetMetadata, locks.ErrReadOnly},
		{locks.OpPutRange, locks.ErrReadOnly},
		{locks.OpRenameReplace, locks.ErrReadOnly},
		{locks.OpGetFile, nil},
		{locks.OpGetProperties, nil},
		{locks.OpListRanges, nil},
		{locks.OpDelete, nil},
		{locks.OpCopySource, nil},
		{locks.OpRenameSource, nil},
		{locks.OpList, nil},
	}
	for _, c := range cases {
		t.Run(c.op.String(), func(t *testing.T) {
			f := newFile()
			err := checkREST(t, tab, locks.RESTRequest{File: f, Op: c.op, Range: locks.Range{Offset: 0, Length: 10}, Facts: locks.Facts{ReadOnly: true}})
			if !errIs(err, c.want) {
				t.Fatalf("err=%v, want %v", err, c.want)
			}
			if err := checkREST(t, tab, locks.RESTRequest{File: f, Op: c.op, Range: locks.Range{Offset: 0, Length: 10}}); err != nil {
				t.Fatalf("without ReadOnly: %v", err)
			}
		})
	}
}

// removeLog records the files Options.Remove was called for.
type removeLog struct {
	mu    sync.Mutex // Remove may run in another Table's goroutine
	files []locks.FileID
	fail  error
}

func (r *removeLog) remove(_ context.Context, tx *locks.Conn, f locks.FileID) error {
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
func (r *removeLog) removed() []locks.FileID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.files)
}

// §2.1: how a file becomes delete-pending (A8).
func testDispositionTable(t *testing.T, newDB func(*testing.T) Opener) {
	rm := &removeLog{}
	tab := openTable(t, newDB(t), locks.Options{Remove: rm.remove})
	cases := []struct {
		name        string
		acc         locks.Access
		doc         bool
		dispose     *bool // nil: no dispose call
		facts       locks.Facts
		wantErr     error
		wantPending bool // after the call, handle still open
	}{
		{"disposition TRUE with DELETE: pending now", del, false, ptr(true), locks.Facts{}, nil, true},
		{"disposition TRUE without DELETE: access denied", rd | wr, false, ptr(true), locks.Facts{}, locks.ErrAccessDenied, false},
		{"disposition TRUE on ReadOnly: cannot delete", del, false, ptr(true), locks.Facts{ReadOnly: true}, locks.ErrCannotDelete, false},
		{"disposition TRUE on non-empty dir", del, false, ptr(true), locks.Facts{Directory: true, NonEmptyDir: true}, locks.ErrDirectoryNotEmpty, false},
		{"disposition TRUE on empty dir", del, false, ptr(true), locks.Facts{Directory: true}, nil, true},
		{"delete-on-close open: nothing while open", del, true, nil, locks.Facts{}, nil, false},
		{"DELETE access alone: nothing (A8)", del, false, nil, locks.Facts{}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: c.acc, Share: locks.ShareAll, DeleteOnClose: c.doc})
			var err error
			if c.dispose != nil {
				err = update(t, tab, func(tx *locks.Tx) error { return tx.Dispose(h.ID, *c.dispose, c.facts) })
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

func pending(t *testing.T, tab *locks.Table, f locks.FileID) bool {
	t.Helper()
	var p bool
	if err := tab.View(context.Background(), func(tx *locks.Tx) error {
		var err error
		p, err = tx.DeletePending(f)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return p
}

// §2.1: undelete, and delete-on-close surviving an undelete (Win32).
func testUndelete(t *testing.T, newDB func(*testing.T) Opener) {
	rm := &removeLog{}
	tab := openTable(t, newDB(t), locks.Options{Remove: rm.remove})
	t.Run("dispose false clears the mark", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: del, Share: locks.ShareAll})
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Dispose(h.ID, true, locks.Facts{}) }))
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Dispose(h.ID, false, locks.Facts{}) }))
		if pending(t, tab, f) {
			t.Fatal("still pending after undelete")
		}
		if res := mustClose(t, tab, h.ID); res.Removed {
			t.Fatal("removed after undelete")
		}
	})
	t.Run("dispose false without DELETE access is refused", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareAll})
		if err := update(t, tab, func(tx *locks.Tx) error { return tx.Dispose(h.ID, false, locks.Facts{}) }); !errors.Is(err, locks.ErrAccessDenied) {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("undelete does not cancel delete-on-close", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: del, Share: locks.ShareAll, DeleteOnClose: true})
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Dispose(h.ID, true, locks.Facts{}) }))
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Dispose(h.ID, false, locks.Facts{}) }))
		if res := mustClose(t, tab, h.ID); !res.Removed {
			t.Fatal("delete-on-close handle did not remove the file")
		}
	})
	t.Run("delete-on-close with another handle open: pending until last close", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: del, Share: locks.ShareAll, DeleteOnClose: true})
		o := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareAll})
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
func testWhilePending(t *testing.T, newDB func(*testing.T) Opener) {
	rm := &removeLog{}
	tab := openTable(t, newDB(t), locks.Options{Remove: rm.remove})
	f := newFile()
	h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr | del, Share: locks.ShareAll})
	must(t, update(t, tab, func(tx *locks.Tx) error {
		return tx.Lock(h.ID, locks.Range{Offset: 0, Length: 10}, locks.LockExclusive)
	}))
	must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Dispose(h.ID, true, locks.Facts{}) }))
	ops := []locks.Op{locks.OpGetProperties, locks.OpList, locks.OpGetFile, locks.OpListRanges, locks.OpPutRange, locks.OpSetProperties, locks.OpSetMetadata,
		locks.OpCreateOverwrite, locks.OpDelete, locks.OpCopySource, locks.OpRenameSource, locks.OpRenameReplace}
	for _, op := range ops {
		t.Run("REST "+op.String(), func(t *testing.T) {
			if err := checkREST(t, tab, locks.RESTRequest{File: f, Op: op, Range: locks.WholeFile}); !errors.Is(err, locks.ErrDeletePending) {
				t.Fatalf("err=%v, want ErrDeletePending", err)
			}
		})
	}
	for _, a := range []locks.LeaseAction{locks.LeaseAcquire, locks.LeaseBreak} {
		t.Run("lease "+a.String(), func(t *testing.T) {
			err := update(t, tab, func(tx *locks.Tx) error { _, err := tx.Lease(locks.LeaseRequest{File: f, Action: a}); return err })
			if !errors.Is(err, locks.ErrDeletePending) {
				t.Fatalf("err=%v", err)
			}
		})
	}
	for _, acc := range []locks.Access{rd, attr, 0, del} {
		t.Run("new open "+acc.String(), func(t *testing.T) {
			if _, err := open(t, tab, locks.OpenRequest{File: f, Access: acc, Share: locks.ShareAll}); !errors.Is(err, locks.ErrDeletePending) {
				t.Fatalf("err=%v", err)
			}
		})
	}
	t.Run("unlink", func(t *testing.T) {
		if _, err := unlink(t, tab, f, locks.Facts{}); !errors.Is(err, locks.ErrDeletePending) {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("existing handle keeps working", func(t *testing.T) {
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.CheckIO(h.ID, locks.Range{Offset: 0, Length: 100}, true) }))
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Lock(h.ID, locks.Range{Offset: 50, Length: 10}, locks.LockShared) }))
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Unlock(h.ID, locks.Range{Offset: 50, Length: 10}) }))
	})
	t.Run("last close removes", func(t *testing.T) {
		if res := mustClose(t, tab, h.ID); !res.Removed {
			t.Fatal("not removed")
		}
		if len(rm.removed()) != 1 || rm.removed()[0] != f {
			t.Fatalf("remove calls %v", rm.removed())
		}
		// Gone: the lock table has no state left; the namespace answers 404.
		err := tab.View(context.Background(), func(tx *locks.Tx) error {
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

func unlink(t *testing.T, tab *locks.Table, f locks.FileID, facts locks.Facts) (bool, error) {
	t.Helper()
	var removed bool
	err := update(t, tab, func(tx *locks.Tx) error {
		var err error
		removed, err = tx.UnlinkOpen(f, facts)
		return err
	})
	return removed, err
}

// openOn opens req on f, when req is not nil.
func openOn(t *testing.T, tab *locks.Table, f locks.FileID, req *locks.OpenRequest) {
	t.Helper()
	if req != nil {
		o := *req
		o.File = f
		mustOpen(t, tab, o)
	}
}

// UnlinkOpen (an unlink through the mount).
func testUnlinkOpen(t *testing.T, newDB func(*testing.T) Opener) {
	rm := &removeLog{}
	tab := openTable(t, newDB(t), locks.Options{Remove: rm.remove})
	cases := []struct {
		name        string
		other       *locks.OpenRequest // an open handle, if any
		facts       locks.Facts
		lease       bool
		want        error
		wantRemoved bool
	}{
		{"no handle: removed at once", nil, locks.Facts{}, false, nil, true},
		{"share-delete handle: pending", &locks.OpenRequest{Access: rd, Share: locks.ShareAll}, locks.Facts{}, false, nil, false},
		{"handle not sharing Delete: violation", &locks.OpenRequest{Access: rd, Share: locks.ShareRead | locks.ShareWrite}, locks.Facts{}, false, locks.ErrSharingViolation, false},
		{"attribute-only handle: pending", &locks.OpenRequest{Access: attr, Share: locks.ShareNone}, locks.Facts{}, false, nil, false},
		{"ReadOnly: cannot delete", nil, locks.Facts{ReadOnly: true}, false, locks.ErrCannotDelete, false},
		{"non-empty directory", nil, locks.Facts{Directory: true, NonEmptyDir: true}, false, locks.ErrDirectoryNotEmpty, false},
		{"leased: violation (A14)", nil, locks.Facts{}, true, locks.ErrSharingViolation, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			openOn(t, tab, f, c.other)
			if c.lease {
				must(t, update(t, tab, func(tx *locks.Tx) error {
					_, err := tx.Lease(locks.LeaseRequest{File: f, Action: locks.LeaseAcquire})
					return err
				}))
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
func testUnlinkLeavesNoState(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	cases := []struct {
		name    string
		prepare func(t *testing.T, f locks.FileID)
	}{
		{"never opened", func(t *testing.T, f locks.FileID) {}},
		{"broken lease row", func(t *testing.T, f locks.FileID) {
			must(t, update(t, tab, func(tx *locks.Tx) error {
				if _, err := tx.Lease(locks.LeaseRequest{File: f, Action: locks.LeaseAcquire}); err != nil {
					return err
				}
				_, err := tx.Lease(locks.LeaseRequest{File: f, Action: locks.LeaseBreak})
				return err
			}))
		}},
		{"closed handle that held locks", func(t *testing.T, f locks.FileID) {
			h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
			must(t, update(t, tab, func(tx *locks.Tx) error {
				return tx.SetPOSIXLock(h.ID, 7, locks.Range{Offset: 0, Length: 10}, locks.LockExclusive)
			}))
			must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Lock(h.ID, locks.Range{Offset: 20, Length: 5}, locks.LockShared) }))
			mustClose(t, tab, h.ID)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			c.prepare(t, f)
			removed, err := unlink(t, tab, f, locks.Facts{})
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
func testOpenReadOnly(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	cases := []struct {
		name  string
		req   locks.OpenRequest
		other *locks.OpenRequest // an open handle, if any
		want  error
	}{
		{"read", locks.OpenRequest{Access: rd, Share: locks.ShareAll}, nil, nil},
		{"attributes", locks.OpenRequest{Access: attr, Share: locks.ShareAll}, nil, nil},
		{"delete access", locks.OpenRequest{Access: del, Share: locks.ShareAll}, nil, nil},
		{"write", locks.OpenRequest{Access: rd | wr, Share: locks.ShareAll}, nil, locks.ErrReadOnly},
		{"append", locks.OpenRequest{Access: locks.AccessAppend, Share: locks.ShareAll}, nil, locks.ErrReadOnly},
		{"overwrite", locks.OpenRequest{Access: rd, Share: locks.ShareAll, Overwrite: true}, nil, locks.ErrReadOnly},
		{"delete on close", locks.OpenRequest{Access: del, Share: locks.ShareAll, DeleteOnClose: true}, nil, locks.ErrCannotDelete},
		{"write, against a handle sharing nothing: access first", locks.OpenRequest{Access: wr, Share: locks.ShareAll}, &locks.OpenRequest{Access: rd, Share: locks.ShareNone}, locks.ErrReadOnly},
		{"read, against a handle sharing nothing: sharing", locks.OpenRequest{Access: rd, Share: locks.ShareAll}, &locks.OpenRequest{Access: rd, Share: locks.ShareNone}, locks.ErrSharingViolation},
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
func testOpenCreated(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	f := newFile()
	if _, err := open(t, tab, locks.OpenRequest{File: f, Access: rd, Share: 0xff, Created: true}); !errors.Is(err, locks.ErrInvalidParameter) {
		t.Fatalf("invalid share mode with Created: %v, want ErrInvalidParameter", err)
	}
	h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareNone, Created: true})
	if _, err := open(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareAll}); !errors.Is(err, locks.ErrSharingViolation) {
		t.Fatalf("open against a Created handle sharing nothing: %v, want ErrSharingViolation", err)
	}
	mustClose(t, tab, h.ID)
	mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareAll})
}
