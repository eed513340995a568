package sdklive

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/blobshare/blobshare/storagehttp"
)

// The azblob tests that ask for testcommon.TestAccountSoftDelete expect
// an account whose blob soft delete is on (Azure's SDK team keeps one so
// configured: its Delete Blob soft-deletes, Undelete Blob restores, and
// deletetype=permanent removes a soft-deleted snapshot). Soft delete is a
// setting of any account (Set Blob Service Properties), so the harness
// runs those tests in a phase of their own, after all the others and one
// package at a time, with the development account's
// DeleteRetentionPolicy enabled (1 day, AllowPermanentDelete) and turns it
// off again after: the other tests see the account as Azure's default
// test account is, soft delete off.

// softDeleteMarker is what a test body names to use that account.
const softDeleteMarker = "testcommon.TestAccountSoftDelete"

// suiteMethod matches a testify suite method declaration: its test runs
// as Test/NAME (each package's suites run under func Test).
var suiteMethod = regexp.MustCompile(`^func \([a-z]+ \*[A-Za-z]+Suite\) (Test[A-Za-z0-9_]+)\(\)`)

// softDeleteTests returns, per package (short name), the go test names
// of the suite tests whose body names the soft-delete account.
func softDeleteTests(dir string, pkgs []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, pkg := range pkgs {
		short := strings.TrimPrefix(strings.TrimPrefix(pkg, "./"), ".")
		if short == "" {
			short = "."
		}
		files, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(short), "*_test.go"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			names, err := softDeleteTestsIn(f)
			if err != nil {
				return nil, err
			}
			out[short] = append(out[short], names...)
		}
		sort.Strings(out[short])
	}
	return out, nil
}

// softDeleteTestsIn scans one file: a method's body runs to the next
// top-level func.
func softDeleteTestsIn(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	cur, marked := "", false
	flush := func() {
		if cur != "" && marked {
			out = append(out, "Test/"+cur)
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "func ") {
			flush()
			cur, marked = "", false
			if m := suiteMethod.FindStringSubmatch(line); m != nil {
				cur = m[1]
			}
			continue
		}
		if strings.Contains(line, softDeleteMarker) {
			marked = true
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// runPattern is the go test -run pattern naming exactly tests
// ("Test/NAME" each).
func runPattern(tests []string) string {
	var alts []string
	for _, t := range tests {
		_, name, _ := strings.Cut(t, "/")
		alts = append(alts, regexp.QuoteMeta(name))
	}
	return "^Test$/^(" + strings.Join(alts, "|") + ")$"
}

// matchesRun reports whether go test -run pattern would run test (levels
// split at "/", each an unanchored regexp; levels past the pattern's
// match anything). An empty pattern matches all.
func matchesRun(pattern, test string) bool {
	if pattern == "" {
		return true
	}
	pl, tl := strings.Split(pattern, "/"), strings.Split(test, "/")
	for i, p := range pl {
		if i >= len(tl) {
			return true
		}
		re, err := regexp.Compile(p)
		if err != nil || !re.MatchString(tl[i]) {
			return false
		}
	}
	return true
}

// setSoftDelete turns the account's blob soft delete on (1 day,
// AllowPermanentDelete) or off, reaching the endpoint as the SDK tests
// do: through the tunnel in env's HTTPS_PROXY, trusting env's
// SSL_CERT_FILE.
func setSoftDelete(ctx context.Context, env []string, on bool) error {
	var proxy, caFile string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HTTPS_PROXY="); ok {
			proxy = v
		}
		if v, ok := strings.CutPrefix(kv, "SSL_CERT_FILE="); ok {
			caFile = v
		}
	}
	pu, err := url.Parse(proxy)
	if err != nil || proxy == "" {
		return fmt.Errorf("soft delete account: no proxy in the test environment (%q)", proxy)
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("soft delete account: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	hc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: pool}}}
	cred, err := service.NewSharedKeyCredential(storagehttp.DevAccount, storagehttp.DevKey)
	if err != nil {
		return err
	}
	endpoint := "https://" + storagehttp.DevAccount + ".blob.core.windows.net/"
	c, err := service.NewClientWithSharedKeyCredential(endpoint, cred, &service.ClientOptions{ClientOptions: policy.ClientOptions{Transport: hc}})
	if err != nil {
		return err
	}
	p := &service.RetentionPolicy{Enabled: to.Ptr(false)}
	if on {
		p = &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(1)), AllowPermanentDelete: to.Ptr(true)}
	}
	if _, err := c.SetProperties(ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: p}); err != nil {
		return fmt.Errorf("soft delete account: set DeleteRetentionPolicy enabled=%v: %w", on, err)
	}
	return nil
}

// joinPatterns joins -skip patterns (empty ones dropped).
func joinPatterns(ps ...string) string {
	var out []string
	for _, p := range ps {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "|")
}

// runSoftDeletePhase runs the soft-delete account's tests (softTests, by
// package; those excluded too only with noExclude), one package at a time
// with the account's soft delete on, merging the outcomes into all. With
// countOnly (the Azurite comparison run) an emulator that refuses the
// setting is logged and the tests run all the same, to be counted.
func runSoftDeletePhase(ctx context.Context, t *testing.T, s suite, dir string, pkgs []string, onlyPkgs map[string]bool,
	softTests map[string][]string, excluded map[string]exclusion, noExclude, countOnly bool, env []string, timeout time.Duration, all *result) error {
	run := os.Getenv(runEnv)
	todo := map[string][]string{}
	for pkg, names := range softTests {
		if len(onlyPkgs) > 0 && !onlyPkgs[pkg] {
			continue
		}
		for _, n := range names {
			if _, ex := excluded[pkg+" "+n]; (ex && !noExclude) || !matchesRun(run, n) {
				continue
			}
			todo[pkg] = append(todo[pkg], n)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if err := setSoftDelete(ctx, env, true); err != nil {
		if !countOnly {
			return err
		}
		t.Logf("the soft-delete account's tests run without soft delete on: %v", err)
	}
	defer func() {
		if err := setSoftDelete(ctx, env, false); err != nil && !countOnly {
			t.Error(err)
		}
	}()
	for _, pkg := range pkgs {
		short := strings.TrimPrefix(strings.TrimPrefix(pkg, "./"), ".")
		if short == "" {
			short = "."
		}
		if len(todo[short]) == 0 {
			continue
		}
		res, err := runPackageRun(ctx, s, dir, pkg, env, runPattern(todo[short]), timeout)
		if err != nil {
			return err
		}
		all.merge(res)
	}
	return nil
}

// TestSoftDeleteTestsFound: the scan names the suite methods whose body
// asks for the soft-delete account, and only them; runPattern runs
// exactly those; matchesRun follows go test -run's levels.
func TestSoftDeleteTestsFound(t *testing.T) {
	dir := t.TempDir()
	src := `package x_test

func (s *BlobRecordedTestsSuite) TestPlain() {
	svcClient, err := testcommon.GetServiceClient(s.T(), testcommon.TestAccountDefault, nil)
}

func (s *BlobRecordedTestsSuite) TestSoft() {
	svcClient, err := testcommon.GetServiceClient(s.T(), testcommon.TestAccountSoftDelete, nil)
}

func helper() {
	_ = testcommon.TestAccountSoftDelete
}

func (s *BlobUnrecordedTestsSuite) TestSoftToo() {
	x := 1
	svcClient, err := testcommon.GetServiceClient(s.T(), testcommon.TestAccountSoftDelete, nil)
}
`
	if err := os.MkdirAll(filepath.Join(dir, "blob"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "blob", "client_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := softDeleteTests(dir, []string{"./blob"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Test/TestSoft", "Test/TestSoftToo"}; strings.Join(got["blob"], ",") != strings.Join(want, ",") {
		t.Errorf("found %v, want %v", got["blob"], want)
	}
	re := regexp.MustCompile(strings.Split(runPattern(got["blob"]), "/")[1])
	for name, want := range map[string]bool{"TestSoft": true, "TestSoftToo": true, "TestPlain": false, "TestSoftTooMuch": false} {
		if re.MatchString(name) != want {
			t.Errorf("runPattern matches %s: %v, want %v", name, !want, want)
		}
	}
	for _, c := range []struct {
		pattern, test string
		want          bool
	}{
		{"", "Test/TestSoft", true},
		{"/TestSoft", "Test/TestSoft", true},
		{"/TestPlain", "Test/TestSoft", false},
		{"Other", "Test/TestSoft", false},
		{"Test", "Test/TestSoft", true},
	} {
		if got := matchesRun(c.pattern, c.test); got != c.want {
			t.Errorf("matchesRun(%q, %q) = %v, want %v", c.pattern, c.test, got, c.want)
		}
	}
}
