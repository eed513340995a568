package fusefs

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/blobshare/blobshare/locks"
	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// BenchmarkSmallFilesFloor is the yardstick for BenchmarkSmallFiles: the
// same client, in a child process, over go-fuse's loopback and over a
// loopback that also does the least a file system keeping its namespace
// in blobshare's SQLite database must do (sqliteFloorNode): a LOOKUP or
// GETATTR reads one row, a CREATE, RENAME or UNLINK commits a write
// transaction of one statement. Its ratios bound what such a design
// reaches on this machine, up to the loopback's own work on the disk that
// the floor also does (an unlink(2) on ext4, say) and a namespace in
// SQLite does not: the true ceiling lies a little above.
//
// The commit changes rows on one page (pages=1) or on five (pages=5, the
// pages an unlink writes: the entry's, the name index's, the parent's,
// and the free list's two when a small file's overflow page is freed):
// in a FUSE request each page of WAL a commit writes costs more than
// another statement would.
//
//	go test ./fs/fusefs -run '^$' -bench 'SmallFiles(Floor)?$' -benchtime 3x
func BenchmarkSmallFilesFloor(b *testing.B) {
	for _, pages := range []int{1, 5} {
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) {
			benchSmallFilesWith(b, [2]benchTarget{
				{"loopback", mountLoopback(b).Dir()},
				{"floor", mountTestNode(b, newSQLiteFloor(b, pages)).Dir()},
			}, smallFilesChild)
		})
	}
}

// sqliteFloor is the floor's database: one connection, with blobshare's
// settings (locks.Open), its statements prepared once, as
// locks.BenchmarkSQLiteFloor runs them. One mutex serialises the
// connection, as the lock table's writer lock does.
type sqliteFloor struct {
	mu                                  sync.Mutex
	begin, write, commit, rollback, get *sql.Stmt
	n                                   int64
}

// newSQLiteFloor returns the root of a loopback over a fresh directory
// whose nodes also use a fresh floor database, whose commits change rows
// on the given number of pages.
func newSQLiteFloor(b *testing.B, pages int) gofs.InodeEmbedder {
	ctx := context.Background()
	dir := b.TempDir()
	table, err := locks.Open(ctx, filepath.Join(dir, "floor.db"), locks.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { table.Close(ctx) })
	db := table.DB()
	// Rows of 3,000 bytes: one per 4 KiB page. A commit overwrites the
	// counter of the first pages rows, each in place on its page.
	if _, err := db.ExecContext(ctx, `CREATE TABLE floor(id INTEGER PRIMARY KEY, n INTEGER NOT NULL, pad BLOB NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	for id := 1; id <= pages; id++ {
		if _, err := db.ExecContext(ctx, `INSERT INTO floor(id, n, pad) VALUES(?, 0, zeroblob(3000))`, id); err != nil {
			b.Fatal(err)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	prepare := func(query string) *sql.Stmt {
		st, err := conn.PrepareContext(ctx, query)
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
	floorDB := &sqliteFloor{
		begin:    prepare(`BEGIN IMMEDIATE`),
		write:    prepare(fmt.Sprintf(`UPDATE floor SET n = ? WHERE id <= %d`, pages)),
		commit:   prepare(`COMMIT`),
		rollback: prepare(`ROLLBACK`),
		get:      prepare(`SELECT n FROM floor WHERE id = 1`),
	}

	return &sqliteFloorNode{LoopbackNode: loopbackRoot(b).(*gofs.LoopbackNode), db: floorDB}
}

// commitOne commits a write transaction of one statement. Like blobshare's
// handlers it ignores FUSE interrupts (nc): the Go runtime's SIGURG
// interrupts requests all the time.
func (f *sqliteFloor) commitOne(ctx context.Context) syscall.Errno {
	ctx = nc(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if _, err := f.begin.ExecContext(ctx); err != nil {
		return syscall.EIO
	}
	if _, err := f.write.ExecContext(ctx, f.n); err != nil {
		f.rollback.ExecContext(ctx)
		return syscall.EIO
	}
	if _, err := f.commit.ExecContext(ctx); err != nil {
		f.rollback.ExecContext(ctx)
		return syscall.EIO
	}
	return 0
}

// readOne reads one row.
func (f *sqliteFloor) readOne(ctx context.Context) syscall.Errno {
	ctx = nc(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	var n int64
	if err := f.get.QueryRowContext(ctx).Scan(&n); err != nil {
		return syscall.EIO
	}
	return 0
}

// sqliteFloorNode is a loopback node that does the floor's database work
// before the loopback's own.
type sqliteFloorNode struct {
	*gofs.LoopbackNode
	db *sqliteFloor
}

// WrapChild makes the loopback's new nodes floor nodes too.
func (n *sqliteFloorNode) WrapChild(ctx context.Context, ops gofs.InodeEmbedder) gofs.InodeEmbedder {
	return &sqliteFloorNode{LoopbackNode: ops.(*gofs.LoopbackNode), db: n.db}
}

func (n *sqliteFloorNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if errno := n.db.readOne(ctx); errno != 0 {
		return nil, errno
	}
	return n.LoopbackNode.Lookup(ctx, name, out)
}

func (n *sqliteFloorNode) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if errno := n.db.readOne(ctx); errno != 0 {
		return errno
	}
	return n.LoopbackNode.Getattr(ctx, f, out)
}

func (n *sqliteFloorNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	if errno := n.db.commitOne(ctx); errno != 0 {
		return nil, nil, 0, errno
	}
	return n.LoopbackNode.Create(ctx, name, flags, mode, out)
}

func (n *sqliteFloorNode) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if errno := n.db.commitOne(ctx); errno != 0 {
		return errno
	}
	return n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
}

func (n *sqliteFloorNode) Unlink(ctx context.Context, name string) syscall.Errno {
	if errno := n.db.commitOne(ctx); errno != 0 {
		return errno
	}
	return n.LoopbackNode.Unlink(ctx, name)
}
