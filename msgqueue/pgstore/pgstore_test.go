package pgstore

import (
	"context"
	"testing"

	"github.com/blobshare/blobshare/internal/pgtest"
	"github.com/blobshare/blobshare/msgqueue/storetest"
)

var pg = pgtest.New()

func TestMain(m *testing.M) { pgtest.Main(m, pg) }

// TestConformance runs the msgqueue.Store suite on a fresh schema per
// test, in caller-clock mode (the suite's injected clock decides).
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() (storetest.Store, error) {
		conn := pg.Schema(t)
		return func() (storetest.Store, error) {
			return Open(context.Background(), conn, Options{CallerClock: true})
		}
	})
}
