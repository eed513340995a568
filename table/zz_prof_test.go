package table_test

import (
	"context"
	"testing"
)

func BenchmarkZZRange(b *testing.B) {
	ours := newEnv(b, nil)
	c := benchTable(b, benchService(b, ours.ConnStr), "range")
	loadRange(b, c, 20000)
	lc, _ := newLeanClient(ours.URL)
	b.ResetTimer()
	for range b.N {
		n, err := lc.query(context.Background(), "range", "PartitionKey ge 'p040' and PartitionKey lt 'p050'")
		if err != nil || n != 2000 {
			b.Fatal(n, err)
		}
	}
}
