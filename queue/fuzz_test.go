package queue

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/msgqueue"
	"github.com/blobshare/blobshare/msgqueue/sqlstore"
	"github.com/blobshare/blobshare/storagehttp"
)

// FuzzMessageBody: parseMessageBody never panics; it answers a text or
// a 400 InvalidXmlDocument / 413 RequestBodyTooLarge; a text it accepts,
// sent again escaped, comes back the same.
func FuzzMessageBody(f *testing.F) {
	for _, s := range []string{
		"<QueueMessage><MessageText>hello</MessageText></QueueMessage>",
		"<QueueMessage><MessageText>a &amp; &lt;b&gt; &#x263A;</MessageText></QueueMessage>",
		"<QueueMessage><MessageText><![CDATA[x<y]]></MessageText></QueueMessage>",
		"<?xml version=\"1.0\" encoding=\"utf-8\"?><QueueMessage><MessageText/></QueueMessage>",
		"<QueueMessage></QueueMessage>",
		"<QueueMessage><MessageText>a<b/></MessageText></QueueMessage>",
		"<QueueMessage><MessageText>x</MessageText>",
		"<Other><MessageText>x</MessageText></Other>",
		"",
		"\xff",
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, required bool) {
		r := httptest.NewRequest("PUT", "/a/q/messages", bytes.NewReader(body))
		text, err := parseMessageBody(r, required)
		if err != nil {
			var se *storagehttp.Error
			if !errors.As(err, &se) || !(se.Status == 400 && se.Code == storagehttp.CodeInvalidXMLDocument ||
				se.Status == 413 && se.Code == storagehttp.CodeRequestBodyTooLarge) {
				t.Fatalf("body %q: error %v is not InvalidXmlDocument or RequestBodyTooLarge", body, err)
			}
			return
		}
		if text == nil {
			if required {
				t.Fatalf("body %q: no text and no error with required", body)
			}
			return
		}
		var again bytes.Buffer
		again.WriteString("<QueueMessage><MessageText>")
		if err := xml.EscapeText(&again, []byte(*text)); err != nil {
			t.Fatal(err)
		}
		again.WriteString("</MessageText></QueueMessage>")
		text2, err := parseMessageBody(httptest.NewRequest("PUT", "/a/q/messages", &again), true)
		if err != nil || *text2 != *text {
			t.Fatalf("body %q: text %q sent again escaped: %v %q", body, *text, err, deref(text2))
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// FuzzQueueRequest sends arbitrary methods, paths, queries and bodies to
// the whole handler (authentication off, a real SQLite store): never a
// 5xx, and every error answer carries an error code.
func FuzzQueueRequest(f *testing.F) {
	store, err := sqlstore.Open(context.Background(), filepath.Join(f.TempDir(), sqlstore.FileName))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { store.Close() })
	svc := msgqueue.New(store, nil)
	if _, err := svc.CreateQueue(context.Background(), "fuzz", nil); err != nil {
		f.Fatal(err)
	}
	m, err := svc.Put(context.Background(), "fuzz", "seed", msgqueue.PutOptions{})
	if err != nil {
		f.Fatal(err)
	}
	h, err := New(Config{Service: svc, DisableAuth: true})
	if err != nil {
		f.Fatal(err)
	}
	msgBody := []byte("<QueueMessage><MessageText>x</MessageText></QueueMessage>")
	for _, s := range []struct {
		method, path, query string
		body                []byte
	}{
		{"POST", "/devstoreaccount1/fuzz/messages", "visibilitytimeout=10&messagettl=-1", msgBody},
		{"GET", "/devstoreaccount1/fuzz/messages", "numofmessages=32&visibilitytimeout=1", nil},
		{"GET", "/devstoreaccount1/fuzz/messages", "peekonly=true&numofmessages=abc", nil},
		{"PUT", "/devstoreaccount1/fuzz/messages/" + m.ID, "popreceipt=" + url.QueryEscape(m.PopReceipt) + "&visibilitytimeout=0", msgBody},
		{"DELETE", "/devstoreaccount1/fuzz/messages/" + m.ID, "popreceipt=x", nil},
		{"GET", "/devstoreaccount1/", "comp=list&include=metadata&maxresults=1&marker=f", nil},
		{"PUT", "/devstoreaccount1/fuzz", "comp=acl", []byte("<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Permission>raup</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>")},
		{"PUT", "/devstoreaccount1/", "restype=service&comp=properties", []byte("<StorageServiceProperties><Cors/></StorageServiceProperties>")},
		{"HEAD", "/devstoreaccount1/fuzz", "comp=metadata", nil},
		{"DELETE", "/devstoreaccount1/fuzz/messages", "", nil},
	} {
		f.Add(s.method, s.path, s.query, s.body)
	}
	f.Fuzz(func(t *testing.T, method, path, query string, body []byte) {
		if !validMethod(method) || !strings.HasPrefix(path, "/") {
			return
		}
		u := &url.URL{Path: path, RawQuery: query}
		req, err := http.NewRequest(method, "http://127.0.0.1"+u.RequestURI(), bytes.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		req.Header.Set("x-ms-version", "2018-03-28")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s?%s %q: %d %s", method, path, query, body, w.Code, w.Body)
		}
		if w.Code >= 400 && w.Header().Get("x-ms-error-code") == "" {
			t.Fatalf("%s %s?%s %q: %d without an error code", method, path, query, body, w.Code)
		}
	})
}

func validMethod(m string) bool {
	switch m {
	case "GET", "PUT", "POST", "DELETE", "HEAD", "OPTIONS", "PATCH":
		return true
	}
	return false
}
