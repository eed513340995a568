package fs

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/blobshare/blobshare/locks"
)

// Stat in one statement. A Get File Properties used to cost a read
// transaction of four statements — BEGIN, the share's row, the file's row,
// the file's lock state with every handle — and the ROLLBACK; resolving
// the path was a quarter of serve's CPU per request. statOne does it in
// one statement that SQLite runs alone, with a snapshot of its own
// (locks.Table.PeekStatement): it joins the path's rows by (parent, key),
// share to file, reads the entry's columns and the names that make its
// path, and the file's lock-table row (locks.FileRowJoin), from which the
// properties read is decided (locks.CheckRESTRow): that row is all that
// can refuse it (no share mode refuses a read of properties, no byte-range
// lock is checked for it). Names, attributes and lock state are read at
// one snapshot, as the transaction read them.
//
// The statement finds live entries only. Anything else — a missing share
// or parent, a parent that is a file, a name only an unlinked
// (delete-pending) row still holds, the share itself, a path deeper than
// maxStatDepth — finds no row, and statWalk answers it as before, with
// its exact error, in a transaction of its own: a miss costs the one
// statement more.

// maxStatDepth is the most path components (share included) statOne
// answers; deeper paths walk.
const maxStatDepth = 8

// statOneSQL is the statement for a path of n components (2 ≤ n ≤
// maxStatDepth): ?1 is the share's key, ?2 … ?n the keys below it. Its
// columns are entryCols of the last entry, the names of the share and the
// directories above the entry (n-1 of them), and the file's lock row.
func statOneSQL(n int) string {
	var b strings.Builder
	b.Grow(600 + 120*n)
	b.WriteString("SELECT ")
	for i, c := range strings.Split(entryCols, ",") {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("e.")
		b.WriteString(strings.TrimSpace(c))
	}
	alias := func(i int) string { return "p" + strconv.Itoa(i) } // p0 is the share
	for i := range n - 1 {
		b.WriteString(", " + alias(i) + ".name")
	}
	join, cols := locks.FileRowJoin("e.id")
	b.WriteString(", " + cols)
	b.WriteString(" FROM ns_entries p0")
	for i := 1; i < n-1; i++ {
		b.WriteString(" JOIN ns_entries " + alias(i) + " ON " + alias(i) + ".parent = " + alias(i-1) + ".id AND " +
			alias(i) + ".key = ?" + strconv.Itoa(i+1) + " AND " + alias(i) + ".unlinked = 0 AND " +
			alias(i) + ".kind != " + strconv.Itoa(int(KindFile)))
	}
	b.WriteString(" JOIN ns_entries e ON e.parent = " + alias(n-2) + ".id AND e.key = ?" + strconv.Itoa(n) + " AND e.unlinked = 0")
	b.WriteString(join)
	b.WriteString(" WHERE p0.parent = " + strconv.FormatInt(int64(RootID), 10) + " AND p0.key = ?1 AND p0.unlinked = 0")
	return b.String()
}

// statSQLs are statOne's statements by depth, each built once.
type statSQLs [maxStatDepth + 1]atomic.Pointer[string]

func (s *statSQLs) get(n int) string {
	if p := s[n].Load(); p != nil {
		return *p
	}
	q := statOneSQL(n)
	s[n].Store(&q)
	return q
}

// statOne is stat in one statement; found false (and no error) when the
// statement found no row and the walk must answer.
func (fsys *FileSystem) statOne(ctx context.Context, share string, parts []string, leaseID string) (a Attr, li locks.LeaseInfo, found bool, err error) {
	n := len(parts) + 1
	args := make([]any, n)
	args[0] = FoldName(share)
	for i, p := range parts {
		args[i+1] = FoldName(p)
	}
	names := make([]string, n-1)
	var row locks.FileRow
	extra := make([]any, 0, n+2)
	for i := range names {
		extra = append(extra, &names[i])
	}
	extra = append(extra, row.Dest()...)
	var e entry
	err = fsys.peekStatement(ctx, func(tx *locks.Tx, q *q) error {
		var err error
		e, err = scanEntry(q.queryRow(fsys.statSQL.get(n), args...), extra...)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return Attr{}, locks.LeaseInfo{}, false, nil
	}
	if err != nil {
		return Attr{}, locks.LeaseInfo{}, true, err
	}
	if e.kind == KindFile {
		li, err = locks.CheckRESTRow(locks.RESTRequest{File: e.id, Op: locks.OpGetProperties, LeaseID: leaseID,
			Facts: locks.Facts{ReadOnly: e.readOnly()}}, row)
		if err != nil {
			return Attr{}, locks.LeaseInfo{}, true, err
		}
	}
	return e.attr(strings.Join(names, "/") + "/" + e.name), li, true, nil
}

// stat is Stat after the commit of staged writes: statOne, or the walk
// when statOne finds no row.
func (fsys *FileSystem) stat(ctx context.Context, path, leaseID string) (Attr, locks.LeaseInfo, error) {
	share, parts, err := SplitPath(path)
	if err != nil {
		return Attr{}, locks.LeaseInfo{}, pathErr("stat", path, err)
	}
	if len(parts) > 0 && len(parts) < maxStatDepth {
		// As view does: the closes of this process's released handles
		// first (the last close of a delete-pending file removes it).
		fsys.settleReleases(ctx)
		a, li, found, err := fsys.statOne(ctx, share, parts, leaseID)
		if found {
			return a, li, pathErr("stat", path, err)
		}
	}
	return fsys.statWalk(ctx, path, leaseID)
}

// statWalk is stat by the path walk (resolve) and the lock table's check,
// in one read transaction.
func (fsys *FileSystem) statWalk(ctx context.Context, path, leaseID string) (Attr, locks.LeaseInfo, error) {
	var a Attr
	var li locks.LeaseInfo
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		r, err := q.mustResolve(path)
		if err != nil {
			return err
		}
		if r.e.kind == KindFile {
			if li, err = q.checkResolved(tx, r, locks.OpGetProperties, leaseID, locks.Range{}); err != nil {
				return err
			}
		}
		a = r.attr()
		return nil
	})
	return a, li, pathErr("stat", path, err)
}
