package sdklive

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

// exclusion is one SDK test excluded from the run, with its reason.
type exclusion struct {
	Suite, Package, Test string
	Reason               string
	Line                 int
}

// loadExclusions reads exclusions.txt: blocks of "# reason" lines (the
// reason of every test line below them, up to the next reason), and test
// lines "SUITE PACKAGE TEST" (PACKAGE relative to the module, "." for its
// root; TEST as go test names it, "Test/TestX" for a suite method).
func loadExclusions(path string) (map[string]map[string]exclusion, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]map[string]exclusion{}
	var reason []string
	inReason := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			inReason = false
		case strings.HasPrefix(line, "#"):
			if !inReason {
				reason = nil
				inReason = true
			}
			reason = append(reason, strings.TrimSpace(strings.TrimPrefix(line, "#")))
		default:
			inReason = false
			fields := strings.Fields(line)
			if len(fields) != 3 {
				return nil, fmt.Errorf("%s:%d: want SUITE PACKAGE TEST, got %q", path, n, line)
			}
			if len(reason) == 0 {
				return nil, fmt.Errorf("%s:%d: %s has no reason above it", path, n, line)
			}
			e := exclusion{Suite: fields[0], Package: fields[1], Test: fields[2], Reason: strings.Join(reason, " "), Line: n}
			if out[e.Suite] == nil {
				out[e.Suite] = map[string]exclusion{}
			}
			key := e.Package + " " + e.Test
			if prev, dup := out[e.Suite][key]; dup {
				return nil, fmt.Errorf("%s:%d: %s is already excluded at line %d", path, n, line, prev.Line)
			}
			out[e.Suite][key] = e
		}
	}
	return out, sc.Err()
}

// skipPattern is the go test -skip pattern naming the excluded tests of
// one package: "^A$/^B$|^C$" skips A/B and C, nothing else.
func skipPattern(excluded map[string]exclusion, pkg string) string {
	var alts []string
	for _, e := range excluded {
		if e.Package != pkg {
			continue
		}
		var levels []string
		for _, part := range strings.Split(e.Test, "/") {
			levels = append(levels, "^"+regexp.QuoteMeta(part)+"$")
		}
		alts = append(alts, strings.Join(levels, "/"))
	}
	sort.Strings(alts)
	return strings.Join(alts, "|")
}
