package azure_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"testing"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/azure"
	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
	"github.com/blobshare/blobshare/blobstore/storetest"
)

// bigSize is the streaming test's size against Azurite: 128 MiB (32 MiB
// under -short); BLOBSHARE_AZURE_BIG=1 makes it the full 1 GiB.
func bigSize() int64 {
	switch {
	case os.Getenv("BLOBSHARE_AZURE_BIG") == "1":
		return 1 << 30
	case testing.Short():
		return 32 << 20
	}
	return 128 << 20
}

func TestConformance(t *testing.T) {
	srv := azuritetest.Start(t)
	var n atomic.Int64
	storetest.TestOpt(t, storetest.Opts{
		New: func(t *testing.T) blobstore.Store {
			s, err := azure.New(context.Background(), azure.Config{
				Endpoint:  srv.Endpoint,
				Account:   srv.Account,
				Key:       srv.Key,
				Container: fmt.Sprintf("conformance-%d", n.Add(1)),
			})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		BigSize:      bigSize(),
		BigBlockSize: 8 << 20,
	})
}

// TestStageLargeBlockSpools stages blocks larger than MemBlockLimit, which
// go through a temp file instead of memory.
func TestStageLargeBlockSpools(t *testing.T) {
	srv := azuritetest.Start(t)
	ctx := context.Background()
	s, err := azure.New(ctx, azure.Config{ConnectionString: srv.ConnectionString, Container: "spool", MemBlockLimit: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{64<<10 - 1, 64 << 10, 64<<10 + 1, 300_001} {
		key := fmt.Sprintf("spool/%d", size)
		n, err := s.StageBlock(ctx, key, "big", storetest.Data(uint64(size), size))
		if err != nil || n != size {
			t.Fatalf("StageBlock %d bytes = %d, %v", size, n, err)
		}
		info, err := s.CommitBlocks(ctx, key, []string{"big"}, blobstore.Conditions{})
		if err != nil || info.Size != size {
			t.Fatalf("CommitBlocks = %+v, %v; want size %d", info, err, size)
		}
		rc, _, err := s.ReadRange(ctx, key, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, storetest.DataAt(uint64(size), 0, size)) {
			t.Fatalf("%d-byte block read back wrong (%d bytes, %v)", size, len(got), err)
		}
	}
}
