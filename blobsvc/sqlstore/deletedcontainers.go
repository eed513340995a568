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

// A soft-deleted container is a row of bs_deleted_containers; its blob,
// snapshot and soft-deleted rows stay in bs_blobs and bs_deleted under a
// hidden container name (blobsvc.HiddenContainer: it holds a NUL, which
// no container name has), so a new container may take the name.

// SoftDeleteContainer implements blobsvc.Store.
func (s *Store) SoftDeleteContainer(ctx context.Context, d blobsvc.DeletedContainer) error {
	name := d.Container.Name
	hidden := blobsvc.HiddenContainer(name, d.Version)
	doc, err := encode(d)
	if err != nil {
		return err
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return wrap("soft delete container", name, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	res, err := tx.ExecContext(ctx, `DELETE FROM bs_containers WHERE name = ?`, name)
	if err != nil {
		return wrap("soft delete container", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("container %s: %w", name, blobsvc.ErrContainerNotFound)
	}
	for _, q := range []string{
		`INSERT INTO bs_deleted_containers(name, version, expires_at, doc) VALUES(?, ?, ?, ?)`,
	} {
		if _, err := tx.ExecContext(ctx, q, name, d.Version, d.Expires.UnixNano(), doc); err != nil {
			return wrap("soft delete container", name, err)
		}
	}
	for _, q := range []string{`UPDATE bs_blobs SET container = ? WHERE container = ?`, `UPDATE bs_deleted SET container = ? WHERE container = ?`} {
		if _, err := tx.ExecContext(ctx, q, hidden, name); err != nil {
			return wrap("soft delete blobs of", name, err)
		}
	}
	for _, q := range []string{`DELETE FROM bs_staged WHERE container = ?`, `DELETE FROM bs_intents WHERE container = ?`} {
		if _, err := tx.ExecContext(ctx, q, name); err != nil {
			return wrap("drop staged blocks of", name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return wrap("soft delete container", name, err)
	}
	return nil
}

// DeletedContainers implements blobsvc.Store.
func (s *Store) DeletedContainers(ctx context.Context, prefix, from string, limit int) ([]blobsvc.DeletedContainer, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT doc FROM bs_deleted_containers WHERE name >= ? AND substr(name, 1, ?) = ?
		ORDER BY name, version LIMIT ?`, from, len(prefix), prefix, limit)
	if err != nil {
		return nil, wrap("list deleted containers", prefix, err)
	}
	return scanDeletedContainers(rows)
}

// ExpiredContainers implements blobsvc.Store.
func (s *Store) ExpiredContainers(ctx context.Context, now time.Time, limit int) ([]blobsvc.DeletedContainer, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT doc FROM bs_deleted_containers WHERE expires_at <= ? ORDER BY expires_at LIMIT ?`, now.UnixNano(), limit)
	if err != nil {
		return nil, wrap("list expired containers", "", err)
	}
	return scanDeletedContainers(rows)
}

func scanDeletedContainers(rows *sql.Rows) ([]blobsvc.DeletedContainer, error) {
	defer rows.Close()
	var out []blobsvc.DeletedContainer
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, wrap("read deleted containers", "", err)
		}
		var d blobsvc.DeletedContainer
		if err := json.Unmarshal([]byte(doc), &d); err != nil {
			return nil, wrap("decode deleted container", "", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("read deleted containers", "", err)
	}
	return out, nil
}

// RestoreContainer implements blobsvc.Store.
func (s *Store) RestoreContainer(ctx context.Context, name, version string, c blobsvc.Container) error {
	hidden := blobsvc.HiddenContainer(name, version)
	doc, err := encode(c)
	if err != nil {
		return err
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return wrap("restore container", name, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	res, err := tx.ExecContext(ctx, `DELETE FROM bs_deleted_containers WHERE name = ? AND version = ?`, name, version)
	if err != nil {
		return wrap("restore container", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("deleted container %s version %s: %w", name, version, blobsvc.ErrContainerNotFound)
	}
	res, err = tx.ExecContext(ctx, `INSERT INTO bs_containers(name, doc) VALUES(?, ?) ON CONFLICT(name) DO NOTHING`, c.Name, doc)
	if err != nil {
		return wrap("restore container", c.Name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("container %s: %w", c.Name, blobsvc.ErrContainerExists)
	}
	for _, q := range []string{`UPDATE bs_blobs SET container = ?, doc = json_set(doc, '$.Container', ?) WHERE container = ?`,
		`UPDATE bs_deleted SET container = ?, doc = json_set(doc, '$.Container', ?) WHERE container = ?`} {
		if _, err := tx.ExecContext(ctx, q, c.Name, c.Name, hidden); err != nil {
			return wrap("restore blobs of", c.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return wrap("restore container", c.Name, err)
	}
	return nil
}

// PurgeDeletedContainer implements blobsvc.Store.
func (s *Store) PurgeDeletedContainer(ctx context.Context, name, version string) ([]string, error) {
	hidden := blobsvc.HiddenContainer(name, version)
	tx, err := s.begin(ctx)
	if err != nil {
		return nil, wrap("purge container", name, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.ExecContext(ctx, `DELETE FROM bs_deleted_containers WHERE name = ? AND version = ?`, name, version); err != nil {
		return nil, wrap("purge container", name, err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT json_extract(doc, '$.ContentKey') FROM bs_blobs WHERE container = ?
		UNION ALL SELECT json_extract(doc, '$.ContentKey') FROM bs_deleted WHERE container = ?`, hidden, hidden)
	if err != nil {
		return nil, wrap("purge container", name, err)
	}
	var keys []string
	for rows.Next() {
		var k sql.NullString
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return nil, wrap("purge container", name, err)
		}
		if k.Valid && k.String != "" {
			keys = append(keys, k.String)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, wrap("purge container", name, err)
	}
	for _, q := range []string{`DELETE FROM bs_blobs WHERE container = ?`, `DELETE FROM bs_deleted WHERE container = ?`} {
		if _, err := tx.ExecContext(ctx, q, hidden); err != nil {
			return nil, wrap("purge container", name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, wrap("purge container", name, err)
	}
	return keys, nil
}
