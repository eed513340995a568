package fs

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/locks"
)

// Intent states.
const (
	intentLocked     = 1 // commit lock taken, blob not touched yet
	intentCommitting = 2 // blob commit may have happened: prev_etag and new_size recorded
)

// commitOp is one content change of a file.
type commitOp struct {
	op    string // for errors
	stage *stage // staged writes to merge (nil: none)
	// truncate sets the size exactly (shrinking cuts the blob; growing is
	// sparse). Applied before stage.
	truncate *int64
	// reset drops all content first (REST Create File over a file).
	reset bool
	// check runs in the transaction that takes the commit lock, with the
	// file's current entry (lock checks, range validation).
	check func(tx *locks.Tx, q *q, e entry) error
	// touch updates the entry after the commit (times), in the same
	// transaction that records the new size.
	touch func(q *q, e *entry)
	// committed runs last in the transaction that records the commit.
	committed func(q *q) error
	// ranges, when set, replaces the file's data ranges (a copy takes its
	// source's); otherwise they follow reset, truncate and stage.
	ranges *rangeSet
}

// errIntentBusy: another live process holds the file's commit lock.
var errIntentBusy = errors.New("commit in progress elsewhere")

// deadIntent: a dead owner left an intent that must be resolved first.
type deadIntent struct{ row intentRow }

func (d *deadIntent) Error() string { return fmt.Sprintf("dead commit intent on file %d", d.row.file) }

type intentRow struct {
	file     FileID
	owner    locks.OwnerID // the owner session that took the commit lock
	token    string
	state    int
	prevETag string
	newSize  int64
	newState string // commitState, "" if unknown
}

// commit applies op to file: takes the commit lock (intent), builds the
// new block list on the latest committed version, commits it, and records
// the new size and version. It returns the entry after the change.
func (fsys *FileSystem) commit(ctx context.Context, file FileID, op commitOp) (entry, error) {
	if op.stage != nil {
		if err := op.stage.settle(); err != nil {
			return entry{}, err
		}
	}
	st := fsys.acquireFile(file)
	defer fsys.releaseFile(file, st)
	st.commit.Lock()
	defer st.commit.Unlock()
	return fsys.commitHeld(ctx, file, op)
}

// commitHeld is commit with the file's in-process commit lock held and
// op's stage settled.
func (fsys *FileSystem) commitHeld(ctx context.Context, file FileID, op commitOp) (entry, error) {
	// Small files live inline in the namespace: one transaction, no intent.
	if ne, done, err := fsys.commitInline(ctx, file, op); done || err != nil {
		return ne, err
	}

	token := newBlockID()
	var e entry
	var c content
	backoff := time.Millisecond
	for {
		err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
			var err error
			e, err = q.getLocked("commit", file)
			if err != nil {
				return nil, err
			}
			if e.kind != KindFile {
				return nil, ErrIsDir
			}
			if c, err = q.content(file); err != nil {
				return nil, err
			}
			if op.check != nil {
				if err := op.check(tx, q, e); err != nil {
					return nil, err
				}
			}
			row, found, err := q.intent(file)
			if err != nil {
				return nil, err
			}
			if found {
				return nil, intentBlocks(tx, row)
			}
			_, err = q.exec(`INSERT INTO ns_intents(file, owner, token, state, created) VALUES(?,?,?,?,?)`,
				int64(file), string(tx.Owner()), token, intentLocked, fsys.now().UnixNano())
			return nil, err
		})
		var dead *deadIntent
		switch {
		case err == nil:
		case errors.Is(err, errIntentBusy):
			if err := sleepCtx(ctx, backoff); err != nil {
				return entry{}, fileErr(op.op, file, err)
			}
			if backoff < 50*time.Millisecond {
				backoff *= 2
			}
			continue
		case errors.As(err, &dead):
			if err := fsys.resolveIntent(ctx, dead.row); err != nil {
				return entry{}, fileErr(op.op, file, err)
			}
			continue
		default:
			return entry{}, fileErr(op.op, file, err)
		}
		break
	}

	var migrate []byte // inline content moving to a blob
	if !c.blob {
		migrate = c.inline
		if migrate == nil {
			migrate = []byte{}
		}
	}
	ne, err := fsys.commitLocked(ctx, e, op, token, migrate)
	if err != nil && migrate != nil {
		// The file stays inline: a blob written by the failed migration is
		// not its content.
		if derr := fsys.store.Delete(context.WithoutCancel(ctx), blobKey(file), blobstore.Conditions{}); derr != nil {
			fsys.log.Warn("fs: delete blob of a failed migration", "file", file, "err", derr)
		}
	}
	if err != nil {
		// Give the lock back; the intent row goes with it.
		derr := fsys.table.Update(context.WithoutCancel(ctx), func(tx *locks.Tx) error {
			_, err := tx.SQL().ExecContext(tx.Context(), `DELETE FROM ns_intents WHERE file = ? AND token = ?`, int64(file), token)
			return err
		})
		if derr != nil {
			fsys.log.Error("fs: release commit intent", "file", file, "err", derr)
		}
		return entry{}, fileErr(op.op, file, err)
	}
	return ne, nil
}

// intentBlocks is what a found intent means to a commit: errIntentBusy
// while its owner session is alive (on any host: locks' one liveness
// decision), a *deadIntent to resolve once it is dead.
func intentBlocks(tx *locks.Tx, row intentRow) error {
	alive, err := tx.OwnerAlive(row.owner)
	if err != nil {
		return err
	}
	if alive {
		return errIntentBusy
	}
	return &deadIntent{row}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (q *q) intent(file FileID) (intentRow, bool, error) {
	var r intentRow
	var f int64
	err := q.queryRow(`SELECT file, owner, token, state, prev_etag, new_size, new_state FROM ns_intents WHERE file = ?`, int64(file)).
		Scan(&f, &r.owner, &r.token, &r.state, &r.prevETag, &r.newSize, &r.newState)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	r.file = FileID(f)
	return r, err == nil, err
}

// commitLocked runs with the commit lock held (intent row with token).
func (fsys *FileSystem) commitLocked(ctx context.Context, e entry, op commitOp, token string, migrate []byte) (entry, error) {
	key := blobKey(e.id)
	if migrate != nil {
		// The file outgrows inline storage: its current content becomes
		// the blob this commit builds on (a stale blob of a crashed
		// migration is replaced).
		if len(migrate) > 0 {
			if _, err := blobstore.Put(ctx, fsys.store, key, bytes.NewReader(migrate), BlockSize, blobstore.Conditions{}); err != nil {
				return entry{}, fmt.Errorf("migrate inline content: %w", err)
			}
		} else if err := fsys.store.Delete(ctx, key, blobstore.Conditions{}); err != nil {
			return entry{}, fmt.Errorf("migrate inline content: %w", err)
		}
	}
	var newSize int64
	var newETag, newState string
	var pending []string // snapshot keys waiting for the version this commit replaces
	changed := false
	for attempt := 0; ; attempt++ {
		blocks, info, err := fsys.store.Blocks(ctx, key)
		if errors.Is(err, blobstore.ErrNotFound) {
			blocks, info, err = nil, blobstore.Info{}, nil
		}
		if err != nil {
			return entry{}, err
		}
		ids, size, same, err := fsys.buildList(ctx, e, blocks, op)
		if err != nil {
			return entry{}, err
		}
		newSize = size
		if same {
			newETag = info.ETag
			break
		}
		// Record what we are about to do, then do it: the blob's etag
		// before, the size after, and the entry's fields before and after,
		// so that recovery can adopt the commit whole (commitState).
		err = fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
			newState = ""
			cur, err := q.getLocked("commit", e.id)
			switch {
			case errors.Is(err, ErrNotFound):
				// Removed meanwhile: the final update will find it gone.
			case err != nil:
				return nil, err
			default:
				next := cur
				applyCommit(q, &next, op, newSize, true)
				if newState, err = encodeCommitState(&cur, &next); err != nil {
					return nil, err
				}
			}
			_, err = q.exec(`UPDATE ns_intents SET state = ?, prev_etag = ?, new_size = ?, new_state = ? WHERE file = ? AND token = ?`,
				intentCommitting, info.ETag, newSize, newState, int64(e.id), token)
			if err != nil {
				return nil, err
			}
			pending, err = q.pendingClones(e.id)
			return nil, err
		})
		if err != nil {
			return entry{}, err
		}
		// Copy on write: a snapshot taken since we read the blob still
		// needs the version we replace (snapshots.go).
		if len(pending) > 0 {
			if err := fsys.cloneBeforeCommit(ctx, key, info.ETag, pending); err != nil {
				return entry{}, err
			}
		}
		cond := blobstore.Conditions{IfMatch: info.ETag}
		if info.ETag == "" {
			cond = blobstore.Conditions{IfNoneMatch: "*"}
		}
		ninfo, err := fsys.store.CommitBlocks(ctx, key, ids, cond)
		if errors.Is(err, blobstore.ErrPreconditionFailed) && attempt < 8 {
			continue // someone committed without our lock: merge again
		}
		if err != nil {
			// The commit may have happened anyway (a cancelled request the
			// store completed): settle it as recovery would.
			return fsys.settle(ctx, e.id, intentRow{file: e.id, token: token, state: intentCommitting, prevETag: info.ETag, newSize: newSize, newState: newState}, err)
		}
		newETag, changed = ninfo.ETag, true
		break
	}
	_ = newETag
	var ne entry
	var gone bool
	// The blob is committed: record it even if the caller gave up meanwhile.
	err := fsys.update(context.WithoutCancel(ctx), func(tx *locks.Tx, q *q) ([]Change, error) {
		if _, err := q.lock("commit", e.id); err != nil {
			return nil, err
		}
		if _, err := q.exec(`DELETE FROM ns_intents WHERE file = ? AND token = ?`, int64(e.id), token); err != nil {
			return nil, err
		}
		cur, err := q.get(e.id)
		if errors.Is(err, ErrNotFound) {
			gone = true
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		applyCommit(q, &cur, op, newSize, changed || cur.size != newSize || op.stage != nil)
		if err := q.save(&cur); err != nil {
			return nil, err
		}
		if changed || migrate != nil {
			if _, err := q.exec(`UPDATE ns_entries SET blob = 1, inline = NULL WHERE id = ?`, int64(cur.id)); err != nil {
				return nil, err
			}
		}
		if err := q.updateRanges(cur.id, op, newSize); err != nil {
			return nil, err
		}
		if op.committed != nil {
			if err := op.committed(q); err != nil {
				return nil, err
			}
		}
		ne = cur
		return []Change{{Kind: ChangeData, File: cur.id, Parent: cur.parent, Name: cur.name, Version: cur.version, Offset: 0, Length: -1}}, nil
	})
	if err != nil && changed {
		return fsys.settle(ctx, e.id, intentRow{file: e.id, token: token, state: intentCommitting, prevETag: "\x00unknown", newSize: newSize, newState: newState}, err)
	}
	if err != nil {
		return entry{}, err
	}
	if gone {
		// Removed while we committed: the blob we wrote is an orphan.
		if err := fsys.store.Delete(ctx, key, blobstore.Conditions{}); err != nil {
			fsys.log.Warn("fs: delete orphan blob", "key", key, "err", err)
		}
		return entry{}, ErrStaleHandle
	}
	return ne, nil
}

// applyCommit is what a commit does to the file's entry once its blob is
// committed: the new size, the times (the write time only when wrote), and
// op's own changes (touch: a Create File's properties, metadata and
// attributes).
func applyCommit(q *q, e *entry, op commitOp, newSize int64, wrote bool) {
	e.size = newSize
	t := ticks(q.now)
	e.change, e.modified = t, t
	if wrote {
		e.write = t
	}
	if op.touch != nil {
		op.touch(q, e)
	}
}

// commitFields are the entry fields a commit may change besides the size.
type commitFields struct {
	Attrs    Attributes `json:"a"`
	Created  int64      `json:"c"`
	Write    int64      `json:"w"`
	Change   int64      `json:"ch"`
	Modified int64      `json:"m"`
	Props    string     `json:"p"`
}

func fieldsOf(e *entry) (commitFields, error) {
	props, err := e.props()
	return commitFields{Attrs: e.attrs, Created: e.created, Write: e.write, Change: e.change, Modified: e.modified, Props: props}, err
}

// commitState is what an intent records about the entry before its blob
// commit: the fields as they were and as the commit will leave them.
type commitState struct {
	Before commitFields `json:"b"`
	After  commitFields `json:"a"`
}

func encodeCommitState(before, after *entry) (string, error) {
	var s commitState
	var err error
	if s.Before, err = fieldsOf(before); err != nil {
		return "", err
	}
	if s.After, err = fieldsOf(after); err != nil {
		return "", err
	}
	b, err := json.Marshal(s)
	return string(b), err
}

// adoptCommit applies to e what the adopted commit of an interrupted
// intent would have: its size, and each field as the commit would have
// left it — unless that field changed since the intent recorded it (a
// later change, say Set File Metadata, wins). Without a recorded state
// (an intent of an older build, or of a file removed meanwhile), the times
// become now.
func adoptCommit(q *q, e *entry, row intentRow) error {
	e.size = row.newSize
	if row.newState == "" {
		t := ticks(q.now)
		e.write, e.change, e.modified = t, t, t
		return nil
	}
	var s commitState
	if err := json.Unmarshal([]byte(row.newState), &s); err != nil {
		return fmt.Errorf("intent state of file %d: %w", row.file, err)
	}
	cur, err := fieldsOf(e)
	if err != nil {
		return err
	}
	merge := func(cur, before, after int64) int64 {
		if cur == before {
			return after
		}
		return cur
	}
	if e.attrs == s.Before.Attrs {
		e.attrs = s.After.Attrs
	}
	e.created = merge(e.created, s.Before.Created, s.After.Created)
	e.write = merge(e.write, s.Before.Write, s.After.Write)
	e.change = merge(e.change, s.Before.Change, s.After.Change)
	e.modified = merge(e.modified, s.Before.Modified, s.After.Modified)
	if cur.Props == s.Before.Props {
		e.content, e.metadata, e.permKey = ContentHeaders{}, nil, ""
		if err := e.setProps(s.After.Props); err != nil {
			return fmt.Errorf("intent state of file %d: %w", row.file, err)
		}
	}
	return nil
}

// buildList computes the new block list for op on top of the committed
// blocks. same is true when the blob does not change (only the size).
func (fsys *FileSystem) buildList(ctx context.Context, e entry, blocks []blobstore.Block, op commitOp) (ids []string, size int64, same bool, err error) {
	key := blobKey(e.id)
	size = e.size
	old := make([]blobstore.Block, len(blocks))
	copy(old, blocks)
	var blobLen int64
	for _, b := range old {
		blobLen += b.Size
	}
	// cur describes the blob as it will be, block by block: an id and a
	// length, where "" means "restage from the old content" up to oldLen.
	type blk struct {
		id     string
		length int64 // length in the new blob
		oldLen int64 // bytes of old content at this index (when restaging)
	}
	cur := make([]blk, len(old))
	for i, b := range old {
		cur[i] = blk{id: b.ID, length: b.Size, oldLen: b.Size}
	}
	dirty := false
	if op.reset {
		cur, blobLen, size, dirty = nil, 0, 0, len(old) > 0
	}
	if op.truncate != nil {
		t := *op.truncate
		size = t
		if t < blobLen {
			k := t / BlockSize
			rem := t % BlockSize
			cur = cur[:k]
			if rem > 0 {
				cur = append(cur, blk{id: "", length: rem, oldLen: rem})
			}
			blobLen = t
			dirty = true
		}
	}
	s := op.stage
	if s != nil && !s.empty() {
		if s.end > size {
			size = s.end
		}
		newLen := blobLen
		if s.end > newLen {
			newLen = s.end
		}
		// Extend to the new length: pad the old last block, add holes.
		nb := (newLen + BlockSize - 1) / BlockSize
		for i := int64(0); i < nb; i++ {
			want := min(int64(BlockSize), newLen-i*BlockSize)
			if i < int64(len(cur)) {
				if cur[i].length != want {
					cur[i].length, cur[i].id = want, ""
					dirty = true
				}
				continue
			}
			cur = append(cur, blk{id: zeroBlockID, length: want, oldLen: 0})
			if want != BlockSize {
				cur[i].id = ""
			}
			dirty = true
		}
		for i, id := range s.full {
			cur[i] = blk{id: id, length: BlockSize}
			dirty = true
		}
		for i := range s.parts {
			cur[i].id = "" // merge onto the old content
			dirty = true
		}
		blobLen = newLen
	}
	if !dirty {
		return nil, size, true, nil
	}
	// Stage what must be restaged; reference the rest.
	needZero := false
	hasZero := false
	for _, b := range old {
		if b.ID == zeroBlockID {
			hasZero = true
		}
	}
	var buf []byte
	defer func() {
		if buf != nil {
			fsys.putBuf(buf)
		}
	}()
	ids = make([]string, len(cur))
	for i, b := range cur {
		if b.id == zeroBlockID {
			needZero = true
		}
		if b.id != "" {
			ids[i] = b.id
			continue
		}
		if buf == nil {
			buf = fsys.getBuf()
		}
		blockBuf := buf[:b.length]
		clear(blockBuf)
		var baseLen int64
		if i < len(old) && !op.reset {
			baseLen = min(old[i].Size, b.length)
		}
		if baseLen > 0 {
			if err := fsys.readBlob(ctx, key, int64(i)*BlockSize, blockBuf[:baseLen]); err != nil {
				return nil, 0, false, err
			}
		}
		if s != nil {
			if pt := s.parts[int64(i)]; pt != nil {
				if err := s.overlay(int64(i), pt, blockBuf); err != nil {
					return nil, 0, false, err
				}
			}
		}
		id := newBlockID()
		if _, err := fsys.store.StageBlock(ctx, key, id, bytes.NewReader(blockBuf)); err != nil {
			return nil, 0, false, fmt.Errorf("stage block %d: %w", i, err)
		}
		ids[i] = id
	}
	if needZero && !hasZero {
		if _, err := fsys.store.StageBlock(ctx, key, zeroBlockID, io.LimitReader(zeroReader{}, BlockSize)); err != nil {
			return nil, 0, false, fmt.Errorf("stage zero block: %w", err)
		}
	}
	return ids, size, false, nil
}

// readBlob fills p from the committed blob at off; bytes past its end are
// zeros.
func (fsys *FileSystem) readBlob(ctx context.Context, key string, off int64, p []byte) error {
	rc, _, err := fsys.store.ReadRange(ctx, key, off, int64(len(p)))
	if errors.Is(err, blobstore.ErrNotFound) {
		clear(p)
		return nil
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	n, err := io.ReadFull(rc, p)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		clear(p[n:])
		return nil
	}
	return err
}

// settle resolves this process's own intent after a commit error: if the
// blob commit happened after all it is adopted and the commit succeeded;
// otherwise the intent is dropped and cause is returned.
func (fsys *FileSystem) settle(ctx context.Context, file FileID, row intentRow, cause error) (entry, error) {
	ctx = context.WithoutCancel(ctx)
	adopted, err := fsys.resolve(ctx, row)
	if err != nil {
		fsys.log.Error("fs: settling a failed commit", "file", file, "cause", cause, "err", err)
		return entry{}, cause
	}
	if !adopted {
		return entry{}, cause
	}
	var e entry
	err = fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		var err error
		e, err = q.get(file)
		return err
	})
	if err != nil {
		return entry{}, cause
	}
	return e, nil
}

// resolveIntent settles an intent whose process died: adopt the blob it
// committed (new size) or drop it.
func (fsys *FileSystem) resolveIntent(ctx context.Context, row intentRow) error {
	_, err := fsys.resolve(ctx, row)
	return err
}

// resolve adopts or drops an intent (see resolveIntent) and reports
// whether the commit was adopted.
func (fsys *FileSystem) resolve(ctx context.Context, row intentRow) (bool, error) {
	adopt := false
	if row.state == intentCommitting {
		info, err := fsys.store.Stat(ctx, blobKey(row.file))
		switch {
		case errors.Is(err, blobstore.ErrNotFound):
			adopt = row.prevETag != ""
		case err != nil:
			return false, err
		default:
			adopt = info.ETag != row.prevETag
		}
	}
	fsys.log.Info("fs: resolving a commit intent", "file", row.file, "owner", string(row.owner), "adopt", adopt)
	adopted := false
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		adopted = false
		if _, err := q.lock("resolve intent", row.file); err != nil {
			return nil, err
		}
		res, err := q.exec(`DELETE FROM ns_intents WHERE file = ? AND token = ?`, int64(row.file), row.token)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 || !adopt {
			return nil, nil
		}
		e, err := q.get(row.file)
		if errors.Is(err, ErrNotFound) {
			// Removed meanwhile: the committed blob is an orphan.
			_, err := q.exec(`INSERT OR IGNORE INTO ns_gc(key, since) VALUES(?, ?)`, blobKey(row.file), q.now.UnixNano())
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		// The written ranges of the lost commit are unknown: report all.
		all := rangeSet{{0, row.newSize}}.encode()
		if _, err := q.exec(`UPDATE ns_entries SET blob = 1, inline = NULL, ranges = ? WHERE id = ?`, all, int64(e.id)); err != nil {
			return nil, err
		}
		if err := adoptCommit(q, &e, row); err != nil {
			return nil, err
		}
		if err := q.save(&e); err != nil {
			return nil, err
		}
		adopted = true
		return []Change{{Kind: ChangeData, File: e.id, Parent: e.parent, Name: e.name, Version: e.version, Length: -1}}, nil
	})
	return adopted, err
}

// recover resolves the intents of dead owners and collects leftover blobs
// (New). An intent whose owner session is alive — a commit in progress in
// another process, on this host or another — is left to it.
func (fsys *FileSystem) recover(ctx context.Context) error {
	var rows []intentRow
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		rs, err := q.query(`SELECT file, owner, token, state, prev_etag, new_size, new_state FROM ns_intents`)
		if err != nil {
			return err
		}
		rows = rows[:0]
		for rs.Next() {
			var r intentRow
			var f int64
			if err := rs.Scan(&f, &r.owner, &r.token, &r.state, &r.prevETag, &r.newSize, &r.newState); err != nil {
				rs.Close()
				return err
			}
			r.file = FileID(f)
			rows = append(rows, r)
		}
		if err := errors.Join(rs.Err(), rs.Close()); err != nil {
			return err
		}
		// Judged after the rows are read: the judgement reads too.
		dead := rows[:0]
		for _, r := range rows {
			alive, err := tx.OwnerAlive(r.owner)
			if err != nil {
				return err
			}
			if !alive {
				dead = append(dead, r)
			}
		}
		rows = dead
		return nil
	})
	if err != nil {
		return fmt.Errorf("fs: recover: %w", err)
	}
	for _, r := range rows {
		if err := fsys.resolveIntent(ctx, r); err != nil {
			return fmt.Errorf("fs: recover file %d: %w", r.file, err)
		}
	}
	fsys.collect(ctx)
	return nil
}

// collect removes the blobs of deleted files (ns_gc), best effort.
func (fsys *FileSystem) collect(ctx context.Context) {
	var keys []string
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		// A key a snapshot still has to clone stays (snapshots.go).
		rs, err := q.query(`SELECT key FROM ns_gc WHERE key NOT IN (SELECT src FROM ns_snap_pending) LIMIT 1000`)
		if err != nil {
			return err
		}
		defer rs.Close()
		keys = keys[:0]
		for rs.Next() {
			var k string
			if err := rs.Scan(&k); err != nil {
				return err
			}
			keys = append(keys, k)
		}
		return rs.Err()
	})
	if err != nil {
		fsys.log.Warn("fs: collect deleted blobs", "err", err)
		return
	}
	for _, k := range keys {
		if err := fsys.store.Delete(ctx, k, blobstore.Conditions{}); err != nil {
			fsys.log.Warn("fs: delete blob", "key", k, "err", err)
			continue
		}
		err := fsys.table.Update(ctx, func(tx *locks.Tx) error {
			_, err := tx.SQL().ExecContext(tx.Context(), `DELETE FROM ns_gc WHERE key = ?`, k)
			return err
		})
		if err != nil {
			fsys.log.Warn("fs: forget collected blob", "key", k, "err", err)
		}
	}
}

// InlineMax is the largest content kept inline in the namespace: a file
// whose data (not its size: a sparse tail costs nothing) fits stays in its
// SQLite row, and a write commits in one transaction with no blob I/O.
const InlineMax = 64 << 10

// commitInline applies op to an inline file in one transaction. done is
// false when the file is not inline or would outgrow InlineMax (then the
// blob path runs, migrating the content).
func (fsys *FileSystem) commitInline(ctx context.Context, file FileID, op commitOp) (ne entry, done bool, err error) {
	s := op.stage
	if s != nil && (len(s.full) > 0 || s.end > InlineMax) {
		return entry{}, false, nil
	}
	backoff := time.Millisecond
	for {
		err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
			done = false
			if _, err := q.lock("commit", file); err != nil {
				return nil, err
			}
			// The entry, its content, data ranges and whether a blob
			// commit is under way in one statement, written back in one:
			// this transaction runs at every flush of a small file.
			e, inline, err := q.getInline(file)
			if err != nil {
				return nil, err
			}
			if e.kind != KindFile {
				return nil, ErrIsDir
			}
			if e.blob {
				return nil, nil
			}
			if op.check != nil {
				if err := op.check(tx, q, e); err != nil {
					return nil, err
				}
			}
			if inline.intent {
				if row, found, err := q.intent(file); err != nil {
					return nil, err
				} else if found {
					return nil, intentBlocks(tx, row)
				}
			}
			ranges := inline.ranges
			data := inline.data // Scan copied it
			size := e.size
			if op.reset {
				data, size = nil, 0
			}
			if op.truncate != nil {
				size = *op.truncate
				if int64(len(data)) > size {
					data = data[:size]
				}
			}
			wrote := false
			if s != nil && !s.empty() {
				for idx, pt := range s.parts {
					base := idx * BlockSize
					for _, v := range pt.ivs {
						if base+v.hi > InlineMax {
							return nil, nil // does not fit
						}
						if int64(len(data)) < base+v.hi {
							data = append(data, make([]byte, base+v.hi-int64(len(data)))...)
						}
					}
					if err := s.overlay(idx, pt, data[base:]); err != nil {
						return nil, err
					}
				}
				size = max(size, s.end)
				wrote = true
			}
			t := ticks(q.now)
			e.change, e.modified = t, t
			if wrote || size != e.size || op.reset {
				e.write = t
			}
			e.size = size
			if op.touch != nil {
				op.touch(q, &e)
			}
			if ranges, err = op.rangesAfter(ranges, size); err != nil {
				return nil, err
			}
			if op.touch == nil {
				err = q.saveInline(&e, data, ranges)
			} else {
				err = q.saveAll(&e, data, ranges) // touch may change any column
			}
			if err != nil {
				return nil, err
			}
			if op.committed != nil {
				if err := op.committed(q); err != nil {
					return nil, err
				}
			}
			ne, done = e, true
			return []Change{{Kind: ChangeData, File: e.id, Parent: e.parent, Name: e.name, Version: e.version, Length: -1}}, nil
		})
		var dead *deadIntent
		switch {
		case err == nil:
			return ne, done, nil
		case errors.Is(err, errIntentBusy):
			if err := sleepCtx(ctx, backoff); err != nil {
				return entry{}, false, fileErr(op.op, file, err)
			}
			backoff = min(backoff*2, 50*time.Millisecond)
		case errors.As(err, &dead):
			if err := fsys.resolveIntent(ctx, dead.row); err != nil {
				return entry{}, false, fileErr(op.op, file, err)
			}
		default:
			return entry{}, false, fileErr(op.op, file, err)
		}
	}
}
