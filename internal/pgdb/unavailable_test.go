package pgdb

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/blobshare/blobshare/meta"
)

// TestClassifyUnavailable: a connection that cannot be made, or one the
// server ends under a statement, is meta.ErrUnavailable; a statement's
// own error and the caller's cancelled context are not.
func TestClassifyUnavailable(t *testing.T) {
	ctx := context.Background()
	_, err := pgx.Connect(ctx, "host=/nonexistent-blobshare-socket-dir port=5432 user=x dbname=x sslmode=disable")
	if !errors.Is(Classify(err), meta.ErrUnavailable) {
		t.Errorf("no server: %v, want ErrUnavailable", Classify(err))
	}

	conn, err := pgx.Connect(ctx, pg.Schema(t)+" application_name=doomed")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	admin, err := pgx.Connect(ctx, pg.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT 1/0`); err == nil || errors.Is(Classify(err), meta.ErrUnavailable) {
		t.Errorf("a statement's own error: %v, want an error other than ErrUnavailable", Classify(err))
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := conn.Exec(cancelled, `SELECT 1`); err == nil || errors.Is(Classify(err), meta.ErrUnavailable) {
		t.Errorf("a cancelled context: %v, want an error other than ErrUnavailable", Classify(err))
	}
	conn2, err := pgx.Connect(ctx, pg.Schema(t)+" application_name=doomed")
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close(ctx)
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'doomed'`); err != nil {
		t.Fatal(err)
	}
	_, err = conn2.Exec(ctx, `SELECT 1`)
	if !errors.Is(Classify(err), meta.ErrUnavailable) {
		t.Errorf("a terminated connection: %v, want ErrUnavailable", Classify(err))
	}
}
