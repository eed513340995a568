package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// readmeSection is the text of the README's section headed "## name", up
// to the next "## ".
func readmeSection(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n## "+name+"\n")
	if !ok {
		t.Fatalf("the README has no section %q", name)
	}
	sec, _, _ := strings.Cut(rest, "\n## ")
	return sec
}

// TestREADMEListsDebianPackages: every Debian package make test installs
// (DEB_PKGS in the Makefile) is named in the README's Tests section.
func TestREADMEListsDebianPackages(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^DEB_PKGS\s*:?=(.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("no DEB_PKGS in the Makefile")
	}
	pkgs := strings.Fields(string(m[1]))
	if len(pkgs) == 0 {
		t.Fatal("DEB_PKGS is empty")
	}
	tests := readmeSection(t, "Tests")
	for _, p := range pkgs {
		if !strings.Contains(tests, "`"+p+"`") {
			t.Errorf("the README's Tests section does not name the Debian package `%s` that make test installs", p)
		}
	}
}
