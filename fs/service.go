package fs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/blobshare/blobshare/locks"
)

// The File service's properties (Get/Set File Service Properties) are one
// document for the whole account, kept as its front end encodes it: the
// namespace stores it and decides nothing with it. It lives in the same
// database as the shares, so every process serving the account — and a
// restarted one — answers the same document.

// servicePropertiesKey names the document in ns_service.
const servicePropertiesKey = "properties"

// ServiceProperties returns the stored service properties document, nil if
// none was ever set.
func (fsys *FileSystem) ServiceProperties(ctx context.Context) ([]byte, error) {
	var doc []byte
	err := fsys.view(ctx, func(_ *locks.Tx, q *q) error {
		err := q.tx.QueryRowContext(q.ctx, `SELECT v FROM ns_service WHERE k = ?`, servicePropertiesKey).Scan(&doc)
		if errors.Is(err, sql.ErrNoRows) {
			doc = nil
			return nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("service properties: %w", err)
	}
	return doc, nil
}

// UpdateServiceProperties replaces the document with what change makes of
// the stored one (nil if none), in one write transaction under the
// account root's key lock, so that two concurrent changes of different
// elements both hold. change may run more than once; its error is
// returned as is and changes nothing.
func (fsys *FileSystem) UpdateServiceProperties(ctx context.Context, change func(old []byte) ([]byte, error)) error {
	err := fsys.update(ctx, func(_ *locks.Tx, q *q) ([]Change, error) {
		if _, err := q.lock("service properties", RootID); err != nil {
			return nil, err
		}
		if err := q.holds(RootID, "service properties"); err != nil {
			return nil, err
		}
		var old []byte
		err := q.tx.QueryRowContext(q.ctx, `SELECT v FROM ns_service WHERE k = ?`, servicePropertiesKey).Scan(&old)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		doc, err := change(old)
		if err != nil {
			return nil, err
		}
		_, err = q.tx.ExecContext(q.ctx, `INSERT INTO ns_service(k, v) VALUES(?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v`,
			servicePropertiesKey, doc)
		return nil, err
	})
	if err != nil {
		return fmt.Errorf("service properties: %w", err)
	}
	return nil
}
