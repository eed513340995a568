package procstat

import (
	"os"
	"strings"
	"testing"
)

func TestPeakRSSOfThisProcess(t *testing.T) {
	pid := os.Getpid()
	if err := ResetPeak(pid); err != nil {
		t.Fatal(err)
	}
	before, err := PeakRSS(pid)
	if err != nil || before <= 0 {
		t.Fatalf("PeakRSS: %d, %v", before, err)
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	after, err := PeakRSS(pid)
	if err != nil || after < before+32<<20 {
		t.Fatalf("PeakRSS after touching 64 MiB: %d (before %d), %v", after, before, err)
	}
	_ = buf[len(buf)-1]
	if k := Kinds(pid); !strings.Contains(k, "Anonymous:") {
		t.Errorf("Kinds: %q", k)
	}
	if _, err := PeakRSS(-1); err == nil {
		t.Error("PeakRSS of no process: no error")
	}
}
