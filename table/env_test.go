package table_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/blobshare/blobshare/storagehttp"
	"github.com/blobshare/blobshare/table"
	"github.com/blobshare/blobshare/tablesvc"
	"github.com/blobshare/blobshare/tablesvc/sqlstore"
)

// env is a Table service over SQLite in a temp dir, served by httptest.
type env struct {
	URL     string // http://127.0.0.1:PORT/devstoreaccount1
	ConnStr string // the devstore connection string for this port
	Svc     *tablesvc.Service
}

// newEnv starts a server; now nil means the real clock.
func newEnv(t testing.TB, now func() time.Time) *env {
	t.Helper()
	store, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), sqlstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	svc := tablesvc.New(store, now)
	h, err := table.New(table.Config{Service: svc, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		store.Close()
	})
	return envAt(srv.URL+"/"+table.DevAccount, svc)
}

func envAt(u string, svc *tablesvc.Service) *env {
	return &env{URL: u, Svc: svc,
		ConnStr: "DefaultEndpointsProtocol=http;AccountName=" + table.DevAccount + ";AccountKey=" + table.DevKey + ";TableEndpoint=" + u + ";"}
}

// noRetry: a failure must show, not be retried away.
var noRetry = &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}}

// service is an aztables client from the connection string.
func (e *env) service(t testing.TB) *aztables.ServiceClient {
	t.Helper()
	c, err := aztables.NewServiceClientFromConnectionString(e.ConnStr, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rawClient sends Table requests as written, SharedKey-signed (the Table
// string-to-sign): what an SDK would refuse to send reaches the server.
type rawClient struct {
	base   string
	signer storagehttp.Signer
	http   *http.Client
}

func newRawClient(t testing.TB, base string) *rawClient {
	t.Helper()
	sg, err := storagehttp.NewSigner(table.DevAccount, table.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	return &rawClient{base: base, signer: sg, http: &http.Client{Timeout: 60 * time.Second}}
}

// rawResponse is what the comparisons look at.
type rawResponse struct {
	Status int
	Code   string // x-ms-error-code
	Header http.Header
	Body   []byte
}

// jsonHeaders are the headers the SDKs send with OData requests.
func jsonHeaders(kv ...string) http.Header {
	h := http.Header{"Accept": {"application/json;odata=minimalmetadata"}, "Content-Type": {"application/json"}, "DataServiceVersion": {"3.0"}}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			h.Del(kv[i])
			continue
		}
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// do sends method to base+path (path and query as given, escaped) with
// header and body (nil: none).
func (c *rawClient) do(t testing.TB, method, pathAndQuery string, header http.Header, body []byte) rawResponse {
	t.Helper()
	u := c.base + pathAndQuery
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2019-02-02")
	if body != nil {
		req.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	req.Header.Set("Authorization", "SharedKey "+table.DevAccount+":"+c.signer.Sign(storagehttp.TableStringToSign(table.DevAccount, req)))
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, u, err)
	}
	return rawResponse{Status: resp.StatusCode, Code: resp.Header.Get("x-ms-error-code"), Header: resp.Header, Body: b}
}

// azruntimePayload is the body of a response the SDK already read.
func azruntimePayload(r *http.Response) ([]byte, error) { return runtime.Payload(r) }
