package fusefs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// TestByteRangeLockFailsOnlyOverlappingIO: a byte-range lock held by
// another client (an SMB session) on [0,100) fails the mount's reads and
// writes that overlap it and no others — not the pages around it — for
// descriptors opened before the lock as for those opened after.
func TestByteRangeLockFailsOnlyOverlappingIO(t *testing.T) {
	tfs, share := mountShare(t)
	ctx := context.Background()
	p := filepath.Join(share, "ranges")
	content := bytes.Repeat([]byte("0123456789"), 1000)
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	early, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()
	smb, _, err := tfs.fsys.OpenByPath(ctx, fs.OpenPathRequest{Path: "share/ranges", Open: fs.OpenOptions{Access: locks.AccessRead | locks.AccessWrite, Share: locks.ShareAll}})
	if err != nil {
		t.Fatal(err)
	}
	defer smb.Close(ctx)
	if err := smb.Lock(ctx, locks.Range{Offset: 0, Length: 100}, locks.LockExclusive); err != nil {
		t.Fatal(err)
	}
	late, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()

	tests := []struct {
		off, n int64
		write  bool
		want   error
	}{
		{600, 10, false, nil},
		{100, 4000, false, nil},
		{99, 1, false, syscall.EACCES},
		{50, 10, false, syscall.EACCES},
		{0, 4096, false, syscall.EACCES},
		{600, 10, true, nil},
		{100, 1, true, nil},
		{95, 10, true, syscall.EACCES},
	}
	for _, f := range []*os.File{early, late} {
		for _, tc := range tests {
			name := f.Name()[len(share)+1:] + " opened " + map[*os.File]string{early: "before", late: "after"}[f] +
				" the lock: " + map[bool]string{false: "read", true: "write"}[tc.write] + " " + strconv.FormatInt(tc.n, 10) + " at " + strconv.FormatInt(tc.off, 10)
			buf := make([]byte, tc.n)
			var err error
			if tc.write {
				copy(buf, content[tc.off:])
				_, err = f.WriteAt(buf, tc.off)
			} else {
				_, err = f.ReadAt(buf, tc.off)
			}
			if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
				t.Errorf("%s: %v, want %v", name, err, tc.want)
				continue
			}
			if err == nil && !tc.write && !bytes.Equal(buf, content[tc.off:tc.off+tc.n]) {
				t.Errorf("%s: wrong bytes", name)
			}
		}
	}
}

// TestOwnFcntlLocksDoNotBlockOwnIO: POSIX locks belong to the process: a
// write lock it took through one descriptor never blocks its reads and
// writes through another descriptor (locks.Tx.CheckIOKey with the lock
// owner FUSE sends with direct I/O), while another process's overlapping
// I/O fails and its disjoint I/O passes.
func TestOwnFcntlLocksDoNotBlockOwnIO(t *testing.T) {
	_, share := mountShare(t)
	p := filepath.Join(share, "own")
	if err := os.WriteFile(p, make([]byte, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	locker, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Start: 0, Len: 100}
	if err := fcntlRetry(locker.Fd(), syscall.F_SETLK, &lk); err != nil {
		t.Fatalf("F_SETLK: %v", err)
	}
	other, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ReadAt(make([]byte, 10), 0); err != nil {
		t.Errorf("read under our own lock through another descriptor: %v", err)
	}
	if _, err := other.WriteAt([]byte("mine"), 10); err != nil {
		t.Errorf("write under our own lock through another descriptor: %v", err)
	}
	for _, tc := range []struct {
		op        string
		off, n    string
		wantReply string
	}{
		{"read", "0", "10", "EACCES"},
		{"write", "50", "10", "EACCES"},
		{"read", "600", "10", "ok"},
		{"write", "100", "10", "ok"},
	} {
		if got := runHelper(t, tc.op, p, "r", tc.off, tc.n); got != tc.wantReply {
			t.Errorf("another process's %s of %s at %s: %s, want %s", tc.op, tc.n, tc.off, got, tc.wantReply)
		}
	}
}
