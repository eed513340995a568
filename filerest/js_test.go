package filerest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/blobshare/blobshare/filerest"
)

// requireAll reports whether missing dependencies must fail the test.
func requireAll() bool { return os.Getenv("BLOBSHARE_REQUIRE_ALL") == "1" }

// skipOrFail skips, or fails under BLOBSHARE_REQUIRE_ALL=1.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if requireAll() {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// TestJSSmoke drives the endpoint with the official JS SDK
// (@azure/storage-file-share from integration/js/node_modules).
func TestJSSmoke(t *testing.T) { runJSScript(t, "smoke.js") }

// TestJSShareFeatures runs testdata/sharefeatures.js: share lease, stored
// access policies with a service SAS, permissions, snapshots, statistics
// and quota, parallel transfers, rename, copy and handles through the JS
// SDK.
func TestJSShareFeatures(t *testing.T) { runJSScript(t, "sharefeatures.js") }

// runJSScript runs testdata/script with node against a fresh server, the
// connection string in BLOBSHARE_CONN; the script fails by exiting non-zero.
func runJSScript(t *testing.T, script string) {
	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFail(t, "node not found: %v", err)
	}
	modules, err := filepath.Abs(filepath.Join("..", "integration", "js", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "@azure", "storage-file-share", "package.json")); err != nil {
		skipOrFail(t, "@azure/storage-file-share not installed (make npm): %v", err)
	}
	e := newEnv(t)
	conn := "DefaultEndpointsProtocol=http;AccountName=" + filerest.DevAccount + ";AccountKey=" + filerest.DevKey +
		";FileEndpoint=" + e.srv.URL + "/" + filerest.DevAccount + ";"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", script))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "BLOBSHARE_CONN="+conn)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, out)
	}
	t.Logf("%s", out)
}
