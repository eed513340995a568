package rclone

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rclone/rclone/fs/sync"

	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
)

// rclone against a blobshare serve whose file content lives in Azurite
// (--blob-backend azure://): sync up (rclone's default of 16 ranges in
// parallel per file), check, sync again copying nothing, copy down.
func TestRcloneOnAzureBackend(t *testing.T) {
	ctx := context.Background()
	az := azuritetest.Start(t)
	t.Setenv("AZURE_STORAGE_KEY", az.Key)
	const share = "onazure"
	s, rf := start(t, share, "--blob-backend", "azure://"+az.Account+"/rclone?endpoint="+az.Endpoint)

	src := t.TempDir()
	files := []treeFile{
		{"empty", 0, 1},
		{"a/over-inline.bin", 100_000, 2},
		{"a/b/big.bin", 13<<20 + 5, 3},
		{"c/four.bin", 4 << 20, 4},
	}
	writeTree(t, src, files)
	lf := localFs(t, src)
	if n, _, e := syncCounts(t, s, rf, lf); n != int64(len(files)) || e != 0 {
		t.Fatalf("first sync: %d transfers, %d errors; want %d, 0\n%s", n, e, len(files), s.Stderr)
	}
	check(t, "on azure://", rf, lf)
	syncCopiesNothing(t, s, rf, lf, "second sync")
	if err := os.WriteFile(filepath.Join(src, "a/b/big.bin"), content(5, 13<<20+5), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sync.Sync(ctx, rf, lf, true); err != nil {
		t.Fatalf("sync of an overwritten big file: %v\n%s", err, s.Stderr)
	}
	no5xx(t, s)
	down := t.TempDir()
	if err := sync.CopyDir(ctx, localFs(t, down), rf, true); err != nil {
		t.Fatal(err)
	}
	sameTree(t, src, down)
	if t.Failed() {
		t.Logf("serve log:\n%s", s.Stderr)
	}
}
