package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// The first test binary on a machine runs initdb (about 2–4 s here) and
// leaves a copy of the fresh, never-started data directory in the
// temporary directory; later binaries copy it (cp -a keeps the owner and
// the 0700 mode postgres insists on), which takes a fraction of that. The
// template is named for the server's version and the user it runs as, and
// appears by an atomic rename of a complete copy, so a binary never sees
// half a template; two binaries racing to make it both succeed, one
// rename wins.

// templateDir is the cached template's path for this server and user.
func templateDir(bindir string, cred *syscall.Credential) (string, error) {
	out, err := exec.Command(filepath.Join(bindir, "postgres"), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("postgres --version: %w", err)
	}
	f := strings.Fields(string(out)) // "postgres (PostgreSQL) 15.18 (Debian …)"
	if len(f) < 3 {
		return "", fmt.Errorf("postgres --version: %q", out)
	}
	uid := os.Geteuid()
	if cred != nil {
		uid = int(cred.Uid)
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("blobshare-pgtest-template-%s-uid%d", f[2], uid)), nil
}

// makeDataDir fills data with a fresh cluster: a copy of the template
// when there is one, else initdb (then cached, best effort). It reports
// whether the template served.
func makeDataDir(bindir, data string, cred *syscall.Credential) (fromTemplate bool, err error) {
	tmpl, tmplErr := templateDir(bindir, cred)
	if tmplErr == nil {
		if _, err := os.Stat(filepath.Join(tmpl, "PG_VERSION")); err == nil {
			if err := exec.Command("cp", "-a", tmpl, data).Run(); err == nil {
				return true, nil
			}
			os.RemoveAll(data) // a failed copy: fall back to initdb
		}
	}
	initdb := exec.Command(filepath.Join(bindir, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
		"--no-sync", "-E", "UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = filepath.Dir(data)
	if out, err := initdb.CombinedOutput(); err != nil {
		return false, fmt.Errorf("initdb %s: %w\n%s", data, err, out)
	}
	if tmplErr == nil {
		saveTemplate(data, tmpl)
	}
	return false, nil
}

// saveTemplate copies data (not yet started) to tmpl through a temporary
// sibling and a rename; any failure leaves no template, nothing else.
func saveTemplate(data, tmpl string) {
	tmp, err := os.MkdirTemp(filepath.Dir(tmpl), filepath.Base(tmpl)+".tmp-")
	if err != nil {
		return
	}
	copyDir := filepath.Join(tmp, "data")
	if exec.Command("cp", "-a", data, copyDir).Run() == nil {
		_ = os.Rename(copyDir, tmpl) // fails harmlessly if another binary won
	}
	os.RemoveAll(tmp)
}
