package azure_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/azure"
	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
	"github.com/blobshare/blobshare/blobstore/storetest"
)

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
		BigSize:      128 << 20,
		BigBlockSize: 8 << 20,
	})
}
