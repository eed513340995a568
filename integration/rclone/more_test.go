package rclone

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rclone/rclone/fs"
	"github.com/rclone/rclone/fs/hash"
	"github.com/rclone/rclone/fs/operations"
	"github.com/rclone/rclone/fs/sync"
)

// More of what rclone users run: names that need encoding, server-side
// copyto and directory moves, streaming uploads of unknown size (rcat),
// touch, ranged cat, md5sum, delete and purge.
func TestRcloneMoreOperations(t *testing.T) {
	ctx := context.Background()
	const share = "rclone-more"
	s, rf := start(t, share)

	src := t.TempDir()
	names := []treeFile{
		{"with space & #hash %25.txt", 10, 1},
		{"ünïcödé ✓/日本語.bin", 70_000, 2},
		{"trailing.dot./x.txt", 5, 3},
		{"UPPER/lower.TXT", 7, 4},
		{"quote'n\"semi;colon.txt", 3, 5},
	}
	writeTree(t, src, names)
	lf := localFs(t, src)
	t.Run("NamesNeedingEncoding", func(t *testing.T) {
		if err := sync.Sync(ctx, rf, lf, true); err != nil {
			t.Fatalf("sync: %v\n%s", err, s.Stderr)
		}
		check(t, "names", rf, lf)
		syncCopiesNothing(t, s, rf, lf, "second sync")
		down := t.TempDir()
		if err := sync.CopyDir(ctx, localFs(t, down), rf, true); err != nil {
			t.Fatal(err)
		}
		sameTree(t, src, down)
	})

	t.Run("ServerSideCopyto", func(t *testing.T) {
		if err := operations.CopyFile(ctx, rf, rf, "copies/copy of 日本語.bin", "ünïcödé ✓/日本語.bin"); err != nil {
			t.Fatal(err)
		}
		a, err := rf.NewObject(ctx, "ünïcödé ✓/日本語.bin")
		if err != nil {
			t.Fatal(err)
		}
		b, err := rf.NewObject(ctx, "copies/copy of 日本語.bin")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(readObject(t, a), readObject(t, b)) {
			t.Fatalf("server-side copy differs from its source")
		}
		if !a.ModTime(ctx).Equal(b.ModTime(ctx)) {
			t.Errorf("server-side copy: time %v, source %v", b.ModTime(ctx), a.ModTime(ctx))
		}
	})

	t.Run("DirMove", func(t *testing.T) {
		if err := operations.DirMove(ctx, rf, "UPPER", "moved/UPPER"); err != nil {
			t.Fatal(err)
		}
		if _, err := rf.NewObject(ctx, "moved/UPPER/lower.TXT"); err != nil {
			t.Fatalf("after moving the directory: %v", err)
		}
		if _, err := rf.List(ctx, "UPPER"); !errors.Is(err, fs.ErrorDirNotFound) {
			t.Fatalf("old directory after the move: %v", err)
		}
	})

	t.Run("RcatStream", func(t *testing.T) {
		// Over rclone's streaming cutoff (100 KiB): uploaded without a
		// known size, then cut to what was read.
		data := content(9, 5<<20+123)
		mt := base.Add(72 * time.Hour)
		o, err := operations.Rcat(ctx, rf, "stream/rcat.bin", io.NopCloser(bytes.NewReader(data)), mt, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rf.NewObject(ctx, "stream/rcat.bin")
		if err != nil {
			t.Fatal(err)
		}
		if got.Size() != int64(len(data)) || o.Size() != int64(len(data)) {
			t.Fatalf("rcat: size %d (object %d), want %d", got.Size(), o.Size(), len(data))
		}
		if !bytes.Equal(readObject(t, got), data) {
			t.Fatalf("rcat: content differs")
		}
		sum := md5.Sum(data)
		if h, err := got.Hash(ctx, hash.MD5); err != nil || h != hex.EncodeToString(sum[:]) {
			t.Fatalf("rcat: md5 %q, %v; want %x", h, err, sum)
		}
	})

	t.Run("Touch", func(t *testing.T) {
		o, err := rf.NewObject(ctx, "trailing.dot./x.txt")
		if err != nil {
			t.Fatal(err)
		}
		mt := time.Date(2019, 1, 2, 3, 4, 5, 0, time.UTC)
		if err := o.SetModTime(ctx, mt); err != nil {
			t.Fatal(err)
		}
		again, err := rf.NewObject(ctx, "trailing.dot./x.txt")
		if err != nil {
			t.Fatal(err)
		}
		if !again.ModTime(ctx).Equal(mt) {
			t.Fatalf("after touch: %v, want %v", again.ModTime(ctx), mt)
		}
		if !bytes.Equal(readObject(t, again), content(3, 5)) {
			t.Fatalf("touch changed the content")
		}
	})

	t.Run("CatRange", func(t *testing.T) {
		f := remote(t, s, share, "stream")
		var out bytes.Buffer
		if err := operations.Cat(ctx, f, &out, 1<<20, 1000, nil); err != nil {
			t.Fatal(err)
		}
		if want := content(9, 5<<20+123)[1<<20 : 1<<20+1000]; !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("cat --offset 1MiB --count 1000: %d bytes, differ", out.Len())
		}
	})

	t.Run("Md5sum", func(t *testing.T) {
		var out bytes.Buffer
		if err := operations.HashLister(ctx, hash.MD5, false, false, rf, &out); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(src, "with space & #hash %25.txt"))
		sum := md5.Sum(b)
		if !strings.Contains(out.String(), hex.EncodeToString(sum[:])+"  with space & #hash %25.txt\n") {
			t.Fatalf("md5sum lacks the file's line:\n%s", out.String())
		}
	})

	t.Run("DeleteAndPurge", func(t *testing.T) {
		if err := operations.Purge(ctx, rf, "copies"); err != nil {
			t.Fatal(err)
		}
		if _, err := rf.List(ctx, "copies"); !errors.Is(err, fs.ErrorDirNotFound) {
			t.Fatalf("after purge: %v", err)
		}
		if err := operations.Delete(ctx, rf); err != nil {
			t.Fatal(err)
		}
		var left []string
		err := operations.ListFn(ctx, rf, func(o fs.Object) { left = append(left, o.Remote()) })
		if err != nil || len(left) != 0 {
			t.Fatalf("after delete: %v left, %v", left, err)
		}
	})
	no5xx(t, s)
}

func readObject(t *testing.T, o fs.Object) []byte {
	t.Helper()
	rc, err := o.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
