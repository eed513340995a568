package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/blobshare/blobshare/blobsvc"
)

// Soft-deleted blobs and snapshots live in bs_deleted, apart from the
// live rows, so that every query of bs_blobs stays as it was and a new
// blob may take a soft-deleted one's name. A row's seq is its identity
// (blobsvc.DeletedInfo.Seq).

// SoftDelete implements blobsvc.Store.
func (s *Store) SoftDelete(ctx context.Context, live []blobsvc.Blob, deleted []blobsvc.Blob) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return wrap("soft delete", "", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	for _, b := range live {
		what := b.Container + "/" + b.Name
		if err := s.fenceBlob(ctx, tx, b.Container, b.Name); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM bs_blobs WHERE container = ? AND name = ? AND snapshot = ?`, b.Container, b.Name, b.Snapshot)
		if err != nil {
			return wrap("soft delete", what, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("blob %s %s: %w", what, b.Snapshot, blobsvc.ErrBlobNotFound)
		}
		if b.Snapshot != "" {
			continue
		}
		for _, q := range []string{`DELETE FROM bs_staged WHERE container = ? AND name = ?`, `DELETE FROM bs_intents WHERE container = ? AND name = ?`} {
			if _, err := tx.ExecContext(ctx, q, b.Container, b.Name); err != nil {
				return wrap("drop staged blocks and intent of", what, err)
			}
		}
	}
	for _, b := range deleted {
		if b.Deleted == nil {
			return fmt.Errorf("blob sqlstore: soft delete %s/%s: no deletion time", b.Container, b.Name)
		}
		b.Deleted.Seq = 0 // the row's seq is its identity
		doc, err := encode(b)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO bs_deleted(container, name, snapshot, expires_at, doc) VALUES(?, ?, ?, ?, ?)`,
			b.Container, b.Name, b.Snapshot, b.Deleted.Expires.UnixNano(), doc); err != nil {
			return wrap("soft delete", b.Container+"/"+b.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return wrap("soft delete", "", err)
	}
	return nil
}

// DeletedBlobs implements blobsvc.Store.
func (s *Store) DeletedBlobs(ctx context.Context, container, name string) ([]blobsvc.Blob, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT seq, doc FROM bs_deleted WHERE container = ? AND name = ? ORDER BY snapshot, seq`, container, name)
	if err != nil {
		return nil, wrap("list deleted", container+"/"+name, err)
	}
	return scanDeleted(rows, container)
}

// ListDeleted implements blobsvc.Store.
func (s *Store) ListDeleted(ctx context.Context, container, prefix, from string, limit int) ([]blobsvc.Blob, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT seq, doc FROM bs_deleted WHERE container = ? AND name >= ?
		AND substr(CAST(name AS BLOB), 1, ?) = CAST(? AS BLOB) ORDER BY name, snapshot, seq LIMIT ?`,
		container, from, len(prefix), prefix, limit)
	if err != nil {
		return nil, wrap("list deleted blobs of", container, err)
	}
	return scanDeleted(rows, container)
}

// ExpiredDeleted implements blobsvc.Store.
func (s *Store) ExpiredDeleted(ctx context.Context, now time.Time, limit int) ([]blobsvc.Blob, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT seq, doc FROM bs_deleted WHERE expires_at <= ? ORDER BY seq LIMIT ?`, now.UnixNano(), limit)
	if err != nil {
		return nil, wrap("list expired deleted blobs", "", err)
	}
	return scanDeleted(rows, "")
}

// RemoveDeleted implements blobsvc.Store.
func (s *Store) RemoveDeleted(ctx context.Context, seq int64) error {
	res, err := s.exec(ctx, `DELETE FROM bs_deleted WHERE seq = ?`, seq)
	if err != nil {
		return wrap("remove deleted", fmt.Sprint(seq), err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("deleted blob %d: %w", seq, blobsvc.ErrBlobNotFound)
	}
	return nil
}

func scanDeleted(rows *sql.Rows, what string) ([]blobsvc.Blob, error) {
	defer rows.Close()
	var out []blobsvc.Blob
	for rows.Next() {
		var seq int64
		var doc string
		if err := rows.Scan(&seq, &doc); err != nil {
			return nil, wrap("read deleted blobs of", what, err)
		}
		var b blobsvc.Blob
		if err := json.Unmarshal([]byte(doc), &b); err != nil {
			return nil, wrap("decode deleted blob of", what, err)
		}
		if b.Deleted == nil {
			return nil, wrap("decode deleted blob of", what, errors.New("no deletion record"))
		}
		b.Deleted.Seq = seq
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("read deleted blobs of", what, err)
	}
	return out, nil
}
