package pgtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequireAllEnv names the variable that turns a missing PostgreSQL into a
// test failure instead of a skip.
const RequireAllEnv = "BLOBSHARE_REQUIRE_ALL"

// ErrNotInstalled: no PostgreSQL server binaries were found.
var ErrNotInstalled = errors.New("postgresql server not installed")

// port is the server's port number: with no TCP listener it only names
// the socket file (.s.PGSQL.5432) in the private socket directory.
const port = 5432

// Cluster is one test binary's throwaway PostgreSQL, started on first use.
type Cluster struct {
	once sync.Once
	err  error // from starting; every later Schema reports it

	dir      string // temporary directory: data/ and the socket
	bindir   string
	cmd      *exec.Cmd      // the watchdog shell running postgres
	lifeline io.WriteCloser // its stdin: closing it stops the server
	exited   chan struct{}
	stopped  atomic.Bool
	admin    *pgx.Conn
	adminMu  sync.Mutex
	n        atomic.Int64 // schemas handed out

	// lookIn, when set, replaces BinDir's search (tests of a missing
	// server).
	lookIn []string

	// restartable: the server runs under restartWatchdog (Private), so
	// Halt and Resume can stop and start it on the same data directory.
	restartable bool
	cred        *syscall.Credential
	logBuf      syncBuffer

	// StartTime is how long making the data directory and starting the
	// server took (zero before); Template says the data directory was
	// copied from the cached template rather than made by initdb.
	StartTime time.Duration
	Template  bool
}

// watchdog runs postgres ("$@" after the directory, $1) in the
// background and stops it with SIGQUIT when its stdin (the lifeline, kept
// on fd 3: an asynchronous list's stdin is /dev/null) reaches EOF; then
// it removes the directory.
const watchdog = `dir=$1; shift
exec 3<&0
"$@" </dev/null 3<&- &
pid=$!
( read -r _ <&3; kill -QUIT "$pid" ) >/dev/null 2>&1 &
watcher=$!
exec 3<&-
wait "$pid"; status=$?
kill "$watcher" 2>/dev/null
rm -rf "$dir"
exit $status`

// New returns a cluster that starts on the first Schema call.
func New() *Cluster { return &Cluster{} }

// Main runs the tests, stops c and exits with their code: call it from
// TestMain.
func Main(m *testing.M, c *Cluster) {
	code := m.Run()
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// Schema returns a connection string (libpq key=value form) for a new,
// empty schema on the cluster, set as the connections' search_path, and
// drops the schema with everything in it when t ends. It starts the
// cluster on first use; without PostgreSQL it skips t (fails under
// BLOBSHARE_REQUIRE_ALL=1).
func (c *Cluster) Schema(t testing.TB) string {
	t.Helper()
	c.once.Do(func() { c.err = c.start() })
	if c.err != nil {
		if errors.Is(c.err, ErrNotInstalled) {
			if os.Getenv(RequireAllEnv) == "1" {
				t.Fatalf("pgtest: %v (%s=1; run `make debs`)", c.err, RequireAllEnv)
			}
			t.Skipf("pgtest: %v (run `make debs`)", c.err)
		}
		t.Fatalf("pgtest: %v", c.err)
	}
	name := fmt.Sprintf("t_%d", c.n.Add(1))
	if err := c.exec(context.Background(), "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("pgtest: create schema %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := c.exec(context.Background(), "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", name, err)
		}
	})
	return c.ConnString() + " search_path=" + name
}

// ConnString is the cluster's connection string with no search_path (the
// superuser postgres, database postgres, over the Unix socket).
func (c *Cluster) ConnString() string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres sslmode=disable", c.dir, port)
}

func (c *Cluster) exec(ctx context.Context, sql string) error {
	c.adminMu.Lock()
	defer c.adminMu.Unlock()
	if c.admin == nil {
		return errors.New("the server is halted")
	}
	_, err := c.admin.Exec(ctx, sql)
	return err
}

// BinDir finds the PostgreSQL server binaries: pg_config --bindir, else
// the newest /usr/lib/postgresql/<version>/bin holding initdb.
func BinDir() (string, error) {
	var dirs []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(found, func(i, j int) bool { // newest major version first
		return versionOf(found[i]) > versionOf(found[j])
	})
	return firstBinDir(append(dirs, found...))
}

// firstBinDir is the first of dirs holding initdb and postgres.
func firstBinDir(dirs []string) (string, error) {
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
				return d, nil
			}
		}
	}
	return "", fmt.Errorf("no initdb and postgres in %v: %w", dirs, ErrNotInstalled)
}

func versionOf(bindir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(bindir)))
	return v
}

// runAs is the user the cluster runs as: the current one, or as root
// postgres (else nobody), since initdb refuses root.
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, errors.New("running as root and neither a postgres nor a nobody user exists for initdb")
}

func (c *Cluster) start() error {
	began := time.Now()
	bindir, err := BinDir()
	if c.lookIn != nil {
		bindir, err = firstBinDir(c.lookIn)
	}
	if err != nil {
		return err
	}
	c.bindir = bindir
	cred, err := runAs()
	if err != nil {
		return err
	}
	c.cred = cred
	// A short path: the socket's path must stay under 108 bytes.
	base := os.TempDir()
	if len(base) > 60 {
		base = "/tmp"
	}
	if c.dir, err = os.MkdirTemp(base, "pgtest-"); err != nil {
		return err
	}
	if cred != nil {
		if err := os.Chown(c.dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	data := filepath.Join(c.dir, "data")
	if c.Template, err = makeDataDir(bindir, data, cred); err != nil {
		c.removeDir()
		return err
	}
	logBuf := &c.logBuf
	// The server runs under a watchdog shell that holds the read end of a
	// pipe from this process: when the test binary exits in any way (a
	// panic, a -timeout, SIGKILL) the pipe closes, and the watchdog shuts
	// the server down and removes the directory. Stop closes the pipe too.
	script, syncCommit := watchdog, "off"
	if c.restartable {
		// A commit is acknowledged once its WAL is written (to the page
		// cache: fsync stays off), so an immediate stop loses no
		// acknowledged commit, as on a real server.
		script, syncCommit = restartWatchdog, "on"
	}
	c.cmd = exec.Command("/bin/sh", "-c", script, "pgtest-watchdog", c.dir,
		filepath.Join(bindir, "postgres"), "-D", data, "-k", c.dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit="+syncCommit,
		"-c", "full_page_writes=off", "-c", "max_connections=200", "-c", "shared_buffers=32MB")
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	c.cmd.Stdout, c.cmd.Stderr = logBuf, logBuf
	c.cmd.Dir = c.dir
	if c.lifeline, err = c.cmd.StdinPipe(); err != nil {
		c.removeDir()
		return fmt.Errorf("start postgres: %w", err)
	}
	if err := c.cmd.Start(); err != nil {
		c.removeDir()
		return fmt.Errorf("start postgres: %w", err)
	}
	c.exited = make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(c.exited) }()
	if err := c.connectAdmin(); err != nil {
		return err
	}
	c.StartTime = time.Since(began)
	return nil
}

// connectAdmin waits for the server to accept connections (postgres
// creates the socket when ready for them, but may still answer "starting
// up" briefly) and opens the admin connection.
func (c *Cluster) connectAdmin() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, c.ConnString())
		if err == nil {
			c.adminMu.Lock()
			c.admin = conn
			c.adminMu.Unlock()
			return nil
		}
		select {
		case <-c.exited:
			c.removeDir()
			return fmt.Errorf("postgres exited at start: %s", c.logBuf.String())
		case <-ctx.Done():
			_ = c.Stop()
			return fmt.Errorf("postgres did not accept connections within 60 s: %w", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop shuts the cluster down, if it was started, and removes its
// directory. Safe to call more than once.
func (c *Cluster) Stop() error {
	if c.cmd == nil || c.stopped.Swap(true) {
		return nil
	}
	if c.admin != nil {
		_ = c.admin.Close(context.Background())
	}
	// The watchdog sends SIGQUIT (an immediate shutdown of the postmaster
	// and its children) when its lifeline closes.
	_ = c.lifeline.Close()
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.exited
	}
	return c.removeDir()
}

func (c *Cluster) removeDir() error {
	if c.dir == "" {
		return nil
	}
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("remove %s: %w", c.dir, err)
	}
	return nil
}
