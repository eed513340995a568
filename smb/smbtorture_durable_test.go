package smb_test

import "testing"

// durableSuites are the smbtorture suites of durable handles and replay
// (issue 30).
var durableSuites = []string{"smb2.durable-open", "smb2.durable-v2-open", "smb2.replay"}

// smbdWithDurable configures smbd as the oracle of the durable suites, as
// Samba's selftest runs them on its [durable] share: leases, durable
// handles, and no kernel state that cannot outlive a connection (kernel
// oplocks, kernel share modes, POSIX locks).
var smbdWithDurable = append(append([]string(nil), smbdWithLeases...),
	"durable handles = yes", "kernel share modes = no", "posix locking = no")

// TestSmbtortureDurable runs every test of
// testdata/smbtorture-durable-pass.txt — the tests of durable-open,
// durable-v2-open and replay that smbd (smbdWithDurable) passes here and
// blobshare passes too — against blobshare. The knobs of
// TestSmbtortureCaching apply with the prefix BLOBSHARE_TORTURE_DURABLE
// (_SURVEY=1 rebuilds the list, _RUN="suite.test ..." runs a few).
func TestSmbtortureDurable(t *testing.T) {
	t.Parallel() // a run is mostly smbtorture waiting (break timeouts, sleeps): the suites run side by side
	tortureKept(t, durableSuites, "smbtorture-durable-pass.txt", "BLOBSHARE_TORTURE_DURABLE", smbdWithDurable)
}
