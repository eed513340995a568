package table_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/blobshare/blobshare/table"
)

// leanClient speaks just enough of the Table REST API for the cycle
// benchmark — Insert Entity, a point query and Merge Entity — over one
// keep-alive HTTP transport, signing each request with SharedKey Lite
// (x-ms-date, then the canonicalized resource). It exists because the
// aztables SDK's own work per request (its policy pipeline, JSON through
// reflection, the full SharedKey string-to-sign) costs about as much CPU
// as blobshare's whole answer: on a 2-core machine shared by client and
// server, an SDK-driven benchmark measures the SDK. The same client drives
// both sides, so the ratio is the servers'.
type leanClient struct {
	hc      *http.Client
	base    *url.URL // the account's endpoint: http://host/account
	account string
	key     []byte
}

func newLeanClient(endpoint string) (*leanClient, error) {
	u, err := url.Parse(strings.TrimSuffix(endpoint, "/"))
	if err != nil {
		return nil, err
	}
	key, err := base64.StdEncoding.DecodeString(table.DevKey)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	return &leanClient{hc: &http.Client{Transport: tr}, base: u, account: table.DevAccount, key: key}, nil
}

// entityPath is the escaped path of one entity of tbl (keys are quoted
// with ” for ', then path-escaped).
func (c *leanClient) entityPath(tbl, pk, rk string) string {
	q := func(s string) string { return url.PathEscape(strings.ReplaceAll(s, "'", "''")) }
	return c.base.EscapedPath() + "/" + tbl + "(PartitionKey='" + q(pk) + "',RowKey='" + q(rk) + "')"
}

// do sends one request to the escaped path and returns the answer's status,
// ETag and body; any status other than want is an error.
func (c *leanClient) do(ctx context.Context, method, path string, body []byte, hdr map[string]string, want int) (string, []byte, error) {
	u := *c.base
	u.RawPath, u.Path = path, "" // Path is derived from RawPath by String
	if p, err := url.PathUnescape(path); err == nil {
		u.Path = p
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return "", nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c.sign(req, path)
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", nil, err
	}
	if resp.StatusCode != want {
		return "", nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	return resp.Header.Get("ETag"), b, nil
}

// sign sets the headers every request carries and signs req, whose
// escaped path is path, with SharedKey Lite (x-ms-date, then the
// canonicalized resource).
func (c *leanClient) sign(req *http.Request, path string) {
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Accept", "application/json;odata=nometadata")
	req.Header.Set("DataServiceVersion", "3.0")
	mac := hmac.New(sha256.New, c.key)
	io.WriteString(mac, date+"\n/"+c.account+path)
	req.Header.Set("Authorization", "SharedKeyLite "+c.account+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
}

// cycle inserts (pk, rk), reads it back and merges N=2 into it with the
// insert's ETag.
func (c *leanClient) cycle(ctx context.Context, tbl, pk, rk string) error {
	etag, _, err := c.do(ctx, http.MethodPost, c.base.EscapedPath()+"/"+tbl,
		[]byte(`{"PartitionKey":"`+pk+`","RowKey":"`+rk+`","Name":"benchmark entity","N":1}`),
		map[string]string{"Prefer": "return-no-content"}, http.StatusNoContent)
	if err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	path := c.entityPath(tbl, pk, rk)
	if _, b, err := c.do(ctx, http.MethodGet, path, nil, nil, http.StatusOK); err != nil {
		return fmt.Errorf("get: %w", err)
	} else if !bytes.Contains(b, []byte(`"N":1`)) {
		return fmt.Errorf("get %s: %s has no N=1", path, b)
	}
	if _, _, err := c.do(ctx, "MERGE", path, []byte(`{"N":2}`), map[string]string{"If-Match": etag}, http.StatusNoContent); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return nil
}

// query walks a whole query of tbl with filter through its continuation
// pages and returns how many entities it read. It parses no entity: it
// counts the RowKey members the load wrote (each entity has one), so the
// client's cost per entity is a byte scan, not a JSON decoder's.
func (c *leanClient) query(ctx context.Context, tbl, filter string) (int, error) {
	next := url.Values{}
	n := 0
	for {
		q := url.Values{"$filter": {filter}}
		for k, v := range next {
			q[k] = v
		}
		u := *c.base
		u.Path, u.RawPath, u.RawQuery = c.base.Path+"/"+tbl+"()", "", q.Encode()
		path := u.EscapedPath()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return n, err
		}
		c.sign(req, path)
		resp, err := c.hc.Do(req)
		if err != nil {
			return n, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return n, err
		}
		if resp.StatusCode != http.StatusOK {
			return n, fmt.Errorf("query %s: %s: %s", tbl, resp.Status, b)
		}
		n += bytes.Count(b, []byte(`"RowKey":"`))
		pk, rk := resp.Header.Get("x-ms-continuation-NextPartitionKey"), resp.Header.Get("x-ms-continuation-NextRowKey")
		if pk == "" {
			return n, nil
		}
		next = url.Values{"NextPartitionKey": {pk}, "NextRowKey": {rk}}
	}
}

// insertBatch inserts entities (JSON objects, one PartitionKey) into tbl
// in one entity group transaction.
func (c *leanClient) insertBatch(ctx context.Context, tbl string, entities [][]byte) error {
	const batch, changeset = "batch_bench", "changeset_bench"
	var body bytes.Buffer
	fmt.Fprintf(&body, "--%s\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n", batch, changeset)
	target := c.base.String() + "/" + tbl
	for _, e := range entities {
		fmt.Fprintf(&body, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n", changeset)
		fmt.Fprintf(&body, "POST %s HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json;odata=nometadata\r\nPrefer: return-no-content\r\nDataServiceVersion: 3.0\r\n\r\n", target)
		body.Write(e)
		body.WriteString("\r\n")
	}
	fmt.Fprintf(&body, "--%s--\r\n--%s--\r\n", changeset, batch)
	_, b, err := c.do(ctx, http.MethodPost, c.base.EscapedPath()+"/$batch", body.Bytes(),
		map[string]string{"Content-Type": "multipart/mixed; boundary=" + batch}, http.StatusAccepted)
	if err != nil {
		return err
	}
	if !bytes.Contains(b, []byte("204 No Content")) || bytes.Contains(b, []byte(`"odata.error"`)) {
		return fmt.Errorf("batch into %s: %s", tbl, b)
	}
	return nil
}
