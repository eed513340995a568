package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/blobshare/blobshare/tablesvc"
)

func entity(pk, rk string, n int64) tablesvc.Entity {
	return tablesvc.Entity{PartitionKey: pk, RowKey: rk,
		Props: []tablesvc.Property{{Name: "N", Value: tablesvc.Value{Type: tablesvc.Int32, Int: n}}}}
}

// TestGroupCommitAnswersEachWrite queues nine requests while the lead is
// held, so that one group takes them all, and checks that each is
// answered with its own outcome and that exactly the successful writes
// are applied: a stale If-Match, an insert of an existing entity (alone
// and in a batch), a batch refused at its third operation (its first two
// undone with it) and a write whose caller gave up do not disturb the
// writes around them; the point reads among them see what was committed
// when they were queued.
func TestGroupCommitAnswersEachWrite(t *testing.T) {
	ctx := context.Background()
	st := open(t, filepath.Join(t.TempDir(), FileName))
	svc := tablesvc.New(st, nil)
	if _, err := svc.CreateTable(ctx, "grp"); err != nil {
		t.Fatal(err)
	}
	a, err := svc.Apply(ctx, "grp", tablesvc.Op{Kind: tablesvc.Insert, Entity: entity("p", "a", 1)})
	if err != nil {
		t.Fatal(err)
	}

	queued := make(chan int, 16)
	st.queuedHook = func(n int) { queued <- n }
	st.lead <- struct{}{} // hold the lead: every write below queues

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	writes := []struct {
		name string
		run  func() error
		want error // nil, or the sentinel errors.Is must find
	}{
		{"merge with the current ETag", func() error {
			_, err := svc.Apply(ctx, "grp", tablesvc.Op{Kind: tablesvc.Merge, Entity: entity("p", "a", 2), IfMatch: a.ETag()})
			return err
		}, nil},
		{"merge with the same, now stale, ETag", func() error {
			_, err := svc.Apply(ctx, "grp", tablesvc.Op{Kind: tablesvc.Merge, Entity: entity("p", "a", 3), IfMatch: a.ETag()})
			return err
		}, tablesvc.ErrConditionNotMet},
		{"batch refused at its third operation", func() error {
			_, err := svc.Batch(ctx, "grp", []tablesvc.Op{
				{Kind: tablesvc.Insert, Entity: entity("p", "b", 1)},
				{Kind: tablesvc.Insert, Entity: entity("p", "c", 1)},
				{Kind: tablesvc.Insert, Entity: entity("p", "a", 1)},
			})
			return err
		}, tablesvc.ErrEntityExists},
		{"insert of the existing entity", func() error {
			_, err := svc.Apply(ctx, "grp", tablesvc.Op{Kind: tablesvc.Insert, Entity: entity("p", "a", 9)})
			return err
		}, tablesvc.ErrEntityExists},
		{"point read, answered before the group's writes", func() error {
			e, err := st.Get(ctx, "grp", "p", "a")
			if v, _ := e.Prop("N"); err == nil && v.Int != 1 {
				return fmt.Errorf("the point read saw N=%d, want 1 (only what was committed when it was queued)", v.Int)
			}
			return err
		}, nil},
		{"point read of a missing entity", func() error {
			_, err := st.Get(ctx, "grp", "p", "zz")
			return err
		}, tablesvc.ErrEntityNotFound},
		{"insert of a new entity", func() error {
			_, err := svc.Apply(ctx, "grp", tablesvc.Op{Kind: tablesvc.Insert, Entity: entity("p", "d", 1)})
			return err
		}, nil},
		{"insert whose caller gave up", func() error {
			_, err := svc.Apply(cancelled, "grp", tablesvc.Op{Kind: tablesvc.Insert, Entity: entity("p", "e", 1)})
			return err
		}, context.Canceled},
		{"insert into a missing table", func() error {
			_, err := svc.Apply(ctx, "nosuch", tablesvc.Op{Kind: tablesvc.Insert, Entity: entity("p", "f", 1)})
			return err
		}, tablesvc.ErrTableNotFound},
	}
	errs := make([]chan error, len(writes))
	for i, w := range writes {
		errs[i] = make(chan error, 1)
		go func() { errs[i] <- w.run() }()
		if n := <-queued; n != i+1 { // in order: the group runs them in this order
			t.Fatalf("queue holds %d writes after %q, want %d", n, w.name, i+1)
		}
	}
	var groups []int
	st.queuedHook = nil
	st.groupHook = func(n int) { groups = append(groups, n) } // under the lead
	<-st.lead                                                 // let the first waiter lead: it takes all nine in one group
	for i, w := range writes {
		err := <-errs[i]
		if w.want == nil && err != nil || w.want != nil && !errors.Is(err, w.want) {
			t.Errorf("%s: %v, want %v", w.name, err, w.want)
		}
	}
	if len(groups) != 1 || groups[0] != len(writes) {
		t.Errorf("groups committed: %v, want one of %d", groups, len(writes))
	}

	got, err := st.Get(ctx, "grp", "p", "a")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := got.Prop("N"); v.Int != 2 {
		t.Errorf("entity a has N=%d after the group, want 2 (the first merge only)", v.Int)
	}
	for rk, want := range map[string]bool{"b": false, "c": false, "d": true, "e": false} {
		_, err := st.Get(ctx, "grp", "p", rk)
		if exists := err == nil; exists != want {
			t.Errorf("entity %s exists=%v after the group (err %v), want %v", rk, exists, err, want)
		}
	}
}
