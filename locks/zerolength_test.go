package locks

import "testing"

// TestLockRangesOverlap: lock-against-lock conflicts of zero-length ranges
// follow the arithmetic Samba's smbd answers smbtorture's
// smb2.lock.zerobytelength with (locking.md A15): a zero-length lock at 10
// conflicts with a lock covering bytes on both sides of 10 ({9, 2}, {9, 3})
// and with none that starts or ends there; {0, 0} conflicts with nothing;
// equal non-empty ranges conflict, at the 2^64 edge too.
func TestLockRangesOverlap(t *testing.T) {
	const max = ^uint64(0)
	for _, tc := range []struct {
		a, b Range
		want bool
	}{
		{Range{10, 0}, Range{10, 0}, false},
		{Range{10, 0}, Range{9, 1}, false},
		{Range{10, 0}, Range{10, 1}, false},
		{Range{10, 0}, Range{11, 1}, false},
		{Range{10, 0}, Range{9, 2}, true},
		{Range{10, 0}, Range{10, 2}, false},
		{Range{10, 0}, Range{9, 3}, true},
		{Range{0, 0}, Range{0, 10}, false},
		{Range{0, 0}, Range{0, max}, false},
		{Range{102, 0}, Range{100, 10}, true},
		{Range{100, 10}, Range{105, 1}, true},
		{Range{100, 10}, Range{110, 1}, false},
		{Range{max, 1}, Range{max, 1}, true},
		{Range{1, max}, Range{max, 1}, true},
		{Range{max, 0}, Range{1, max}, true}, // byte max-1 before it, byte max after: inside
	} {
		if got := lockRangesOverlap(tc.a, tc.b); got != tc.want {
			t.Errorf("lockRangesOverlap(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := lockRangesOverlap(tc.b, tc.a); got != tc.want {
			t.Errorf("lockRangesOverlap(%v, %v) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}
