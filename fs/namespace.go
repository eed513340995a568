package fs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// entryCols is the column list every entry query selects (scanEntry's order).
const entryCols = `id, parent, name, key, kind, unlinked, size, attrs, t_created, t_write, t_change, t_modified, version,
	props, quota, blob`

// entry is one row of ns_entries.
type entry struct {
	id, parent FileID
	name, key  string
	kind       Kind
	unlinked   bool
	size       int64
	attrs      Attributes
	created    int64
	write      int64
	change     int64
	modified   int64
	version    uint64
	content    ContentHeaders
	metadata   map[string]string
	permKey    string
	quota      int
	tier       string            // shares: access tier
	shareProps map[string]string // shares: other stored properties (ShareRequest.Props)
	copy       *CopyInfo         // files: last copy into the file
	eas        []EA              // extended attributes (SMB)
	objectID   []byte            // object id (SMB, objectid.go): nil or ObjectIDSize bytes
	alloc      int64             // files: allocation size set apart from the size (SMB, alloc.go); 0 when none
	blob       bool              // the content lives in a blob (else inline); read-only here
	// partial: read with refCols (childRef) or statCols (scanStat) only;
	// save refuses it, as it would blank every column left out.
	partial bool
}

type rowScanner interface{ Scan(dest ...any) error }

// scanEntry scans entryCols and then, into extra, the columns a query
// selects after them.
func scanEntry(r rowScanner, extra ...any) (entry, error) {
	var e entry
	var id, parent, version int64
	var props string
	err := r.Scan(append([]any{&id, &parent, &e.name, &e.key, &e.kind, &e.unlinked, &e.size, &e.attrs,
		&e.created, &e.write, &e.change, &e.modified, &version, &props, &e.quota, &e.blob}, extra...)...)
	if err != nil {
		return entry{}, err
	}
	e.id, e.parent, e.version = FileID(id), FileID(parent), uint64(version)
	if err := e.setProps(props); err != nil {
		return entry{}, fmt.Errorf("properties of %d: %w", id, err)
	}
	return e, nil
}

// storedProps are an entry's REST-only properties — content headers,
// metadata, permission key — as stored together in the props column: the
// mount never reads them, and every column a query selects costs the
// driver on every query (SQLite column names and types are fetched anew
// per query), so the hot statements select one column for all of them.
type storedProps struct {
	Type         string            `json:"t,omitempty"`
	Encoding     string            `json:"e,omitempty"`
	Language     string            `json:"l,omitempty"`
	Disposition  string            `json:"d,omitempty"`
	CacheControl string            `json:"c,omitempty"`
	MD5          []byte            `json:"m,omitempty"`
	Metadata     map[string]string `json:"md,omitempty"`
	PermKey      string            `json:"p,omitempty"`
	Tier         string            `json:"at,omitempty"`
	ShareProps   map[string]string `json:"sp,omitempty"`
	Copy         *CopyInfo         `json:"cp,omitempty"`
	EAs          []EA              `json:"ea,omitempty"`
	ObjectID     []byte            `json:"oid,omitempty"`
	Alloc        int64             `json:"al,omitempty"`
}

// props encodes e's stored properties ("" when there are none, as for
// every file the mount creates).
func (e *entry) props() (string, error) {
	p := storedProps{Type: e.content.Type, Encoding: e.content.Encoding, Language: e.content.Language,
		Disposition: e.content.Disposition, CacheControl: e.content.CacheControl, MD5: e.content.MD5,
		Metadata: e.metadata, PermKey: e.permKey, Tier: e.tier, ShareProps: e.shareProps, Copy: e.copy, EAs: e.eas,
		ObjectID: e.objectID, Alloc: e.alloc}
	if p.Type == "" && p.Encoding == "" && p.Language == "" && p.Disposition == "" && p.CacheControl == "" &&
		len(p.MD5) == 0 && len(p.Metadata) == 0 && p.PermKey == "" && p.Tier == "" && len(p.ShareProps) == 0 && p.Copy == nil &&
		len(p.EAs) == 0 && len(p.ObjectID) == 0 && p.Alloc == 0 {
		return "", nil
	}
	b, err := json.Marshal(p)
	return string(b), err
}

// setProps decodes the props column into e.
func (e *entry) setProps(s string) error {
	if s == "" {
		return nil
	}
	var p storedProps
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return err
	}
	e.content = ContentHeaders{Type: p.Type, Encoding: p.Encoding, Language: p.Language,
		Disposition: p.Disposition, CacheControl: p.CacheControl}
	if len(p.MD5) > 0 {
		e.content.MD5 = p.MD5
	}
	if len(p.Metadata) > 0 {
		e.metadata = p.Metadata
	}
	e.permKey = p.PermKey
	e.tier = p.Tier
	e.shareProps = p.ShareProps
	e.copy = p.Copy
	e.eas = p.EAs
	e.objectID = p.ObjectID
	e.alloc = p.Alloc
	return nil
}

// defaultPermissionKey is the permission key reported for every entry:
// blobshare stores no security descriptors.
const defaultPermissionKey = "4066528134148476695*1"

// etagOf renders an entry's version as an Azure-looking quoted ETag. The
// id is part of it because versions count per entry: a file deleted and
// created again under the same name starts over at version 1, and a
// conditional request holding the old file's ETag must not match the new
// file. (The version field is fixed-width, so distinct (id, version)
// pairs never render alike.)
func etagOf(id FileID, version uint64) string {
	// Built by hand: every lookup and every listed entry makes one, and
	// fmt.Sprintf cost a listing of 10,000 entries several milliseconds.
	var b [48]byte
	out := append(b[:0], `"0x8DE`...)
	out = appendHex(out, uint64(id), 6)
	out = appendHex(out, version, 10)
	return string(append(out, '"'))
}

// appendHex appends v in upper-case hex, zero-padded to at least width
// digits (fmt's %0*X).
func appendHex(b []byte, v uint64, width int) []byte {
	const digits = "0123456789ABCDEF"
	var tmp [16]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = digits[v&15]
		v >>= 4
		if v == 0 {
			break
		}
	}
	for n := len(tmp) - i; n < width; n++ {
		b = append(b, '0')
	}
	return append(b, tmp[i:]...)
}

func (e entry) attr(path string) Attr {
	a := e.statAttr()
	a.Path = path
	a.Created, a.Modified = fromTicks(e.created), fromTicks(e.modified)
	a.ETag = etagOf(e.id, e.version)
	a.Content, a.Metadata, a.PermissionKey, a.Copy = e.content, e.metadata, e.permKey, e.copy
	a.QuotaGiB, a.AccessTier, a.ShareProps, a.EAs = e.quota, e.tier, e.shareProps, e.eas
	a.AllocationSize = e.alloc
	if a.PermissionKey == "" && e.kind != KindRoot {
		a.PermissionKey = defaultPermissionKey
	}
	return a
}

// statAttr is the part of attr that stat(2) shows (see statCols).
func (e entry) statAttr() Attr {
	a := Attr{
		ID: e.id, Parent: e.parent, Kind: e.kind, Name: e.name,
		Size: e.size, Attributes: e.attrs, LastWrite: fromTicks(e.write), Change: fromTicks(e.change),
		Version: e.version, Unlinked: e.unlinked,
	}
	if e.kind.IsDir() {
		a.Attributes |= AttrDirectory
		a.Size = 0
	}
	return a
}

// statCols are the columns the mount view's lookups and listings read
// (scanStat's order): what stat(2) shows of an entry. Each column a query
// returns costs the driver about a third of a microsecond per row (name,
// declared type and value, each under SQLite's mutex): the six entryCols
// leave out are a fifth of a lookup.
const statCols = `id, parent, name, kind, unlinked, size, attrs, t_write, t_change, version`

// scanStat scans statCols into a partial entry (save refuses it).
func scanStat(r rowScanner) (entry, error) {
	e := entry{partial: true}
	var id, parent, version int64
	if err := r.Scan(&id, &parent, &e.name, &e.kind, &e.unlinked, &e.size, &e.attrs, &e.write, &e.change, &version); err != nil {
		return entry{}, err
	}
	e.id, e.parent, e.version = FileID(id), FileID(parent), uint64(version)
	return e, nil
}

// q is the namespace's view of one transaction.
type q struct {
	ctx context.Context
	tx  *locks.Conn
	ltx *locks.Tx
	now time.Time
	fs  *FileSystem
	ids *idRange // file ids of this transaction (fileIDs), nil until needed
	// queuedBlob: unlinkEntry removed a file that had a blob (queued in
	// ns_gc), work for the collector once the transaction commits.
	queuedBlob bool
}

// q's statements run without the caller's cancellation: inside a
// transaction they never wait for a lock (see locks), and a cancellable
// context costs the driver a watcher goroutine per statement. Waiting for
// the transaction itself (BEGIN, busy retries) still watches the caller's
// context in locks.
func (fsys *FileSystem) q(tx *locks.Tx) *q {
	return &q{ctx: context.WithoutCancel(tx.Context()), tx: tx.SQL(), ltx: tx, now: fsys.now(), fs: fsys}
}

// update runs fn in a write transaction; changes it returns are notified
// after the commit (fn may run more than once). The closes of released
// handles (release.go) run first in the same transaction, so fn sees them
// closed; a nil fn only closes them.
func (fsys *FileSystem) update(ctx context.Context, fn func(tx *locks.Tx, q *q) ([]Change, error)) error {
	return fsys.updateVia(ctx, fsys.table.Update, fn)
}

// updateVia is update with the lock table's transaction run by run
// (locks.Table.Update, or UpdateFolded for the mount: fold.go).
func (fsys *FileSystem) updateVia(ctx context.Context, run func(context.Context, func(*locks.Tx) error) error, fn func(tx *locks.Tx, q *q) ([]Change, error)) error {
	var rs []release
	taken := false
	var chs []Change
	var cs []closed
	err := run(ctx, func(tx *locks.Tx) error {
		if !taken {
			// Taken under the writer lock, not before it: a transaction
			// that took the queue and then waited for the writer would
			// let another decide first with the released handles still
			// open (a spurious sharing violation). A retry of fn keeps
			// what its first run took.
			rs, taken = fsys.takeReleases(), true
		}
		q := fsys.q(tx)
		var err error
		if cs, err = q.closeInTx(tx, rs, cs[:0]); err != nil {
			return &errCloses{err}
		}
		chs = nil
		if fn != nil {
			if chs, err = fn(tx, q); err == nil {
				// In the transaction that makes the change (removals:
				// RemoveFile, removeTree).
				err = q.recordChanges(chs)
			}
			if err == nil {
				err = q.breakParents(chs) // dirlease.go
			}
		}
		return err
	})
	if err != nil {
		if len(rs) == 0 {
			return err
		}
		// The rollback took the closes along: they run apart, and if it
		// was they that failed, fn runs again without them.
		fsys.closeApart(ctx, rs)
		var ec *errCloses
		if !errors.As(err, &ec) {
			return err
		}
		if fn == nil {
			return nil
		}
		return fsys.updateVia(ctx, run, fn)
	}
	fsys.finishCloses(cs)
	fsys.notify(chs...)
	// Any write may have recorded notices: a removal is recorded where
	// the row goes (RemoveFile, run by locks in a close), unseen here.
	// Without a watch of this process signal is a mutex and a compare.
	fsys.notices.signal()
	return nil
}

// view runs fn in a read transaction that sees every handle this process
// released as closed.
func (fsys *FileSystem) view(ctx context.Context, fn func(tx *locks.Tx, q *q) error) error {
	fsys.settleReleases(ctx)
	return fsys.table.View(ctx, func(tx *locks.Tx) error { return fn(tx, fsys.q(tx)) })
}

// peek runs fn in a short read transaction (locks.Table.Peek: on the warm
// writer connection when it is idle). It does not wait for the closes of
// released handles: use it for names, attributes and checks through this
// process's own handles, which those closes do not change (handles that
// ever held byte-range locks are never released late, see Handle.Release).
func (fsys *FileSystem) peek(ctx context.Context, fn func(tx *locks.Tx, q *q) error) error {
	return fsys.table.Peek(ctx, func(tx *locks.Tx) error { return fn(tx, fsys.q(tx)) })
}

// peekStatement is peek for fn that runs a single read statement
// (locks.Table.PeekStatement: no BEGIN and ROLLBACK around it).
func (fsys *FileSystem) peekStatement(ctx context.Context, fn func(tx *locks.Tx, q *q) error) error {
	return fsys.table.PeekStatement(ctx, func(tx *locks.Tx) error { return fn(tx, fsys.q(tx)) })
}

// Statements run on every read, write or lookup.
const (
	sqlGet      = `SELECT ` + entryCols + ` FROM ns_entries WHERE id = ?`
	sqlChild    = `SELECT ` + entryCols + ` FROM ns_entries WHERE parent = ? AND key = ? AND unlinked = 0`
	sqlSizeVer  = `SELECT size, version, blob, inline FROM ns_entries WHERE id = ?`
	sqlUnlinked = `SELECT ` + entryCols + ` FROM ns_entries WHERE parent = ? AND key = ? AND unlinked = 1 ORDER BY id DESC LIMIT 1`
	// sqlLookup is the live child ?2 of ?1 or, when there is none, ?1
	// itself if it is a file (?3): a miss costs no second statement to
	// tell ErrNotDir from ErrNotFound, and the limit ends a hit before
	// the parent is read. sqlLookupStat is the same with statCols.
	sqlLookup = `SELECT ` + entryCols + ` FROM ns_entries WHERE parent = ?1 AND key = ?2 AND unlinked = 0
		UNION ALL SELECT ` + entryCols + ` FROM ns_entries WHERE id = ?1 AND kind = ?3
		LIMIT 1`
	sqlLookupStat = `SELECT ` + statCols + ` FROM ns_entries WHERE parent = ?1 AND key = ?2 AND unlinked = 0
		UNION ALL SELECT ` + statCols + ` FROM ns_entries WHERE id = ?1 AND kind = ?3
		LIMIT 1`
	sqlGetStat = `SELECT ` + statCols + ` FROM ns_entries WHERE id = ?`
)

// exec, queryRow and query run a statement in the transaction (the lock
// table's connection prepares each query once).
func (q *q) exec(query string, args ...any) (sql.Result, error) {
	return q.tx.ExecContext(q.ctx, query, args...)
}

func (q *q) queryRow(query string, args ...any) *locks.Row {
	return q.tx.QueryRowContext(q.ctx, query, args...)
}

func (q *q) query(query string, args ...any) (*sql.Rows, error) {
	return q.tx.QueryContext(q.ctx, query, args...)
}

// content says where a file's bytes are: in its blob, or inline (small
// files, bytes past len(inline) up to size are zeros).
type content struct {
	size    int64
	version uint64
	blob    bool
	inline  []byte
}

// content returns a file's size, version and inline bytes.
func (q *q) content(id FileID) (content, error) {
	var c content
	var v int64
	err := q.queryRow(sqlSizeVer, int64(id)).Scan(&c.size, &v, &c.blob, &c.inline)
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	c.version = uint64(v)
	return c, err
}

func (q *q) get(id FileID) (entry, error) {
	e, err := scanEntry(q.queryRow(sqlGet, int64(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return entry{}, ErrNotFound
	}
	return e, err
}

// child finds a live entry by name; with smb it falls back to the newest
// unlinked (delete-pending) entry of that name.
func (q *q) child(parent FileID, name string, smb bool) (entry, error) {
	key := FoldName(name)
	e, err := scanEntry(q.queryRow(sqlChild, int64(parent), key))
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return e, err
	}
	if smb {
		e, err = scanEntry(q.queryRow(sqlUnlinked, int64(parent), key))
		if err == nil || !errors.Is(err, sql.ErrNoRows) {
			return e, err
		}
	}
	return entry{}, ErrNotFound
}

// refCols are the columns childRef reads: what unlinking or renaming an
// entry needs. Each column a query returns costs the driver about a third
// of a microsecond (name, declared type and value, each under SQLite's
// mutex), so leaving out the other seven saves a third of the statement.
const refCols = `id, parent, name, key, kind, unlinked, attrs, version, blob`

const sqlChildRef = `SELECT ` + refCols + ` FROM ns_entries WHERE parent = ? AND key = ? AND unlinked = 0`

// childRef is child for a live entry that is only to be unlinked, renamed
// or removed: it reads refCols, and the entry comes back partial — without
// size, times, properties or quota — so that updateEntry may change named
// columns of it but save refuses it.
func (q *q) childRef(parent FileID, name string) (entry, error) {
	e := entry{partial: true}
	var id, par, version int64
	err := q.queryRow(sqlChildRef, int64(parent), FoldName(name)).Scan(&id, &par, &e.name, &e.key, &e.kind, &e.unlinked, &e.attrs, &version, &e.blob)
	if errors.Is(err, sql.ErrNoRows) {
		return entry{}, ErrNotFound
	}
	if err != nil {
		return entry{}, err
	}
	e.id, e.parent, e.version = FileID(id), FileID(par), uint64(version)
	return e, nil
}

// insert adds a new live entry and returns it.
func (q *q) insert(e entry) (entry, error) {
	// Versions count changes per entry (see etagOf); a new entry is 1.
	e.version = 1
	e.key = FoldName(e.name)
	if err := q.holds(e.parent, "names"); err != nil {
		return entry{}, err
	}
	props, err := e.props()
	if err != nil {
		return entry{}, err
	}
	ids, err := q.fileIDs()
	if err != nil {
		return entry{}, fmt.Errorf("insert %q: %w", e.name, err)
	}
	_, err = q.exec(`INSERT INTO ns_entries(id, parent, name, key, kind, size, attrs, t_created, t_write, t_change, t_modified, version, props, quota)
		VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		ids.next, int64(e.parent), e.name, e.key, e.kind, e.size, e.attrs, e.created, e.write, e.change, e.modified, int64(e.version),
		props, e.quota)
	if err != nil {
		if errors.Is(err, locks.ErrUniqueViolation) { // the (parent, key) index: the name is taken
			return entry{}, ErrExist
		}
		return entry{}, fmt.Errorf("insert %q as file %d: %w", e.name, ids.next, err)
	}
	e.id = FileID(ids.next)
	ids.next++
	return e, nil
}

// fileIDBlock is how many file ids one reservation takes (see fileIDs).
const fileIDBlock = 256

// idRange is the ids [next, end) reserved and not yet used.
type idRange struct{ next, end int64 }

// fileIDs returns the ids this transaction hands out to new entries.
//
// Ids are never reused: they name blobs (a new file must not take the key
// of a blob still queued for removal) and FUSE inodes. AUTOINCREMENT
// ensures that by writing sqlite_sequence at every insert; instead each
// process reserves blocks of fileIDBlock ids in ns_seq ("next_file": the
// last id reserved, by anyone) and uses them up across transactions. The
// transaction works on a copy of the process's block, adopted when it
// commits (locks.Tx.OnCommit, still under the writer lock): a rolled-back
// transaction leaves the block as it was, its reservation and its inserts
// undone together.
func (q *q) fileIDs() (*idRange, error) {
	if q.ids == nil {
		ids := q.fs.fileIDs // under the writer lock: fn of an Update
		q.ids = &ids
		fsys := q.fs
		q.ltx.OnCommit(func() { fsys.fileIDs = ids })
	}
	if q.ids.next < q.ids.end {
		return q.ids, nil
	}
	var last int64
	if err := q.queryRow(`INSERT INTO ns_seq(name, value) VALUES('next_file', (SELECT coalesce(max(id), 0) FROM ns_entries) + ?1)
		ON CONFLICT(name) DO UPDATE SET value = value + ?1 RETURNING value`, fileIDBlock).Scan(&last); err != nil {
		return nil, fmt.Errorf("reserve file ids: %w", err)
	}
	q.ids.next, q.ids.end = last-fileIDBlock+1, last+1
	return q.ids, nil
}

// saveCols are the mutable columns save writes, in saveArgs' order. The
// version is not among them: every update counts it up in SQL (version =
// version + 1), so it moves past whatever the row holds, read in this
// transaction or not.
const saveCols = `parent=?, name=?, key=?, unlinked=?, size=?, attrs=?, t_created=?, t_write=?, t_change=?, t_modified=?,
	props=?, quota=?`

// saveArgs returns the values of saveCols.
func saveArgs(e *entry) ([]any, error) {
	props, err := e.props()
	if err != nil {
		return nil, err
	}
	return []any{int64(e.parent), e.name, e.key, e.unlinked, e.size, e.attrs, e.created, e.write, e.change, e.modified,
		props, e.quota}, nil
}

// updateEntry runs an UPDATE of e's row that sets the columns in set and
// counts the version up, and gives e the new version. A row that is gone
// is left alone.
//
// Mostly e was read in this transaction and its version is the row's: an
// UPDATE guarded by that version then knows the new one without a
// RETURNING clause, which costs SQLite a buffered result and database/sql
// a rows object: several microseconds of a small write transaction's
// twenty (BenchmarkSmallFiles' rename and flush steps). Only when the
// guard misses — e was read before, or the row is gone — does RETURNING
// say what the row holds.
func (q *q) updateEntry(e *entry, set string, args ...any) error {
	if err := q.holds(e.id, "entry"); err != nil {
		return err
	}
	next := e.version + 1
	res, err := q.exec(`UPDATE ns_entries SET `+set+`, version = ? WHERE id = ? AND version = ?`,
		append(args, int64(next), int64(e.id), int64(e.version))...)
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n == 1 {
			e.version = next
			return nil
		}
	}
	if errors.Is(err, locks.ErrUniqueViolation) {
		return ErrExist
	}
	if err != nil {
		return fmt.Errorf("update %d: %w", e.id, err)
	}
	var v int64
	err = q.queryRow(`UPDATE ns_entries SET `+set+`, version = version + 1 WHERE id = ? RETURNING version`, append(args, int64(e.id))...).Scan(&v)
	switch {
	case err == nil:
		e.version = uint64(v)
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case errors.Is(err, locks.ErrUniqueViolation):
		return ErrExist
	default:
		return fmt.Errorf("update %d: %w", e.id, err)
	}
}

// errPartialEntry is save's refusal of an entry childRef read.
var errPartialEntry = errors.New("fs: save of a partially read entry")

// save writes back every mutable column of e with a new version.
func (q *q) save(e *entry) error {
	if e.partial {
		return fmt.Errorf("save %d: %w", e.id, errPartialEntry)
	}
	args, err := saveArgs(e)
	if err != nil {
		return err
	}
	return q.updateEntry(e, saveCols, args...)
}

// saveInline writes what a data commit to an inline file changes: size,
// attributes, times, version, content and data ranges. It leaves the
// indexed columns alone, so SQLite rewrites the row but no index entry.
func (q *q) saveInline(e *entry, data []byte, ranges string) error {
	return q.updateEntry(e, `size=?, attrs=?, t_write=?, t_change=?, t_modified=?, inline=?, ranges=?`,
		e.size, e.attrs, e.write, e.change, e.modified, inlineValue(data), ranges)
}

// saveAll is save with an inline file's content and data ranges.
func (q *q) saveAll(e *entry, data []byte, ranges string) error {
	if e.partial {
		return fmt.Errorf("save %d: %w", e.id, errPartialEntry)
	}
	args, err := saveArgs(e)
	if err != nil {
		return err
	}
	return q.updateEntry(e, saveCols+`, inline=?, ranges=?`, append(args, inlineValue(data), ranges)...)
}

// inlineValue stores empty content as NULL.
func inlineValue(data []byte) any {
	if len(data) == 0 {
		return nil
	}
	return data
}

// inlineContent is what getInline reads besides the entry.
type inlineContent struct {
	data   []byte // the inline bytes (zeros follow up to the entry's size)
	ranges string // data ranges (ranges.go)
	intent bool   // a blob commit intent exists for the file
}

// getInline reads an entry with its inline content in one statement.
func (q *q) getInline(id FileID) (entry, inlineContent, error) {
	var c inlineContent
	e, err := scanEntry(q.queryRow(`SELECT `+entryCols+`, inline, ranges, EXISTS(SELECT 1 FROM ns_intents WHERE file = ?1)
		FROM ns_entries WHERE id = ?1`, int64(id)), &c.data, &c.ranges, &c.intent)
	if errors.Is(err, sql.ErrNoRows) {
		return entry{}, c, ErrNotFound
	}
	return e, c, err
}

// hasChildren reports whether a directory has live or unlinked children.
func (q *q) hasChildren(dir FileID) (bool, error) {
	if err := q.holds(dir, "children"); err != nil {
		return false, err
	}
	var n int
	err := q.queryRow(`SELECT count(*) FROM (SELECT 1 FROM ns_entries WHERE parent = ? LIMIT 1)`, int64(dir)).Scan(&n)
	return n > 0, err
}

// hasLiveChildren reports whether a directory has live children.
func (q *q) hasLiveChildren(dir FileID) (bool, error) {
	if err := q.holds(dir, "children"); err != nil {
		return false, err
	}
	var n int
	err := q.queryRow(`SELECT count(*) FROM (SELECT 1 FROM ns_entries WHERE parent = ? AND unlinked = 0 LIMIT 1)`, int64(dir)).Scan(&n)
	return n > 0, err
}

// pathOf builds "share/dir/name" for an entry by walking parents.
func (q *q) pathOf(e entry) (string, error) {
	if e.kind == KindRoot {
		return "", nil
	}
	parts := []string{e.name}
	for p := e.parent; p != RootID && p != 0; {
		pe, err := q.get(p)
		if err != nil {
			return "", fmt.Errorf("path of %d: %w", e.id, err)
		}
		parts = append(parts, pe.name)
		p = pe.parent
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "/"), nil
}

func (q *q) attrOf(e entry) (Attr, error) {
	p, err := q.pathOf(e)
	if err != nil {
		return Attr{}, err
	}
	return e.attr(p), nil
}

// resolved is the result of walking a path.
type resolved struct {
	share  entry
	parent entry  // the directory that holds the last component (the share for "share/x")
	name   string // the last component ("" when the path is the share itself)
	e      entry  // the entry itself
	found  bool
	path   string // when found: the entry's path with its stored names (what pathOf(e) returns)
}

// attr is the found entry's Attr, with the path the walk collected (no
// walk up the parents as attrOf does).
func (r resolved) attr() Attr { return r.e.attr(r.path) }

// resolve walks a "share/dir/file" path in the SMB view. Missing share →
// ErrShareNotFound; a missing or non-directory intermediate →
// ErrParentNotFound; a missing last component leaves found false.
func (q *q) resolve(path string) (resolved, error) {
	share, parts, err := SplitPath(path)
	if err != nil {
		return resolved{}, err
	}
	var r resolved
	r.share, err = q.child(RootID, share, false)
	if errors.Is(err, ErrNotFound) {
		return resolved{}, ErrShareNotFound
	}
	if err != nil {
		return resolved{}, err
	}
	if len(parts) == 0 {
		r.parent, r.e, r.found, r.path = r.share, r.share, true, r.share.name
		return r, nil
	}
	var b strings.Builder
	b.WriteString(r.share.name)
	dir := r.share
	for _, c := range parts[:len(parts)-1] {
		next, err := q.child(dir.id, c, false)
		if errors.Is(err, ErrNotFound) || (err == nil && !next.kind.IsDir()) {
			return resolved{}, ErrParentNotFound
		}
		if err != nil {
			return resolved{}, err
		}
		dir = next
		b.WriteByte('/')
		b.WriteString(dir.name)
	}
	r.parent, r.name = dir, parts[len(parts)-1]
	r.e, err = q.child(dir.id, r.name, true)
	switch {
	case err == nil:
		r.found = true
		b.WriteByte('/')
		b.WriteString(r.e.name)
		r.path = b.String()
	case errors.Is(err, ErrNotFound):
	default:
		return resolved{}, err
	}
	return r, nil
}

// mustResolve resolves a path that must exist (ErrNotFound otherwise).
func (q *q) mustResolve(path string) (resolved, error) {
	r, err := q.resolve(path)
	if err != nil {
		return r, err
	}
	if !r.found {
		return r, ErrNotFound
	}
	return r, nil
}

// readOnly reports the SMB ReadOnly attribute.
func (e entry) readOnly() bool { return e.attrs&AttrReadOnly != 0 }

// facts are what locks needs to know about an entry.
func (q *q) facts(e entry) (locks.Facts, error) {
	f := locks.Facts{ReadOnly: e.readOnly(), Directory: e.kind.IsDir()}
	if f.Directory {
		ne, err := q.hasChildren(e.id)
		if err != nil {
			return f, err
		}
		f.NonEmptyDir = ne
	}
	return f, nil
}

// removeEntry deletes a file's row at once (REST delete, replace), forgets
// it in locks and queues its blob.
func (q *q) removeFile(tx *locks.Tx, e entry) error {
	if err := q.holds(e.id, "entry"); err != nil {
		return err
	}
	if err := tx.Forget(e.id); err != nil {
		return err
	}
	return RemoveFile(q.ctx, q.tx, e.id)
}

// removeTree deletes a directory (or share) and everything below it,
// forgetting open handles of its files.
func (q *q) removeTree(tx *locks.Tx, dir entry) error {
	if err := q.holds(dir.id, "directory"); err != nil {
		return err
	}
	rows, err := q.query(`SELECT id, kind FROM ns_entries WHERE parent = ?`, int64(dir.id))
	if err != nil {
		return err
	}
	type kid struct {
		id   FileID
		kind Kind
	}
	var kids []kid
	for rows.Next() {
		var id int64
		var k Kind
		if err := rows.Scan(&id, &k); err != nil {
			rows.Close()
			return err
		}
		kids = append(kids, kid{FileID(id), k})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// A tree's removal decides on every entry in it: their keys, each
	// directory's children in one sorted call.
	ids := make([]FileID, len(kids))
	for i, k := range kids {
		ids[i] = k.id
	}
	if _, err := q.lock("removeTree", ids...); err != nil {
		return err
	}
	for _, k := range kids {
		if k.kind.IsDir() {
			if err := q.removeTree(tx, entry{id: k.id, kind: k.kind}); err != nil {
				return err
			}
			continue
		}
		if err := q.removeFile(tx, entry{id: k.id, kind: k.kind}); err != nil {
			return err
		}
	}
	if err := tx.Forget(dir.id); err != nil {
		return err
	}
	var parent int64
	var name string
	var kind Kind
	err = q.queryRow(`DELETE FROM ns_entries WHERE id = ? RETURNING parent, name, kind`, int64(dir.id)).Scan(&parent, &name, &kind)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := q.breakDir(FileID(parent)); err != nil { // dirlease.go
		return err
	}
	return recordRemoval(q.ctx, q.tx, FileID(parent), name, kind)
}

// touchLiveDir is touchDir for a directory that must be live: a parent
// about to gain a child. Errors: ErrNotFound (gone, or removed while in
// use), ErrNotDir.
func (q *q) touchLiveDir(dir FileID) error {
	if err := q.holds(dir, "directory"); err != nil {
		return err
	}
	t := ticks(q.now)
	res, err := q.exec(sqlTouch+` AND kind IN (?, ?) AND unlinked = 0`, t, t, t, int64(dir), KindDirectory, KindShare)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	switch e, err := q.get(dir); {
	case err != nil:
		return err
	case !e.kind.IsDir():
		return ErrNotDir
	default:
		return ErrNotFound // unlinked (or the root, which holds shares only)
	}
}

// touchDir records a change of a directory's contents (mtime, ctime, ETag).
// It needs only the id: callers that did not read the directory's row
// have no reason to (a missing row is left alone).
func (q *q) touchDir(dir FileID) error {
	if dir == RootID {
		return nil
	}
	if err := q.holds(dir, "directory"); err != nil {
		return err
	}
	t := ticks(q.now)
	_, err := q.exec(sqlTouch, t, t, t, int64(dir))
	return err
}

// sqlTouch sets a directory's times (write, change, modified) and counts
// its version up.
const sqlTouch = `UPDATE ns_entries SET t_write = ?, t_change = ?, t_modified = ?, version = version + 1 WHERE id = ?`
