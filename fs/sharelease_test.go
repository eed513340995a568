package fs

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/blobshare/blobshare/lease"
)

// TestStoredLeaseRows: ns_share_state rows written as locks.TimedLease
// (before the machine moved to package lease) read as the lease they
// were, and a lease is written back in that same JSON, byte for byte.
func TestStoredLeaseRows(t *testing.T) {
	const id = "00000000-0000-0000-0000-00000000000a"
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		row  string // as json.Marshal(locks.TimedLease{...}) wrote it
		at   time.Time
		want lease.State
		l    lease.Lease // what it reads as
	}{
		{"finite", `{"ID":"` + id + `","Seconds":30,"Expires":"2030-01-01T00:00:30Z","Breaking":false,"BreakEnd":"0001-01-01T00:00:00Z"}`,
			t0, lease.Leased, lease.Lease{State: lease.Leased, ID: id, Duration: 30, Expires: t0.Add(30 * time.Second)}},
		{"finite, expired", `{"ID":"` + id + `","Seconds":30,"Expires":"2030-01-01T00:00:30Z","Breaking":false,"BreakEnd":"0001-01-01T00:00:00Z"}`,
			t0.Add(time.Minute), lease.Expired, lease.Lease{State: lease.Leased, ID: id, Duration: 30, Expires: t0.Add(30 * time.Second)}},
		{"infinite", `{"ID":"` + id + `","Seconds":-1,"Expires":"0001-01-01T00:00:00Z","Breaking":false,"BreakEnd":"0001-01-01T00:00:00Z"}`,
			t0, lease.Leased, lease.Lease{State: lease.Leased, ID: id, Duration: lease.Infinite}},
		{"breaking", `{"ID":"` + id + `","Seconds":-1,"Expires":"0001-01-01T00:00:00Z","Breaking":true,"BreakEnd":"2030-01-01T00:00:10Z"}`,
			t0, lease.Breaking, lease.Lease{State: lease.Breaking, ID: id, Duration: lease.Infinite, BreakAt: t0.Add(10 * time.Second)}},
		{"broken", `{"ID":"` + id + `","Seconds":-1,"Expires":"0001-01-01T00:00:00Z","Breaking":true,"BreakEnd":"2030-01-01T00:00:10Z"}`,
			t0.Add(10 * time.Second), lease.Broken, lease.Lease{State: lease.Breaking, ID: id, Duration: lease.Infinite, BreakAt: t0.Add(10 * time.Second)}},
	} {
		var s storedLease
		if err := json.Unmarshal([]byte(c.row), &s); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		l := s.lease()
		if l != c.l || l.StateAt(c.at) != c.want {
			t.Errorf("%s: read %+v (%s), want %+v (%s)", c.name, l, l.StateAt(c.at), c.l, c.want)
		}
		b, err := json.Marshal(storeForm(l))
		if err != nil || string(b) != c.row {
			t.Errorf("%s: written back as %s (%v), want %s", c.name, b, err, c.row)
		}
	}
}
