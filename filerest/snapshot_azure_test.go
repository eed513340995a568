package filerest_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/azure"
	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
)

// newEnvAzure is newEnv whose file content lives in Azurite (the azure
// blob backend, a container of its own) instead of the local store.
func newEnvAzure(t *testing.T, container string) (*env, *azure.Store) {
	t.Helper()
	az := azuritetest.Start(t)
	st, err := azure.New(context.Background(), azure.Config{ConnectionString: az.ConnectionString, Container: container})
	if err != nil {
		t.Fatal(err)
	}
	return newEnvStore(t, func(blobstore.Store) blobstore.Store { return st }), st
}

// Share snapshots on the azure blob backend: a file over 64 KiB (blob
// backed) keeps its content in the snapshot through overwrites (the
// service copies the blob within the account), List Ranges diffs it at
// block granularity as on the local store, and deleting the snapshot
// releases the kept blob.
func TestShareSnapshotAzureBackend(t *testing.T) {
	e, st := newEnvAzure(t, "snapshots")
	s := e.mustShare("azsnap")
	const mib = 1 << 20
	orig := bytes.Repeat([]byte("kept by the snapshot. "), 300_000) // ~6.3 MiB: two blocks
	f := e.mustFile("azsnap", "big.bin", orig)
	mid := e.mustFile("azsnap", "mid.bin", bytes.Repeat([]byte{9}, 100_000)) // just over 64 KiB
	snap, err := s.CreateSnapshot(ctxBG, nil)
	if err != nil {
		t.Fatalf("snapshot of a share with blob-backed files on azure://: %v", err)
	}
	kept := func() []string {
		t.Helper()
		var keys []string
		if _, err := st.List(ctxBG, "s", "", 0, func(i blobstore.Info) error {
			keys = append(keys, i.Key)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return keys
	}
	if k := kept(); len(k) != 2 {
		t.Fatalf("snapshot keys in the container: %v, want one per blob-backed file", k)
	}

	// Overwrite both files wholly and partly, and resize one.
	if _, err := f.UploadRange(ctxBG, 5*mib, nopCloser(bytes.NewReader([]byte("overwritten"))), nil); err != nil {
		t.Fatal(err)
	}
	if err := mid.UploadBuffer(ctxBG, bytes.Repeat([]byte{1}, 100_000), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := mid.Resize(ctxBG, 70_000, nil); err != nil {
		t.Fatal(err)
	}

	ss, err := s.WithSnapshot(*snap.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want []byte
	}{
		{"big.bin", orig},
		{"mid.bin", bytes.Repeat([]byte{9}, 100_000)},
	} {
		got, err := download(t, ss.NewRootDirectoryClient().NewFileClient(tc.name))
		if err != nil {
			t.Fatalf("read %s in the snapshot: %v", tc.name, err)
		}
		if !bytes.Equal(got, tc.want) {
			t.Fatalf("%s in the snapshot: %d bytes, differs from the %d written before it", tc.name, len(got), len(tc.want))
		}
	}
	live, err := download(t, f)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(live[5*mib:5*mib+11], []byte("overwritten")) {
		t.Fatalf("the live file lost its overwrite")
	}
	// The snapshot's copy of the file kept its write log: only the range
	// written since is reported.
	r, err := f.GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: snap.Snapshot})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Ranges) != 1 || *r.Ranges[0].Start != 5*mib || *r.Ranges[0].End != 5*mib+10 {
		t.Fatalf("changed ranges since the snapshot: %+v, want the overwritten 11 bytes only", r.Ranges)
	}

	if _, err := ss.Delete(ctxBG, nil); err != nil {
		t.Fatalf("delete the snapshot: %v", err)
	}
	// Close runs the blob collector to the end: the snapshot's blobs go.
	if err := e.fs.Close(ctxBG); err != nil {
		t.Fatal(err)
	}
	if k := kept(); len(k) != 0 {
		t.Fatalf("after deleting the snapshot, its blobs are still kept: %v", k)
	}
}

// Parallel Put Ranges into one file on the azure blob backend, as SDK
// uploads and sync clients (rclone: 16 at once) send them, with no client
// retries: every range lands (Put Block List discards the blocks other
// writers staged meanwhile; the backend stages them again), and the file
// reads back whole. Before, ranges failed with 500.
func TestAzureBackendParallelPutRanges(t *testing.T) {
	e, _ := newEnvAzure(t, "parallel")
	e.mustShare("par")
	for _, tc := range []struct {
		name        string
		size        int64
		concurrency uint16
	}{
		{"new file, 16 ranges at once", 13<<20 + 5, 16},
		{"SDK default", 21 << 20, 0},
		{"just over two blocks", 8<<20 + 1, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := bytes.Repeat([]byte(tc.name), int(tc.size)/len(tc.name)+1)[:tc.size]
			fc := e.file("par", tc.name)
			if _, err := fc.Create(ctxBG, tc.size, nil); err != nil {
				t.Fatal(err)
			}
			opts := &file.UploadBufferOptions{Concurrency: tc.concurrency, ChunkSize: 4 << 20}
			if err := fc.UploadBuffer(ctxBG, want, opts); err != nil {
				t.Fatalf("parallel upload: %v", err)
			}
			// Once more over the existing blob: commits replace blocks.
			for i := range want {
				want[i] ^= 0x5a
			}
			if err := fc.UploadBuffer(ctxBG, want, opts); err != nil {
				t.Fatalf("parallel overwrite: %v", err)
			}
			got, err := download(t, fc)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("read back %d bytes (%v), equal %v; want the %d written", len(got), err, bytes.Equal(got, want), len(want))
			}
		})
	}
}
