package pgdb

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/blobshare/blobshare/internal/pgtest"
)

var pg = pgtest.New()

func TestMain(m *testing.M) { pgtest.Main(m, pg) }

// TestClassifyAndRetry: SQLSTATE 40001 and 40P01 are ErrRetry and are run
// again until they pass; 23505 is ErrUniqueViolation; any other error
// returns at once, unchanged in its chain.
func TestClassifyAndRetry(t *testing.T) {
	ctx := context.Background()
	pool, _, err := Open(ctx, pg.Schema(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	raise := func(code string) error {
		_, err := pool.Exec(ctx, `DO $$ BEGIN RAISE EXCEPTION 'test' USING ERRCODE = '`+code+`'; END $$`)
		return err
	}
	for _, tc := range []struct {
		code   string
		want   error
		failed int // runs that raise before one that passes
		runs   int
	}{
		{"40001", nil, 2, 3},
		{"40P01", nil, 1, 2},
		{"40001", ErrRetry, MaxAttempts, MaxAttempts},
		{"23505", ErrUniqueViolation, 1, 1},
		{"22012", nil, 1, 1}, // division_by_zero: not classified
	} {
		runs := 0
		err := Retry(ctx, func() error {
			runs++
			if runs <= tc.failed {
				return raise(tc.code)
			}
			return nil
		})
		if runs != tc.runs {
			t.Errorf("%s failing %d times: %d runs, want %d", tc.code, tc.failed, runs, tc.runs)
		}
		switch {
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s: %v, want %v", tc.code, err, tc.want)
		case tc.want == nil && tc.code == "22012" && (err == nil || errors.Is(err, ErrRetry) || errors.Is(err, ErrUniqueViolation)):
			t.Errorf("%s: %v, want the driver's error unclassified", tc.code, err)
		case tc.want == nil && tc.code != "22012" && err != nil:
			t.Errorf("%s: %v after retrying, want success", tc.code, err)
		}
	}
}

// TestConcurrentMigrate: six processes' pools migrating one fresh schema
// at once all succeed; each migration ran once (the second would fail on
// the existing table) and the version row says 2. A third step later
// runs alone, and a build that knows fewer steps is refused.
func TestConcurrentMigrate(t *testing.T) {
	ctx := context.Background()
	conn := pg.Schema(t)
	steps := []string{`CREATE TABLE m1 (v bigint)`, `CREATE TABLE m2 (v bigint); INSERT INTO m1 VALUES (1)`}
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			pool, schema, err := Open(ctx, conn, Options{})
			if err != nil {
				errs <- err
				return
			}
			defer pool.Close()
			errs <- Migrate(ctx, pool, schema, "test", steps)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	pool, schema, err := Open(ctx, conn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM m1`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("m1 holds %d rows, %v; the second migration must run once", n, err)
	}
	if v, err := Version(ctx, pool, "test"); err != nil || v != 2 {
		t.Fatalf("version %d, %v", v, err)
	}
	if err := Migrate(ctx, pool, schema, "test", append(steps, `INSERT INTO m1 VALUES (3)`)); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM m1`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("m1 holds %d rows after step 3, %v", n, err)
	}
	if err := Migrate(ctx, pool, schema, "test", steps); !errors.Is(err, ErrIncompatibleSchema) {
		t.Fatalf("a build knowing 2 steps on a schema at 3: %v", err)
	}
}

// TestKey: length-prefixed parts do not collide by concatenation.
func TestKey(t *testing.T) {
	if Key("ab", "c") == Key("a", "bc") || Key("a", "b") != Key("a", "b") {
		t.Fatal("Key is not a function of the parts as a list")
	}
}
