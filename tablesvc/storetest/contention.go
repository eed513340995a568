package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blobshare/blobshare/tablesvc"
)

const (
	workers          = 16
	updatesPerWorker = 15
)

// increment reads the counter entity and writes it back +1 with If-Match,
// retrying on ErrConditionNotMet; it returns how many 412s it met.
func increment(ctx context.Context, svc *tablesvc.Service, table string) (conflicts int, err error) {
	for {
		cur, err := svc.Get(ctx, table, "p", "counter")
		if err != nil {
			return conflicts, err
		}
		v, _ := cur.Prop("N")
		next := ent("p", "counter")
		next.Props = []tablesvc.Property{intProp("N", v.Int+1)}
		_, err = svc.Apply(ctx, table, tablesvc.Op{Kind: tablesvc.Update, Entity: next, IfMatch: cur.ETag()})
		if errors.Is(err, tablesvc.ErrConditionNotMet) {
			conflicts++
			continue
		}
		return conflicts, err
	}
}

// contention: 16 workers (alternating between two services, which may
// share one store or sit on two stores of one database) do read-modify-
// write with If-Match on one counter; the final count equals the number
// of successful updates.
func contention(t *testing.T, a, b *tablesvc.Service) {
	ctx := context.Background()
	if _, err := a.CreateTable(ctx, "counter"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Apply(ctx, "counter", tablesvc.Op{Kind: tablesvc.Insert, Entity: tablesvc.Entity{PartitionKey: "p", RowKey: "counter", Props: []tablesvc.Property{intProp("N", 0)}}}); err != nil {
		t.Fatal(err)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	var successes, conflicts atomic.Int64
	errs := make(chan error, workers)
	for w := range workers {
		svc := a
		if w%2 == 1 {
			svc = b
		}
		wg.Go(func() {
			<-start
			for range updatesPerWorker {
				c, err := increment(ctx, svc, "counter")
				conflicts.Add(int64(c))
				if err != nil {
					errs <- err
					return
				}
				successes.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := b.Get(ctx, "counter", "p", "counter")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := got.Prop("N")
	if n.Int != successes.Load() || n.Int != workers*updatesPerWorker {
		t.Fatalf("counter %d after %d successful updates (want %d)", n.Int, successes.Load(), workers*updatesPerWorker)
	}
	t.Logf("%d updates, %d conflicts (412) retried", successes.Load(), conflicts.Load())
}

// oneWinner: many writers holding the same ETag race one Update each
// through two services; exactly one wins per round, the rest get 412.
func oneWinner(t *testing.T, a, b *tablesvc.Service) {
	ctx := context.Background()
	if _, err := a.CreateTable(ctx, "race"); err != nil {
		t.Fatal(err)
	}
	cur, err := a.Apply(ctx, "race", tablesvc.Op{Kind: tablesvc.Insert, Entity: ent("p", "r", "W", "none")})
	if err != nil {
		t.Fatal(err)
	}
	for round := range 10 {
		start := make(chan struct{})
		var wg sync.WaitGroup
		var wins, losses atomic.Int64
		var winner atomic.Value
		for w := range workers {
			svc := a
			if w%2 == 1 {
				svc = b
			}
			wg.Go(func() {
				<-start
				me := fmt.Sprint("w", w)
				got, err := svc.Apply(ctx, "race", tablesvc.Op{Kind: tablesvc.Update, Entity: ent("p", "r", "W", me), IfMatch: cur.ETag()})
				switch {
				case err == nil:
					wins.Add(1)
					winner.Store(got)
				case errors.Is(err, tablesvc.ErrConditionNotMet):
					losses.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 || losses.Load() != workers-1 {
			t.Fatalf("round %d: %d winners, %d 412s", round, wins.Load(), losses.Load())
		}
		w := winner.Load().(tablesvc.Entity)
		stored, err := b.Get(ctx, "race", "p", "r")
		if err != nil || stored.ETag() != w.ETag() || stored.Props[0].Value.Str != w.Props[0].Value.Str {
			t.Fatalf("round %d: stored %+v, winner %+v (%v)", round, stored, w, err)
		}
		cur = stored
	}
}

// testBatchRacingWrites: batches that set five rows to one value and bump
// a counter with If-Match race single If-Match increments and readers;
// every read sees the five rows equal, and the counter equals the number
// of successful increments (batches and singles).
func testBatchRacingWrites(e *env) {
	t, ctx, svc := e.t, e.ctx, e.svc
	e.mustCreate("mixed")
	var ops []tablesvc.Op
	for i := range 5 {
		ops = append(ops, tablesvc.Op{Kind: tablesvc.Insert, Entity: ent("p", fmt.Sprint("row", i), "V", "init")})
	}
	ops = append(ops, tablesvc.Op{Kind: tablesvc.Insert, Entity: tablesvc.Entity{PartitionKey: "p", RowKey: "counter", Props: []tablesvc.Property{intProp("N", 0)}}})
	if _, err := svc.Batch(ctx, "mixed", ops); err != nil {
		t.Fatal(err)
	}
	start, stop := make(chan struct{}), make(chan struct{})
	var writers, readers sync.WaitGroup
	var successes atomic.Int64
	for w := range 8 {
		writers.Go(func() {
			<-start
			for i := range 5 {
				if w%2 == 0 {
					if _, err := increment(ctx, svc, "mixed"); err != nil {
						t.Error(err)
						return
					}
					successes.Add(1)
					continue
				}
				for { // the batch: five rows and the counter, all or nothing
					cur, err := svc.Get(ctx, "mixed", "p", "counter")
					if err != nil {
						t.Error(err)
						return
					}
					n, _ := cur.Prop("N")
					val := fmt.Sprint("w", w, "-", i)
					var b []tablesvc.Op
					for r := range 5 {
						b = append(b, tablesvc.Op{Kind: tablesvc.InsertOrReplace, Entity: ent("p", fmt.Sprint("row", r), "V", val)})
					}
					c := ent("p", "counter")
					c.Props = []tablesvc.Property{intProp("N", n.Int+1)}
					b = append(b, tablesvc.Op{Kind: tablesvc.Merge, Entity: c, IfMatch: cur.ETag()})
					_, err = svc.Batch(ctx, "mixed", b)
					if errors.Is(err, tablesvc.ErrConditionNotMet) {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					successes.Add(1)
					break
				}
			}
		})
	}
	for range 1 {
		readers.Go(func() {
			<-start
			for { // at least one read, then until the writers are done
				p, err := svc.Query(ctx, "mixed", tablesvc.Query{Filter: "RowKey ge 'row'"})
				if err != nil {
					t.Error(err)
					return
				}
				if len(p.Entities) != 5 {
					t.Errorf("a reader saw %d rows, want 5", len(p.Entities))
					return
				}
				for _, en := range p.Entities {
					if en.Props[0].Value.Str != p.Entities[0].Props[0].Value.Str {
						t.Errorf("a reader saw a half-applied batch: %+v", p.Entities)
						return
					}
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		})
	}
	close(start)
	writers.Wait()
	close(stop)
	readers.Wait()
	got, err := svc.Get(ctx, "mixed", "p", "counter")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := got.Prop("N"); n.Int != successes.Load() || n.Int != 40 {
		t.Fatalf("counter %d after %d successful increments (want 40)", n.Int, successes.Load())
	}
}
