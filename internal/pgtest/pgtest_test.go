package pgtest_test

import (
	"context"
	"sync"
	"testing"

	"github.com/blobshare/blobshare/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

var pg = pgtest.New()

func TestMain(m *testing.M) { pgtest.Main(m, pg) }

// TestSchemasAreSeparate: two tests' schemas are distinct and empty, the
// connection string selects its own, and the server listens on no TCP
// port.
func TestSchemasAreSeparate(t *testing.T) {
	ctx := context.Background()
	var names []string
	for range 2 {
		conn, err := pgx.Connect(ctx, pg.Schema(t))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var schema string
		if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			t.Fatal(err)
		}
		names = append(names, schema)
		if _, err := conn.Exec(ctx, `CREATE TABLE x(v bigint)`); err != nil {
			t.Fatalf("create table in %s: %v", schema, err)
		}
		var listen string
		if err := conn.QueryRow(ctx, `SHOW listen_addresses`).Scan(&listen); err != nil || listen != "" {
			t.Fatalf("listen_addresses = %q, %v; want empty (Unix socket only)", listen, err)
		}
	}
	if names[0] == names[1] || names[0] == "" {
		t.Fatalf("schemas %q", names)
	}
	t.Logf("cluster started in %v (data directory from the cached template: %v)", pg.StartTime, pg.Template)
}

// TestSchemaDroppedAtCleanup: a subtest's schema is gone after it ends.
func TestSchemaDroppedAtCleanup(t *testing.T) {
	ctx := context.Background()
	var name string
	t.Run("inner", func(t *testing.T) {
		conn, err := pgx.Connect(ctx, pg.Schema(t))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	conn, err := pgx.Connect(ctx, pg.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, name).Scan(&n); err != nil || n != 0 {
		t.Fatalf("schema %q after its test: %d rows, %v", name, n, err)
	}
}

// TestConcurrentSchemas: parallel tests each get their own schema.
func TestConcurrentSchemas(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	for i := range 4 {
		t.Run("p", func(t *testing.T) {
			t.Parallel()
			s := pg.Schema(t)
			mu.Lock()
			defer mu.Unlock()
			if seen[s] {
				t.Errorf("schema handed out twice: %s (%d)", s, i)
			}
			seen[s] = true
		})
	}
}
