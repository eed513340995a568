package queue_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"

	"github.com/blobshare/blobshare/queue"
)

// hostDialer is an HTTP client that sends every request, whatever its
// host, to the server of serverURL: the SDK addresses
// http://ACCOUNT.queue.core.windows.net as it would Azure.
func hostDialer(t *testing.T, serverURL string) policy.Transporter {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	var d net.Dialer
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, u.Host)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// A production-style URL (the account in the host, the path starting at
// the queue) reaches the same queues as the path-style one, with
// SharedKey and a service SAS; listings name the endpoint as addressed.
func TestProductionStyleURL(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	opts := &azqueue.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: hostDialer(t, e.URL), Retry: policy.RetryOptions{MaxRetries: -1}}}
	cred, err := azqueue.NewSharedKeyCredential(queue.DevAccount, queue.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + queue.DevAccount + ".queue.core.windows.net/"
	prod, err := azqueue.NewServiceClientWithSharedKeyCredential(endpoint, cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	q := prod.NewQueueClient("hosts")
	if _, err := q.Create(ctx, nil); err != nil {
		t.Fatalf("create queue: %v", err)
	}
	if _, err := q.EnqueueMessage(ctx, "hello", nil); err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	// The path-style client sees the message.
	peek, err := e.service(t).NewQueueClient("hosts").PeekMessage(ctx, nil)
	if err != nil || len(peek.Messages) != 1 || *peek.Messages[0].MessageText != "hello" {
		t.Fatalf("path-style peek: %+v, %v", peek, err)
	}

	pager := prod.NewListQueuesPager(nil)
	page, err := pager.NextPage(ctx)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if page.ServiceEndpoint == nil || *page.ServiceEndpoint != endpoint {
		t.Errorf("ServiceEndpoint = %v, want %s", page.ServiceEndpoint, endpoint)
	}
	if len(page.Queues) != 1 || *page.Queues[0].Name != "hosts" {
		t.Errorf("listed %+v, want [hosts]", page.Queues)
	}

	// A service SAS signed for the production-style URL reads the queue.
	sasURL, err := q.GetSASURL(sas.QueuePermissions{Read: true, Process: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	anon, err := azqueue.NewQueueClientWithNoCredential(sasURL, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := anon.DequeueMessage(ctx, nil)
	if err != nil || len(got.Messages) != 1 || *got.Messages[0].MessageText != "hello" {
		t.Fatalf("dequeue with a production-style SAS: %+v, %v", got, err)
	}
}
