package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore"
)

// Opts tunes the suite for one backend.
type Opts struct {
	// New returns a store for one subtest (a fresh one, or a shared one:
	// every subtest uses its own keys).
	New func(t *testing.T) blobstore.Store
	// BigSize is the size of the streaming test's blob. 0: 1 GiB, or
	// 64 MiB under -short.
	BigSize int64
	// BigBlockSize is the block size of the streaming test (0: 8 MiB).
	BigBlockSize int64
	// HeapSlack is how far HeapInuse may grow over its baseline during the
	// streaming test (0: 64 MiB).
	HeapSlack uint64
}

// Test runs the conformance suite against the stores newStore makes.
func Test(t *testing.T, newStore func(t *testing.T) blobstore.Store) {
	TestOpt(t, Opts{New: newStore})
}

// TestOpt runs the conformance suite with options.
func TestOpt(t *testing.T, o Opts) {
	if o.BigSize == 0 {
		o.BigSize = 1 << 30
		if testing.Short() {
			o.BigSize = 64 << 20
		}
	}
	if o.BigBlockSize == 0 {
		o.BigBlockSize = 8 << 20
	}
	if o.HeapSlack == 0 {
		o.HeapSlack = 64 << 20
	}
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, blobstore.Store, Opts)
	}{
		{"MissingKey", testMissingKey},
		{"InvalidKeys", testInvalidKeys},
		{"EmptyBlob", testEmptyBlob},
		{"RoundTrip", testRoundTrip},
		{"RangedReads", testRangedReads},
		{"ManyBlocksRange", testManyBlocksRange},
		{"StagedInvisible", testStagedInvisible},
		{"CommitReusesBlocks", testCommitReuse},
		{"UnknownBlock", testUnknownBlock},
		{"FailedPutCommitsNothing", testFailedPut},
		{"Overwrite", testOverwrite},
		{"Conditions", testConditions},
		{"ConcurrentConditionalCommits", testConcurrentCommits},
		{"ConcurrentCreate", testConcurrentCreate},
		{"StagedSurvivesOtherCommits", testStagedSurvives},
		{"ConditionalDelete", testConditionalDelete},
		{"DeleteLeavesStaged", testDeleteLeavesStaged},
		{"List", testList},
		{"ListStopsOnError", testListStop},
		{"CancelledContext", testCancelled},
		{"SnapshotIsolation", testSnapshot},
		{"ConcurrentReadersSeeWholeVersions", testReadersWholeVersions},
		{"Clone", testClone},
		{"BigStream", testBigStream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, o.New(t), o)
		})
	}
}

// put stages each part as one block with a fresh id and commits them.
func put(t *testing.T, s blobstore.Store, key string, cond blobstore.Conditions, parts ...[]byte) (blobstore.Info, []string) {
	t.Helper()
	ctx := context.Background()
	ids := make([]string, len(parts))
	for i, p := range parts {
		ids[i] = blobstore.NewBlockID()
		n, err := s.StageBlock(ctx, key, ids[i], bytes.NewReader(p))
		if err != nil {
			t.Fatalf("StageBlock(%q, part %d): %v", key, i, err)
		}
		if n != int64(len(p)) {
			t.Fatalf("StageBlock(%q, part %d) = %d bytes, want %d", key, i, n, len(p))
		}
	}
	info, err := s.CommitBlocks(ctx, key, ids, cond)
	if err != nil {
		t.Fatalf("CommitBlocks(%q): %v", key, err)
	}
	return info, ids
}

func readAll(t *testing.T, s blobstore.Store, key string, off, n int64) ([]byte, blobstore.Info) {
	t.Helper()
	rc, info, err := s.ReadRange(context.Background(), key, off, n)
	if err != nil {
		t.Fatalf("ReadRange(%q, %d, %d): %v", key, off, n, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("ReadRange(%q, %d, %d): read: %v", key, off, n, err)
	}
	return b, info
}

func wantContent(t *testing.T, s blobstore.Store, key string, want []byte) blobstore.Info {
	t.Helper()
	got, info := readAll(t, s, key, 0, -1)
	if !bytes.Equal(got, want) {
		t.Fatalf("content of %q: %d bytes %.16q…, want %d bytes %.16q…", key, len(got), got, len(want), want)
	}
	if info.Size != int64(len(want)) {
		t.Fatalf("ReadRange(%q) Info.Size = %d, want %d", key, info.Size, len(want))
	}
	return info
}

func testMissingKey(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	const key = "missing/blob"
	for _, tc := range []struct {
		op string
		fn func() error
	}{
		{"Stat", func() error { _, err := s.Stat(ctx, key); return err }},
		{"Blocks", func() error { _, _, err := s.Blocks(ctx, key); return err }},
		{"ReadRange", func() error {
			rc, _, err := s.ReadRange(ctx, key, 0, -1)
			if rc != nil {
				rc.Close()
			}
			return err
		}},
		{"DeleteIfMatch", func() error { return s.Delete(ctx, key, blobstore.Conditions{IfMatch: `"0x1"`}) }},
		{"CommitUnstaged", func() error {
			_, err := s.CommitBlocks(ctx, key, []string{"never-staged"}, blobstore.Conditions{})
			return err
		}},
	} {
		err := tc.fn()
		if !errors.Is(err, blobstore.ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s of a missing blob: %v, want ErrNotFound matching fs.ErrNotExist", tc.op, err)
		}
	}
	if err := s.Delete(ctx, key, blobstore.Conditions{}); err != nil {
		t.Errorf("Delete of a missing blob: %v, want nil", err)
	}
	if err := s.Delete(ctx, key, blobstore.Conditions{}); err != nil {
		t.Errorf("second Delete of a missing blob: %v, want nil", err)
	}
}

func testInvalidKeys(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	for _, key := range []string{"", "/a", "a/", "a//b", "a/./b", "a/../b", "..", "a.", "a\\b", "a\x00b", "a\nb", "\xff", strings.Repeat("k", blobstore.MaxKeyLen+1)} {
		var errs []error
		_, err := s.StageBlock(ctx, key, "b1", strings.NewReader("x"))
		errs = append(errs, err)
		_, err = s.CommitBlocks(ctx, key, nil, blobstore.Conditions{})
		errs = append(errs, err)
		_, err = s.Stat(ctx, key)
		errs = append(errs, err)
		_, _, err = s.Blocks(ctx, key)
		errs = append(errs, err)
		_, _, err = s.ReadRange(ctx, key, 0, -1)
		errs = append(errs, err)
		errs = append(errs, s.Delete(ctx, key, blobstore.Conditions{}))
		for i, err := range errs {
			if !errors.Is(err, blobstore.ErrInvalidKey) {
				t.Errorf("key %q, operation %d: %v, want ErrInvalidKey", key, i, err)
			}
		}
	}
	for _, id := range []string{"", "a/b", "a b", "a=b", "ü", strings.Repeat("i", blobstore.MaxBlockIDLen+1)} {
		if _, err := s.StageBlock(ctx, "ok/key", id, strings.NewReader("x")); !errors.Is(err, blobstore.ErrInvalidKey) {
			t.Errorf("StageBlock with block id %q: %v, want ErrInvalidKey", id, err)
		}
		if _, err := s.CommitBlocks(ctx, "ok/key", []string{id}, blobstore.Conditions{}); !errors.Is(err, blobstore.ErrInvalidKey) {
			t.Errorf("CommitBlocks with block id %q: %v, want ErrInvalidKey", id, err)
		}
	}
	// The longest ids, and long or unusual keys, work everywhere.
	long := strings.Repeat("x", blobstore.MaxBlockIDLen)
	for _, key := range []string{
		"k/" + strings.Repeat("y", blobstore.MaxKeyLen-2),
		"long/" + strings.Repeat("é", 300),
		"odd/with space/100%/a+b=c&d?e#f",
		"odd/.hidden/-dash/_under",
	} {
		if _, err := s.StageBlock(ctx, key, long, strings.NewReader("z")); err != nil {
			t.Fatalf("StageBlock with a %d-byte key and a 64-byte id: %v", len(key), err)
		}
		if _, err := s.CommitBlocks(ctx, key, []string{long}, blobstore.Conditions{}); err != nil {
			t.Fatalf("CommitBlocks with a %d-byte key and a 64-byte id: %v", len(key), err)
		}
		wantContent(t, s, key, []byte("z"))
		got, _ := listAll(t, s, key, "", 0)
		if len(got) != 1 || got[0] != key {
			t.Fatalf("List(prefix = a %d-byte key) = %d keys, want just it", len(key), len(got))
		}
		if err := s.Delete(ctx, key, blobstore.Conditions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func testEmptyBlob(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		parts [][]byte
	}{
		{"NoBlocks", nil},
		{"OneEmptyBlock", [][]byte{{}}},
		{"EmptyBlocksAround", [][]byte{{}, []byte("mid"), {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "empty/" + tc.name
			info, _ := put(t, s, key, blobstore.Conditions{}, tc.parts...)
			want := bytes.Join(tc.parts, nil)
			if info.Size != int64(len(want)) || info.ETag == "" || info.Key != key {
				t.Fatalf("commit Info = %+v, want size %d, key %q and an ETag", info, len(want), key)
			}
			st, err := s.Stat(ctx, key)
			if err != nil || st.Size != int64(len(want)) || st.ETag != info.ETag {
				t.Fatalf("Stat = %+v, %v; want size %d ETag %s", st, err, len(want), info.ETag)
			}
			wantContent(t, s, key, want)
			blocks, _, err := s.Blocks(ctx, key)
			if err != nil || len(blocks) != len(tc.parts) {
				t.Fatalf("Blocks = %v, %v; want %d blocks", blocks, err, len(tc.parts))
			}
		})
	}
}

func testRoundTrip(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		sizes []int64
	}{
		{"OneByte", []int64{1}},
		{"OneBlock", []int64{100_000}},
		{"OddBlocks", []int64{1, 4097, 65535, 3, 1 << 20}},
		{"Equal", []int64{1 << 18, 1 << 18, 1 << 18}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "rt/" + tc.name
			var parts [][]byte
			for i, n := range tc.sizes {
				parts = append(parts, DataAt(uint64(i+1), 0, n))
			}
			info, ids := put(t, s, key, blobstore.Conditions{}, parts...)
			want := bytes.Join(parts, nil)
			if got := wantContent(t, s, key, want); got.ETag != info.ETag {
				t.Errorf("ReadRange ETag %s, commit ETag %s", got.ETag, info.ETag)
			}
			blocks, binfo, err := s.Blocks(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if binfo.ETag != info.ETag || binfo.Size != int64(len(want)) {
				t.Errorf("Blocks Info = %+v, want ETag %s size %d", binfo, info.ETag, len(want))
			}
			st, err := s.Stat(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(info.LastModified); d < -time.Hour || d > time.Hour {
				t.Errorf("commit LastModified %v is not about now", info.LastModified)
			}
			if !st.LastModified.Truncate(time.Second).Equal(info.LastModified.Truncate(time.Second)) || st.Key != key {
				t.Errorf("Stat = %+v, commit said %+v", st, info)
			}
			if len(blocks) != len(ids) {
				t.Fatalf("Blocks = %d entries, want %d", len(blocks), len(ids))
			}
			for i, b := range blocks {
				if b.ID != ids[i] || b.Size != tc.sizes[i] {
					t.Errorf("block %d = %+v, want {%s %d}", i, b, ids[i], tc.sizes[i])
				}
			}
		})
	}
}

func testRangedReads(t *testing.T, s blobstore.Store, _ Opts) {
	const key = "range/blob"
	sizes := []int64{1000, 1, 3333, 7}
	var parts [][]byte
	for i, n := range sizes {
		parts = append(parts, DataAt(uint64(10+i), 0, n))
	}
	put(t, s, key, blobstore.Conditions{}, parts...)
	all := bytes.Join(parts, nil)
	size := int64(len(all))
	for _, tc := range []struct{ off, n int64 }{
		{0, -1}, {0, 0}, {0, 1}, {1, 1}, {999, 1}, {999, 2}, {1000, 1}, {1001, 1},
		{999, 3}, {7, 4000}, {1001, 3333}, {size - 1, 1}, {size - 1, 100}, {size - 7, -1},
		{size, -1}, {size, 10}, {size + 1, 5}, {1 << 40, -1}, {333, size}, {17, 1 << 40},
	} {
		t.Run(fmt.Sprintf("%d+%d", tc.off, tc.n), func(t *testing.T) {
			lo := min(tc.off, size)
			hi := size
			if tc.n >= 0 && tc.off+tc.n < size {
				hi = tc.off + tc.n
			}
			got, info := readAll(t, s, key, tc.off, tc.n)
			if !bytes.Equal(got, all[lo:hi]) {
				t.Fatalf("got %d bytes, want %d (bytes %d..%d)", len(got), hi-lo, lo, hi)
			}
			if info.Size != size {
				t.Errorf("Info.Size = %d, want the blob's size %d", info.Size, size)
			}
		})
	}
	if _, _, err := s.ReadRange(context.Background(), key, -1, 5); !errors.Is(err, blobstore.ErrInvalidRange) {
		t.Errorf("ReadRange at -1: %v, want ErrInvalidRange", err)
	}
}

func testManyBlocksRange(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	const key = "many/blocks"
	const nblocks, bsize = 300, 1001
	ids := make([]string, nblocks)
	for i := range ids {
		ids[i] = fmt.Sprintf("blk-%04d", i)
		if _, err := s.StageBlock(ctx, key, ids[i], Data(7, nblocks*bsize).(*dataReader).section(int64(i)*bsize, bsize)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CommitBlocks(ctx, key, ids, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ off, n int64 }{{150*bsize - 3, 10}, {299*bsize + 1000, 1}, {5, 5 * bsize}, {0, -1}} {
		got, _ := readAll(t, s, key, r.off, r.n)
		n := r.n
		if n < 0 {
			n = nblocks * bsize
		}
		if want := DataAt(7, r.off, n); !bytes.Equal(got, want) {
			t.Errorf("range %d+%d of a %d-block blob differs", r.off, r.n, nblocks)
		}
	}
}

func (r *dataReader) section(off, n int64) io.Reader {
	return &dataReader{seed: r.seed, pos: off, end: off + n}
}

func testStagedInvisible(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	const key = "staged/only"
	if _, err := s.StageBlock(ctx, key, "a", strings.NewReader("never committed")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, key); !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("Stat of a blob with only staged blocks: %v, want ErrNotFound", err)
	}
	if _, _, err := s.Blocks(ctx, key); !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("Blocks of a blob with only staged blocks: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, key, blobstore.Conditions{}); err != nil {
		t.Fatalf("Delete of a blob with only staged blocks: %v, want nil", err)
	}
	info, _ := put(t, s, key, blobstore.Conditions{}, []byte("v1"))
	if _, err := s.StageBlock(ctx, key, "b", strings.NewReader("staged later")); err != nil {
		t.Fatal(err)
	}
	if got := wantContent(t, s, key, []byte("v1")); got.ETag != info.ETag {
		t.Fatalf("staging changed the ETag: %s → %s", info.ETag, got.ETag)
	}
	// Staging an id again replaces its data.
	if _, err := s.StageBlock(ctx, key, "c", strings.NewReader("first")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StageBlock(ctx, key, "c", strings.NewReader("second")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitBlocks(ctx, key, []string{"c"}, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	wantContent(t, s, key, []byte("second"))
}

func testCommitReuse(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	const key = "reuse/blob"
	a, b, c := DataAt(1, 0, 5000), DataAt(2, 0, 70000), DataAt(3, 0, 3)
	info1, ids := put(t, s, key, blobstore.Conditions{}, a, b, c)
	d := []byte("replacement for b")
	if _, err := s.StageBlock(ctx, key, "dnew", bytes.NewReader(d)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		list []string
		want [][]byte
	}{
		{"ReplaceMiddle", []string{ids[0], "dnew", ids[2]}, [][]byte{a, d, c}},
		{"Reorder", []string{ids[2], "dnew", ids[0]}, [][]byte{c, d, a}},
		{"Repeat", []string{ids[0], ids[0], "dnew"}, [][]byte{a, a, d}},
		{"Drop", []string{"dnew"}, [][]byte{d}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev, err := s.Stat(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			info, err := s.CommitBlocks(ctx, key, tc.list, blobstore.Conditions{IfMatch: prev.ETag})
			if err != nil {
				t.Fatalf("CommitBlocks(%v): %v", tc.list, err)
			}
			if info.ETag == prev.ETag || info.ETag == info1.ETag {
				t.Errorf("commit kept an old ETag %s", info.ETag)
			}
			wantContent(t, s, key, bytes.Join(tc.want, nil))
			blocks, _, err := s.Blocks(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range blocks {
				got = append(got, b.ID)
			}
			if !slices.Equal(got, tc.list) {
				t.Errorf("Blocks ids = %v, want %v", got, tc.list)
			}
		})
	}
}

func testUnknownBlock(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	const key = "unknown/block"
	info, ids := put(t, s, key, blobstore.Conditions{}, []byte("keep me"))
	_, err := s.CommitBlocks(ctx, key, []string{ids[0], "nosuchblock"}, blobstore.Conditions{})
	if !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("commit naming an unknown block: %v, want ErrNotFound", err)
	}
	if got := wantContent(t, s, key, []byte("keep me")); got.ETag != info.ETag {
		t.Fatalf("failed commit changed the ETag")
	}
}

func testOverwrite(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	const key = "over/write"
	seen := map[string]bool{}
	for i := range 5 {
		content := DataAt(uint64(100+i), 0, int64(1000*i+1))
		info, _ := put(t, s, key, blobstore.Conditions{}, content)
		if seen[info.ETag] {
			t.Fatalf("commit %d reused ETag %s", i, info.ETag)
		}
		seen[info.ETag] = true
		wantContent(t, s, key, content)
	}
	// A staged id shadows the committed block of the same id.
	_, ids := put(t, s, key, blobstore.Conditions{}, []byte("committed"))
	if _, err := s.StageBlock(ctx, key, ids[0], strings.NewReader("restaged")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitBlocks(ctx, key, ids, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	wantContent(t, s, key, []byte("restaged"))
}

func testConditions(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	const key = "cond/blob"
	stage := func(data string) string {
		id := blobstore.NewBlockID()
		if _, err := s.StageBlock(ctx, key, id, strings.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		return id
	}
	commit := func(data string, cond blobstore.Conditions) (blobstore.Info, error) {
		return s.CommitBlocks(ctx, key, []string{stage(data)}, cond)
	}
	if _, err := commit("x", blobstore.Conditions{IfMatch: `"0x123"`}); !errors.Is(err, blobstore.ErrPreconditionFailed) {
		t.Errorf("If-Match on a missing blob: %v, want ErrPreconditionFailed", err)
	}
	v1, err := commit("v1", blobstore.Conditions{IfNoneMatch: "*"})
	if err != nil {
		t.Fatalf("If-None-Match * on a missing blob: %v", err)
	}
	for _, tc := range []struct {
		name string
		cond blobstore.Conditions
	}{
		{"IfNoneMatchStarExisting", blobstore.Conditions{IfNoneMatch: "*"}},
		{"IfMatchStale", blobstore.Conditions{IfMatch: `"0xstale"`}},
		{"IfNoneMatchCurrent", blobstore.Conditions{IfNoneMatch: v1.ETag}},
	} {
		if _, err := commit("nope", tc.cond); !errors.Is(err, blobstore.ErrPreconditionFailed) {
			t.Errorf("%s: %v, want ErrPreconditionFailed", tc.name, err)
		}
	}
	wantContent(t, s, key, []byte("v1"))
	v2, err := commit("v2", blobstore.Conditions{IfMatch: v1.ETag})
	if err != nil {
		t.Fatalf("If-Match current ETag: %v", err)
	}
	if _, err := commit("v3", blobstore.Conditions{IfMatch: v1.ETag}); !errors.Is(err, blobstore.ErrPreconditionFailed) {
		t.Errorf("If-Match of the replaced version: %v, want ErrPreconditionFailed", err)
	}
	if _, err := commit("v3", blobstore.Conditions{IfNoneMatch: v1.ETag}); err != nil {
		t.Errorf("If-None-Match of an old ETag: %v, want success", err)
	}
	if _, err := commit("v4", blobstore.Conditions{IfMatch: "*"}); err != nil {
		t.Errorf("If-Match * on an existing blob: %v", err)
	}
	_ = v2
	wantContent(t, s, key, []byte("v4"))
}

func testConcurrentCommits(t *testing.T, s blobstore.Store, _ Opts) {
	const key = "race/blob"
	base, _ := put(t, s, key, blobstore.Conditions{}, []byte("base"))
	const writers = 6
	for round := range 3 {
		infos, errs := commitAtOnce(t, s, key, fmt.Sprintf("r%dw", round), writers, blobstore.Conditions{IfMatch: base.ETag})
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won with If-Match %s", round, winner, w, base.ETag)
				}
				winner = w
			case !errors.Is(err, blobstore.ErrPreconditionFailed):
				t.Fatalf("round %d writer %d: %v, want ErrPreconditionFailed", round, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		got := wantContent(t, s, key, fmt.Appendf(nil, "r%dw%d", round, winner))
		if got.ETag != infos[winner].ETag {
			t.Fatalf("round %d: ETag %s, winner committed %s", round, got.ETag, infos[winner].ETag)
		}
		base = got
	}
}

// commitAtOnce stages one block per writer (id prefix+n, the id as its
// content), then lets all writers commit their own block under cond at
// the same moment, and returns what each commit answered.
func commitAtOnce(t *testing.T, s blobstore.Store, key, prefix string, writers int, cond blobstore.Conditions) ([]blobstore.Info, []error) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, writers)
	infos := make([]blobstore.Info, writers)
	start := make(chan struct{})
	for w := range writers {
		id := fmt.Sprintf("%s%d", prefix, w)
		if _, err := s.StageBlock(ctx, key, id, strings.NewReader(id)); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			infos[w], errs[w] = s.CommitBlocks(ctx, key, []string{id}, cond)
		}()
	}
	close(start)
	wg.Wait()
	return infos, errs
}

// testStagedSurvives: writers that each staged a block before any of
// them commits, then commit unconditionally at once, all succeed (the
// first commit must not make the others' blocks unknown); each commit's
// ETag is new, and the blob ends as one writer's block.
func testStagedSurvives(t *testing.T, s blobstore.Store, _ Opts) {
	const key = "staged/survives"
	const writers = 6
	for round := range 2 {
		infos, errs := commitAtOnce(t, s, key, fmt.Sprintf("s%dw", round), writers, blobstore.Conditions{})
		etags := map[string]bool{}
		for w, err := range errs {
			if err != nil {
				t.Fatalf("round %d writer %d: commit of its staged block: %v", round, w, err)
			}
			if etags[infos[w].ETag] {
				t.Fatalf("round %d: two commits answered ETag %s", round, infos[w].ETag)
			}
			etags[infos[w].ETag] = true
		}
		got, info := readAll(t, s, key, 0, -1)
		if !etags[info.ETag] || !bytes.HasPrefix(got, fmt.Appendf(nil, "s%dw", round)) || len(got) != 4 {
			t.Fatalf("round %d: blob is %q (ETag %s), want one writer's block", round, got, info.ETag)
		}
	}
}

func testConcurrentCreate(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	const key = "race/create"
	const writers = 6
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		id := fmt.Sprintf("c%d", w)
		if _, err := s.StageBlock(ctx, key, id, strings.NewReader(id)); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[w] = s.CommitBlocks(ctx, key, []string{id}, blobstore.Conditions{IfNoneMatch: "*"})
		}()
	}
	wg.Wait()
	wins := 0
	for w, err := range errs {
		if err == nil {
			wins++
			wantContent(t, s, key, fmt.Appendf(nil, "c%d", w))
		} else if !errors.Is(err, blobstore.ErrPreconditionFailed) {
			t.Errorf("writer %d: %v, want ErrPreconditionFailed", w, err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d creators won with If-None-Match *, want 1", wins)
	}
}

func testConditionalDelete(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	const key = "cond/delete"
	info, _ := put(t, s, key, blobstore.Conditions{}, []byte("data"))
	if err := s.Delete(ctx, key, blobstore.Conditions{IfMatch: `"0xwrong"`}); !errors.Is(err, blobstore.ErrPreconditionFailed) {
		t.Fatalf("Delete with a wrong If-Match: %v, want ErrPreconditionFailed", err)
	}
	wantContent(t, s, key, []byte("data"))
	if err := s.Delete(ctx, key, blobstore.Conditions{IfMatch: info.ETag}); err != nil {
		t.Fatalf("Delete with the current ETag: %v", err)
	}
	if _, err := s.Stat(ctx, key); !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("Stat after Delete: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, key, blobstore.Conditions{IfMatch: info.ETag}); !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("conditional Delete of a deleted blob: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, key, blobstore.Conditions{}); err != nil {
		t.Fatalf("Delete of a deleted blob: %v", err)
	}
	// The key can be created again.
	put(t, s, key, blobstore.Conditions{IfNoneMatch: "*"}, []byte("again"))
	wantContent(t, s, key, []byte("again"))
}

// testDeleteLeavesStaged: an unconditional Delete of a key that has only
// staged blocks (fs deletes a stale blob before a file's first commit)
// leaves them for the commit.
func testDeleteLeavesStaged(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	const key = "delete/staged"
	if _, err := s.StageBlock(ctx, key, "first", strings.NewReader("staged before the delete")); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, key, blobstore.Conditions{}); err != nil {
		t.Fatalf("Delete of a key with only staged blocks: %v", err)
	}
	if _, err := s.CommitBlocks(ctx, key, []string{"first"}, blobstore.Conditions{IfNoneMatch: "*"}); err != nil {
		t.Fatalf("commit of a block staged before a Delete: %v", err)
	}
	wantContent(t, s, key, []byte("staged before the delete"))
}

func listAll(t *testing.T, s blobstore.Store, prefix, marker string, limit int) ([]string, string) {
	t.Helper()
	var keys []string
	next, err := s.List(context.Background(), prefix, marker, limit, func(i blobstore.Info) error {
		keys = append(keys, i.Key)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%q, %q, %d): %v", prefix, marker, limit, err)
	}
	return keys, next
}

func testList(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	p := "list" + strings.ToLower(blobstore.NewBlockID()[:8]) + "/"
	names := []string{"b", "a", "a-b", "a/b", "a/c", "ab", "A", "z/z/z", "é"}
	sizes := map[string]int64{}
	for i, n := range names {
		data := DataAt(uint64(i), 0, int64(i*10))
		put(t, s, p+n, blobstore.Conditions{}, data)
		sizes[p+n] = int64(len(data))
	}
	// Not listed: staged only, and deleted.
	if _, err := s.StageBlock(ctx, p+"staged", "x", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	put(t, s, p+"gone", blobstore.Conditions{}, []byte("x"))
	if err := s.Delete(ctx, p+"gone", blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range names {
		want = append(want, p+n)
	}
	slices.Sort(want)
	var got []string
	next, err := s.List(ctx, p, "", 0, func(i blobstore.Info) error {
		got = append(got, i.Key)
		if i.Size != sizes[i.Key] || i.ETag == "" {
			t.Errorf("List Info %+v, want size %d and an ETag", i, sizes[i.Key])
		}
		return nil
	})
	if err != nil || next != "" {
		t.Fatalf("List all = next %q, %v", next, err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("List = %q\nwant %q", got, want)
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{p + "a", []string{p + "a", p + "a-b", p + "a/b", p + "a/c", p + "ab"}},
		{p + "a/", []string{p + "a/b", p + "a/c"}},
		{p + "z/z/", []string{p + "z/z/z"}},
		{p + "q", nil},
		{p + "é", []string{p + "é"}},
	} {
		if got, _ := listAll(t, s, tc.prefix, "", 0); !slices.Equal(got, tc.want) {
			t.Errorf("List(prefix %q) = %q, want %q", tc.prefix, got, tc.want)
		}
	}
	if got, _ := listAll(t, s, p, p+"a/b", 0); !slices.Equal(got, want[slices.Index(want, p+"a/b")+1:]) {
		t.Errorf("List after marker a/b = %q", got)
	}
	for _, limit := range []int{1, 2, 4, len(names), len(names) + 1} {
		var pages []string
		marker := ""
		for i := 0; ; i++ {
			if i > len(names)+1 {
				t.Fatalf("limit %d: paging does not end", limit)
			}
			keys, next := listAll(t, s, p, marker, limit)
			if len(keys) > limit {
				t.Fatalf("limit %d: page of %d", limit, len(keys))
			}
			pages = append(pages, keys...)
			if next == "" {
				break
			}
			if len(keys) == 0 {
				t.Fatalf("limit %d: empty page with next marker %q", limit, next)
			}
			marker = next
		}
		if !slices.Equal(pages, want) {
			t.Errorf("limit %d: pages = %q, want %q", limit, pages, want)
		}
	}
}

func testListStop(t *testing.T, s blobstore.Store, _ Opts) {
	p := "stop" + strings.ToLower(blobstore.NewBlockID()[:8]) + "/"
	for _, n := range []string{"1", "2", "3"} {
		put(t, s, p+n, blobstore.Conditions{}, []byte(n))
	}
	stop := errors.New("stop here")
	calls := 0
	_, err := s.List(context.Background(), p, "", 0, func(blobstore.Info) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("List returned %v, want the callback's error as is", err)
	}
	if calls != 2 {
		t.Fatalf("callback called %d times after failing, want 2", calls)
	}
}

func testCancelled(t *testing.T, s blobstore.Store, _ Opts) {
	const key = "cancel/blob"
	put(t, s, key, blobstore.Conditions{}, []byte("data"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		op string
		fn func() error
	}{
		{"StageBlock", func() error { _, err := s.StageBlock(ctx, key, "cx", strings.NewReader("x")); return err }},
		{"CommitBlocks", func() error { _, err := s.CommitBlocks(ctx, key, nil, blobstore.Conditions{}); return err }},
		{"Blocks", func() error { _, _, err := s.Blocks(ctx, key); return err }},
		{"ReadRange", func() error {
			rc, _, err := s.ReadRange(ctx, key, 0, -1)
			if err == nil {
				_, err = io.ReadAll(rc)
				rc.Close()
			}
			return err
		}},
		{"Stat", func() error { _, err := s.Stat(ctx, key); return err }},
		{"Delete", func() error { return s.Delete(ctx, key, blobstore.Conditions{}) }},
		{"List", func() error {
			_, err := s.List(ctx, "", "", 0, func(blobstore.Info) error { return nil })
			return err
		}},
	} {
		if err := tc.fn(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", tc.op, err)
		}
	}
	wantContent(t, s, key, []byte("data"))

	// Cancelling while reading stops the reader.
	big := DataAt(9, 0, 4<<20)
	put(t, s, key, blobstore.Conditions{}, big[:2<<20], big[2<<20:])
	ctx, cancel = context.WithCancel(context.Background())
	rc, _, err := s.ReadRange(ctx, key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.ReadFull(rc, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := io.Copy(io.Discard, rc); err == nil {
		t.Errorf("reading 4 MiB on after cancelling the context succeeded, want an error")
	}
}

func testSnapshot(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	const key = "snap/blob"
	v1 := [][]byte{DataAt(21, 0, 100_000), DataAt(22, 0, 100_000), DataAt(23, 0, 100_000)}
	put(t, s, key, blobstore.Conditions{}, v1...)
	rc, info, err := s.ReadRange(ctx, key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	first := make([]byte, 10)
	if _, err := io.ReadFull(rc, first); err != nil {
		t.Fatal(err)
	}
	// Replace every block, twice, while the reader is open.
	put(t, s, key, blobstore.Conditions{IfMatch: info.ETag}, DataAt(31, 0, 300_000))
	put(t, s, key, blobstore.Conditions{}, []byte("v3"))
	if gc, ok := s.(blobstore.GarbageCollector); ok {
		if _, err := gc.CollectGarbage(ctx, blobstore.GCOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rest, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading the old version after two commits: %v", err)
	}
	if got, want := append(first, rest...), bytes.Join(v1, nil); !bytes.Equal(got, want) {
		t.Fatalf("reader opened before the commits read %d bytes, not the old version's %d bytes", len(got), len(want))
	}
	wantContent(t, s, key, []byte("v3"))
}

// heapWatch samples HeapInuse and remembers the peak.
type heapWatch struct {
	base, peak uint64
	last       int64
}

func newHeapWatch() *heapWatch {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return &heapWatch{base: ms.HeapInuse, peak: ms.HeapInuse}
}

// at samples when at least 32 MiB went by since the last sample.
func (h *heapWatch) at(pos int64) {
	if pos-h.last < 32<<20 {
		return
	}
	h.last = pos
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.peak = max(h.peak, ms.HeapInuse)
}

type watchedReader struct {
	r   io.Reader
	h   *heapWatch
	pos int64
}

func (w *watchedReader) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	w.pos += int64(n)
	w.h.at(w.pos)
	return n, err
}

type watchedWriter struct {
	w   hash.Hash
	h   *heapWatch
	pos int64
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.pos += int64(n)
	w.h.at(w.pos)
	return n, err
}

func testBigStream(t *testing.T, s blobstore.Store, o Opts) {
	ctx := context.Background()
	const key = "big/stream"
	size := o.BigSize
	h := newHeapWatch()
	wantHash := sha256.New()
	src := &watchedReader{r: io.TeeReader(Data(42, size), wantHash), h: h}
	info, err := blobstore.Put(ctx, s, key, src, o.BigBlockSize, blobstore.Conditions{})
	if err != nil {
		t.Fatalf("Put %d bytes: %v", size, err)
	}
	if info.Size != size || src.pos != size {
		t.Fatalf("Put: Info.Size %d, read %d, want %d", info.Size, src.pos, size)
	}
	rc, _, err := s.ReadRange(ctx, key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	got := &watchedWriter{w: sha256.New(), h: h}
	h.last = 0
	n, err := io.Copy(got, rc)
	rc.Close()
	if err != nil || n != size {
		t.Fatalf("read back %d bytes, %v; want %d", n, err, size)
	}
	if !bytes.Equal(got.w.Sum(nil), wantHash.Sum(nil)) {
		t.Fatalf("read back a different %d bytes (sha256 mismatch)", size)
	}
	growth := int64(h.peak) - int64(h.base)
	t.Logf("streamed %d MiB in %d MiB blocks; HeapInuse peak %+d MiB over baseline", size>>20, o.BigBlockSize>>20, growth>>20)
	if growth > int64(o.HeapSlack) {
		t.Fatalf("HeapInuse grew by %d MiB while streaming %d MiB, limit %d MiB: something buffers the blob", growth>>20, size>>20, o.HeapSlack>>20)
	}
	if err := s.Delete(ctx, key, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
}

// versionContent is version v of the blob testReadersWholeVersions writes:
// v+1 blocks, every byte equal to v, 1000*(v+1)+v bytes in all, so a reader
// can tell from the bytes alone whether it saw exactly one version.
func versionContent(v int) [][]byte {
	parts := make([][]byte, v%4+1)
	total := 1000*(v+1) + v
	for i := range parts {
		n := total / len(parts)
		if i == len(parts)-1 {
			n = total - n*(len(parts)-1)
		}
		parts[i] = bytes.Repeat([]byte{byte(v)}, n)
	}
	return parts
}

func testReadersWholeVersions(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	const key = "versions/blob"
	const versions = 30
	put(t, s, key, blobstore.Conditions{}, versionContent(0)...)
	done := make(chan struct{})
	errc := make(chan error, 3)
	for range 3 {
		go func() {
			for {
				rc, info, err := s.ReadRange(ctx, key, 0, -1)
				if err != nil {
					errc <- err
					return
				}
				b, err := io.ReadAll(rc)
				rc.Close()
				if err != nil {
					errc <- err
					return
				}
				v := int(b[0])
				if len(b) != 1000*(v+1)+v || int64(len(b)) != info.Size || bytes.Count(b, b[:1]) != len(b) {
					errc <- fmt.Errorf("read %d bytes (Info.Size %d) starting with version %d: not one whole version", len(b), info.Size, v)
					return
				}
				select {
				case <-done:
					errc <- nil
					return
				default:
				}
			}
		}()
	}
	for v := 1; v < versions; v++ {
		put(t, s, key, blobstore.Conditions{}, versionContent(v)...)
	}
	close(done)
	for range 3 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

var errBrokenSource = errors.New("storetest: source broke")

// brokenReader yields n bytes of Data, then fails.
type brokenReader struct {
	r io.Reader
	n int64
}

func (b *brokenReader) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, errBrokenSource
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	k, err := b.r.Read(p)
	b.n -= int64(k)
	return k, err
}

func testFailedPut(t *testing.T, s blobstore.Store, _ Opts) {
	ctx := context.Background()
	const key = "failed/put"
	info, _ := put(t, s, key, blobstore.Conditions{}, []byte("version one"))
	src := &brokenReader{r: Data(5, 1<<20), n: 150_000}
	_, err := blobstore.Put(ctx, s, key, src, 100_000, blobstore.Conditions{IfMatch: info.ETag})
	if !errors.Is(err, errBrokenSource) {
		t.Fatalf("Put from a failing reader = %v, want the reader's error", err)
	}
	if got := wantContent(t, s, key, []byte("version one")); got.ETag != info.ETag {
		t.Fatalf("a failed Put changed the ETag %s → %s", info.ETag, got.ETag)
	}
	// And the next Put works.
	if _, err := blobstore.Put(ctx, s, key, strings.NewReader("version two"), 4, blobstore.Conditions{IfMatch: info.ETag}); err != nil {
		t.Fatal(err)
	}
	wantContent(t, s, key, []byte("version two"))
}
