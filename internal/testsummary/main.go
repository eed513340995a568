package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errFailed) {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
		}
		os.Exit(1)
	}
}

// errFailed says the run failed; what failed was printed already.
var errFailed = errors.New("tests failed")

func run(args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("testsummary", flag.ContinueOnError)
	fl.SetOutput(stderr)
	state := fl.String("state", "", "file that accumulates the counts of several runs")
	printOnly := fl.Bool("print", false, "print the accumulated counts of -state as the closing line and exit")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *state == "" {
		return errors.New("-state FILE is required")
	}
	if *printOnly {
		c, err := readCounts(*state)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, c.line())
		return nil
	}
	cmdArgs := fl.Args()
	if len(cmdArgs) == 0 {
		return errors.New("no command to run (testsummary -state FILE -- go test -json ./...)")
	}
	cmd := exec.Command(cmdArgs[0], cmdArgs[1:]...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", strings.Join(cmdArgs, " "), err)
	}
	sum := newSummarizer(stdout)
	readErr := sum.read(out)
	waitErr := cmd.Wait()
	c := sum.counts
	if (waitErr != nil || readErr != nil) && c.Failed == 0 {
		// The command failed and no test or package said so: count the
		// run itself, so the closing line cannot read "0 failed".
		fmt.Fprintf(stdout, "FAIL\t%s: %v\n", strings.Join(cmdArgs, " "), errors.Join(waitErr, readErr))
		c.Failed++
	}
	total, err := readCounts(*state)
	if err != nil {
		return err
	}
	total.add(c)
	if err := writeCounts(*state, total); err != nil {
		return err
	}
	if c.Failed > 0 || waitErr != nil || readErr != nil {
		return errFailed
	}
	return nil
}

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string // build-output and build-fail events
}

// pkgRun is what the summarizer keeps of one package until it ends.
type pkgRun struct {
	output     []string            // package-level output (no test)
	tests      map[string][]string // output of each test (subtests under their own names)
	order      []string            // tests in the order they started
	passed     map[string]bool     // tests (and subtests) that passed or were skipped
	failedTest bool                // a test of this package failed
}

type summarizer struct {
	w      io.Writer
	pkgs   map[string]*pkgRun
	counts counts
}

func newSummarizer(w io.Writer) *summarizer {
	return &summarizer{w: w, pkgs: map[string]*pkgRun{}}
}

func (s *summarizer) pkg(name string) *pkgRun {
	p := s.pkgs[name]
	if p == nil {
		p = &pkgRun{tests: map[string][]string{}, passed: map[string]bool{}}
		s.pkgs[name] = p
	}
	return p
}

// read consumes the event stream. A line that is not JSON (output that
// reached stdout outside test2json) is printed as it is.
func (s *summarizer) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(s.w, "%s\n", line)
			continue
		}
		s.handle(e)
	}
	return sc.Err()
}

func (s *summarizer) handle(e event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.w, e.Output)
		return
	case "build-fail":
		return // its package's fail event follows
	}
	p := s.pkg(e.Package)
	if e.Test == "" {
		s.handlePackage(e, p)
		return
	}
	switch e.Action {
	case "run":
		p.order = append(p.order, e.Test)
	case "output":
		p.tests[e.Test] = append(p.tests[e.Test], e.Output)
	case "pass", "fail", "skip":
		top := !strings.Contains(e.Test, "/")
		if e.Action != "fail" {
			p.passed[e.Test] = true
		}
		if e.Action == "fail" {
			p.failedTest = true
			// A failed test is shown whole, as go test shows it: its
			// subtests' output is printed under it in the order they ran.
			if top {
				s.printTest(p, e.Test)
			}
		}
		if !top {
			return
		}
		switch e.Action {
		case "pass":
			s.counts.Passed++
		case "fail":
			s.counts.Failed++
		case "skip":
			s.counts.Skipped++
		}
	}
}

// printTest prints the output of test and of its subtests that failed,
// without test2json's "=== RUN" framing: what go test prints without -v.
func (s *summarizer) printTest(p *pkgRun, test string) {
	for _, name := range p.order {
		if name != test && (!strings.HasPrefix(name, test+"/") || p.passed[name]) {
			continue
		}
		for _, o := range p.tests[name] {
			if !strings.HasPrefix(o, "=== ") {
				fmt.Fprint(s.w, o)
			}
		}
	}
}

// handlePackage handles an event of the package itself: its output, and
// its end, where go test prints an "ok" line or, on failure, the
// package's own output (a panic, TestMain's words, "FAIL pkg").
func (s *summarizer) handlePackage(e event, p *pkgRun) {
	switch e.Action {
	case "output":
		p.output = append(p.output, e.Output)
	case "pass":
		fmt.Fprintf(s.w, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
		delete(s.pkgs, e.Package)
	case "skip":
		fmt.Fprintf(s.w, "?   \t%s\t[no test files]\n", e.Package)
		delete(s.pkgs, e.Package)
	case "fail":
		for _, o := range p.output {
			if o == "PASS\n" || strings.HasPrefix(o, "=== ") {
				continue
			}
			fmt.Fprint(s.w, o)
		}
		if !p.failedTest {
			// Failed with no failing test: a build error, a panic
			// outside a test, a timeout. Count the package.
			s.counts.Failed++
		}
		delete(s.pkgs, e.Package)
	}
}

// counts are the test functions that passed, failed and were skipped.
type counts struct {
	Passed, Failed, Skipped int
}

func (c *counts) add(o counts) {
	c.Passed += o.Passed
	c.Failed += o.Failed
	c.Skipped += o.Skipped
}

// line is the closing line of make test.
func (c counts) line() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", c.Passed, c.Failed, c.Skipped)
}

// readCounts reads the state file; a missing one is all zeros.
func readCounts(path string) (counts, error) {
	var c counts
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("state %s: %w", path, err)
	}
	return c, nil
}

func writeCounts(path string, c counts) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("state %s: %w", path, err)
	}
	return nil
}
