package layering

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/blobshare/blobshare/"

// drivers are the database drivers.
var drivers = []string{"modernc.org/sqlite", "github.com/jackc/pgx/v5"}

// stores may import a driver: they are where SQL lives (and the command
// that wires them, and the test helpers that start databases).
var stores = []string{
	"blobsvc/sqlstore", "blobsvc/pgstore", "msgqueue/sqlstore", "msgqueue/pgstore", "tablesvc/sqlstore", "tablesvc/pgstore",
	"meta/sqlmeta", "internal/pgdb", "internal/pgtest", "cmd/blobshare",
	"locks", // the lock table's statements, on the engine's transactions (meta/sqlmeta); they move to store files with the namespace's
}

// reachDriverToday are the packages that reach the SQLite driver through
// locks because the namespace and the lock table's SQL is not behind the
// metadata engine yet: fs runs its statements on locks' connection, and
// the front ends, ntstatus and locks' conformance suite (locks/lockstest)
// import fs or locks for their types. The list may only shrink: a package
// that stops reaching a driver must leave it (the test says so).
var reachDriverToday = []string{"fs", "fs/fusefs", "filerest", "smb", "ntstatus", "locks/lockstest"}

// TestNoDriverOutsideStores: no front end (FileREST, Blob, Queue, Table,
// SMB, the mount) and no semantics package (blobsvc, msgqueue, tablesvc,
// storagehttp, …) imports a database driver, directly or through another
// package, except the ones listed above.
func TestNoDriverOutsideStores(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg, deps := strings.TrimPrefix(fields[0], module), fields[1:]
		if strings.HasPrefix(pkg, "integration") || strings.HasPrefix(pkg, "bench") {
			continue // test programs
		}
		var reached []string
		for _, d := range drivers {
			if slices.Contains(deps, d) {
				reached = append(reached, d)
			}
		}
		switch {
		case slices.Contains(stores, pkg):
		case slices.Contains(reachDriverToday, pkg):
			if len(reached) == 0 {
				t.Errorf("%s no longer reaches a database driver: take it off reachDriverToday", pkg)
			}
		case len(reached) > 0:
			t.Errorf("%s imports %v: only stores may reach a database driver (put the SQL in a store behind a small interface)", pkg, reached)
		}
	}
}

// noHTTP are the semantics packages (architecture.md: "net/http is
// imported by none of meta, locks, lease, vfs, files, blobsvc, msgqueue,
// tablesvc"), as they are named today.
var noHTTP = []string{"lease", "acl", "locks", "fs", "blobsvc", "msgqueue", "tablesvc"}

// TestNoHTTPInSemantics: the rules packages reach no net/http, directly
// or through another package; HTTP statuses and documents belong to the
// front ends and storagehttp.
func TestNoHTTPInSemantics(t *testing.T) {
	args := []string{"list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`}
	for _, p := range noHTTP {
		args = append(args, module+p)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		seen++
		if slices.Contains(fields[1:], "net/http") {
			t.Errorf("%s reaches net/http", strings.TrimPrefix(fields[0], module))
		}
	}
	if seen != len(noHTTP) {
		t.Fatalf("go list answered %d packages of %d", seen, len(noHTTP))
	}
}

// engine is the one package that imports the SQLite driver (tests aside):
// the metadata engine opens, pragmas, classifies and migrates every
// SQLite file.
const engine = "meta/sqlmeta"

// sqlToday are the packages outside the engine that still import
// database/sql directly, because their statements run on the engine's
// connections (locks, fs) or pools (the stores) from their own files. The
// list shrinks as statements move to store files that take an engine
// transaction (meta/sqlmeta/doc.go, "The cut"): a package that stops
// importing database/sql must leave it (the test says so), and none may
// join it.
var sqlToday = []string{"locks", "fs", "blobsvc/sqlstore", "msgqueue/sqlstore", "tablesvc/sqlstore"}

// TestSQLiteOnlyInEngine: modernc.org/sqlite (and its lib) is imported by
// meta/sqlmeta alone, outside tests; database/sql by the engine and the
// packages of sqlToday alone.
func TestSQLiteOnlyInEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	usingSQL := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg, imports := strings.TrimPrefix(fields[0], module), fields[1:]
		if strings.HasPrefix(pkg, "integration") || strings.HasPrefix(pkg, "bench") {
			continue // test programs
		}
		for _, imp := range imports {
			if (imp == "modernc.org/sqlite" || strings.HasPrefix(imp, "modernc.org/sqlite/")) && pkg != engine {
				t.Errorf("%s imports %s: only %s opens SQLite (use its Conn, Store or Classify)", pkg, imp, engine)
			}
			if imp == "database/sql" && pkg != engine {
				usingSQL[pkg] = true
				if !slices.Contains(sqlToday, pkg) {
					t.Errorf("%s imports database/sql: run statements through %s's transactions or a store, or say why in sqlToday", pkg, engine)
				}
			}
		}
	}
	for _, p := range sqlToday {
		if !usingSQL[p] {
			t.Errorf("%s no longer imports database/sql: take it off sqlToday", p)
		}
	}
}
