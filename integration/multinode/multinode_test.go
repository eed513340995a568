// Package multinode runs several `blobshare serve` processes on one
// PostgreSQL database (--meta) and races clients across them.
package multinode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/blobshare/blobshare/integration/servetest"
	"github.com/blobshare/blobshare/internal/pgtest"
	"github.com/blobshare/blobshare/storagehttp"
)

var pg = pgtest.New()

var bin string

func TestMain(m *testing.M) {
	b, err := servetest.Build("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = b
	code := m.Run()
	os.RemoveAll(filepath.Dir(bin))
	if err := pg.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// metaURL turns pgtest's key=value connection string into the postgres://
// URL --meta takes (the Unix socket directory as the host parameter).
func metaURL(t testing.TB, kv string) string {
	t.Helper()
	params := map[string]string{}
	for _, f := range strings.Fields(kv) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("connection string %q: field %q", kv, f)
		}
		params[k] = v
	}
	q := url.Values{}
	for _, k := range []string{"host", "port", "sslmode", "search_path"} {
		if v, ok := params[k]; ok {
			q.Set(k, v)
		}
	}
	return "postgres://" + params["user"] + "@/" + params["dbname"] + "?" + q.Encode()
}

// startNodes starts n serve processes on a new schema of cluster c, each
// with its own --data and only the Queue and Table endpoints; params are
// added to the --meta URL's query ("&application_name=…"). It returns
// them with the schema's connection string.
func startNodes(t testing.TB, c *pgtest.Cluster, n int, params string) ([]*servetest.Server, string) {
	t.Helper()
	conn := c.Schema(t)
	meta := metaURL(t, conn) + params
	var nodes []*servetest.Server
	for i := range n {
		s, err := servetest.Start(bin, filepath.Join(t.TempDir(), fmt.Sprint("node", i)),
			"--meta", meta, "--addr", "off", "--smb", "off", "--blob-addr", "off")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			select {
			case <-s.Done: // the test stopped or killed it
				return
			default:
			}
			if err := s.Stop(); err != nil {
				t.Errorf("node %d: %v\n%s", i, err, s.Stderr)
			}
		})
		nodes = append(nodes, s)
	}
	return nodes, conn
}

var noRetry = azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}

// tableClients is an aztables client of table name on each node.
func tableClients(t testing.TB, nodes []*servetest.Server, name string) []*aztables.Client {
	t.Helper()
	cs := make([]*aztables.Client, len(nodes))
	for i, n := range nodes {
		svc, err := aztables.NewServiceClientFromConnectionString(connString("TableEndpoint", n.TableURL), &aztables.ClientOptions{ClientOptions: noRetry})
		if err != nil {
			t.Fatal(err)
		}
		cs[i] = svc.NewClient(name)
	}
	return cs
}

// queueClients is an azqueue client of queue name on each node.
func queueClients(t testing.TB, nodes []*servetest.Server, name string) []*azqueue.QueueClient {
	t.Helper()
	qs := make([]*azqueue.QueueClient, len(nodes))
	for i, n := range nodes {
		svc, err := azqueue.NewServiceClientFromConnectionString(connString("QueueEndpoint", n.QueueURL), &azqueue.ClientOptions{ClientOptions: noRetry})
		if err != nil {
			t.Fatal(err)
		}
		qs[i] = svc.NewQueueClient(name)
	}
	return qs
}

func connString(key, endpoint string) string {
	return "DefaultEndpointsProtocol=http;AccountName=" + storagehttp.DevAccount + ";AccountKey=" + storagehttp.DevKey + ";" + key + "=" + endpoint + ";"
}

// TestServeRefusesWhatIsNotSharedYet: with a postgres --meta, the
// endpoints whose metadata is still in --data (FileREST, SMB, the mount:
// the namespace and the lock table) are refused with one line naming
// them; Blob, Queue and Table are not.
func TestServeRefusesWhatIsNotSharedYet(t *testing.T) {
	meta := metaURL(t, pg.Schema(t))
	const refused = "--meta postgres: only the Queue, Table and Blob services keep their metadata in PostgreSQL so far; "
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--smb", "off"}, refused + "FileREST (--addr) still"},
		{[]string{"--addr", "off"}, refused + "SMB (--smb) still"},
		{[]string{"--addr", "off", "--smb", "off", "--mount", t.TempDir()}, refused + "the mount (--mount) still"},
	} {
		_, err := servetest.Start(bin, t.TempDir(), append([]string{"--meta", meta}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve --meta %v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestQueueAcrossNodes: 200 messages put through three nodes, taken by
// twelve workers spread over the three (visibility one hour, so a message
// is never handed out twice), each deleted with its pop receipt through
// another node than the one that handed it out: every message is received
// and deleted exactly once, and the queue ends empty on every node.
func TestQueueAcrossNodes(t *testing.T) {
	nodes, _ := startNodes(t, pg, 3, "")
	ctx := context.Background()
	qs := queueClients(t, nodes, "shared")
	if _, err := qs[0].Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	const messages = 200
	for i := range messages {
		if _, err := qs[i%3].EnqueueMessage(ctx, fmt.Sprint("m", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var deleted atomic.Int64
	var wg sync.WaitGroup
	for w := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			get, del := qs[w%3], qs[(w+1)%3]
			for {
				r, err := get.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(4)), VisibilityTimeout: to.Ptr(int32(3600))})
				if err != nil {
					t.Errorf("worker %d: get: %v", w, err)
					return
				}
				if len(r.Messages) == 0 {
					return
				}
				for _, m := range r.Messages {
					mu.Lock()
					seen[*m.MessageText]++
					mu.Unlock()
					if _, err := del.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
						t.Errorf("worker %d: delete %s through another node: %v", w, *m.MessageText, err)
						continue
					}
					deleted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != messages || deleted.Load() != messages {
		t.Errorf("%d distinct messages received, %d deleted; want %d each", len(seen), deleted.Load(), messages)
	}
	for text, n := range seen {
		if n != 1 {
			t.Errorf("message %s received %d times", text, n)
		}
	}
	for i, q := range qs {
		r, err := q.PeekMessages(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Messages) != 0 {
			t.Errorf("node %d still shows %d messages", i, len(r.Messages))
		}
	}
}

// TestTableCounterAcrossNodes: 15 workers, five on each of three nodes,
// read-modify-write one counter entity with If-Match and retry on 412:
// the final count equals the number of successful updates (no update is
// lost across nodes), and every node reads that same final count.
func TestTableCounterAcrossNodes(t *testing.T) {
	nodes, _ := startNodes(t, pg, 3, "")
	ctx := context.Background()
	cs := tableClients(t, nodes, "counters")
	if _, err := cs[0].CreateTable(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs[1].AddEntity(ctx, []byte(`{"PartitionKey":"c","RowKey":"n","N":0}`), nil); err != nil {
		t.Fatal(err)
	}
	const workers, each = 15, 8
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := cs[w%3]
			for done := 0; done < each; {
				got, err := c.GetEntity(ctx, "c", "n", nil)
				if err != nil {
					t.Errorf("worker %d: get: %v", w, err)
					return
				}
				var e struct{ N int }
				if err := json.Unmarshal(got.Value, &e); err != nil {
					t.Errorf("worker %d: %v", w, err)
					return
				}
				_, err = c.UpdateEntity(ctx, []byte(fmt.Sprintf(`{"PartitionKey":"c","RowKey":"n","N":%d}`, e.N+1)),
					&aztables.UpdateEntityOptions{IfMatch: &got.ETag, UpdateMode: aztables.UpdateModeReplace})
				var re *azcore.ResponseError
				switch {
				case err == nil:
					done++
				case errors.As(err, &re) && re.StatusCode == 412:
					conflicts.Add(1)
				default:
					t.Errorf("worker %d: update: %v", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, c := range cs {
		got, err := c.GetEntity(ctx, "c", "n", nil)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ N int }
		if err := json.Unmarshal(got.Value, &e); err != nil {
			t.Fatal(err)
		}
		if e.N != workers*each {
			t.Errorf("node %d reads N=%d, want %d (the successful updates)", i, e.N, workers*each)
		}
	}
	t.Logf("%d updates through 3 nodes, %d answered 412 and retried", workers*each, conflicts.Load())
}
