package blobstore_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore"
)

func TestValidKey(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"f/0000000000000042", true},
		{"a", true},
		{"a.b/c-d_e", true},
		{"dir/é/файл", true},
		{".hidden", true},
		{strings.Repeat("k", blobstore.MaxKeyLen), true},
		{"", false},
		{strings.Repeat("k", blobstore.MaxKeyLen+1), false},
		{"/a", false},
		{"a/", false},
		{"a//b", false},
		{".", false},
		{"..", false},
		{"a/./b", false},
		{"a/../b", false},
		{"a.", false},
		{"a./b", false},
		{"a\\b", false},
		{"a\x00b", false},
		{"a\tb", false},
		{"a\x7fb", false},
		{"a\u0085b", false},
		{"\xff\xfe", false},
	} {
		err := blobstore.ValidKey(tc.key)
		if tc.ok && err != nil {
			t.Errorf("ValidKey(%q) = %v, want nil", tc.key, err)
		}
		if !tc.ok && !errors.Is(err, blobstore.ErrInvalidKey) {
			t.Errorf("ValidKey(%q) = %v, want ErrInvalidKey", tc.key, err)
		}
	}
}

func TestValidBlockID(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"a", true},
		{"AZaz09_-", true},
		{strings.Repeat("x", blobstore.MaxBlockIDLen), true},
		{blobstore.NewBlockID(), true},
		{"", false},
		{strings.Repeat("x", blobstore.MaxBlockIDLen+1), false},
		{"a.b", false},
		{"a/b", false},
		{"a=", false},
		{"a+b", false},
		{"ä", false},
	} {
		err := blobstore.ValidBlockID(tc.id)
		if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, blobstore.ErrInvalidKey)) {
			t.Errorf("ValidBlockID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
		}
	}
}

func TestNewBlockIDUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 10000 {
		id := blobstore.NewBlockID()
		if seen[id] {
			t.Fatalf("NewBlockID repeated %q", id)
		}
		seen[id] = true
	}
}

func TestErrNotFoundMatchesFS(t *testing.T) {
	err := wrap(blobstore.ErrNotFound)
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("%v does not match both fs.ErrNotExist and ErrNotFound", err)
	}
	if errors.Is(wrap(blobstore.ErrPreconditionFailed), fs.ErrNotExist) {
		t.Fatal("ErrPreconditionFailed matches fs.ErrNotExist")
	}
}

func wrap(err error) error { return errors.Join(errors.New("ctx"), err) }

func TestConditionsCheck(t *testing.T) {
	const cur = `"0x1"`
	for _, tc := range []struct {
		name   string
		cond   blobstore.Conditions
		exists bool
		ok     bool
	}{
		{"NoneMissing", blobstore.Conditions{}, false, true},
		{"NoneExisting", blobstore.Conditions{}, true, true},
		{"IfMatchCurrent", blobstore.Conditions{IfMatch: cur}, true, true},
		{"IfMatchOther", blobstore.Conditions{IfMatch: `"0x2"`}, true, false},
		{"IfMatchMissing", blobstore.Conditions{IfMatch: cur}, false, false},
		{"IfMatchStarExisting", blobstore.Conditions{IfMatch: "*"}, true, true},
		{"IfMatchStarMissing", blobstore.Conditions{IfMatch: "*"}, false, false},
		{"IfNoneMatchStarMissing", blobstore.Conditions{IfNoneMatch: "*"}, false, true},
		{"IfNoneMatchStarExisting", blobstore.Conditions{IfNoneMatch: "*"}, true, false},
		{"IfNoneMatchCurrent", blobstore.Conditions{IfNoneMatch: cur}, true, false},
		{"IfNoneMatchOther", blobstore.Conditions{IfNoneMatch: `"0x2"`}, true, true},
		{"IfNoneMatchMissing", blobstore.Conditions{IfNoneMatch: cur}, false, true},
		{"BothOK", blobstore.Conditions{IfMatch: cur, IfNoneMatch: `"0x2"`}, true, true},
		{"BothFail", blobstore.Conditions{IfMatch: cur, IfNoneMatch: cur}, true, false},
	} {
		etag := ""
		if tc.exists {
			etag = cur
		}
		err := tc.cond.Check(tc.exists, etag)
		if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, blobstore.ErrPreconditionFailed)) {
			t.Errorf("%s: Check = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// recorder is a minimal in-memory Store that records what Put does.
type recorder struct {
	blobstore.Store // nil: only the methods below are called
	staged          map[string]int64
	committed       []string
}

func (r *recorder) StageBlock(_ context.Context, _, id string, rd io.Reader) (int64, error) {
	n, err := io.Copy(io.Discard, rd)
	r.staged[id] = n
	return n, err
}

func (r *recorder) CommitBlocks(_ context.Context, key string, ids []string, _ blobstore.Conditions) (blobstore.Info, error) {
	r.committed = ids
	var size int64
	for _, id := range ids {
		size += r.staged[id]
	}
	return blobstore.Info{Key: key, Size: size}, nil
}

func TestPutSplitsIntoBlocks(t *testing.T) {
	for _, tc := range []struct {
		size, block int64
		want        []int64
	}{
		{0, 10, nil},
		{1, 10, []int64{1}},
		{10, 10, []int64{10}},
		{11, 10, []int64{10, 1}},
		{30, 10, []int64{10, 10, 10}},
		{5, 0, []int64{5}}, // DefaultBlockSize
	} {
		r := &recorder{staged: map[string]int64{}}
		info, err := blobstore.Put(context.Background(), r, "k", io.LimitReader(zeros{}, tc.size), tc.block, blobstore.Conditions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, id := range r.committed {
			got = append(got, r.staged[id])
		}
		if info.Size != tc.size || len(got) != len(tc.want) {
			t.Fatalf("Put(%d bytes, blocks of %d): committed sizes %v, want %v", tc.size, tc.block, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("Put(%d bytes, blocks of %d): committed sizes %v, want %v", tc.size, tc.block, got, tc.want)
			}
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestCollectGarbageFallback(t *testing.T) {
	r := &recorder{staged: map[string]int64{}}
	rep, err := blobstore.CollectGarbage(context.Background(), r, blobstore.GCOptions{OlderThan: time.Hour})
	if err != nil || rep != (blobstore.GCReport{}) {
		t.Fatalf("CollectGarbage on a store without a collector = %+v, %v", rep, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := blobstore.CollectGarbage(ctx, r, blobstore.GCOptions{OlderThan: time.Hour}); !errors.Is(err, context.Canceled) {
		t.Fatalf("CollectGarbage with a cancelled context = %v", err)
	}
}

// durableRecorder is a recorder with the DurableStager capability.
type durableRecorder struct {
	recorder
	durable []string
}

func (r *durableRecorder) StageBlockDurable(ctx context.Context, key, id string, rd io.Reader) (int64, error) {
	r.durable = append(r.durable, id)
	return r.StageBlock(ctx, key, id, rd)
}

// TestStageBlockDurableHelper: the helper uses the capability when the
// store has it and StageBlock otherwise.
func TestStageBlockDurableHelper(t *testing.T) {
	ctx := context.Background()
	plain := &recorder{staged: map[string]int64{}}
	if n, err := blobstore.StageBlockDurable(ctx, plain, "k", "a", strings.NewReader("abc")); err != nil || n != 3 || plain.staged["a"] != 3 {
		t.Errorf("without the capability: %d, %v, staged %v", n, err, plain.staged)
	}
	d := &durableRecorder{recorder: recorder{staged: map[string]int64{}}}
	if _, err := blobstore.StageBlockDurable(ctx, d, "k", "b", strings.NewReader("xy")); err != nil || len(d.durable) != 1 || d.durable[0] != "b" {
		t.Errorf("with the capability: %v, durable stagings %v", err, d.durable)
	}
}
