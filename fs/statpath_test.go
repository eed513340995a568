package fs

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/locks"
)

// TestStatOneMatchesWalk: the one-statement stat (statOne) answers every
// path it finds exactly as the walk and the lock table's check in a read
// transaction (statWalk) do — attributes, path, lease and error — and
// finds no row (so that the walk answers) for every path it must not
// answer: missing names, a parent that is a file, a name only an unlinked
// row holds, the share itself.
func TestStatOneMatchesWalk(t *testing.T) {
	const L = "aaaaaaaa-1111-2222-3333-444444444444"
	const other = "bbbbbbbb-1111-2222-3333-444444444444"
	deep := "data/" + strings.Repeat("d/", maxStatDepth) + "f"
	for _, tt := range []struct {
		name    string
		setup   func(t *testing.T, e *env, sh FileID)
		path    string
		lease   string
		found   bool  // statOne answers (else the walk)
		wantErr error // nil: success
	}{
		{"file", nil, "data/f", "", true, nil},
		{"nested file", nil, "data/d1/d2/g", "", true, nil},
		{"names fold case, the path keeps the stored names", nil, "data/D1/d2/G", "", true, nil},
		{"directory", nil, "data/d1", "", true, nil},
		{"deepest path answered in one statement", nil, "data/" + strings.Repeat("d/", maxStatDepth-2) + "f", "", true, nil},
		{"metadata, content headers, read-only", func(t *testing.T, e *env, sh FileID) {
			_, err := e.fs.SetMetadata(ctxBG, "data/f", map[string]string{"k": "v"}, "")
			mustNil(t, err, "set metadata")
			_, err = e.fs.SetProperties(ctxBG, SetPropertiesRequest{Path: "data/f", Content: &ContentHeaders{Type: "text/plain", CacheControl: "no-cache"}})
			mustNil(t, err, "set properties")
			_, err = e.fs.SetAttributesByPath(ctxBG, "data/f", AttrReadOnly)
			mustNil(t, err, "read-only")
		}, "data/f", "", true, nil},
		{"leased, its id", acquire(L), "data/f", L, true, nil},
		{"leased, no id", acquire(L), "data/f", "", true, nil},
		{"leased, another id", acquire(L), "data/f", other, true, &locks.LeaseError{Code: locks.LeaseIDMismatchWithFileOperation}},
		{"not leased, an id", nil, "data/f", L, true, &locks.LeaseError{Code: locks.LeaseNotPresentWithFileOperation}},
		{"lease broken", func(t *testing.T, e *env, sh FileID) {
			acquire(L)(t, e, sh)
			_, _, err := e.fs.LeaseFile(ctxBG, "data/f", locks.LeaseRequest{Action: locks.LeaseBreak})
			mustNil(t, err, "break")
		}, "data/f", "", true, nil},
		{"open with no sharing elsewhere", func(t *testing.T, e *env, sh FileID) {
			h := e.mustOpen("data/f", locks.AccessRead|locks.AccessWrite|locks.AccessDelete, 0, DispositionOpen)
			t.Cleanup(func() { h.Close(ctxBG) })
		}, "data/f", "", true, nil},
		{"delete pending, name kept", func(t *testing.T, e *env, sh FileID) {
			h := e.mustOpen("data/f", locks.AccessRead|locks.AccessDelete, allShare, DispositionOpen)
			t.Cleanup(func() { h.Close(ctxBG) })
			mustNil(t, h.Dispose(ctxBG, true), "dispose")
		}, "data/f", "", true, locks.ErrDeletePending},
		{"unlinked while open", func(t *testing.T, e *env, sh FileID) {
			f, err := e.fs.Lookup(ctxBG, sh, "f")
			mustNil(t, err, "lookup")
			h, err := e.fs.Open(ctxBG, f.ID, OpenOptions{Access: locks.AccessRead, Share: allShare})
			mustNil(t, err, "open")
			t.Cleanup(func() { h.Close(ctxBG) })
			mustNil(t, e.fs.Unlink(ctxBG, sh, "f"), "unlink")
		}, "data/f", "", false, locks.ErrDeletePending},
		{"missing file", nil, "data/nope", "", false, ErrNotFound},
		{"missing parent", nil, "data/nope/f", "", false, ErrParentNotFound},
		{"parent is a file", nil, "data/f/x", "", false, ErrParentNotFound},
		{"missing share", nil, "nope/f", "", false, ErrShareNotFound},
		{"the share", nil, "data", "", false, nil},
		{"deeper than one statement answers", nil, deep, "", false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			sh := e.share("data")
			e.putFile("data/f", []byte("hello"))
			for _, d := range []string{"data/d1", "data/d1/d2", "data/d"} {
				_, err := e.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: d})
				mustNil(t, err, d)
			}
			e.putFile("data/d1/d2/g", []byte("nested"))
			for p := "data/d"; strings.Count(p, "/") < strings.Count(deep, "/")-1; {
				p += "/d"
				_, err := e.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: p})
				mustNil(t, err, p)
				e.putFile(p[:len(p)-2]+"/f", []byte("deep"))
			}
			e.putFile(deep, []byte("deepest"))
			if tt.setup != nil {
				tt.setup(t, e, sh)
			}
			share, parts, err := SplitPath(tt.path)
			mustNil(t, err, "split")
			if len(parts) > 0 && len(parts) < maxStatDepth {
				a, li, found, err := e.fs.statOne(ctxBG, share, parts, tt.lease)
				if found != tt.found {
					t.Fatalf("statOne found %v, want %v (err %v)", found, tt.found, err)
				}
				if found {
					wa, wli, werr := e.fs.statWalk(ctxBG, tt.path, tt.lease)
					if fmt.Sprint(pathErr("stat", tt.path, err)) != fmt.Sprint(werr) {
						t.Fatalf("statOne error %v, the walk's %v", err, werr)
					}
					if !reflect.DeepEqual(a, wa) || li != wli {
						t.Fatalf("statOne %+v %+v\nthe walk %+v %+v", a, li, wa, wli)
					}
				}
			} else if tt.found {
				t.Fatalf("%s is not a path statOne answers", tt.path)
			}
			// Stat (statOne or the walk) against the walk.
			a, li, err := e.fs.Stat(ctxBG, tt.path, tt.lease)
			wa, wli, werr := e.fs.statWalk(ctxBG, tt.path, tt.lease)
			if !sameErr(err, tt.wantErr) {
				t.Fatalf("Stat: %v, want %v", err, tt.wantErr)
			}
			if fmt.Sprint(err) != fmt.Sprint(werr) || !reflect.DeepEqual(a, wa) || li != wli {
				t.Fatalf("Stat %+v %+v %v\nthe walk %+v %+v %v", a, li, err, wa, wli, werr)
			}
			if err == nil && !strings.EqualFold(a.Path, tt.path) {
				t.Fatalf("Stat path %q, want %q folded", a.Path, tt.path)
			}
		})
	}
}

// sameErr reports whether err is want: nil, a sentinel, or a lease error
// with want's code.
func sameErr(err, want error) bool {
	var wl, gl *locks.LeaseError
	switch {
	case want == nil:
		return err == nil
	case errors.As(want, &wl):
		return errors.As(err, &gl) && gl.Code == wl.Code
	}
	return errors.Is(err, want)
}

func acquire(id string) func(t *testing.T, e *env, sh FileID) {
	return func(t *testing.T, e *env, sh FileID) {
		_, _, err := e.fs.LeaseFile(ctxBG, "data/f", locks.LeaseRequest{Action: locks.LeaseAcquire, ProposedID: id})
		mustNil(t, err, "acquire")
	}
}

// TestStatOnePlan: SQLite finds every row of statOne's statement by index
// (the live-name index, the lock row's key), never by a scan, at every
// depth: a scan would make Get File Properties grow with the namespace.
func TestStatOnePlan(t *testing.T) {
	e := newEnv(t)
	for n := 2; n <= maxStatDepth; n++ {
		args := make([]any, n)
		for i := range args {
			args[i] = "X"
		}
		rows, err := e.fs.table.DB().QueryContext(ctxBG, "EXPLAIN QUERY PLAN "+statOneSQL(n), args...)
		mustNil(t, err, "explain")
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			mustNil(t, rows.Scan(&id, &parent, &notused, &detail), "scan")
			plan = append(plan, detail)
		}
		mustNil(t, rows.Err(), "rows")
		rows.Close()
		if len(plan) != n+1 {
			t.Errorf("depth %d: plan has %d steps, want %d (one per table): %q", n, len(plan), n+1, plan)
		}
		for _, step := range plan {
			if !strings.HasPrefix(step, "SEARCH ") || !(strings.Contains(step, "USING INDEX ns_entries_name") || strings.Contains(step, "PRIMARY KEY")) {
				t.Errorf("depth %d: step %q is not an indexed search: %q", n, step, plan)
			}
		}
	}
}
