package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
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

// TestREADMECommandsListEveryFlag: the README's commands table names every
// visible flag of every command, as its --help does.
func TestREADMECommandsListEveryFlag(t *testing.T) {
	sec := readmeSection(t, "Commands")
	for _, cmd := range newApp().Commands {
		var row string
		for _, line := range strings.Split(sec, "\n") {
			if strings.HasPrefix(line, "| `blobshare "+cmd.Name) {
				row, _, _ = strings.Cut(line[len("| "):], " | ") // the command column
			}
		}
		if row == "" {
			t.Errorf("the README's commands table has no row for %s", cmd.Name)
			continue
		}
		azurite := false
		for _, f := range cmd.Flags {
			if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
				continue
			}
			// Azurite's flag names are listed in docs/cli.md; the row
			// points there instead of naming a score of aliases.
			if c, ok := f.(cli.CategorizableFlag); ok && c.GetCategory() == azuriteCategory {
				azurite = true
				continue
			}
			name := f.Names()[0]
			if !regexp.MustCompile(`--` + regexp.QuoteMeta(name) + `\b[^-]`).MatchString(row + " ") {
				t.Errorf("the README's row for %s lacks --%s (blobshare %s --help lists it)", cmd.Name, name, cmd.Name)
			}
		}
		if azurite && !strings.Contains(row, "Azurite's flags") {
			t.Errorf("the README's row for %s does not say it takes Azurite's flags (docs/cli.md)", cmd.Name)
		}
	}
}

// TestDocsNameRestoreShareOnce: share soft delete's restore is one
// operation under Azure's name, Restore Share; "Undelete Share" is not
// used as a second name for it.
func TestDocsNameRestoreShareOnce(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, "../../README.md") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "Undelete Share") {
			t.Errorf("%s calls Restore Share \"Undelete Share\"", f)
		}
	}
}
