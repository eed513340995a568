// Package procstat reads what Linux's /proc tells of a process's memory,
// for the benchmarks that report a server's peak resident memory.
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// PeakRSS is a process's peak resident set size in bytes (VmHWM).
func PeakRSS(pid int) (int64, error) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: VmHWM %q: %w", path, v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("%s: no VmHWM", path)
}

// ResetPeak sets a process's peak resident set size to its current one
// (clear_refs 5), so that PeakRSS then reports the peak from here on.
func ResetPeak(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// Kinds is the process's resident memory by kind, as a line for a log:
// anonymous (heaps and caches) and the file-backed rest (smaps_rollup).
func Kinds(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return err.Error()
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		for _, k := range []string{"Rss:", "Anonymous:", "Shared_Clean:", "Private_Clean:"} {
			if v, ok := strings.CutPrefix(line, k); ok {
				out = append(out, k+" "+strings.Join(strings.Fields(v), " "))
			}
		}
	}
	return strings.Join(out, ", ")
}
