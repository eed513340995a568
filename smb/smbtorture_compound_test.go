package smb_test

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/filerest"
)

// TestSmbtortureCompound runs the smbtorture tests of compound requests in
// testdata/smbtorture-compound-pass.txt (smb2.compound, smb2.compound_async,
// smb2.compound_find: those smbd passes here and blobshare too, the list
// says which others and why) against blobshare with oplocks and leases on,
// as serve runs it: chains whose CREATE waits for a break
// (compound-break), interim responses inside chains (interim1, interim2),
// related file ids carried by any request (flush_close), chains that
// inherit no session (invalid1, invalid2).
func TestSmbtortureCompound(t *testing.T) {
	t.Parallel() // a run is mostly smbtorture waiting (break timeouts, sleeps): the suites run side by side
	if _, err := exec.LookPath("smbtorture"); err != nil {
		requireTool(t, "smbtorture (Debian samba-testsuite)", err)
	}
	pass := readTestList(t, "smbtorture-compound-pass.txt")
	bySuite := map[string][]string{}
	for name := range pass {
		suite := name[:strings.LastIndex(name, ".")]
		bySuite[suite] = append(bySuite[suite], name)
	}
	e := newEnv(t)
	e.mustShare("share")
	for _, suite := range slices.Sorted(maps.Keys(bySuite)) {
		tests := slices.Sorted(slices.Values(bySuite[suite]))
		results, out := runTorture(t, e.smbAddr, "share", filerest.DevAccount, filerest.DevKey, suite, tests)
		for _, name := range tests {
			t.Run(name, func(t *testing.T) {
				if got := results[name]; got != "success" {
					t.Errorf("smbtorture %s: %q\n%s", name, got, testOutput(out, name))
				}
			})
		}
	}
}
