package sqlstore

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/blobshare/blobshare/tablesvc"
)

// The crash test: a child process (this test binary, re-executed) runs
// batches that set crashRows rows of one partition to version n (and the
// counter row, merged with If-Match, to n), printing n after each batch
// returns; the parent SIGKILLs it right after a random report — while the
// next batch is in flight — and then checks that every row holds one
// version: the last reported or the one in flight, never a mix.

const (
	crashRows   = 10
	envCrashDB  = "BLOBSHARE_TABLE_CRASH_DB"
	envCrashVer = "BLOBSHARE_TABLE_CRASH_NEXT"
)

func crashBatch(n int, counterETag string) []tablesvc.Op {
	var ops []tablesvc.Op
	for r := range crashRows {
		ops = append(ops, tablesvc.Op{Kind: tablesvc.InsertOrReplace, Entity: tablesvc.Entity{
			PartitionKey: "p", RowKey: fmt.Sprint("row", r),
			Props: []tablesvc.Property{{Name: "V", Value: tablesvc.Value{Type: tablesvc.Int64, Int: int64(n)}}},
		}})
	}
	c := tablesvc.Entity{PartitionKey: "p", RowKey: "counter", Props: []tablesvc.Property{{Name: "V", Value: tablesvc.Value{Type: tablesvc.Int64, Int: int64(n)}}}}
	if counterETag == "" {
		ops = append(ops, tablesvc.Op{Kind: tablesvc.Insert, Entity: c})
	} else {
		ops = append(ops, tablesvc.Op{Kind: tablesvc.Merge, Entity: c, IfMatch: counterETag})
	}
	return ops
}

// TestCrashChild is the child's body; it does nothing unless started by
// TestCrashMidBatch.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(envCrashDB)
	if path == "" {
		t.Skip("only run as the crash test's child")
	}
	fail := func(err error) { fmt.Println("error", err); os.Exit(2) }
	st, err := Open(context.Background(), path)
	if err != nil {
		fail(err)
	}
	svc := tablesvc.New(st, nil)
	ctx := context.Background()
	n, _ := strconv.Atoi(os.Getenv(envCrashVer))
	etag := ""
	if c, err := svc.Get(ctx, "crash", "p", "counter"); err == nil {
		etag = c.ETag()
	}
	fmt.Println("ready")
	for ; ; n++ {
		res, err := svc.Batch(ctx, "crash", crashBatch(n, etag))
		if err != nil {
			fail(err)
		}
		etag = res[crashRows].ETag()
		fmt.Println(n)
	}
}

// TestCrashMidBatch: a batch is wholly applied or wholly absent after the
// process running it is killed (SQLite's journal, synchronous=NORMAL in
// WAL mode), and the next process carries on from what is there.
func TestCrashMidBatch(t *testing.T) {
	kills := 12
	if testing.Short() {
		kills = 4
	}
	path := filepath.Join(t.TempDir(), FileName)
	st := open(t, path)
	ctx := context.Background()
	svc := tablesvc.New(st, nil)
	if _, err := svc.CreateTable(ctx, "crash"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(20261128, 28))
	last := -1 // the version every row holds; -1: none yet
	for kill := range kills {
		reported := runAndKill(t, path, last+1, 1+rng.IntN(15))
		if reported <= last {
			t.Fatalf("kill %d: the child reported %d after %d", kill, reported, last)
		}
		p, err := svc.Query(ctx, "crash", tablesvc.Query{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Entities) != crashRows+1 {
			t.Fatalf("kill %d: %d rows, want %d", kill, len(p.Entities), crashRows+1)
		}
		v, _ := p.Entities[0].Prop("V")
		for _, e := range p.Entities {
			if w, _ := e.Prop("V"); w.Int != v.Int {
				t.Fatalf("kill %d: a torn batch: %s holds %d, %s holds %d", kill, p.Entities[0].RowKey, v.Int, e.RowKey, w.Int)
			}
		}
		if v.Int != int64(reported) && v.Int != int64(reported)+1 {
			t.Fatalf("kill %d: rows hold version %d, the child last reported %d", kill, v.Int, reported)
		}
		last = int(v.Int)
	}
	t.Logf("%d kills, %d batches survived", kills, last+1)
}

// runAndKill starts the child at version next, waits for its reports
// until it has committed after commits batches, SIGKILLs it (the next
// batch is then running) and returns the last version it reported.
func runAndKill(t *testing.T, path string, next, commits int) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envCrashDB+"="+path, envCrashVer+"="+strconv.Itoa(next))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	last, seen, childErr := -1, 0, ""
	for sc.Scan() {
		line := sc.Text()
		if line == "ready" {
			continue
		}
		n, err := strconv.Atoi(line)
		if err != nil {
			if strings.HasPrefix(line, "error") {
				childErr = line
			}
			continue // else the test framework's own output
		}
		last, seen = n, seen+1
		if seen == commits {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() { // reports written before the kill landed
		if n, err := strconv.Atoi(sc.Text()); err == nil {
			last = n
		}
	}
	_ = cmd.Wait()
	if seen < commits {
		t.Fatalf("the child stopped after %d batches: %s; stderr: %s", seen, childErr, stderr.String())
	}
	return last
}
