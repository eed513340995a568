package reliability

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
)

// TestCrashBesideSurvivor kills a `serve --mount` while another serve
// process on the same data directory keeps running and is never
// restarted: the survivor alone must clear what the dead process held — a
// byte-range lock, an open handle, a delete pending on an open file, a
// commit in progress — as soon as it meets them, without a restart. Odd
// rounds meet them in reverse order, so List Handles comes first there.
func TestCrashBesideSurvivor(t *testing.T) {
	requireMountable(t)
	data := t.TempDir()
	survivor := startServe(t, data)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	svc := serviceClient(t, survivor.RESTURL, -1)
	if _, err := svc.CreateShare(ctx, "surv", nil); err != nil {
		t.Fatal(err)
	}
	root := svc.NewShareClient("surv").NewRootDirectoryClient()
	for round := 0; round < 5; round++ {
		t.Run(fmt.Sprint("round ", round), func(t *testing.T) {
			// The victim serves no Blob: this test is about the mount's
			// handles, locks and delete-on-close.
			victim := startServe(t, data, "--mount", t.TempDir(), "--blob-addr", "off")
			mdir := filepath.Join(victim.Mount, "surv")
			locked := fmt.Sprintf("locked-%d", round)
			pending := fmt.Sprintf("pending-%d", round)
			held := fmt.Sprintf("held-%d", round)
			for _, name := range []string{locked, pending, held} {
				if err := os.WriteFile(filepath.Join(mdir, name), record(uint32(500+round), 0, 1, 200_000), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			lf, err := os.OpenFile(filepath.Join(mdir, locked), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer lf.Close()
			lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: 0, Len: 4096}
			if err := syscall.FcntlFlock(lf.Fd(), syscall.F_SETLK, &lk); err != nil {
				t.Fatal(err)
			}
			pf, err := os.Open(filepath.Join(mdir, pending))
			if err != nil {
				t.Fatal(err)
			}
			defer pf.Close()
			if err := os.Remove(filepath.Join(mdir, pending)); err != nil {
				t.Fatal(err)
			}
			hf, err := os.OpenFile(filepath.Join(mdir, held), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer hf.Close()
			// An unflushed write: never acknowledged, so either version is fine.
			hf.WriteAt(record(uint32(500+round), 0, 2, 200_000), 0)

			// Sanity: while the victim lives, its lock and pending delete hold.
			_, err = root.NewFileClient(locked).UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader(make([]byte, 4096))), nil)
			if errorCode(err) != "FileLockConflict" {
				t.Fatalf("Put Range over a live mount's lock: %v; want FileLockConflict", err)
			}
			if wedged, err := victim.Kill(); err != nil || wedged != "" {
				t.Fatalf("kill: %v; stuck: %s", err, wedged)
			}

			checks := []struct {
				name string
				do   func() error
			}{
				{"put range over the dead lock", func() error {
					_, err := root.NewFileClient(locked).UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader(make([]byte, 4096))), nil)
					return err
				}},
				{"pending delete completed", func() error {
					_, err := root.NewFileClient(pending).GetProperties(ctx, nil)
					if errorCode(err) == "ResourceNotFound" {
						return nil
					}
					return fmt.Errorf("Get File Properties: %v; want ResourceNotFound", err)
				}},
				{"held file readable and whole", func() error {
					b, _, err := download(ctx, root.NewFileClient(held))
					if err != nil {
						return err
					}
					_, err = decodeRecord(b, uint32(500+round), 0)
					return err
				}},
				{"lease on the held file", func() error {
					lc, err := lease.NewFileClient(root.NewFileClient(held), &lease.FileClientOptions{LeaseID: to.Ptr("00000000-0000-0000-0000-00000000abcd")})
					if err != nil {
						return err
					}
					if _, err := lc.Acquire(ctx, nil); err != nil {
						return err
					}
					_, err = lc.Release(ctx, nil)
					return err
				}},
				{"no handles listed", func() error {
					hs, err := root.ListHandles(ctx, &directory.ListHandlesOptions{Recursive: to.Ptr(true)})
					if err != nil {
						return err
					}
					if len(hs.Handles) != 0 {
						return fmt.Errorf("%d handles of the dead process listed", len(hs.Handles))
					}
					return nil
				}},
			}
			// Each check must clear its own obstacle: odd rounds meet them
			// in reverse order.
			if round%2 == 1 {
				slices.Reverse(checks)
			}
			checks = append(checks, struct {
				name string
				do   func() error
			}{"delete the held file", func() error {
				_, err := root.NewFileClient(held).Delete(ctx, nil)
				return err
			}})
			for _, c := range checks {
				if err := c.do(); err != nil {
					t.Errorf("%s (survivor, no restart): %v", c.name, err)
				}
			}
		})
	}
}
