package sdklive

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
	"github.com/blobshare/blobshare/integration/servetest"
	"github.com/blobshare/blobshare/storagehttp"
)

// Variables that steer a run.
const (
	// enableEnv=1 runs the suites (make sdktests sets it): go test ./...
	// skips them.
	enableEnv = "BLOBSHARE_SDKTESTS"
	// targetEnv: "blobshare" (default) or "azurite" (the comparison run:
	// counts only, nothing fails).
	targetEnv = "BLOBSHARE_SDKLIVE_TARGET"
	// suitesEnv: a comma-separated subset of azblob,azfile,azqueue,aztables.
	suitesEnv = "BLOBSHARE_SDKLIVE_SUITES"
	// noExcludeEnv=1 runs the excluded tests too and reports, without
	// failing, which fail (to review exclusions.txt).
	noExcludeEnv = "BLOBSHARE_SDKLIVE_NOEXCLUDE"
	// packagesEnv: a comma-separated subset of a suite's packages
	// ("blockblob", "." for the module's root).
	packagesEnv = "BLOBSHARE_SDKLIVE_PACKAGES"
	// runEnv: a go test -run pattern for each package's run (one test or
	// a few while fixing them).
	runEnv = "BLOBSHARE_SDKLIVE_RUN"
	// serveLogEnv names a file to write blobshare serve's log to at the
	// end (its failed requests with their causes).
	serveLogEnv = "BLOBSHARE_SDKLIVE_SERVELOG"
	// reportEnv names a file to write every test's outcome to, one
	// "SUITE PACKAGE TEST ACTION SECONDS" line each; the output of the
	// failures goes to FILE.SUITE.failures.
	reportEnv = "BLOBSHARE_SDKLIVE_REPORT"
)

// packageTimeout bounds one package's go test; a run of every test
// (noExclude) gets fullTimeout, the large transfers included.
const (
	packageTimeout = 8 * time.Minute
	fullTimeout    = 30 * time.Minute
)

// target is the emulator under test: the address of each service's
// HTTPS endpoint, by host label.
type target struct {
	name     string
	backends map[string]string
}

func TestSDKSuites(t *testing.T) {
	if os.Getenv(enableEnv) != "1" {
		t.Skipf("the SDK suites take minutes: make sdktests runs them (%s=1)", enableEnv)
	}
	if _, err := exec.LookPath("go"); err != nil {
		missing(t, fmt.Errorf("the go command: %w", err))
	}
	excl, err := loadExclusions("exclusions.txt")
	if err != nil {
		t.Fatal(err)
	}
	c, err := makeCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var tg target
	switch v := os.Getenv(targetEnv); v {
	case "", "blobshare":
		tg = startBlobshare(t, c)
	case "azurite":
		tg = startAzurite(t, c)
	default:
		t.Fatalf("%s=%q: blobshare or azurite", targetEnv, v)
	}
	idp, err := startIdentity(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(idp.Close)
	tg.backends[loginHost] = idp.Listener.Addr().String()
	tun, err := startTunnel(tg.backends)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tun.Close()
		if r := tun.Refused(); len(r) > 0 {
			t.Logf("the proxy refused CONNECT to hosts of no service: %s", strings.Join(r, ", "))
		}
	})
	env := childEnv(tun.URL(), c.CA)

	want := map[string]bool{}
	for _, s := range strings.Split(os.Getenv(suitesEnv), ",") {
		if s = strings.TrimSpace(s); s != "" {
			want[s] = true
		}
	}
	var reportMu sync.Mutex
	var report []string
	noExclude := os.Getenv(noExcludeEnv) == "1" || tg.name == "azurite"
	for _, s := range suites {
		if len(want) > 0 && !want[s.Name] {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			if s.OptIn && tg.name == "blobshare" && !want[s.Name] {
				t.Skipf("%s runs against blobshare only when %s names it (see suite.OptIn)", s.Name, suitesEnv)
			}
			lines := runOne(t, s, tg, env, excl[s.Name], noExclude)
			reportMu.Lock()
			report = append(report, lines...)
			reportMu.Unlock()
		})
	}
	if path := os.Getenv(reportEnv); path != "" {
		sort.Strings(report)
		if err := os.WriteFile(path, []byte(strings.Join(report, "\n")+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// runOne runs one suite's packages, two at a time, and judges the
// outcomes against the exclusions; it returns the report lines.
func runOne(t *testing.T, s suite, tg target, env []string, excluded map[string]exclusion, noExclude bool) []string {
	if tg.backends[s.Service] == "" {
		t.Skipf("%s serves no %s endpoint: %s does not run (written down in exclusions.txt)", tg.name, s.Service, s.Name)
	}
	ctx := context.Background()
	src, err := moduleDir(ctx, s.Module, s.Version)
	if err != nil {
		missing(t, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	// The same path every run: Go's build cache then keeps the test
	// binaries, and a run after the first compiles nothing. One per
	// target, so a blobshare run and an Azurite run may go side by side.
	dir := filepath.Join(cache, "blobshare-sdklive", tg.name, s.Name+"@"+s.Version)
	if err := copyTree(src, dir); err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	// The module's dependencies come through the Go proxy first, outside
	// the test environment (whose HTTPS_PROXY is the tunnel); the tests
	// then build offline.
	dl := exec.CommandContext(ctx, "go", "mod", "download")
	dl.Dir = dir
	if out, err := dl.CombinedOutput(); err != nil {
		missing(t, fmt.Errorf("go mod download in %s: %w\n%s", dir, err, out))
	}
	suiteEnv := env
	if s.Env != nil {
		suiteEnv = append(append([]string(nil), env...), s.Env(storagehttp.DevAccount, storagehttp.DevKey)...)
	}
	pkgs, err := testPackages(ctx, dir, suiteEnv)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	all := newResult()
	var mu sync.Mutex
	var runErr []error
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	onlyPkgs := map[string]bool{}
	for _, p := range strings.Split(os.Getenv(packagesEnv), ",") {
		if p = strings.TrimSpace(p); p != "" {
			onlyPkgs[p] = true
		}
	}
	timeout := packageTimeout
	if noExclude {
		timeout = fullTimeout
	}
	// The tests of the soft-delete account run last, alone
	// (softdelete_test.go): the others skip them.
	softTests := map[string][]string{}
	if s.Service == "blob" {
		if softTests, err = softDeleteTests(dir, pkgs); err != nil {
			t.Fatal(err)
		}
	}
	softAsExcluded := map[string]exclusion{}
	for pkg, names := range softTests {
		for _, n := range names {
			softAsExcluded[pkg+" "+n] = exclusion{Package: pkg, Test: n}
		}
	}
	for _, pkg := range pkgs {
		short := strings.TrimPrefix(strings.TrimPrefix(pkg, "./"), ".")
		if short == "" {
			short = "."
		}
		if len(onlyPkgs) > 0 && !onlyPkgs[short] {
			continue
		}
		skips := []string{skipPattern(softAsExcluded, short)}
		if !noExclude {
			skips = append(skips, skipPattern(excluded, short))
		}
		skip := joinPatterns(skips...)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res, err := runPackage(ctx, s, dir, pkg, suiteEnv, skip, timeout)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				runErr = append(runErr, err)
				return
			}
			all.merge(res)
		}()
	}
	wg.Wait()
	if err := runSoftDeletePhase(ctx, t, s, dir, pkgs, onlyPkgs, softTests, excluded, noExclude, tg.name == "azurite", suiteEnv, timeout, all); err != nil {
		runErr = append(runErr, err)
	}
	for _, err := range runErr {
		t.Error(err)
	}
	wall := time.Since(start)

	var lines, failed, selfSkipped, stale, details []string
	for _, key := range all.sortedKeys() {
		o := all.Tests[key]
		action := o.Action
		if action == "" {
			action = "unfinished"
		}
		lines = append(lines, fmt.Sprintf("%s %s %s %s %.2f", s.Name, o.Package, o.Test, action, o.Elapsed))
		if action != "pass" && action != "skip" {
			details = append(details, fmt.Sprintf("=== %s %s %s\n%s", s.Name, key, action, lastLines(o.Output, 30)))
		}
		e, isExcluded := excluded[key]
		switch {
		case isExcluded && action == "pass" && !strings.HasPrefix(e.Reason, "Time budget"):
			stale = append(stale, fmt.Sprintf("%s (exclusions.txt:%d)", key, e.Line))
		case isExcluded:
		case action == "skip":
			selfSkipped = append(selfSkipped, key+": "+lastLines(o.Output, 2))
		case action != "pass":
			failed = append(failed, key)
			if !noExclude {
				t.Errorf("%s %s %s:\n%s", s.Name, key, action, lastLines(o.Output, 40))
			}
		}
	}
	for pkg, out := range all.PkgFailures {
		t.Errorf("%s package %s failed outside any test:\n%s", s.Name, pkg, lastLines(out, 40))
	}
	cnt := all.counts()
	nExcl := 0
	for _, e := range excluded {
		if len(onlyPkgs) > 0 && !onlyPkgs[e.Package] {
			continue
		}
		if _, ran := all.Tests[e.Package+" "+e.Test]; !ran {
			nExcl++
		}
	}
	t.Logf("%s %s against %s: %d run, %d passed, %d failed, %d skipped by the test itself, %d excluded (not run); %s",
		s.Name, s.Version, tg.name, cnt.Total, cnt.Passed, cnt.Failed+cnt.NotFinished, cnt.Skipped, nExcl, wall.Round(time.Second))
	if noExclude {
		t.Logf("%d not excluded and failing:\n  %s", len(failed), strings.Join(failed, "\n  "))
	}
	if len(stale) > 0 {
		t.Logf("excluded but passing (drop from exclusions.txt):\n  %s", strings.Join(stale, "\n  "))
	}
	if len(selfSkipped) > 0 {
		msg := fmt.Sprintf("skipped by the tests themselves (not excluded):\n  %s", strings.Join(selfSkipped, "\n  "))
		if os.Getenv(azuritetest.RequireAllEnv) == "1" && !noExclude {
			t.Errorf("%s=1: %s", azuritetest.RequireAllEnv, msg)
		} else {
			t.Log(msg)
		}
	}
	if path := os.Getenv(reportEnv); path != "" && len(details) > 0 {
		if err := os.WriteFile(path+"."+s.Name+".failures", []byte(strings.Join(details, "\n")+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
	return lines
}

func lastLines(out []string, n int) string {
	s := strings.TrimRight(strings.Join(out, ""), "\n")
	ls := strings.Split(s, "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// missing skips, or fails under BLOBSHARE_REQUIRE_ALL=1.
func missing(t *testing.T, err error) {
	t.Helper()
	if os.Getenv(azuritetest.RequireAllEnv) == "1" {
		t.Fatalf("%v (%s=1)", err, azuritetest.RequireAllEnv)
	}
	t.Skip(err)
}

// childEnv is the SDK test processes' environment: live mode, the
// development account, the proxy and the CA; nothing of a real Azure
// setup or a CI system leaks in (on GitHub Actions the recording package
// would otherwise start its test proxy even with PROXY_MANUAL_START).
func childEnv(proxyURL, caFile string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "GITHUB_ACTIONS", name == "TF_BUILD", name == "SSL_CERT_FILE", name == "SSL_CERT_DIR",
			strings.EqualFold(name, "HTTPS_PROXY"), strings.EqualFold(name, "HTTP_PROXY"), strings.EqualFold(name, "NO_PROXY"),
			strings.HasPrefix(name, "AZURE_"), strings.HasPrefix(name, "TABLES_"), strings.Contains(name, "STORAGE_ACCOUNT"):
			continue
		}
		env = append(env, kv)
	}
	return append(append(env,
		"AZURE_RECORD_MODE=live",
		"PROXY_MANUAL_START=true",
		"AZURE_STORAGE_ACCOUNT_NAME="+storagehttp.DevAccount,
		"AZURE_STORAGE_ACCOUNT_KEY="+storagehttp.DevKey,
		// Soft delete is a setting of any account (Set Blob Service
		// Properties), so the soft-delete "account" is the same one; its
		// tests run in a phase with the setting on (softdelete_test.go).
		"SOFT_DELETE_AZURE_STORAGE_ACCOUNT_NAME="+storagehttp.DevAccount,
		"SOFT_DELETE_AZURE_STORAGE_ACCOUNT_KEY="+storagehttp.DevKey,
		"GOPROXY=off",
		"HTTPS_PROXY="+proxyURL,
		"HTTP_PROXY="+proxyURL, // plain http:// URLs reach the endpoints too (forwardPlain)
		"SSL_CERT_FILE="+caFile,
	), identityEnv()...)
}

// startBlobshare builds and starts blobshare serve over TLS with
// --oauth basic.
func startBlobshare(t *testing.T, c certs) target {
	bin, err := servetest.Build("../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(bin)) })
	// Share and container soft delete on, as on the SDK's test accounts
	// (Azure sets them on the account; the restore tests need them).
	s, err := servetest.Start(bin, t.TempDir(), "--smb", "off", "--tls-cert", c.Cert, "--tls-key", c.Key, "--oauth", "basic",
		"--share-retention-days", "1", "--container-retention-days", "1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("blobshare serve: %v\n%s", err, s.Stderr)
		}
		if f := os.Getenv(serveLogEnv); f != "" {
			if err := os.WriteFile(f, []byte(s.Stderr.String()), 0o644); err != nil {
				t.Error(err)
			}
		}
	})
	hostOf := func(u string) string {
		p, err := url.Parse(u)
		if err != nil || u == "off" || u == "" {
			return ""
		}
		return p.Host
	}
	// The Table endpoint, when this blobshare has one, is read from the
	// serving line itself.
	table := ""
	if m := regexp.MustCompile(` table=(https://\S+)`).FindStringSubmatch(s.Stderr.String()); m != nil {
		table = hostOf(m[1])
	}
	return target{name: "blobshare", backends: map[string]string{
		"blob": hostOf(s.BlobURL), "queue": hostOf(s.QueueURL), "file": s.Addr, "table": table,
	}}
}

// startAzurite starts Azurite (blob, queue, table) over TLS with --oauth
// basic, lenient as it can be (--loose, --skipApiVersionCheck). Azurite
// has no Files service.
func startAzurite(t *testing.T, c certs) target {
	root, err := azuritetest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "integration", "js", "node_modules", ".bin", "azurite")
	if _, err := os.Stat(bin); err != nil {
		missing(t, fmt.Errorf("azurite not installed (make npm): %w", err))
	}
	ports := make([]int, 3)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	dir := t.TempDir()
	cmd := exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(ports[0]),
		"--queueHost", "127.0.0.1", "--queuePort", strconv.Itoa(ports[1]),
		"--tableHost", "127.0.0.1", "--tablePort", strconv.Itoa(ports[2]),
		"--location", dir, "--cert", c.Cert, "--key", c.Key, "--oauth", "basic",
		"--skipApiVersionCheck", "--loose", "--silent", "--disableTelemetry")
	out := &servetest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for _, p := range ports {
		for {
			conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err == nil {
				conn.Close()
				break
			}
			select {
			case <-exited:
				t.Fatalf("azurite exited:\n%s", out)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("azurite did not listen on %d in 60s:\n%s", p, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return target{name: "azurite", backends: map[string]string{
		"blob":  "127.0.0.1:" + strconv.Itoa(ports[0]),
		"queue": "127.0.0.1:" + strconv.Itoa(ports[1]),
		"table": "127.0.0.1:" + strconv.Itoa(ports[2]),
	}}
}
