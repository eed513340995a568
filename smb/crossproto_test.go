package smb_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// Access masks, share access, dispositions and options for smbctl (hex).
const (
	genericRead      = "80000000"
	genericReadWrite = "c0000000"
	deleteReadAttrs  = "10080"
	shareNone        = "0"
	shareAll         = "7"
	dispOpen         = "1"
	dispOpenIf       = "3"
	optNonDir        = "40"
	optDeleteOnClose = "1040"
	lockExclusiveNow = "12" // SMB2_LOCK_FLAG_EXCLUSIVE_LOCK | FAIL_IMMEDIATELY
)

func restStatus(t *testing.T, err error) (int, string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want a REST error, got %v", err)
	}
	return re.StatusCode, re.ErrorCode
}

func (e *env) restRead(ctx context.Context, path string, r file.HTTPRange) ([]byte, error) {
	resp, err := e.file("data", path).DownloadStream(ctx, &file.DownloadStreamOptions{Range: r})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func (e *env) restPut(t *testing.T, path string, content []byte) {
	t.Helper()
	ctx := context.Background()
	f := e.file("data", path)
	if _, err := f.Create(ctx, int64(len(content)), nil); err != nil {
		t.Fatalf("REST create %s: %v", path, err)
	}
	if len(content) > 0 {
		if err := f.UploadBuffer(ctx, content, nil); err != nil {
			t.Fatalf("REST upload %s: %v", path, err)
		}
	}
}

// TestCrossProtocol: what a real SMB client holds, REST meets as Azure
// Files answers it, and the other way round (locking.md §0.1).
func TestCrossProtocol(t *testing.T) {
	ctx := context.Background()

	t.Run("share none refuses REST reads with SharingViolation", func(t *testing.T) {
		e := newEnv(t)
		e.mustShare("data")
		e.restPut(t, "f.txt", []byte("hello"))
		c := e.smbctl(t, "data")
		c.expect("ok", "open a f.txt %s %s %s %s", genericReadWrite, shareNone, dispOpen, optNonDir)
		_, err := e.restRead(ctx, "f.txt", file.HTTPRange{})
		if code, ec := restStatus(t, err); code != 409 || ec != string(fileerror.SharingViolation) {
			t.Fatalf("REST read under an SMB share-none open: %d %s, want 409 SharingViolation", code, ec)
		}
		c.expect("ok", "close a")
		if got, err := e.restRead(ctx, "f.txt", file.HTTPRange{}); err != nil || string(got) != "hello" {
			t.Fatalf("REST read after close: %q, %v", got, err)
		}
	})

	t.Run("delete on close: SMBDeletePending, then 404 after the last close", func(t *testing.T) {
		e := newEnv(t)
		e.mustShare("data")
		e.restPut(t, "d.txt", []byte("x"))
		c := e.smbctl(t, "data")
		c.expect("ok", "open keep d.txt %s %s %s %s", genericRead, shareAll, dispOpen, optNonDir)
		c.expect("ok", "open doc d.txt %s %s %s %s", deleteReadAttrs, shareAll, dispOpen, optDeleteOnClose)
		c.expect("ok", "close doc")
		_, err := e.file("data", "d.txt").GetProperties(ctx, nil)
		if code, ec := restStatus(t, err); code != 409 || ec != "SMBDeletePending" {
			t.Fatalf("REST properties of a delete-pending file: %d %s, want 409 SMBDeletePending", code, ec)
		}
		c.expect("err STATUS_DELETE_PENDING", "open again d.txt %s %s %s %s", genericRead, shareAll, dispOpen, optNonDir)
		c.expect("ok", "close keep")
		_, err = e.file("data", "d.txt").GetProperties(ctx, nil)
		if code, _ := restStatus(t, err); code != 404 {
			t.Fatalf("REST properties after the last close: %d, want 404", code)
		}
	})

	t.Run("disposition marks pending at once", func(t *testing.T) {
		e := newEnv(t)
		e.mustShare("data")
		e.restPut(t, "p.txt", []byte("x"))
		c := e.smbctl(t, "data")
		c.expect("ok", "open a p.txt %s %s %s %s", deleteReadAttrs, shareAll, dispOpen, optNonDir)
		c.expect("ok", "dispose a 1")
		_, err := e.restRead(ctx, "p.txt", file.HTTPRange{})
		if code, ec := restStatus(t, err); code != 409 || ec != "SMBDeletePending" {
			t.Fatalf("REST read: %d %s, want 409 SMBDeletePending", code, ec)
		}
		c.expect("ok", "dispose a 0")
		if _, err := e.restRead(ctx, "p.txt", file.HTTPRange{}); err != nil {
			t.Fatalf("REST read after undelete: %v", err)
		}
		c.expect("ok", "dispose a 1")
		c.expect("ok", "close a")
		_, err = e.restRead(ctx, "p.txt", file.HTTPRange{})
		if code, _ := restStatus(t, err); code != 404 {
			t.Fatalf("REST read after close: %d, want 404", code)
		}
	})

	t.Run("SMB LOCK refuses overlapping REST reads with FileLockConflict", func(t *testing.T) {
		e := newEnv(t)
		e.mustShare("data")
		e.restPut(t, "l.bin", []byte("0123456789"))
		c := e.smbctl(t, "data")
		c.expect("ok", "open a l.bin %s %s %s %s", genericReadWrite, shareAll, dispOpen, optNonDir)
		c.expect("ok", "lock a 0 5 %s", lockExclusiveNow)
		_, err := e.restRead(ctx, "l.bin", file.HTTPRange{Offset: 0, Count: 5})
		if code, ec := restStatus(t, err); code != 409 || ec != string(fileerror.FileLockConflict) {
			t.Fatalf("REST read of a locked range: %d %s, want 409 FileLockConflict", code, ec)
		}
		if got, err := e.restRead(ctx, "l.bin", file.HTTPRange{Offset: 5, Count: 5}); err != nil || string(got) != "56789" {
			t.Fatalf("REST read past the lock: %q, %v", got, err)
		}
		// A second SMB client conflicts too; a zero-length lock is granted (A15).
		c2 := e.smbctl(t, "data")
		c2.expect("ok", "open b l.bin %s %s %s %s", genericReadWrite, shareAll, dispOpen, optNonDir)
		c2.expect("err STATUS_LOCK_NOT_GRANTED", "lock b 2 1 %s", lockExclusiveNow)
		c2.expect("err STATUS_FILE_LOCK_CONFLICT", "read b 0 5")
		c2.expect("ok", "lock b 0 0 %s", lockExclusiveNow)
		c.expect("ok", "close a")
		if got, err := e.restRead(ctx, "l.bin", file.HTTPRange{Offset: 0, Count: 5}); err != nil || string(got) != "01234" {
			t.Fatalf("REST read after the lock's handle closed: %q, %v", got, err)
		}
	})

	t.Run("REST lease refuses SMB write opens", func(t *testing.T) {
		e := newEnv(t)
		e.mustShare("data")
		e.restPut(t, "leased.txt", []byte("x"))
		lc, err := lease.NewFileClient(e.file("data", "leased.txt"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lc.Acquire(ctx, nil); err != nil {
			t.Fatalf("acquire lease: %v", err)
		}
		c := e.smbctl(t, "data")
		c.expect("err STATUS_SHARING_VIOLATION", "open w leased.txt %s %s %s %s", genericReadWrite, shareAll, dispOpen, optNonDir)
		c.expect("ok", "open r leased.txt %s %s %s %s", genericRead, shareAll, dispOpen, optNonDir)
		c.expect("ok", "close r")
	})

	t.Run("a session holder refuses SMB opens with STATUS_SHARING_VIOLATION", func(t *testing.T) {
		e := newEnv(t)
		e.mustShare("data")
		e.restPut(t, "held.txt", []byte("x"))
		// What `blobshare session` does for `open ID held.txt access=read share=none`.
		h, _, err := e.fs.OpenByPath(ctx, fs.OpenPathRequest{Path: "data/held.txt",
			Open: fs.OpenOptions{Access: locks.AccessRead, Share: locks.ShareNone}})
		if err != nil {
			t.Fatal(err)
		}
		c := e.smbctl(t, "data")
		c.expect("err STATUS_SHARING_VIOLATION", "open a held.txt %s %s %s %s", genericRead, shareAll, dispOpen, optNonDir)
		if err := h.Close(ctx); err != nil {
			t.Fatal(err)
		}
		c.expect("ok", "open a held.txt %s %s %s %s", genericRead, shareAll, dispOpen, optNonDir)
	})
}

// TestListHandlesShowsSMBOpens: a go-smb2 open is a handle REST lists,
// with the client's address, and blocks REST Delete File until closed.
func TestListHandlesShowsSMBOpens(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.mustShare("data")
	sh := e.dial("data")
	f, err := sh.Create("open.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	resp, err := e.file("data", "open.txt").ListHandles(ctx, nil)
	if err != nil {
		t.Fatalf("list handles: %v", err)
	}
	if len(resp.Handles) != 1 || resp.Handles[0].ClientIP == nil || *resp.Handles[0].ClientIP == "" {
		t.Fatalf("handles = %+v, want one with a client address", resp.Handles)
	}
	if _, err := e.file("data", "open.txt").Delete(ctx, nil); err == nil {
		t.Fatal("REST delete of an SMB-open file succeeded")
	} else if code, ec := restStatus(t, err); code != 409 || ec != string(fileerror.SharingViolation) {
		t.Fatalf("REST delete: %d %s, want 409 SharingViolation", code, ec)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := e.restRead(ctx, "open.txt", file.HTTPRange{}); err != nil || string(got) != "abc" {
		t.Fatalf("REST read after the SMB close: %q, %v", got, err)
	}
}
