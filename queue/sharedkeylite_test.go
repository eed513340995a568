package queue_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/filerest"
)

// TestSharedKeyLite: requests signed with SharedKey Lite, the string to
// sign written out here as Azure's "Authorize with Shared Key" page gives
// it for the Queue service (VERB, Content-MD5, Content-Type, Date,
// CanonicalizedHeaders, CanonicalizedResource with only ?comp), create a
// queue, put a message and list queues; a wrong key is 403.
func TestSharedKeyLite(t *testing.T) {
	e := newEnv(t, nil)
	key, err := base64.StdEncoding.DecodeString(filerest.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, query, body string, key []byte) *http.Response {
		t.Helper()
		url := e.URL + path
		if query != "" {
			url += "?" + query
		}
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		date := time.Now().UTC().Format(http.TimeFormat)
		req.Header.Set("x-ms-date", date)
		req.Header.Set("x-ms-version", "2021-12-02")
		contentType := ""
		if body != "" {
			contentType = "application/xml"
			req.Header.Set("Content-Type", contentType)
		}
		// Path-style URLs (http://host/ACCOUNT/queue): the path, account
		// included, follows "/ACCOUNT", as for the storage emulator.
		resource := "/" + filerest.DevAccount + "/" + filerest.DevAccount + path
		if strings.Contains(query, "comp=") {
			for _, kv := range strings.Split(query, "&") {
				if strings.HasPrefix(kv, "comp=") {
					resource += "?" + kv
				}
			}
		}
		sts := method + "\n" + "" + "\n" + contentType + "\n" + "" + "\n" +
			"x-ms-date:" + date + "\n" + "x-ms-version:2021-12-02\n" + resource
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(sts))
		req.Header.Set("Authorization", "SharedKeyLite "+filerest.DevAccount+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if r := do(http.MethodPut, "/lite", "", "", key); r.StatusCode != http.StatusCreated {
		t.Fatalf("Create Queue with SharedKey Lite: %d %s", r.StatusCode, r.Header.Get("x-ms-error-code"))
	}
	msg := "<QueueMessage><MessageText>hello</MessageText></QueueMessage>"
	if r := do(http.MethodPost, "/lite/messages", "", msg, key); r.StatusCode != http.StatusCreated {
		t.Fatalf("Put Message with SharedKey Lite: %d %s", r.StatusCode, r.Header.Get("x-ms-error-code"))
	}
	r := do(http.MethodGet, "/", "comp=list", "", key)
	listing, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusOK || !strings.Contains(string(listing), "<Name>lite</Name>") {
		t.Fatalf("List Queues with SharedKey Lite: %d %s", r.StatusCode, listing)
	}
	wrong := append([]byte(nil), key...)
	wrong[0] ^= 1
	if r := do(http.MethodGet, "/", "comp=list", "", wrong); r.StatusCode != http.StatusForbidden || r.Header.Get("x-ms-error-code") != "AuthenticationFailed" {
		t.Fatalf("SharedKey Lite with a wrong key: %d %s, want 403 AuthenticationFailed", r.StatusCode, r.Header.Get("x-ms-error-code"))
	}
}
