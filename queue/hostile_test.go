package queue_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/queue"
	"github.com/blobshare/blobshare/storagehttp"
)

// TestHostileInput: bodies that are not one QueueMessage document, texts
// over 64 KiB, numbers out of range or not numbers, missing parameters,
// junk receipts and ids. Each gets the 4xx with the error code queue's
// doc names, never a 5xx (a panic would be a 500 from the recovery
// middleware); the server then still works.
func TestHostileInput(t *testing.T) {
	e := newEnv(t, nil)
	c := newRawClient(t, e.URL)
	if r := c.do(t, "PUT", "/hostile", "", nil, nil); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Code)
	}
	put := c.do(t, "POST", "/hostile/messages", q("visibilitytimeout", "3600"), nil, messageBody("victim"))
	if put.Status != 201 {
		t.Fatalf("put: %d %s", put.Status, put.Code)
	}
	victim := parseMessages(t, put.Body)[0]
	msgs := "/hostile/messages"
	one := msgs + "/" + victim.MessageID

	cases := []struct {
		name         string
		method, path string
		query        string
		body         []byte
		status       int
		code         string
	}{
		// Bodies.
		{"unterminated document", "POST", msgs, "", []byte("<QueueMessage><MessageText>x</MessageText>"), 400, "InvalidXmlDocument"},
		{"not XML", "POST", msgs, "", []byte("hello"), 400, "InvalidXmlDocument"},
		{"empty body", "POST", msgs, "", []byte{}, 400, "InvalidXmlDocument"},
		{"no MessageText", "POST", msgs, "", []byte("<QueueMessage></QueueMessage>"), 400, "InvalidXmlDocument"},
		{"other root", "POST", msgs, "", []byte("<Other><MessageText>x</MessageText></Other>"), 400, "InvalidXmlDocument"},
		{"two documents", "POST", msgs, "", []byte("<QueueMessage><MessageText>x</MessageText></QueueMessage><QueueMessage>"), 400, "InvalidXmlDocument"},
		{"invalid UTF-8", "POST", msgs, "", []byte("<QueueMessage><MessageText>\xff\xfe</MessageText></QueueMessage>"), 400, "InvalidXmlDocument"},
		{"control character reference", "POST", msgs, "", []byte("<QueueMessage><MessageText>&#1;</MessageText></QueueMessage>"), 400, "InvalidXmlDocument"},
		{"undefined entity", "POST", msgs, "", []byte("<QueueMessage><MessageText>&bogus;</MessageText></QueueMessage>"), 400, "InvalidXmlDocument"},
		{"DOCTYPE with entity", "POST", msgs, "", []byte(`<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">]><QueueMessage><MessageText>&a;</MessageText></QueueMessage>`), 400, "InvalidXmlDocument"},
		{"deep nesting", "POST", msgs, "", []byte("<QueueMessage><MessageText>" + strings.Repeat("<a>", 10000) + strings.Repeat("</a>", 10000) + "</MessageText></QueueMessage>"), 400, "InvalidXmlDocument"},
		{"update with broken body", "PUT", one, q("popreceipt", victim.PopReceipt, "visibilitytimeout", "10"), []byte("<QueueMessage>"), 400, "InvalidXmlDocument"},
		// Sizes.
		{"64 KiB + 1", "POST", msgs, "", messageBody(strings.Repeat("a", 64<<10+1)), 413, "RequestBodyTooLarge"},
		{"64 KiB + 1 in two-byte runes", "POST", msgs, "", messageBody(strings.Repeat("é", 32<<10) + "a"), 413, "RequestBodyTooLarge"},
		{"body over every limit", "POST", msgs, "", bytes.Repeat([]byte("a"), 1<<20), 413, "RequestBodyTooLarge"},
		{"update 64 KiB + 1", "PUT", one, q("popreceipt", victim.PopReceipt, "visibilitytimeout", "10"), messageBody(strings.Repeat("a", 64<<10+1)), 413, "RequestBodyTooLarge"},
		// numofmessages.
		{"numofmessages 0", "GET", msgs, q("numofmessages", "0"), nil, 400, "OutOfRangeQueryParameterValue"},
		{"numofmessages 33", "GET", msgs, q("numofmessages", "33"), nil, 400, "OutOfRangeQueryParameterValue"},
		{"numofmessages -1", "GET", msgs, q("numofmessages", "-1"), nil, 400, "OutOfRangeQueryParameterValue"},
		{"numofmessages abc", "GET", msgs, q("numofmessages", "abc"), nil, 400, "InvalidQueryParameterValue"},
		{"numofmessages empty", "GET", msgs, q("numofmessages", ""), nil, 400, "InvalidQueryParameterValue"},
		{"numofmessages 1.5", "GET", msgs, q("numofmessages", "1.5"), nil, 400, "InvalidQueryParameterValue"},
		{"numofmessages beyond int32", "GET", msgs, q("numofmessages", "99999999999"), nil, 400, "InvalidQueryParameterValue"},
		{"peek numofmessages 33", "GET", msgs, q("peekonly", "true", "numofmessages", "33"), nil, 400, "OutOfRangeQueryParameterValue"},
		// visibilitytimeout.
		{"get visibility 0", "GET", msgs, q("visibilitytimeout", "0"), nil, 400, "OutOfRangeQueryParameterValue"},
		{"get visibility 7 d + 1 s", "GET", msgs, q("visibilitytimeout", "604801"), nil, 400, "OutOfRangeQueryParameterValue"},
		{"get visibility x", "GET", msgs, q("visibilitytimeout", "x"), nil, 400, "InvalidQueryParameterValue"},
		{"put visibility -1", "POST", msgs, q("visibilitytimeout", "-1"), messageBody("x"), 400, "OutOfRangeQueryParameterValue"},
		{"put visibility 7 d + 1 s", "POST", msgs, q("visibilitytimeout", "604801"), messageBody("x"), 400, "OutOfRangeQueryParameterValue"},
		{"update visibility -1", "PUT", one, q("popreceipt", victim.PopReceipt, "visibilitytimeout", "-1"), nil, 400, "OutOfRangeQueryParameterValue"},
		{"update visibility missing", "PUT", one, q("popreceipt", victim.PopReceipt), nil, 400, "MissingRequiredQueryParameter"},
		// messagettl.
		{"ttl 0", "POST", msgs, q("messagettl", "0"), messageBody("x"), 400, "InvalidQueryParameterValue"},
		{"ttl -2", "POST", msgs, q("messagettl", "-2"), messageBody("x"), 400, "InvalidQueryParameterValue"},
		{"ttl x", "POST", msgs, q("messagettl", "x"), messageBody("x"), 400, "InvalidQueryParameterValue"},
		{"ttl not above visibility", "POST", msgs, q("visibilitytimeout", "60", "messagettl", "60"), messageBody("x"), 400, "InvalidQueryParameterValue"},
		{"ttl beyond int64", "POST", msgs, q("messagettl", "99999999999999999999"), messageBody("x"), 400, "InvalidQueryParameterValue"},
		// Receipts and ids.
		{"delete without popreceipt", "DELETE", one, "", nil, 400, "MissingRequiredQueryParameter"},
		{"update without popreceipt", "PUT", one, q("visibilitytimeout", "1"), nil, 400, "MissingRequiredQueryParameter"},
		{"junk receipt", "DELETE", one, q("popreceipt", "\x00\xff%;'\""), nil, 404, "MessageNotFound"},
		{"10 KB receipt", "DELETE", one, q("popreceipt", strings.Repeat("A", 10000)), nil, 404, "MessageNotFound"},
		{"junk message id", "DELETE", msgs + "/%27%3B%20DROP%20TABLE", q("popreceipt", victim.PopReceipt), nil, 404, "MessageNotFound"},
		{"message id with a slash", "DELETE", msgs + "/a%2Fb", q("popreceipt", victim.PopReceipt), nil, 400, "InvalidUri"},
		// Names and routes.
		{"queue name with upper case", "PUT", "/Hostile", "", nil, 400, "InvalidResourceName"},
		{"queue name too long", "PUT", "/" + strings.Repeat("a", 64), "", nil, 400, "OutOfRangeInput"},
		{"unknown comp", "GET", "/hostile", q("comp", "bogus"), nil, 400, "InvalidQueryParameterValue"},
		{"too deep a path", "GET", msgs + "/a/b", "", nil, 400, "InvalidUri"},
		{"maxresults 0", "GET", "/", q("comp", "list", "maxresults", "0"), nil, 400, "OutOfRangeQueryParameterValue"},
		{"ACL not XML", "PUT", "/hostile", q("comp", "acl"), []byte("<SignedIdentifiers>"), 400, "InvalidXmlDocument"},
		{"ACL with 6 identifiers", "PUT", "/hostile", q("comp", "acl"), []byte("<SignedIdentifiers>" + strings.Repeat("<SignedIdentifier><Id>a</Id></SignedIdentifier>", 6) + "</SignedIdentifiers>"), 400, "InvalidXmlDocument"},
	}
	for _, tc := range cases {
		r := c.do(t, tc.method, tc.path, tc.query, nil, tc.body)
		if r.Status != tc.status || r.Code != tc.code {
			t.Errorf("%s: %d %s, want %d %s (%.300s)", tc.name, r.Status, r.Code, tc.status, tc.code, r.Body)
		}
	}

	// A chunked body (no Content-Length) over the limit is refused as
	// too large too, not read whole.
	r := chunked(t, c, "POST", msgs, io.MultiReader(strings.NewReader("<QueueMessage><MessageText>"), io.LimitReader(zeros{}, 8<<20)))
	if r.Status != 413 || r.Code != "RequestBodyTooLarge" {
		t.Errorf("chunked 8 MiB body: %d %s (%.300s)", r.Status, r.Code, r.Body)
	}

	// Text that is not base64 is kept as sent; exactly 64 KiB of text
	// sent XML-escaped (five bytes a character on the wire) is accepted.
	for _, text := range []string{"not base64 !@#$%^&*()", strings.Repeat("&", 64<<10), " leading and trailing spaces ", ""} {
		r := c.do(t, "POST", msgs, "", nil, messageBody(text))
		if r.Status != 201 {
			t.Fatalf("put %.20q…: %d %s", text, r.Status, r.Code)
		}
		got := c.do(t, "GET", msgs, q("visibilitytimeout", "3600"), nil, nil)
		ms := parseMessages(t, got.Body)
		if len(ms) != 1 || ms[0].MessageText != text {
			t.Fatalf("put %.20q… came back as %d messages %.80v", text, len(ms), ms)
		}
	}
	// The victim is untouched by all of it.
	if r := c.do(t, "DELETE", one, q("popreceipt", victim.PopReceipt), nil, nil); r.Status != 204 {
		t.Fatalf("delete the victim with its receipt: %d %s", r.Status, r.Code)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// chunked sends body with no Content-Length (Transfer-Encoding: chunked).
func chunked(t *testing.T, c *rawClient, method, path string, body io.Reader) rawResponse {
	t.Helper()
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2018-03-28")
	req.Header.Set("Authorization", "SharedKey "+queue.DevAccount+":"+c.signer.Sign(storagehttp.StringToSign(queue.DevAccount, req)))
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResponse{Status: resp.StatusCode, Code: resp.Header.Get("x-ms-error-code"), Header: resp.Header, Body: b}
}
