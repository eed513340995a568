package smb_test

import (
	"fmt"
	"strings"
	"testing"
)

// The SMB-vs-SMB rows of the lock table, compared with Samba's smbd as the
// oracle: the same sequence of real-client (impacket) operations goes to
// smbd and to blobshare, and every answer must be the same NT status.

// oracleSide is one server under comparison, with its own client.
type oracleSide struct {
	name string
	c    *smbctl
}

// oracleSides starts smbd and blobshare and logs an impacket client on to
// each.
func oracleSides(t *testing.T) [2]oracleSide {
	d := startSmbd(t, t.TempDir())
	e := newEnv(t)
	e.mustShare("oracle")
	return [2]oracleSide{
		{"smbd", dialSmbctl(t, d.addr, d.user, d.password, d.share)},
		{"blobshare", e.smbctl(t, "oracle")},
	}
}

// compare sends the same command to both sides and fails the test when
// their answers differ; it returns smbd's answer.
func compare(t *testing.T, sides [2]oracleSide, what, format string, args ...any) string {
	t.Helper()
	a, b := sides[0].c.do(format, args...), sides[1].c.do(format, args...)
	for _, got := range []string{a, b} {
		if strings.HasPrefix(got, "err ") && !strings.HasPrefix(got, "err STATUS_") {
			t.Fatalf("%s: %q: the client failed: %s", what, fmt.Sprintf(format, args...), got) // no server's answer
		}
	}
	if a != b {
		t.Errorf("%s: %q: smbd %q, blobshare %q", what, fmt.Sprintf(format, args...), a, b)
	}
	return a
}

// Access and share bits (MS-SMB2 2.2.13).
const (
	accRead       = 0x00000001
	accWrite      = 0x00000002
	accAppend     = 0x00000004
	accReadAttrs  = 0x00000080
	accDelete     = 0x00010000
	accSync       = 0x00100000
	shareRead     = 0x1
	shareWrite    = 0x2
	shareDelete   = 0x4
	oDispOpen     = 0x1
	oDispOpenIf   = 0x3
	optNonDirFile = 0x40
)

// TestShareModesAgainstSmbd: every pair of opens over a matrix of access
// masks and share modes gets the same answer from blobshare as from smbd.
func TestShareModesAgainstSmbd(t *testing.T) {
	sides := oracleSides(t)
	compare(t, sides, "create", "open f m.txt %x 7 %x %x", accRead|accWrite, oDispOpenIf, optNonDirFile)
	compare(t, sides, "create", "close f")
	accesses := []uint32{accRead, accWrite, accAppend, accDelete, accReadAttrs, accRead | accWrite | accDelete}
	shares := []uint32{0, shareRead, shareWrite, shareDelete, shareRead | shareWrite, shareRead | shareDelete, shareRead | shareWrite | shareDelete}
	pairs, refused := 0, 0
	for _, a1 := range accesses {
		for _, s1 := range shares {
			first := compare(t, sides, "first open", "open a m.txt %x %x %x %x", a1|accSync, s1, oDispOpen, optNonDirFile)
			if first != "ok" {
				continue
			}
			for _, a2 := range accesses {
				for _, s2 := range shares {
					what := fmt.Sprintf("open (%#x, share %#x) while (%#x, share %#x) is open", a2, s2, a1, s1)
					second := compare(t, sides, what, "open b m.txt %x %x %x %x", a2|accSync, s2, oDispOpen, optNonDirFile)
					pairs++
					if second == "ok" {
						compare(t, sides, what, "close b")
					} else {
						refused++
					}
				}
			}
			compare(t, sides, "close", "close a")
		}
	}
	if t.Failed() {
		return
	}
	if refused == 0 || refused == pairs {
		t.Fatalf("%d pairs, %d refused: the matrix tested nothing", pairs, refused)
	}
	t.Logf("%d pairs of opens, %d refused with STATUS_SHARING_VIOLATION or another status, identical on smbd and blobshare", pairs, refused)
}

// TestDeleteAndLocksAgainstSmbd: delete-on-close and disposition, and
// byte-range locks against reads, writes and other locks, answer as smbd
// does.
func TestDeleteAndLocksAgainstSmbd(t *testing.T) {
	sides := oracleSides(t)
	all := shareRead | shareWrite | shareDelete
	steps := []struct{ what, cmd string }{
		{"create", fmt.Sprintf("open w l.txt %x %x %x %x", accRead|accWrite, all, oDispOpenIf, optNonDirFile)},
		{"fill", "write w 0 " + strings.Repeat("61", 200)},
		{"other handle", fmt.Sprintf("open r l.txt %x %x %x %x", accRead|accWrite, all, oDispOpen, optNonDirFile)},
		{"exclusive lock 0-99", "lock w 0 100 2"}, // SMB2_LOCKFLAG_EXCLUSIVE_LOCK | fail immediately below
		{"read inside another's exclusive lock", "read r 10 5"},
		{"write inside another's exclusive lock", "write r 50 62"},
		{"read outside it", "read r 150 5"},
		{"write outside it", "write r 150 62"},
		{"overlapping lock", "lock r 90 20 12"}, // exclusive | fail immediately
		{"adjacent lock", "lock r 100 20 12"},
		{"own handle reads its lock", "read w 10 5"},
		{"unlock", "lock w 0 100 4"}, // SMB2_LOCKFLAG_UNLOCK
		{"read after unlock", "read r 10 5"},
		{"shared lock", "lock w 0 100 11"}, // shared | fail immediately
		{"read inside another's shared lock", "read r 10 5"},
		{"write inside another's shared lock", "write r 10 62"},
		{"zero-length lock", "lock r 300 0 12"},
		{"unlock what was never locked", "lock r 400 10 4"},
		{"close r", "close r"},
		{"close w", "close w"},
		{"deleter", fmt.Sprintf("open d l.txt %x %x %x %x", accDelete|accRead, all, oDispOpen, optNonDirFile)},
		{"mark delete-pending", "dispose d 1"},
		{"open while delete-pending", fmt.Sprintf("open x l.txt %x %x %x %x", accRead, all, oDispOpen, optNonDirFile)},
		{"take the mark back", "dispose d 0"},
		{"open after taking it back", fmt.Sprintf("open x l.txt %x %x %x %x", accRead, all, oDispOpen, optNonDirFile)},
		{"close x", "close x"},
		{"mark again", "dispose d 1"},
		{"last close deletes", "close d"},
		{"open after the last close", fmt.Sprintf("open x l.txt %x %x %x %x", accRead, all, oDispOpen, optNonDirFile)},
		{"dispose without delete access", fmt.Sprintf("open n n.txt %x %x %x %x", accRead|accWrite, all, oDispOpenIf, optNonDirFile)},
		{"dispose it", "dispose n 1"},
		{"close n", "close n"},
	}
	for _, s := range steps {
		compare(t, sides, s.what, "%s", s.cmd)
	}
}
