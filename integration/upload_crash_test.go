package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/blobshare/blobshare/integration/servetest"
)

// The upload crash tests send 4 MiB ranges or blocks, 4 in flight, as the
// SDKs' uploads do, and SIGKILL serve once killAfter of them have been
// answered, while the others are on their way.
const (
	crashChunk     = 4 << 20
	crashChunks    = 24
	crashWriters   = 4
	crashKillAfter = 10
)

// crashData is chunk i of generation gen: every 8 bytes name both, so a
// chunk read back says which write it came from, and a torn one (bytes of
// two writes, or zeros among data) shows.
func crashData(gen, i int) []byte {
	b := make([]byte, crashChunk)
	for off := 0; off < len(b); off += 8 {
		binary.LittleEndian.PutUint64(b[off:], uint64(gen)<<48|uint64(i)<<32|uint64(off))
	}
	return b
}

// crashFileClient is an azfile client without retries: a request the kill
// cut off must fail, not be sent again to the restarted server.
func crashFileClient(t *testing.T, s *server, share, name string) *file.Client {
	t.Helper()
	c, err := service.NewClientFromConnectionString("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+devKey+
		";FileEndpoint="+s.RESTURL+";", &service.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	return c.NewShareClient(share).NewRootDirectoryClient().NewFileClient(name)
}

// uploadUntilKilled runs put for chunks 0..crashChunks-1 from crashWriters
// goroutines, kills s once crashKillAfter puts were answered, and returns
// the chunks whose put was answered with success before the kill.
func uploadUntilKilled(t *testing.T, s *server, put func(i int) error) map[int]bool {
	t.Helper()
	var mu sync.Mutex
	acked := map[int]bool{}
	next := 0
	kill := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for range crashWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= crashChunks {
					return
				}
				if err := put(i); err != nil {
					return // the kill
				}
				mu.Lock()
				select {
				case <-kill: // answered, but the kill may have come first: not counted
				default:
					acked[i] = true
					if len(acked) == crashKillAfter {
						once.Do(func() { close(kill) })
					}
				}
				mu.Unlock()
			}
		}()
	}
	go func() { wg.Wait(); once.Do(func() { close(kill) }) }()
	<-kill
	mu.Lock() // no answer counts from here on
	if _, err := s.Kill(); err != nil {
		mu.Unlock()
		t.Fatal(err)
	}
	got := make(map[int]bool, len(acked))
	for i := range acked {
		got[i] = true
	}
	mu.Unlock()
	wg.Wait()
	if len(got) < crashKillAfter {
		t.Fatalf("only %d puts answered before the kill", len(got))
	}
	if len(got) == crashChunks {
		t.Fatal("every put was answered before the kill: nothing was in flight")
	}
	t.Logf("%d of %d puts answered before the kill", len(got), crashChunks)
	return got
}

// TestPutRangeSurvivesSIGKILL: serve is killed with SIGKILL while 4 Put
// Ranges of 4 MiB are in flight over a file whose every range holds an
// earlier, acknowledged generation. After a restart on the same --data
// every range answered before the kill holds its new bytes, every other
// range holds one generation whole (never a mix, never zeros), List
// Ranges names the whole file, and the file has its size.
func TestPutRangeSurvivesSIGKILL(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	first, err := servetest.Start(blobshareBin, data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopServe(t, first) })
	if _, err := serviceClient(t, first).CreateShare(ctx, "crash", nil); err != nil {
		t.Fatal(err)
	}
	const size = crashChunks * crashChunk
	fc := crashFileClient(t, first, "crash", "f.bin")
	if _, err := fc.Create(ctx, size, nil); err != nil {
		t.Fatal(err)
	}
	put := func(gen int) func(i int) error {
		return func(i int) error {
			_, err := fc.UploadRange(ctx, int64(i)*crashChunk, streaming.NopCloser(bytes.NewReader(crashData(gen, i))), nil)
			return err
		}
	}
	for i := range crashChunks {
		if err := put(1)(i); err != nil {
			t.Fatalf("generation 1, range %d: %v", i, err)
		}
	}
	acked := uploadUntilKilled(t, first, put(2))

	s := startServe(t, data)
	fc = crashFileClient(t, s, "crash", "f.bin")
	props, err := fc.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *props.ContentLength != size {
		t.Errorf("size %d after the restart, want %d", *props.ContentLength, size)
	}
	for i := range crashChunks {
		resp, err := fc.DownloadStream(ctx, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: int64(i) * crashChunk, Count: crashChunk}})
		if err != nil {
			t.Fatalf("range %d: %v", i, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("range %d: %v", i, err)
		}
		switch {
		case bytes.Equal(got, crashData(2, i)):
		case acked[i]:
			t.Errorf("range %d was acknowledged before the kill but does not hold its bytes (%s)", i, which(got, i))
		case !bytes.Equal(got, crashData(1, i)):
			t.Errorf("range %d is torn: %s", i, which(got, i))
		}
	}
	lr, err := fc.GetRangeList(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Ranges) != 1 || *lr.Ranges[0].Start != 0 || *lr.Ranges[0].End != size-1 {
		var rs []string
		for _, r := range lr.Ranges {
			rs = append(rs, fmt.Sprintf("%d-%d", *r.Start, *r.End))
		}
		t.Errorf("List Ranges after the restart: %v, want [0-%d]", rs, size-1)
	}
}

// which describes a chunk read back: the generations its words name.
func which(got []byte, i int) string {
	if len(got) != crashChunk {
		return fmt.Sprintf("%d bytes", len(got))
	}
	gens := map[uint64]int{}
	for off := 0; off < len(got); off += 8 {
		w := binary.LittleEndian.Uint64(got[off:])
		if w&(1<<32-1) != uint64(off) || (w>>32)&0xffff != uint64(i) {
			gens[1<<16]++ // a word of no write of this range (zeros, or another range's)
			continue
		}
		gens[w>>48]++
	}
	return fmt.Sprintf("words by generation (65536: none): %v", gens)
}

// TestPutBlockSurvivesSIGKILL: serve is killed with SIGKILL while 4 Put
// Blocks of 4 MiB are in flight. After a restart on the same --data every
// block answered before the kill is in the uncommitted block list with its
// size, and a Put Block List of them commits their bytes exactly.
func TestPutBlockSurvivesSIGKILL(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	first, err := servetest.Start(blobshareBin, data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopServe(t, first) })
	if _, err := blobClient(t, first.BlobURL).CreateContainer(ctx, "crash", nil); err != nil {
		t.Fatal(err)
	}
	blockID := func(i int) string { return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "block-%04d", i)) }
	bb := blobClient(t, first.BlobURL).ServiceClient().NewContainerClient("crash").NewBlockBlobClient("b.bin")
	acked := uploadUntilKilled(t, first, func(i int) error {
		_, err := bb.StageBlock(ctx, blockID(i), streaming.NopCloser(bytes.NewReader(crashData(2, i))), nil)
		return err
	})

	s := startServe(t, data)
	bb = blobClient(t, s.BlobURL).ServiceClient().NewContainerClient("crash").NewBlockBlobClient("b.bin")
	bl, err := bb.GetBlockList(ctx, blockblob.BlockListTypeUncommitted, nil)
	if err != nil {
		t.Fatal(err)
	}
	staged := map[string]int64{}
	for _, b := range bl.UncommittedBlocks {
		staged[*b.Name] = *b.Size
	}
	var ids []string
	var want []byte
	for i := range crashChunks {
		if !acked[i] {
			continue
		}
		if n, ok := staged[blockID(i)]; !ok || n != crashChunk {
			t.Errorf("block %d was acknowledged before the kill; after the restart it is staged %v with %d bytes", i, ok, n)
			continue
		}
		ids = append(ids, blockID(i))
		want = append(want, crashData(2, i)...)
	}
	if t.Failed() {
		return
	}
	if _, err := bb.CommitBlockList(ctx, ids, nil); err != nil {
		t.Fatal(err)
	}
	resp, err := bb.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("committed blob: %d bytes (want %d), equal %v, err %v", len(got), len(want), bytes.Equal(got, want), err)
	}
}

// TestPutBlockListSurvivesSIGKILL: serve is killed with SIGKILL while 4
// Put Block Lists are in flight, each committing a new version of its own
// blob: the block of its first version, committed, followed by a block
// staged (and acknowledged) before the commits began. After a restart on
// the same --data every blob whose commit was answered before the kill
// reads as its new version exactly; every other blob reads as its first
// version or its new one, whole.
func TestPutBlockListSurvivesSIGKILL(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	first, err := servetest.Start(blobshareBin, data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopServe(t, first) })
	c := blobClient(t, first.BlobURL)
	if _, err := c.CreateContainer(ctx, "crash", nil); err != nil {
		t.Fatal(err)
	}
	const blk = 1 << 20
	name := func(i int) string { return fmt.Sprintf("b%02d.bin", i) }
	oldID := base64.StdEncoding.EncodeToString([]byte("block-old"))
	newID := base64.StdEncoding.EncodeToString([]byte("block-new"))
	oldData := func(i int) []byte { return crashData(1, i)[:blk] }
	newData := func(i int) []byte { return crashData(2, i)[:blk] }
	stage := func(i int, id string, b []byte) {
		bb := c.ServiceClient().NewContainerClient("crash").NewBlockBlobClient(name(i))
		if _, err := bb.StageBlock(ctx, id, streaming.NopCloser(bytes.NewReader(b)), nil); err != nil {
			t.Fatalf("blob %d: %v", i, err)
		}
	}
	for i := range crashChunks {
		stage(i, oldID, oldData(i))
		bb := c.ServiceClient().NewContainerClient("crash").NewBlockBlobClient(name(i))
		if _, err := bb.CommitBlockList(ctx, []string{oldID}, nil); err != nil {
			t.Fatalf("blob %d, first version: %v", i, err)
		}
		stage(i, newID, newData(i))
	}
	acked := uploadUntilKilled(t, first, func(i int) error {
		bb := c.ServiceClient().NewContainerClient("crash").NewBlockBlobClient(name(i))
		_, err := bb.CommitBlockList(ctx, []string{oldID, newID}, nil)
		return err
	})

	s := startServe(t, data)
	c = blobClient(t, s.BlobURL)
	for i := range crashChunks {
		resp, err := c.DownloadStream(ctx, "crash", name(i), nil)
		if err != nil {
			t.Fatalf("blob %d: %v", i, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("blob %d: %v", i, err)
		}
		both := append(oldData(i), newData(i)...)
		switch {
		case bytes.Equal(got, both):
		case acked[i]:
			t.Errorf("blob %d's commit was acknowledged before the kill, but it reads %d bytes, not its new version", i, len(got))
		case !bytes.Equal(got, oldData(i)):
			t.Errorf("blob %d reads %d bytes: neither version whole", i, len(got))
		}
	}
}
