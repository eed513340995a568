package sqlmeta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/blobshare/blobshare/meta"
)

// Part is one part of a database's schema, versioned on its own: the lock
// table and the namespace share one file, each store has a file of its own.
type Part struct {
	// Name names the part in errors and in meta.SchemaError.Part ("lock
	// table", "namespace", "blob", "queue", "table").
	Name string
	// Marker is a table of the part: when it exists the part was created
	// (and has a version, 0 if it was created before versioning). A part
	// alone in its file (VersionTable "") was created when the file has
	// any table: a file from before versioning may lack any one of them.
	Marker string
	// Version is this build's version of the part.
	Version int64
	// DDL creates the part at Version in a database without it.
	DDL string
	// Migrations move the part from the version found to Version, one
	// version each; a part found at 0 (created before versioning) opens
	// only if there is a migration to 1 (it must then cope with whatever
	// such a database holds: CREATE … IF NOT EXISTS, AddColumn).
	Migrations []Migration
	// VersionTable is where the version is recorded: the row "schema" of
	// this (name, value) table, as the lock table (lk_meta) and the
	// namespace (ns_seq) always did; "" records it as the file's
	// PRAGMA user_version, for a part alone in its file (the stores).
	VersionTable string
}

// Migration moves one part of the schema from version To-1 to To: DDL
// runs, then Apply if set, in the transaction that checks the version,
// and the version record follows. Say in each migration whether the
// previous build can still run on what it leaves.
type Migration struct {
	To    int64
	DDL   string
	Apply func(ctx context.Context, c *Conn) error
}

// Ensure checks or creates part p inside a write transaction on c: when
// p.Marker exists, the version recorded must be p.Version — else a
// *meta.SchemaError naming the data directory of dbPath — unless
// migrations lead from the version found to p.Version, one version at a
// time: then they run, in order, in this transaction, and the version is
// recorded. When the marker does not exist, p.DDL runs and the version is
// recorded.
func Ensure(ctx context.Context, c *Conn, dbPath string, p Part) error {
	exists, err := partExists(ctx, c, p)
	if err != nil {
		return fmt.Errorf("read schema of %s: %w", dbPath, err)
	}
	if !exists {
		if _, err := c.ExecContext(ctx, p.DDL); err != nil {
			return fmt.Errorf("create %s schema in %s: %w", p.Name, dbPath, err)
		}
		if err := recordVersion(ctx, c, p, true); err != nil {
			return fmt.Errorf("record %s schema version in %s: %w", p.Name, dbPath, err)
		}
		return nil
	}
	found, err := readVersion(ctx, c, p)
	if err != nil {
		return fmt.Errorf("read schema version of %s: %w", dbPath, err)
	}
	if found == p.Version {
		return nil
	}
	if !migratable(found, p.Version, p.Migrations) {
		return &meta.SchemaError{Dir: filepath.Dir(dbPath), DB: dbPath, Part: p.Name, Found: found, Want: p.Version}
	}
	for _, m := range p.Migrations {
		if m.To <= found || m.To > p.Version {
			continue
		}
		if m.DDL != "" {
			if _, err := c.ExecContext(ctx, m.DDL); err != nil {
				return fmt.Errorf("migrate %s schema of %s to version %d: %w", p.Name, dbPath, m.To, err)
			}
		}
		if m.Apply != nil {
			if err := m.Apply(ctx, c); err != nil {
				return fmt.Errorf("migrate %s schema of %s to version %d: %w", p.Name, dbPath, m.To, err)
			}
		}
	}
	// A table-recorded part found at 0 may lack its row (or the table).
	if err := recordVersion(ctx, c, p, found == 0); err != nil {
		return fmt.Errorf("record %s schema version in %s: %w", p.Name, dbPath, err)
	}
	return nil
}

// partExists reports whether p was created (Part.Marker).
func partExists(ctx context.Context, c *Conn, p Part) (bool, error) {
	if p.VersionTable != "" {
		return tableExists(ctx, c, p.Marker)
	}
	var n int
	err := c.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&n)
	return n > 0, err
}

func tableExists(ctx context.Context, c *Conn, name string) (bool, error) {
	var n int
	err := c.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n)
	return n > 0, err
}

// readVersion reads p's recorded version: 0 when none is (a database from
// before versioning: no row, no version table, user_version 0).
func readVersion(ctx context.Context, c *Conn, p Part) (int64, error) {
	var v int64
	if p.VersionTable == "" {
		err := c.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v)
		return v, err
	}
	has, err := tableExists(ctx, c, p.VersionTable)
	if err != nil || !has {
		return 0, err
	}
	err = c.QueryRowContext(ctx, `SELECT value FROM `+p.VersionTable+` WHERE name = 'schema'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return v, err
}

// recordVersion records p.Version; fresh inserts the row where a table
// holds the version (the part was just created, or found unversioned).
func recordVersion(ctx context.Context, c *Conn, p Part, fresh bool) error {
	if p.VersionTable == "" {
		_, err := c.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, p.Version))
		return err
	}
	q := `UPDATE ` + p.VersionTable + ` SET value = ? WHERE name = 'schema'`
	if fresh {
		q = `INSERT INTO ` + p.VersionTable + `(name, value) VALUES('schema', ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value`
	}
	_, err := c.ExecContext(ctx, q, p.Version)
	return err
}

// migratable reports whether ms hold every step from found to want; a
// part found at 0 (before versioning) needs a migration to 1.
func migratable(found, want int64, ms []Migration) bool {
	if found < 0 || found > want {
		return false
	}
	for v := found + 1; v <= want; v++ {
		if !slices.ContainsFunc(ms, func(m Migration) bool { return m.To == v }) {
			return false
		}
	}
	return true
}

// Column is a column a migration adds (AddColumns): Decl is its type and
// constraints, with a default for the rows already there.
type Column struct{ Table, Name, Decl string }

// AddColumns is a migration step that adds each column to its table unless
// the table has it already: for a part whose databases from before
// versioning may or may not have it.
func AddColumns(cols ...Column) func(ctx context.Context, c *Conn) error {
	return func(ctx context.Context, c *Conn) error {
		for _, col := range cols {
			var n int
			err := c.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, col.Table, col.Name).Scan(&n)
			if err != nil {
				return fmt.Errorf("columns of %s: %w", col.Table, err)
			}
			if n > 0 {
				continue
			}
			if _, err := c.ExecContext(ctx, `ALTER TABLE `+col.Table+` ADD COLUMN `+col.Name+` `+col.Decl); err != nil {
				return fmt.Errorf("add %s.%s: %w", col.Table, col.Name, err)
			}
		}
		return nil
	}
}
