package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/blobshare/blobshare/internal/pgdb"
	"github.com/blobshare/blobshare/tablesvc"
)

func strProp(name, v string) tablesvc.Property {
	return tablesvc.Property{Name: name, Value: tablesvc.Value{Type: tablesvc.String, Str: v}}
}

// TestBatchesInRandomOrder: workers on three stores (three gateways) run
// batches that set the same 12 rows of one partition, each batch in its
// own random row order and with its own value. Key order differs from
// batch to batch, so transactions meet keys below ones they hold (the
// try-lock and relock path); every batch must commit, none may deadlock,
// and after each round all rows carry one batch's value.
func TestBatchesInRandomOrder(t *testing.T) {
	ctx := context.Background()
	conn := pg.Schema(t)
	stores := []*Store{open(t, conn), open(t, conn), open(t, conn)}
	svcs := make([]*tablesvc.Service, len(stores))
	for i, s := range stores {
		svcs[i] = tablesvc.New(s, nil)
	}
	if _, err := svcs[0].CreateTable(ctx, "batches"); err != nil {
		t.Fatal(err)
	}
	const rows, workers, batches = 12, 6, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for b := range batches {
				ops := make([]tablesvc.Op, rows)
				for i, r := range rng.Perm(rows) {
					e := tablesvc.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%02d", r),
						Props: []tablesvc.Property{strProp("v", fmt.Sprintf("w%d-b%d", w, b))}}
					ops[i] = tablesvc.Op{Kind: tablesvc.InsertOrReplace, Entity: e}
				}
				if _, err := svcs[w%len(svcs)].Batch(ctx, "batches", ops); err != nil {
					errs <- fmt.Errorf("worker %d batch %d: %w", w, b, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var first string
	for r := range rows {
		e, err := svcs[1].Get(ctx, "batches", "p", fmt.Sprintf("r%02d", r))
		if err != nil {
			t.Fatal(err)
		}
		v, _ := e.Prop("v")
		if r == 0 {
			first = v.Str
		} else if v.Str != first {
			t.Fatalf("row r%02d holds %s, row r00 %s: a batch was interleaved", r, v.Str, first)
		}
	}
	var relocks int64
	for _, s := range stores {
		relocks += s.relocks.Load()
	}
	t.Logf("%d batches of %d rows; %d reruns to take keys in order", workers*batches, rows, relocks)
}

// TestDeleteTableRacingWrites: inserts race a Delete Table; once it has
// returned, no entity of the table is left behind (a write that saw the
// table either committed before the delete's entity sweep or found no
// table), so the table created again under the name starts empty.
func TestDeleteTableRacingWrites(t *testing.T) {
	ctx := context.Background()
	conn := pg.Schema(t)
	sa := open(t, conn)
	a, b := tablesvc.New(sa, nil), tablesvc.New(open(t, conn), nil)
	for round := range 5 {
		if _, err := a.CreateTable(ctx, "racing"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		started := make(chan struct{}, 4)
		stop := make(chan struct{})
		for w := range 4 {
			wg.Go(func() {
				for i := 0; ; i++ {
					e := tablesvc.Entity{PartitionKey: fmt.Sprint("w", w), RowKey: fmt.Sprint(i)}
					_, err := b.Apply(ctx, "racing", tablesvc.Op{Kind: tablesvc.Insert, Entity: e})
					if i == 0 {
						started <- struct{}{}
					}
					if errors.Is(err, tablesvc.ErrTableNotFound) {
						select {
						case <-stop:
							return
						default:
						}
					}
					if err != nil && !errors.Is(err, tablesvc.ErrTableNotFound) {
						t.Errorf("insert: %v", err)
						return
					}
				}
			})
		}
		for range 4 {
			<-started
		}
		if err := a.DeleteTable(ctx, "racing"); err != nil {
			t.Fatal(err)
		}
		close(stop)
		wg.Wait()
		if _, err := a.CreateTable(ctx, "racing"); err != nil {
			t.Fatal(err)
		}
		n := 0
		err := sa.Scan(ctx, "racing", tablesvc.KeyRange{}, func(tablesvc.Entity) bool { n++; return true })
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("round %d: the table created again holds %d entities of the deleted one", round, n)
		}
		if err := a.DeleteTable(ctx, "racing"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMigrations: a fresh schema is at version len(migrations); opening
// again runs nothing; a schema recorded newer than this build is refused
// with ErrIncompatibleSchema.
func TestMigrations(t *testing.T) {
	ctx := context.Background()
	conn := pg.Schema(t)
	s := open(t, conn)
	v, err := pgdb.Version(ctx, s.pool, Part)
	if err != nil || v != int64(len(migrations)) {
		t.Fatalf("version %d, %v; want %d", v, err, len(migrations))
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO tb_tables(name_lower, name) VALUES('kept', 'Kept')`); err != nil {
		t.Fatal(err)
	}
	open(t, conn) // runs no migration: the row survives
	if _, err := s.Table(ctx, "kept"); err != nil {
		t.Fatalf("after reopening: %v", err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE meta_schema SET version = version + 1 WHERE part = $1`, Part); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, conn, Options{}); !errors.Is(err, pgdb.ErrIncompatibleSchema) {
		t.Fatalf("open on a newer schema: %v, want ErrIncompatibleSchema", err)
	}
}

// TestColumnTypes: 64-bit columns are bigint and keys sort bytewise.
func TestColumnTypes(t *testing.T) {
	ctx := context.Background()
	s := open(t, pg.Schema(t))
	rows, err := s.pool.Query(ctx, `SELECT table_name || '.' || column_name, data_type, coalesce(collation_name, '')
		FROM information_schema.columns WHERE table_schema = current_schema() AND table_name LIKE 'tb\_%'`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([3]string, error) {
		var c [3]string
		return c, r.Scan(&c[0], &c[1], &c[2])
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{"tb_entities.ts": {"bigint", ""}, "tb_entities.pk": {"text", "C"}, "tb_entities.rk": {"text", "C"},
		"tb_entities.tbl": {"text", "C"}, "tb_tables.name_lower": {"text", "C"}, "tb_entities.props": {"bytea", ""}}
	seen := 0
	for _, c := range got {
		if w, ok := want[c[0]]; ok {
			seen++
			if c[1] != w[0] || c[2] != w[1] {
				t.Errorf("%s is %s collate %q, want %s collate %q", c[0], c[1], c[2], w[0], w[1])
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("found %d of %d columns in %v", seen, len(want), got)
	}
}
