package fs

import (
	"testing"

	"github.com/blobshare/blobshare/bench/latency"
	"github.com/blobshare/blobshare/locks"
)

// BenchmarkStat measures the per-request cost of the two hottest read
// paths with 16 concurrent callers, reporting p50 and p99: Stat (REST Get
// File Properties) and a handle read (locks.CheckIO on every read).
//
//	go test ./fs -run '^$' -bench '^BenchmarkStat$' -benchtime 4000x
func BenchmarkStat(b *testing.B) {
	const callers = 16
	e := newEnv(b)
	e.share("bench")
	e.putFile("bench/f.txt", []byte("hello"))
	h := e.mustOpen("bench/f.txt", locks.AccessRead, allShare, DispositionOpen)
	b.Cleanup(func() { h.Close(ctxBG) })
	for _, bc := range []struct {
		name string
		call func() error
	}{
		{"stat", func() error { _, _, err := e.fs.Stat(ctxBG, "bench/f.txt", ""); return err }},
		{"read", func() error { _, err := h.ReadAt(ctxBG, make([]byte, 5), 0); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			latency.Run(b, callers, bc.call)
		})
	}
}
