// Package sqlstore is the SQLite implementation of tablesvc.Store.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/blobshare/blobshare/internal/sqlitedb"
	"github.com/blobshare/blobshare/tablesvc"
)

// FileName is the database file's name in the data directory.
const FileName = "table.db"

const (
	busyTimeoutMS = 5000
	maxReaders    = 4
)

const schema = `
CREATE TABLE IF NOT EXISTS tb_tables (
	name_lower TEXT PRIMARY KEY,
	name       TEXT NOT NULL,
	acl        TEXT NOT NULL DEFAULT '[]'
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tb_entities (
	tbl   TEXT NOT NULL,
	pk    TEXT NOT NULL,
	rk    TEXT NOT NULL,
	ts    INTEGER NOT NULL,
	props BLOB NOT NULL,
	PRIMARY KEY (tbl, pk, rk)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tb_service (
	k TEXT PRIMARY KEY,
	v BLOB NOT NULL
);
`

// Store is a tablesvc.Store on one SQLite file.
type Store struct {
	path   string
	writer *sql.DB
	reader *sql.DB
}

var _ tablesvc.Store = (*Store)(nil)

// Open opens (creating if needed) the database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	db, err := sqlitedb.Open(ctx, path, schema, sqlitedb.Options{BusyTimeout: busyTimeoutMS * time.Millisecond, MaxReaders: maxReaders})
	if err != nil {
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	return &Store{path: path, writer: db.Writer, reader: db.Reader}, nil
}

// Close closes the database.
func (s *Store) Close() error { return errors.Join(s.reader.Close(), s.writer.Close()) }

var errTODO = errors.New("sqlstore: not implemented yet")

func (s *Store) CreateTable(ctx context.Context, name string) error { return errTODO }
func (s *Store) DeleteTable(ctx context.Context, name string) error { return errTODO }
func (s *Store) Table(ctx context.Context, name string) (tablesvc.Table, error) {
	return tablesvc.Table{}, errTODO
}
func (s *Store) ScanTables(ctx context.Context, from string, yield func(tablesvc.Table) bool) error {
	return errTODO
}
func (s *Store) ACL(ctx context.Context, table string) ([]tablesvc.SignedIdentifier, error) {
	return nil, errTODO
}
func (s *Store) SetACL(ctx context.Context, table string, ids []tablesvc.SignedIdentifier) error {
	return errTODO
}
func (s *Store) ServiceProperties(ctx context.Context) ([]byte, error)      { return nil, errTODO }
func (s *Store) SetServiceProperties(ctx context.Context, doc []byte) error { return errTODO }
func (s *Store) Get(ctx context.Context, table, pk, rk string) (tablesvc.Entity, error) {
	return tablesvc.Entity{}, errTODO
}
func (s *Store) Scan(ctx context.Context, table string, r tablesvc.KeyRange, yield func(tablesvc.Entity) bool) error {
	return errTODO
}
func (s *Store) Write(ctx context.Context, table string, fn func(tablesvc.Tx) error) error {
	return errTODO
}
