package locks

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"
)

// cpuTime is this process's user+system CPU time so far. On a shared
// machine, wall-clock ns/op moves with the neighbours' load; CPU time per
// operation much less, so the benchmarks report both.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds cpu-ns/op and the rate per CPU-second under name.
func reportCPU(b *testing.B, start time.Duration, name string) {
	cpu := cpuTime() - start
	if cpu <= 0 || b.N == 0 {
		return
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(b.N)/cpu.Seconds(), name+"/cpu-s")
}

// benchTable is openTable for a benchmark: without the lock audit, as in
// every benchmark run (auditKeyLocks), so that the numbers are a built
// program's; BLOBSHARE_BENCH_AUDIT=1 turns it on, to measure what it costs.
func benchTable(b *testing.B) *Table {
	tab := openTable(b, "", Options{})
	if os.Getenv("BLOBSHARE_BENCH_AUDIT") == "1" {
		tab.audit = true
	}
	return tab
}

// BenchmarkOpenClose measures open+close pairs on one file (each pair is two
// transactions: OpenHandle in one Update, CloseHandle in another) while
// other handles are open on other files. ns/op is per pair; pairs/s is
// reported too. The cost must not grow with the handles on other files.
func BenchmarkOpenClose(b *testing.B) {
	for _, others := range []int{0, 100, 10000} {
		b.Run(fmt.Sprintf("others=%d", others), func(b *testing.B) {
			tab := benchTable(b)
			ctx := context.Background()
			if err := tab.Update(ctx, func(tx *Tx) error {
				for i := range others {
					if _, err := tx.OpenHandle(OpenRequest{File: FileID(1000 + i), Access: AccessRead | AccessWrite, Share: ShareRead}); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			req := OpenRequest{File: 1, Access: AccessRead | AccessWrite, Share: ShareRead | ShareWrite}
			start := cpuTime()
			for b.Loop() {
				var h Handle
				if err := tab.Update(ctx, func(tx *Tx) error {
					var err error
					h, err = tx.OpenHandle(req)
					return err
				}); err != nil {
					b.Fatal(err)
				}
				if err := tab.Update(ctx, func(tx *Tx) error {
					_, err := tx.CloseHandle(h.ID)
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
			reportCPU(b, start, "pairs")
		})
	}
}

// BenchmarkCheckREST measures one REST-access check (Get File with a range,
// which loads handles and byte-range locks) on a file with a few handles
// and locks, in a View and in an Update.
func BenchmarkCheckREST(b *testing.B) {
	tab := benchTable(b)
	ctx := context.Background()
	if err := tab.Update(ctx, func(tx *Tx) error {
		for i := range 4 {
			h, err := tx.OpenHandle(OpenRequest{File: 1, Access: AccessRead, Share: ShareAll})
			if err != nil {
				return err
			}
			if err := tx.Lock(h.ID, Range{Offset: uint64(i) * 100, Length: 10}, LockShared); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	req := RESTRequest{File: 1, Op: OpGetFile, Range: Range{Offset: 50, Length: 10}}
	for _, mode := range []string{"View", "Update"} {
		b.Run(mode, func(b *testing.B) {
			run := tab.View
			if mode == "Update" {
				run = tab.Update
			}
			start := cpuTime()
			for b.Loop() {
				if err := run(ctx, func(tx *Tx) error { return tx.CheckREST(req) }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
			reportCPU(b, start, "checks")
		})
	}
}

// BenchmarkSQLiteFloor is the yardstick for BenchmarkOpenClose: the same
// database settings, two write transactions per op (insert one row, delete
// it), each a single statement between BEGIN IMMEDIATE and COMMIT, all three
// prepared on one connection — the least any open+close pair that commits
// twice can cost through database/sql. Compare ns/op and cpu-ns/op within
// one run.
func BenchmarkSQLiteFloor(b *testing.B) {
	db := floorTable(b)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	prepare := func(query string) *sql.Stmt {
		st, err := conn.PrepareContext(ctx, query)
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
	begin, commit := prepare(`BEGIN IMMEDIATE`), prepare(`COMMIT`)
	ins, del := prepare(floorInsert), prepare(floorDelete)
	i := 0
	start := cpuTime()
	for b.Loop() {
		i++
		for _, st := range []*sql.Stmt{ins, del} {
			if _, err := begin.ExecContext(ctx); err != nil {
				b.Fatal(err)
			}
			if _, err := st.ExecContext(ctx, i); err != nil {
				b.Fatal(err)
			}
			if _, err := commit.ExecContext(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
	reportCPU(b, start, "pairs")
}

// BenchmarkSQLiteTx is BenchmarkSQLiteFloor through database/sql's own
// transactions (DB.BeginTx, Tx.Stmt, Tx.Commit), which the lock table used
// to run on: the ratio of the two is why Table runs BEGIN and COMMIT itself.
func BenchmarkSQLiteTx(b *testing.B) {
	db := floorTable(b)
	ctx := context.Background()
	ins, err := db.Prepare(floorInsert)
	if err != nil {
		b.Fatal(err)
	}
	del, err := db.Prepare(floorDelete)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	start := cpuTime()
	for b.Loop() {
		i++
		for _, st := range []*sql.Stmt{ins, del} {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tx.Stmt(st).Exec(i); err != nil {
				b.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
	reportCPU(b, start, "pairs")
}

const (
	floorInsert = `INSERT INTO floor(file, id) VALUES(1, ?)`
	floorDelete = `DELETE FROM floor WHERE file = 1 AND id = ?`
)

// floorTable opens a lock table's database (same settings) with a table
// "floor" for the yardstick benchmarks.
func floorTable(b *testing.B) *sql.DB {
	db := openTable(b, "", Options{}).DB()
	if _, err := db.Exec(`CREATE TABLE floor(file INTEGER NOT NULL, id INTEGER NOT NULL, PRIMARY KEY(file, id)) WITHOUT ROWID`); err != nil {
		b.Fatal(err)
	}
	return db
}

// BenchmarkCheckIO measures the byte-range check of one read through a
// handle (what a FUSE or session read asks), in a View, with a few locks
// held by other handles on the file.
func BenchmarkCheckIO(b *testing.B) {
	tab := benchTable(b)
	ctx := context.Background()
	var reader Handle
	if err := tab.Update(ctx, func(tx *Tx) error {
		for i := range 4 {
			h, err := tx.OpenHandle(OpenRequest{File: 1, Access: AccessRead | AccessWrite, Share: ShareAll})
			if err != nil {
				return err
			}
			if err := tx.Lock(h.ID, Range{Offset: uint64(i) * 100, Length: 10}, LockExclusive); err != nil {
				return err
			}
		}
		var err error
		reader, err = tx.OpenHandle(OpenRequest{File: 1, Access: AccessRead, Share: ShareAll})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	r := Range{Offset: 50, Length: 40}
	start := cpuTime()
	for b.Loop() {
		if err := tab.View(ctx, func(tx *Tx) error { return tx.CheckIO(reader.ID, r, false) }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
	reportCPU(b, start, "checks")
}
