package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/blobshare/blobshare/blobsvc"
)

// Soft-deleted blobs and snapshots live in bs_deleted, apart from the
// live rows, as on SQLite; a row's seq is its identity
// (blobsvc.DeletedInfo.Seq). A soft-deleted container is a row of
// bs_deleted_containers, its blob and soft-deleted rows kept under its
// hidden name (blobsvc.HiddenContainer, stored through key).

// SoftDelete implements blobsvc.Store.
func (s *Store) SoftDelete(ctx context.Context, live []blobsvc.Blob, deleted []blobsvc.Blob) error {
	for _, b := range deleted {
		if b.Deleted == nil {
			return fmt.Errorf("blob pgstore: soft delete %s/%s: no deletion time", b.Container, b.Name)
		}
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		for _, b := range live {
			what := b.Container + "/" + b.Name
			c, n := key(b.Container), key(b.Name)
			if err := s.fenceBlob(ctx, tx, b.Container, b.Name); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `DELETE FROM bs_blobs WHERE container = $1 AND name = $2 AND snapshot = $3`, c, n, b.Snapshot)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return fmt.Errorf("blob %s %s: %w", what, b.Snapshot, blobsvc.ErrBlobNotFound)
			}
			if b.Snapshot != "" {
				continue
			}
			for _, q := range []string{`DELETE FROM bs_staged WHERE container = $1 AND name = $2`, `DELETE FROM bs_intents WHERE container = $1 AND name = $2`} {
				if _, err := tx.Exec(ctx, q, c, n); err != nil {
					return err
				}
			}
		}
		for _, b := range deleted {
			d := *b.Deleted
			d.Seq = 0 // the row's seq is its identity
			b.Deleted = &d
			doc, err := encode(b)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO bs_deleted(container, name, snapshot, expires_at, doc) VALUES($1, $2, $3, $4, $5)`,
				key(b.Container), key(b.Name), b.Snapshot, b.Deleted.Expires.UnixNano(), doc); err != nil {
				return err
			}
		}
		return nil
	})
	return s.result("soft delete", "", err)
}

// DeletedBlobs implements blobsvc.Store.
func (s *Store) DeletedBlobs(ctx context.Context, container, name string) ([]blobsvc.Blob, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, doc FROM bs_deleted WHERE container = $1 AND name = $2 ORDER BY snapshot, seq`,
		key(container), key(name))
	return scanDeleted(rows, err, container+"/"+name)
}

// ListDeleted implements blobsvc.Store.
func (s *Store) ListDeleted(ctx context.Context, container, prefix, from string, limit int) ([]blobsvc.Blob, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, doc FROM bs_deleted WHERE container = $1 AND name >= $2 AND starts_with(name, $3)
		ORDER BY name, snapshot, seq LIMIT $4`, key(container), key(from), key(prefix), limit)
	return scanDeleted(rows, err, container)
}

// ExpiredDeleted implements blobsvc.Store.
func (s *Store) ExpiredDeleted(ctx context.Context, now time.Time, limit int) ([]blobsvc.Blob, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, doc FROM bs_deleted WHERE expires_at <= $1 ORDER BY seq LIMIT $2`, now.UnixNano(), limit)
	return scanDeleted(rows, err, "expired")
}

// RemoveDeleted implements blobsvc.Store.
func (s *Store) RemoveDeleted(ctx context.Context, seq int64) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM bs_deleted WHERE seq = $1`, seq)
	if err != nil {
		return wrap("remove deleted", fmt.Sprint(seq), err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("deleted blob %d: %w", seq, blobsvc.ErrBlobNotFound)
	}
	return nil
}

func scanDeleted(rows pgx.Rows, err error, what string) ([]blobsvc.Blob, error) {
	if err != nil {
		return nil, wrap("list deleted blobs of", what, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (blobsvc.Blob, error) {
		var seq int64
		var doc string
		var b blobsvc.Blob
		if err := r.Scan(&seq, &doc); err != nil {
			return b, err
		}
		if err := json.Unmarshal([]byte(doc), &b); err != nil {
			return b, err
		}
		if b.Deleted == nil {
			return b, errors.New("no deletion record")
		}
		b.Deleted.Seq = seq
		return b, nil
	})
	if err != nil {
		return nil, wrap("read deleted blobs of", what, err)
	}
	return out, nil
}

// SoftDeleteContainer implements blobsvc.Store.
func (s *Store) SoftDeleteContainer(ctx context.Context, d blobsvc.DeletedContainer) error {
	name := d.Container.Name
	hidden := key(blobsvc.HiddenContainer(name, d.Version))
	doc, err := encode(d)
	if err != nil {
		return err
	}
	err = s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM bs_containers WHERE name = $1`, key(name))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("container %s: %w", name, blobsvc.ErrContainerNotFound)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO bs_deleted_containers(name, version, expires_at, doc) VALUES($1, $2, $3, $4)`,
			key(name), d.Version, d.Expires.UnixNano(), doc); err != nil {
			return err
		}
		for _, q := range []string{`UPDATE bs_blobs SET container = $1 WHERE container = $2`, `UPDATE bs_deleted SET container = $1 WHERE container = $2`} {
			if _, err := tx.Exec(ctx, q, hidden, key(name)); err != nil {
				return err
			}
		}
		for _, q := range []string{`DELETE FROM bs_staged WHERE container = $1`, `DELETE FROM bs_intents WHERE container = $1`} {
			if _, err := tx.Exec(ctx, q, key(name)); err != nil {
				return err
			}
		}
		return nil
	})
	return s.result("soft delete container", name, err)
}

// DeletedContainers implements blobsvc.Store.
func (s *Store) DeletedContainers(ctx context.Context, prefix, from string, limit int) ([]blobsvc.DeletedContainer, error) {
	rows, err := s.pool.Query(ctx, `SELECT doc FROM bs_deleted_containers WHERE name >= $1 AND starts_with(name, $2)
		ORDER BY name, version LIMIT $3`, key(from), key(prefix), limit)
	if err != nil {
		return nil, wrap("list deleted containers", prefix, err)
	}
	out, err := collectDocs[blobsvc.DeletedContainer](rows)
	if err != nil {
		return nil, wrap("list deleted containers", prefix, err)
	}
	return out, nil
}

// ExpiredContainers implements blobsvc.Store.
func (s *Store) ExpiredContainers(ctx context.Context, now time.Time, limit int) ([]blobsvc.DeletedContainer, error) {
	rows, err := s.pool.Query(ctx, `SELECT doc FROM bs_deleted_containers WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2`, now.UnixNano(), limit)
	if err != nil {
		return nil, wrap("list expired containers", "", err)
	}
	out, err := collectDocs[blobsvc.DeletedContainer](rows)
	if err != nil {
		return nil, wrap("list expired containers", "", err)
	}
	return out, nil
}

// RestoreContainer implements blobsvc.Store. The rows' documents take
// the restored name (decoded and encoded again here: a document is text,
// never jsonb, which would reject the \u0000 a hidden name may leave).
func (s *Store) RestoreContainer(ctx context.Context, name, version string, c blobsvc.Container) error {
	hidden := key(blobsvc.HiddenContainer(name, version))
	doc, err := encode(c)
	if err != nil {
		return err
	}
	err = s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM bs_deleted_containers WHERE name = $1 AND version = $2`, key(name), version)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("deleted container %s version %s: %w", name, version, blobsvc.ErrContainerNotFound)
		}
		tag, err = tx.Exec(ctx, `INSERT INTO bs_containers(name, doc) VALUES($1, $2) ON CONFLICT(name) DO NOTHING`, key(c.Name), doc)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("container %s: %w", c.Name, blobsvc.ErrContainerExists)
		}
		for _, table := range []string{"bs_blobs", "bs_deleted"} {
			if err := renameRows(ctx, tx, table, hidden, c.Name); err != nil {
				return err
			}
		}
		return nil
	})
	return s.result("restore container", c.Name, err)
}

// renameRows moves table's rows of container from (a column value) to
// container to, their documents' Container field too; each row is named
// by its ctid, which holds while the row is locked FOR UPDATE.
func renameRows(ctx context.Context, tx pgx.Tx, table, from, to string) error {
	rows, err := tx.Query(ctx, `SELECT ctid::text, doc FROM `+table+` WHERE container = $1 FOR UPDATE`, from)
	if err != nil {
		return err
	}
	type row struct{ ID, Doc string }
	rs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		return err
	}
	for _, r := range rs {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r.Doc), &m); err != nil {
			return fmt.Errorf("decode a row of %s: %w", table, err)
		}
		name, _ := json.Marshal(to)
		m["Container"] = name
		doc, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE `+table+` SET container = $1, doc = $2 WHERE ctid = $3::tid`, key(to), string(doc), r.ID); err != nil {
			return err
		}
	}
	return nil
}

// PurgeDeletedContainer implements blobsvc.Store.
func (s *Store) PurgeDeletedContainer(ctx context.Context, name, version string) ([]string, error) {
	hidden := key(blobsvc.HiddenContainer(name, version))
	var keys []string
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM bs_deleted_containers WHERE name = $1 AND version = $2`, key(name), version); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT doc FROM bs_blobs WHERE container = $1 UNION ALL SELECT doc FROM bs_deleted WHERE container = $1`, hidden)
		if err != nil {
			return err
		}
		if keys, err = contentKeys(rows); err != nil {
			return err
		}
		for _, q := range []string{`DELETE FROM bs_blobs WHERE container = $1`, `DELETE FROM bs_deleted WHERE container = $1`} {
			if _, err := tx.Exec(ctx, q, hidden); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.result("purge container", name, err)
	}
	return keys, nil
}
