package queue_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/queue"
	"github.com/blobshare/blobshare/storagehttp"
)

// rawClient sends Queue requests as written, SharedKey-signed for the
// development account: what an SDK would refuse to send (bad numbers,
// broken XML, missing parameters) reaches the server.
type rawClient struct {
	base   string // http://HOST:PORT/devstoreaccount1
	signer storagehttp.Signer
	http   *http.Client
}

func newRawClient(t testing.TB, base string) *rawClient {
	t.Helper()
	sg, err := storagehttp.NewSigner(queue.DevAccount, queue.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	return &rawClient{base: base, signer: sg, http: &http.Client{Timeout: 30 * time.Second}}
}

// rawResponse is what the comparisons look at.
type rawResponse struct {
	Status int
	Code   string // x-ms-error-code
	Header http.Header
	Body   []byte
}

// do sends method to base+path with the query as given (already encoded)
// and body (nil: none).
func (c *rawClient) do(t testing.TB, method, path, rawQuery string, header http.Header, body []byte) rawResponse {
	t.Helper()
	u := c.base + path
	if rawQuery != "" {
		u += "?" + rawQuery
	}
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
	req.Header.Set("x-ms-version", "2018-03-28")
	if body != nil {
		req.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	req.Header.Set("Authorization", "SharedKey "+queue.DevAccount+":"+c.signer.Sign(storagehttp.StringToSign(queue.DevAccount, req)))
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

// messageBody is a Put/Update Message body with text escaped.
func messageBody(text string) []byte {
	var b strings.Builder
	b.WriteString("<QueueMessage><MessageText>")
	xml.EscapeText(&b, []byte(text))
	b.WriteString("</MessageText></QueueMessage>")
	return []byte(b.String())
}

// wireMessage is one message of a QueueMessagesList answer.
type wireMessage struct {
	MessageID       string `xml:"MessageId"`
	PopReceipt      string `xml:"PopReceipt"`
	DequeueCount    int64  `xml:"DequeueCount"`
	MessageText     string `xml:"MessageText"`
	TimeNextVisible string `xml:"TimeNextVisible"`
	ExpirationTime  string `xml:"ExpirationTime"`
	InsertionTime   string `xml:"InsertionTime"`
}

func parseMessages(t testing.TB, body []byte) []wireMessage {
	t.Helper()
	var l struct {
		Messages []wireMessage `xml:"QueueMessage"`
	}
	if err := xml.Unmarshal(body, &l); err != nil {
		t.Fatalf("answer is not a QueueMessagesList: %v: %q", err, body)
	}
	return l.Messages
}

// q builds a raw query from alternating names and values (values are
// escaped; a value "\x00raw:" prefix sends the rest unescaped).
func q(kv ...string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		v := kv[i+1]
		if rest, ok := strings.CutPrefix(v, "\x00raw:"); ok {
			parts = append(parts, kv[i]+"="+rest)
			continue
		}
		parts = append(parts, kv[i]+"="+url.QueryEscape(v))
	}
	return strings.Join(parts, "&")
}

func xmlUnmarshal(b []byte, v any) error { return xml.Unmarshal(b, v) }

// normalizeMetadataXML turns <Metadata> inner XML into sorted
// lowercase name=value pairs (servers differ in name case and order).
func normalizeMetadataXML(inner string) string {
	var md struct {
		Items []struct {
			XMLName xml.Name
			Value   string `xml:",chardata"`
		} `xml:",any"`
	}
	if err := xml.Unmarshal([]byte("<M>"+inner+"</M>"), &md); err != nil {
		return "unparsable:" + inner
	}
	var out []string
	for _, it := range md.Items {
		out = append(out, strings.ToLower(it.XMLName.Local)+"="+it.Value)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}
