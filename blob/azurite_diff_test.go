package blob_test

import (
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
	"github.com/blobshare/blobshare/storagehttp"
)

// side is one server under differential test, with the ETags it handed
// out (each server's own).
type side struct {
	name  string
	base  string // http://HOST:PORT/devstoreaccount1
	etags map[string]string
}

type answer struct {
	status int
	code   string
	etag   string
	lm     string // Last-Modified
	lease  string // x-ms-lease-state
}

func (s *side) do(t *testing.T, method, path string, hdr map[string]string, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	req.Header.Set("x-ms-version", "2021-12-02")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	for k, v := range hdr {
		if v == "@etag" { // the ETag this side gave the resource last
			v = s.etags[path]
			if v == "" {
				v = `"0x1"`
			}
		}
		if src, ok := strings.CutPrefix(v, "@url:"); ok { // a URL of this side
			v = s.base + src
		}
		req.Header.Set(k, v)
	}
	if req.ContentLength > 0 {
		req.Header.Set("Content-Length", itoa(req.ContentLength))
	}
	sg, _ := storagehttp.NewSigner(azuritetest.Account, azuritetest.Key)
	req.Header.Set("Authorization", "SharedKey "+azuritetest.Account+":"+sg.Sign(storagehttp.StringToSign(azuritetest.Account, req)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	a := answer{status: resp.StatusCode, code: resp.Header.Get("x-ms-error-code"), etag: resp.Header.Get("ETag"), lm: resp.Header.Get("Last-Modified"),
		lease: resp.Header.Get("x-ms-lease-state")}
	if a.status < 300 && a.etag != "" && !strings.Contains(path, "comp=lease") {
		key := path
		if i := strings.Index(key, "?"); i >= 0 {
			key = key[:i]
		}
		s.etags[key] = a.etag
	}
	return a
}

// TestDifferentialAzurite sends the same seeded random sequence of
// container and blob operations — with conditional headers and leases —
// to Azurite and to blobshare, and compares status and x-ms-error-code
// of every answer; a difference must be one of knownDiffs. Lease
// durations and break periods are chosen so that no lease changes state
// by the passing of time during the run.
func TestDifferentialAzurite(t *testing.T) {
	az := azuritetest.Start(t)
	if az == nil {
		return
	}
	e := newEnv(t, nil)
	sides := []*side{{name: "azurite", base: az.Endpoint, etags: map[string]string{}}, {name: "blobshare", base: e.URL, etags: map[string]string{}}}
	// A fixed seed by default (make test is reproducible);
	// BLOBSHARE_DIFF_SEED=N replays N, =random draws one (logged).
	seed := uint64(20261125)
	switch v := os.Getenv("BLOBSHARE_DIFF_SEED"); v {
	case "":
	case "random":
		seed = uint64(time.Now().UnixNano())
	default:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("BLOBSHARE_DIFF_SEED=%q: %v", v, err)
		}
		seed = n
	}
	trace := os.Getenv("BLOBSHARE_DIFF_TRACE") // a path whose every step is logged
	rng := rand.New(rand.NewPCG(seed, 17))
	t.Logf("seed %d", seed)
	containers := []string{"dc-one", "dc-two"}
	blobs := []string{"b1", "dir/b2"}
	leaseIDs := []string{"", idA, idB}
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	past, future := "Mon, 01 Jan 2001 00:00:00 GMT", "Fri, 01 Jan 2100 00:00:00 GMT"
	conds := func(h map[string]string) {
		switch rng.IntN(8) {
		case 0:
			h["If-Match"] = "@etag"
		case 1:
			h["If-Match"] = `"0x8D0000000000000"`
		case 2:
			h["If-None-Match"] = "@etag"
		case 3:
			h["If-None-Match"] = "*"
		case 4:
			h["If-Modified-Since"] = pick([]string{past, future})
		case 5:
			h["If-Unmodified-Since"] = pick([]string{past, future})
		}
	}
	lease := func(h map[string]string) {
		if id := pick(leaseIDs); id != "" {
			h["x-ms-lease-id"] = id
		}
	}
	const steps = 400
	var diffs, known []string
	// discarded marks blobs whose staged blocks blobshare discarded
	// (Delete Blob, Put Blob, Copy Blob) since their last commit, where
	// Azurite keeps them (knownDiffs).
	discarded := map[string]bool{}
	for i := range steps {
		c := pick(containers)
		bpath := "/" + c + "/" + pick(blobs)
		h := map[string]string{}
		var method, path, body string
		switch op := rng.IntN(20); op {
		case 0:
			method, path = "PUT", "/"+c+"?restype=container"
		case 1:
			method, path = "DELETE", "/"+c+"?restype=container"
			lease(h)
		case 2:
			method, path = "HEAD", "/"+c+"?restype=container"
			lease(h)
		case 3:
			method, path = "PUT", "/"+c+"?restype=container&comp=metadata"
			h["x-ms-meta-step"] = fmt.Sprint(i)
			lease(h)
		case 4:
			method, path = "PUT", "/"+c+"?restype=container&comp=lease"
			leaseOp(rng, h, pick)
		case 5, 6:
			method, path, body = "PUT", bpath, fmt.Sprintf("content %d", i)
			h["x-ms-blob-type"] = "BlockBlob"
			conds(h)
			lease(h)
		case 7:
			method, path = pick([]string{"GET", "HEAD"}), bpath
			conds(h)
			lease(h)
		case 8:
			method, path = "PUT", bpath+"?comp=metadata"
			h["x-ms-meta-step"] = fmt.Sprint(i)
			conds(h)
			lease(h)
		case 9:
			method, path = "DELETE", bpath
			conds(h)
			lease(h)
			if v := pick([]string{"", "", "include", "only"}); v != "" {
				h["x-ms-delete-snapshots"] = v
			}
		case 10, 11:
			method, path = "PUT", bpath+"?comp=lease"
			leaseOp(rng, h, pick)
			if rng.IntN(3) == 0 {
				conds(h)
			}
		case 12:
			id := base64.StdEncoding.EncodeToString([]byte(pick([]string{"blk-a", "blk-b"})))
			method, path, body = "PUT", bpath+"?comp=block&blockid="+url.QueryEscape(id), fmt.Sprintf("block %d", i)
			lease(h)
		case 13:
			method, path = "PUT", bpath+"?comp=blocklist"
			body = "<BlockList>"
			for range rng.IntN(3) {
				kind := pick([]string{"Latest", "Committed", "Uncommitted"})
				id := base64.StdEncoding.EncodeToString([]byte(pick([]string{"blk-a", "blk-b"})))
				body += "<" + kind + ">" + id + "</" + kind + ">"
			}
			body += "</BlockList>"
			conds(h)
			lease(h)
		case 14:
			method, path = "PUT", bpath+"?comp=snapshot"
			conds(h)
			lease(h)
		case 15:
			method, path = "PUT", bpath
			h["x-ms-blob-type"] = "AppendBlob"
			conds(h)
			lease(h)
		case 16:
			method, path, body = "PUT", bpath+"?comp=appendblock", fmt.Sprintf("append %d", i)
			conds(h)
			lease(h)
			if rng.IntN(3) == 0 {
				h["x-ms-blob-condition-appendpos"] = pick([]string{"0", "9", "18"})
			}
		case 17:
			method, path = "PUT", bpath
			h["x-ms-copy-source"] = "@url:/" + c + "/" + pick(blobs)
			conds(h)
			lease(h)
		case 18:
			method, path, body = "PUT", bpath+"?comp=tags", "<Tags><TagSet><Tag><Key>k</Key><Value>"+fmt.Sprint(i)+"</Value></Tag></TagSet></Tags>"
			lease(h)
		case 19:
			method, path = "GET", bpath+"?comp=tags"
			lease(h)
		}
		var got [2]answer
		for j, s := range sides {
			got[j] = s.do(t, method, path, h, body)
		}
		if trace != "" && strings.HasPrefix(path, trace) {
			t.Logf("trace step %d %s %s %v %s: azurite %d %s, blobshare %d %s", i, method, path, h, body,
				got[0].status, got[0].code, got[1].status, got[1].code)
		}
		bs := got[1]
		key := path
		if j := strings.Index(key, "?"); j >= 0 {
			key = key[:j]
		}
		if got[0].status != got[1].status || got[0].code != got[1].code {
			line := fmt.Sprintf("step %d %s %s %v %s: azurite %d %s, blobshare %d %s",
				i, method, path, h, strings.TrimPrefix(body, "content "), got[0].status, got[0].code, got[1].status, got[1].code)
			r := diffReq{method: method, path: path, hdr: h, body: body, discarded: discarded[key]}
			if k := explain(r, got[0], got[1]); k != nil {
				known = append(known, k.name+": "+line)
			} else {
				diffs = append(diffs, line)
			}
			// Bring both sides back to one state so that one difference
			// is reported once, not as every later step it changes: no
			// lease and no blob there (or no container).
			for _, s := range sides {
				if strings.Contains(path, "restype=container") {
					s.do(t, "PUT", "/"+c+"?restype=container&comp=lease", map[string]string{"x-ms-lease-action": "break", "x-ms-lease-break-period": "0"}, "")
					s.do(t, "DELETE", "/"+c+"?restype=container", nil, "")
					continue
				}
				s.do(t, "PUT", bpath+"?comp=lease", map[string]string{"x-ms-lease-action": "break", "x-ms-lease-break-period": "0"}, "")
				s.do(t, "DELETE", bpath, map[string]string{"x-ms-delete-snapshots": "include"}, "")
			}
			if !strings.Contains(path, "restype=container") {
				discarded[bpath] = true // the Delete Blob just sent
			}
			continue
		}
		switch {
		case bs.status >= 300 || strings.Contains(path, "restype=container"):
		case strings.Contains(path, "comp=blocklist"):
			delete(discarded, key) // a commit empties the uncommitted list on both sides
		case method == "DELETE" || method == "PUT" && !strings.Contains(path, "?"):
			discarded[key] = true // Delete Blob, Put Blob, Copy Blob
		}
	}
	for _, d := range known {
		t.Log("known difference:", d)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	t.Logf("%d steps, %d known differences, %d unexplained", steps, len(known), len(diffs))
}

// leaseOp fills a random Lease Blob / Lease Container request whose
// timing cannot change state during the run: infinite or 60 s leases,
// break periods 0 or 60 s.
func leaseOp(rng *rand.Rand, h map[string]string, pick func([]string) string) {
	switch rng.IntN(5) {
	case 0:
		h["x-ms-lease-action"] = "acquire"
		h["x-ms-lease-duration"] = pick([]string{"-1", "60"})
		if p := pick([]string{"", idA, idB}); p != "" {
			h["x-ms-proposed-lease-id"] = p
		}
	case 1:
		h["x-ms-lease-action"] = "renew"
		h["x-ms-lease-id"] = pick([]string{idA, idB})
	case 2:
		h["x-ms-lease-action"] = "change"
		h["x-ms-lease-id"] = pick([]string{idA, idB})
		h["x-ms-proposed-lease-id"] = pick([]string{idA, idB})
	case 3:
		h["x-ms-lease-action"] = "release"
		h["x-ms-lease-id"] = pick([]string{idA, idB})
	case 4:
		h["x-ms-lease-action"] = "break"
		h["x-ms-lease-break-period"] = pick([]string{"0", "60"})
	}
}
