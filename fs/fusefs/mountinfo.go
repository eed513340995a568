package fusefs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrAlreadyMounted is wrapped (with ErrMount) by Mount's error when a live
// file system is mounted on the mount point already: a second mount would
// stack on it and hide it, and unmounting one would leave the other in
// place, which nobody asked for. A dead blobshare mount is not refused:
// ClearDeadMount detaches it first.
var ErrAlreadyMounted = errors.New("already mounted")

// mountEntry is one line of /proc/self/mountinfo (proc(5)).
type mountEntry struct {
	Point  string // field 5, unescaped
	FSType string // after the " - " separator
	Source string
}

// parseMountinfo reads /proc/self/mountinfo's format. Paths escape space,
// tab, newline and backslash as octal (\040, \011, \012, \134).
func parseMountinfo(b []byte) []mountEntry {
	var out []mountEntry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		e := mountEntry{Point: unescapeMountinfo(f[4])}
		for i := 5; i < len(f); i++ {
			if f[i] == "-" {
				if i+1 < len(f) {
					e.FSType = f[i+1]
				}
				if i+2 < len(f) {
					e.Source = unescapeMountinfo(f[i+2])
				}
				break
			}
		}
		out = append(out, e)
	}
	return out
}

func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// refuseMounted fails with ErrAlreadyMounted when something is mounted on
// dir (compared after resolving symbolic links, as the kernel records the
// resolved path). Call it after ClearDeadMount, which may stat a dead
// mount that this would otherwise refuse.
func refuseMounted(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("%w: mount point %s: %w", ErrMount, dir, err)
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil // no /proc: nothing to check against; mount(2) decides
	}
	var found *mountEntry
	for _, e := range parseMountinfo(mi) {
		if e.Point == abs {
			found = &e // the last one is the one on top
		}
	}
	if found == nil {
		return nil
	}
	return fmt.Errorf("%w: mount point %s is %w (%s from %s): unmount it first (umount %s) or choose another directory",
		ErrMount, dir, ErrAlreadyMounted, found.FSType, found.Source, dir)
}
