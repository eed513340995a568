package smb_test

import (
	"testing"

	"github.com/blobshare/blobshare/filerest"
)

// TestSmbtortureMultichannel runs the smbtorture tests of session binding
// that need no oplock: bind2 (two sessions, each bound to a third
// connection and to each other's), interface_info (the interface list)
// and num_channels (31 bindings succeed, the 32nd beyond the first channel
// fails with STATUS_INSUFFICIENT_RESOURCES). They are outside the suites
// TestSmbtorture covers.
func TestSmbtortureMultichannel(t *testing.T) {
	t.Parallel() // a run is mostly smbtorture waiting (break timeouts, sleeps): the suites run side by side
	e := newEnv(t)
	e.mustShare("share")
	for suite, tests := range map[string][]string{
		"smb2.session":              {"smb2.session.bind2"},
		"smb2.multichannel.generic": {"smb2.multichannel.generic.interface_info", "smb2.multichannel.generic.num_channels"},
	} {
		results, out := runTorture(t, e.smbAddr, "share", filerest.DevAccount, filerest.DevKey, suite, tests)
		for _, name := range tests {
			if got := results[name]; got != "success" {
				t.Errorf("smbtorture %s: %q\n%s", name, got, testOutput(out, name))
			}
		}
	}
}
