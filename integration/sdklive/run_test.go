package sdklive

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// suite is one SDK module whose own tests run live.
type suite struct {
	Name    string // azblob, azfile, azqueue, aztables
	Module  string
	Version string
	// Service is the host label the tests address (blob, file, queue,
	// table); the suite needs that endpoint.
	Service string
	// Env are the suite's own variables beyond the common ones.
	Env func(account, key string) []string
	// OptIn: against blobshare the suite runs only when
	// BLOBSHARE_SDKLIVE_SUITES names it (for a suite whose endpoint or
	// exclusions are not ready yet; none is today).
	OptIn bool
}

var suites = []suite{
	{Name: "azblob", Module: "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob", Version: "v1.8.3", Service: "blob"},
	{Name: "azfile", Module: "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile", Version: "v1.7.1", Service: "file"},
	{Name: "azqueue", Module: "github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue", Version: "v1.0.1", Service: "queue"},
	{Name: "aztables", Module: "github.com/Azure/azure-sdk-for-go/sdk/data/aztables", Version: "v1.4.0", Service: "table",
		Env: func(account, key string) []string {
			// The Cosmos DB variables must be set for TestMain to start;
			// the Cosmos tests address ACCOUNT.table.cosmos.azure.com,
			// which the proxy refuses (exclusions.txt).
			return []string{"TABLES_STORAGE_ACCOUNT_NAME=" + account, "TABLES_PRIMARY_STORAGE_ACCOUNT_KEY=" + key,
				"TABLES_COSMOS_ACCOUNT_NAME=" + account, "TABLES_PRIMARY_COSMOS_ACCOUNT_KEY=" + key}
		}},
}

// moduleDir downloads (or finds in the module cache) mod@version and
// returns its directory. It runs outside any module so nothing of
// blobshare's go.mod changes.
func moduleDir(ctx context.Context, mod, version string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", mod+"@"+version)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr == nil && info.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", mod, version, info.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", mod, version, err)
	}
	if info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: no directory in %s", mod, version, out)
	}
	return info.Dir, nil
}

// copyTree copies the module's files to dst (writable: some tests write
// files next to their sources), replacing what was there. dst's path
// stays the same from run to run so Go's build cache keeps the compiled
// test binaries.
func copyTree(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// outcome is one test's result.
type outcome struct {
	Package, Test string
	Action        string // pass, fail, skip
	Elapsed       float64
	Output        []string
}

// testEvent is one line of go test -json.
type testEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// result is a suite run: every leaf test's outcome, and the packages that
// failed without a failing test to blame (a build error, a crash).
type result struct {
	Tests       map[string]*outcome // key: short package + " " + test
	PkgFailures map[string][]string
	Wall        time.Duration
}

func newResult() *result {
	return &result{Tests: map[string]*outcome{}, PkgFailures: map[string][]string{}}
}

// merge adds another package's result.
func (r *result) merge(o *result) {
	for k, v := range o.Tests {
		r.Tests[k] = v
	}
	for k, v := range o.PkgFailures {
		r.PkgFailures[k] = v
	}
}

// shortPkg strips the module path from a package path ("." for the root).
func shortPkg(mod, pkg string) string {
	if pkg == mod {
		return "."
	}
	return strings.TrimPrefix(pkg, mod+"/")
}

// testPackages lists the module's packages that have tests, relative
// ("./blockblob", "." for the root).
func testPackages(ctx context.Context, dir string, env []string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-f", "{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}", "./...")
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %w\n%s", dir, err, stderr.String())
	}
	var pkgs []string
	for _, d := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(dir, d)
		if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, "./"+filepath.ToSlash(rel))
	}
	return pkgs, nil
}

// runPackage runs go test -json on one package of the module copied to
// dir, with env, skipping the tests the pattern names, and collects the
// leaf tests' outcomes. One package per run, because a -skip pattern
// names tests, not packages.
func runPackage(ctx context.Context, s suite, dir, pkg string, env []string, skip string, timeout time.Duration) (*result, error) {
	return runPackageArgs(ctx, s, dir, pkg, env, skip, os.Getenv(runEnv), timeout)
}

// runPackageRun runs the tests of pkg that the -run pattern run names.
func runPackageRun(ctx context.Context, s suite, dir, pkg string, env []string, run string, timeout time.Duration) (*result, error) {
	return runPackageArgs(ctx, s, dir, pkg, env, "", run, timeout)
}

func runPackageArgs(ctx context.Context, s suite, dir, pkg string, env []string, skip, run string, timeout time.Duration) (*result, error) {
	args := []string{"test", "-json", "-count=1", "-timeout", timeout.String()}
	if skip != "" {
		args = append(args, "-skip", skip)
	}
	if run != "" {
		args = append(args, "-run", run)
	}
	args = append(args, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("go test in %s: %w", dir, err)
	}
	res := newResult()
	pkgOut := map[string][]string{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev testEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		pkg := shortPkg(s.Module, ev.Package)
		if ev.Test == "" {
			switch ev.Action {
			case "output":
				pkgOut[pkg] = append(pkgOut[pkg], ev.Output)
			case "fail":
				res.PkgFailures[pkg] = pkgOut[pkg]
			}
			continue
		}
		key := pkg + " " + ev.Test
		o := res.Tests[key]
		if o == nil {
			o = &outcome{Package: pkg, Test: ev.Test}
			res.Tests[key] = o
		}
		switch ev.Action {
		case "output":
			if len(o.Output) < 400 {
				o.Output = append(o.Output, ev.Output)
			}
		case "pass", "fail", "skip":
			o.Action, o.Elapsed = ev.Action, ev.Elapsed
		}
	}
	werr := cmd.Wait()
	res.Wall = time.Since(start)
	// Parents (tests with subtests) are judged by their leaves.
	for key := range res.Tests {
		if i := strings.LastIndexByte(key, '/'); i > 0 {
			if parent, ok := res.Tests[key[:i]]; ok && strings.HasPrefix(key, parent.Package+" ") {
				parent.Action = "parent"
			}
		}
	}
	for key, o := range res.Tests {
		if o.Action == "parent" {
			delete(res.Tests, key)
		}
	}
	// A package that failed because one of its tests failed is not a
	// package failure of its own.
	for key, o := range res.Tests {
		if o.Action == "fail" || o.Action == "" {
			delete(res.PkgFailures, strings.SplitN(key, " ", 2)[0])
		}
	}
	if werr != nil && len(res.Tests) == 0 && len(res.PkgFailures) == 0 {
		return nil, fmt.Errorf("go test %s in %s: %w\n%s", pkg, dir, werr, stderr.String())
	}
	for p := range res.PkgFailures {
		res.PkgFailures[p] = append(res.PkgFailures[p], stderr.String())
	}
	return res, nil
}

// counts summarises a result.
type counts struct{ Total, Passed, Failed, Skipped, NotFinished int }

func (r *result) counts() counts {
	var c counts
	for _, o := range r.Tests {
		c.Total++
		switch o.Action {
		case "pass":
			c.Passed++
		case "fail":
			c.Failed++
		case "skip":
			c.Skipped++
		default:
			c.NotFinished++
		}
	}
	return c
}

// sortedKeys returns the result's test keys in order.
func (r *result) sortedKeys() []string {
	keys := make([]string, 0, len(r.Tests))
	for k := range r.Tests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
