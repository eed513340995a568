package table_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/blobshare/blobshare/table"
)

// hostDialer is an HTTP client that sends every request, whatever its
// host, to the server of serverURL: the SDK addresses
// http://ACCOUNT.table.core.windows.net as it would Azure.
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
// Tables or the table) reaches the same tables as the path-style one,
// with SharedKey, a transaction and a table SAS; OData metadata URLs
// name the endpoint as addressed.
func TestProductionStyleURL(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	opts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: hostDialer(t, e.URL), Retry: policy.RetryOptions{MaxRetries: -1}}}
	cred, err := aztables.NewSharedKeyCredential(table.DevAccount, table.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + table.DevAccount + ".table.core.windows.net/"
	prod, err := aztables.NewServiceClientWithSharedKey(endpoint, cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prod.CreateTable(ctx, "hosts", nil); err != nil {
		t.Fatalf("create table: %v", err)
	}
	c := prod.NewClient("hosts")
	if _, err := c.AddEntity(ctx, mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r1", "V": "one"}), nil); err != nil {
		t.Fatalf("add entity: %v", err)
	}
	// A transaction's parts carry absolute production-style URLs.
	actions := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r2", "V": "two"})},
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r1", "W": "merged"})},
	}
	if _, err := c.SubmitTransaction(ctx, actions, nil); err != nil {
		t.Fatalf("transaction: %v", err)
	}

	// The path-style client sees both entities.
	got, err := e.service(t).NewClient("hosts").GetEntity(ctx, "p", "r1", nil)
	if err != nil || !strings.Contains(string(got.Value), `"W":"merged"`) {
		t.Fatalf("path-style get: %s, %v", got.Value, err)
	}
	if _, err := e.service(t).NewClient("hosts").GetEntity(ctx, "p", "r2", nil); err != nil {
		t.Fatalf("path-style get r2: %v", err)
	}

	// odata.metadata names the production-style endpoint.
	got, err = c.GetEntity(ctx, "p", "r2", nil)
	if err != nil {
		t.Fatalf("get entity: %v", err)
	}
	if want := `"odata.metadata":"` + endpoint + `$metadata#hosts/@Element"`; !strings.Contains(string(got.Value), want) {
		t.Errorf("entity %s, want %s", got.Value, want)
	}
	pager := prod.NewListTablesPager(nil)
	page, err := pager.NextPage(ctx)
	if err != nil {
		t.Fatalf("list tables: %v", err)
	}
	if len(page.Tables) != 1 || *page.Tables[0].Name != "hosts" {
		t.Errorf("listed %+v, want [hosts]", page.Tables)
	}

	// A table SAS signed for the production-style URL reads the table.
	sasURL, err := c.GetTableSASURL(aztables.SASPermissions{Read: true}, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sasURL, endpoint+"hosts?") {
		t.Fatalf("SAS URL %s, want it under %s", sasURL, endpoint)
	}
	anon, err := aztables.NewClientWithNoCredential(sasURL, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.GetEntity(ctx, "p", "r1", nil); err != nil {
		t.Fatalf("get entity with a production-style SAS: %v", err)
	}

	// Another account's host addresses no table of this one.
	other, err := aztables.NewServiceClientWithSharedKey("http://other.table.core.windows.net/", cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.NewClient("hosts").GetEntity(ctx, "p", "r1", nil)
	if err == nil {
		t.Fatal("get entity on another account's host: no error")
	}
}
