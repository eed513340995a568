package table_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/blobshare/blobshare/table"
)

// skipOrFail skips, or fails under BLOBSHARE_REQUIRE_ALL=1.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("BLOBSHARE_REQUIRE_ALL") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// TestJSTables drives the endpoint with the official JS SDK
// (@azure/data-tables) through testdata/tables.js. When the Table
// service's default port (127.0.0.1:10002) is free the test takes it and
// the script connects with UseDevelopmentStorage=true, as a developer
// would; when something else holds it, the explicit connection string.
func TestJSTables(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFail(t, "node not found: %v", err)
	}
	modules, err := filepath.Abs(filepath.Join("..", "integration", "js", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "@azure", "data-tables", "package.json")); err != nil {
		skipOrFail(t, "@azure/data-tables not installed (make npm): %v", err)
	}
	e := newEnv(t, nil)
	conn := e.ConnStr
	if ln, err := net.Listen("tcp", "127.0.0.1:10002"); err == nil {
		h, err := table.New(table.Config{Service: e.Svc})
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		done := make(chan struct{})
		go func() { defer close(done); srv.Serve(ln) }()
		t.Cleanup(func() { srv.Close(); <-done })
		conn = "UseDevelopmentStorage=true"
		t.Log("serving 127.0.0.1:10002: UseDevelopmentStorage=true")
	} else {
		t.Logf("127.0.0.1:10002 is taken (%v): the explicit connection string", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "tables.js"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "BLOBSHARE_CONN="+conn, "BLOBSHARE_KEY="+table.DevKey)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node tables.js: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
