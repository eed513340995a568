package reliability

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/blobshare/blobshare/integration/servetest"
	_ "modernc.org/sqlite"
)

// blobshareBin is the binary TestMain builds once for every test.
var blobshareBin string

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	bin, err := servetest.Build("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(filepath.Dir(bin))
	blobshareBin = bin
	return m.Run()
}

const (
	devAccount = "devstoreaccount1"
	devKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// requireAll reports whether a missing dependency must fail tests (CI).
func requireAll() bool { return os.Getenv("BLOBSHARE_REQUIRE_ALL") == "1" }

// requireMountable skips (or, under BLOBSHARE_REQUIRE_ALL=1, fails) a test
// that needs root and /dev/fuse (FUSE mounts, tmpfs mounts).
func requireMountable(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err == nil {
		f.Close()
		if os.Geteuid() == 0 {
			return
		}
		err = fmt.Errorf("mounting needs root (euid %d)", os.Geteuid())
	}
	if requireAll() {
		t.Fatalf("FUSE unavailable: %v", err)
	}
	t.Skipf("FUSE unavailable: %v", err)
}

// envInt reads an integer setting from the environment.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// server is a running `blobshare serve`.
type server = servetest.Server

// startServe starts `blobshare serve` on a free port and waits for its
// serving line. Cleanup stops it (SIGTERM, then SIGKILL) and detaches a
// mount it leaves behind.
func startServe(t *testing.T, data string, extra ...string) *server {
	t.Helper()
	s, err := servetest.Start(blobshareBin, data, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

// vmHWM returns the peak resident set size of a process in KiB.
func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// serviceClient is an azfile client authorised by SharedKey through the
// connection string. retries < 0 disables the SDK's retries, so a refused
// request is seen as it is.
func serviceClient(t *testing.T, restURL string, retries int32) *service.Client {
	t.Helper()
	conn := "DefaultEndpointsProtocol=http;AccountName=" + devAccount + ";AccountKey=" + devKey +
		";FileEndpoint=" + restURL + ";"
	opts := &service.ClientOptions{}
	opts.Retry = policy.RetryOptions{MaxRetries: retries, RetryDelay: 50 * time.Millisecond, MaxRetryDelay: 500 * time.Millisecond}
	opts.Transport = &http.Client{Timeout: 60 * time.Second}
	c, err := service.NewClientFromConnectionString(conn, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// openDB opens <data>/blobshare.db read-only, beside a running server.
func openDB(t *testing.T, data string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "blobshare.db")+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// queryInt runs a one-integer query.
func queryInt(ctx context.Context, db *sql.DB, query string, args ...any) (int64, error) {
	var n int64
	if err := db.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %w", query, err)
	}
	return n, nil
}

// integrityCheck runs PRAGMA integrity_check and returns its report ("ok"
// when the database is sound).
func integrityCheck(ctx context.Context, db *sql.DB) (string, error) {
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return "", fmt.Errorf("integrity_check: %w", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", err
		}
		lines = append(lines, s)
	}
	return strings.Join(lines, "; "), rows.Err()
}
