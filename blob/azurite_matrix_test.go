package blob_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
)

// The matrices of this file send Azurite and blobshare the same
// deterministic requests — every operation that takes conditional
// headers with each header alone and each pair, met and unmet, and every
// lease state with every operation — and compare status and
// x-ms-error-code. A difference must be one of knownDiffs (written down
// with Azure's words in blob/doc.go), or the test fails.

// condHeaders are the four HTTP conditional headers.
var condHeaders = []string{"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"}

// condCase is a combination of conditional headers, each met or not.
type condCase struct {
	names []string
	met   []bool
}

func (c condCase) String() string {
	var b strings.Builder
	for i, n := range c.names {
		if i > 0 {
			b.WriteString(" + ")
		}
		b.WriteString(n)
		if c.met[i] {
			b.WriteString(" met")
		} else {
			b.WriteString(" unmet")
		}
	}
	return b.String()
}

// condCases are each header alone (met, unmet), each pair in its four
// met/unmet combinations, three headers, and all four (met).
func condCases() []condCase {
	var out []condCase
	for _, n := range condHeaders {
		for _, m := range []bool{true, false} {
			out = append(out, condCase{[]string{n}, []bool{m}})
		}
	}
	for i := range condHeaders {
		for j := i + 1; j < len(condHeaders); j++ {
			for _, m := range [][]bool{{true, true}, {true, false}, {false, true}, {false, false}} {
				out = append(out, condCase{[]string{condHeaders[i], condHeaders[j]}, m})
			}
		}
	}
	out = append(out, condCase{condHeaders[:3], []bool{true, true, true}}, condCase{condHeaders, []bool{true, true, true, true}})
	return out
}

// values returns c's headers (prefixed, for x-ms-source-if-*) for a
// resource whose ETag and Last-Modified are etag and lm.
func (c condCase) values(etag, lm, prefix string) map[string]string {
	const stale = `"0x8D0000000000000"`
	t, err := http.ParseTime(lm)
	if err != nil {
		t = time.Now()
	}
	before := t.Add(-time.Hour).UTC().Format(http.TimeFormat)
	h := map[string]string{}
	for i, n := range c.names {
		v := map[string][2]string{ // met, unmet
			"If-Match":            {etag, stale},
			"If-None-Match":       {stale, etag},
			"If-Modified-Since":   {before, lm},
			"If-Unmodified-Since": {lm, before},
		}[n]
		if c.met[i] {
			h[prefix+n] = v[0]
		} else {
			h[prefix+n] = v[1]
		}
	}
	return h
}

// matrixOp is one operation of the condition matrix: setup makes the
// resource the conditions refer to (name is fresh for every case) and
// answers its ETag and Last-Modified; req is the request under test.
type matrixOp struct {
	name  string
	setup func(t *testing.T, s *side, name string) answer
	req   func(name string) diffReq
	// prefix is put before the header names: "x-ms-source-" for a
	// copy's source, "x-ms-blob-" for Set Blob Tags.
	prefix string
}

func putBlob(t *testing.T, s *side, path string, hdr map[string]string, body string) answer {
	t.Helper()
	h := map[string]string{"x-ms-blob-type": "BlockBlob"}
	for k, v := range hdr {
		h[k] = v
	}
	a := s.do(t, "PUT", path, h, body)
	if a.status != http.StatusCreated {
		t.Fatalf("%s: setup PUT %s: %d %s", s.name, path, a.status, a.code)
	}
	return a
}

func mustDo(t *testing.T, s *side, method, path string, hdr map[string]string, body string, want int) answer {
	t.Helper()
	a := s.do(t, method, path, hdr, body)
	if a.status != want {
		t.Fatalf("%s: setup %s %s: %d %s, want %d", s.name, method, path, a.status, a.code, want)
	}
	return a
}

func matrixOps() []matrixOp {
	blockBlob := func(t *testing.T, s *side, name string) answer {
		return putBlob(t, s, "/mtx/"+name, nil, "seed")
	}
	pageBlob := func(t *testing.T, s *side, name string) answer {
		return putBlob(t, s, "/mtx/"+name, map[string]string{"x-ms-blob-type": "PageBlob", "x-ms-blob-content-length": "512"}, "")
	}
	appendBlob := func(t *testing.T, s *side, name string) answer {
		return putBlob(t, s, "/mtx/"+name, map[string]string{"x-ms-blob-type": "AppendBlob"}, "")
	}
	// missing refers the conditions to the shared source blob's ETag and
	// time: the blob under test does not exist.
	missing := func(t *testing.T, s *side, name string) answer {
		return s.do(t, "HEAD", "/mtx/src", nil, "")
	}
	container := func(t *testing.T, s *side, name string) answer {
		return mustDo(t, s, "PUT", "/"+name+"?restype=container", nil, "", http.StatusCreated)
	}
	blob := func(method, query string, hdr map[string]string, body string) func(string) diffReq {
		return func(name string) diffReq {
			return diffReq{method: method, path: "/mtx/" + name + query, hdr: hdr, body: body}
		}
	}
	ctr := func(method, query string, hdr map[string]string, body string) func(string) diffReq {
		return func(name string) diffReq {
			return diffReq{method: method, path: "/" + name + "?restype=container" + query, hdr: hdr, body: body}
		}
	}
	page := strings.Repeat("p", 512)
	return []matrixOp{
		{name: "Put Blob", setup: blockBlob, req: blob("PUT", "", map[string]string{"x-ms-blob-type": "BlockBlob"}, "new")},
		{name: "Put Blob on a missing blob", setup: missing, req: blob("PUT", "", map[string]string{"x-ms-blob-type": "BlockBlob"}, "new")},
		{name: "Put Blob (append blob)", setup: appendBlob, req: blob("PUT", "", map[string]string{"x-ms-blob-type": "AppendBlob"}, "")},
		{name: "Put Block List", setup: blockBlob, req: blob("PUT", "?comp=blocklist", nil, "<BlockList></BlockList>")},
		{name: "Set Blob Properties", setup: blockBlob, req: blob("PUT", "?comp=properties", map[string]string{"x-ms-blob-content-type": "text/x"}, "")},
		{name: "Set Blob Metadata", setup: blockBlob, req: blob("PUT", "?comp=metadata", map[string]string{"x-ms-meta-m": "v"}, "")},
		{name: "Set Blob Metadata on a missing blob", setup: missing, req: blob("PUT", "?comp=metadata", map[string]string{"x-ms-meta-m": "v"}, "")},
		{name: "Delete Blob", setup: blockBlob, req: blob("DELETE", "", nil, "")},
		{name: "Delete Blob on a missing blob", setup: missing, req: blob("DELETE", "", nil, "")},
		{name: "Lease Blob acquire", setup: blockBlob, req: blob("PUT", "?comp=lease", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}, "")},
		{name: "Snapshot Blob", setup: blockBlob, req: blob("PUT", "?comp=snapshot", nil, "")},
		{name: "Copy Blob (destination)", setup: blockBlob, req: blob("PUT", "", map[string]string{"x-ms-copy-source": "@url:/mtx/src"}, "")},
		{name: "Copy Blob (source)", setup: blockBlob, prefix: "x-ms-source-", req: func(name string) diffReq {
			return diffReq{method: "PUT", path: "/mtx/" + name + "-copy", hdr: map[string]string{"x-ms-copy-source": "@url:/mtx/" + name}}
		}},
		{name: "Append Block", setup: appendBlob, req: blob("PUT", "?comp=appendblock", nil, "abc")},
		{name: "Put Page", setup: pageBlob, req: blob("PUT", "?comp=page", map[string]string{"x-ms-page-write": "update", "x-ms-range": "bytes=0-511"}, page)},
		{name: "Clear Pages", setup: pageBlob, req: blob("PUT", "?comp=page", map[string]string{"x-ms-page-write": "clear", "x-ms-range": "bytes=0-511"}, "")},
		{name: "Set Blob Properties (page blob length)", setup: pageBlob, req: blob("PUT", "?comp=properties", map[string]string{"x-ms-blob-content-length": "1024"}, "")},
		{name: "Lease Blob break", setup: blockBlob, req: blob("PUT", "?comp=lease", map[string]string{"x-ms-lease-action": "break"}, "")},
		{name: "Set Blob Tags (x-ms-blob-if-*)", setup: blockBlob, prefix: "x-ms-blob-", req: blob("PUT", "?comp=tags", nil, "<Tags><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tags>")},
		{name: "Put Page on a missing blob", setup: missing, req: blob("PUT", "?comp=page", map[string]string{"x-ms-page-write": "update", "x-ms-range": "bytes=0-511"}, page)},
		{name: "Get Blob", setup: blockBlob, req: blob("GET", "", nil, "")},
		{name: "Get Blob Properties", setup: blockBlob, req: blob("HEAD", "", nil, "")},
		{name: "Get Page Ranges", setup: pageBlob, req: blob("GET", "?comp=pagelist", nil, "")},
		{name: "Set Container Metadata", setup: container, req: ctr("PUT", "&comp=metadata", map[string]string{"x-ms-meta-m": "v"}, "")},
		{name: "Set Container ACL", setup: container, req: ctr("PUT", "&comp=acl", nil, "<SignedIdentifiers></SignedIdentifiers>")},
		{name: "Delete Container", setup: container, req: ctr("DELETE", "", nil, "")},
		{name: "Lease Container acquire", setup: container, req: ctr("PUT", "&comp=lease", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}, "")},
	}
}

// startMatrix starts Azurite and blobshare with container mtx and blob
// mtx/src on both; nil without Azurite (skipped, or failed under
// BLOBSHARE_REQUIRE_ALL).
func startMatrix(t *testing.T) []*side {
	t.Helper()
	az := azuritetest.Start(t)
	if az == nil {
		return nil
	}
	e := newEnv(t, nil)
	sides := []*side{{name: "azurite", base: az.Endpoint, etags: map[string]string{}}, {name: "blobshare", base: e.URL, etags: map[string]string{}}}
	for _, s := range sides {
		mustDo(t, s, "PUT", "/mtx?restype=container", nil, "", http.StatusCreated)
		putBlob(t, s, "/mtx/src", nil, "source")
	}
	return sides
}

// compare sends r to both sides and sorts a difference into known (with
// the name of the knownDiff that explains it) or unexplained.
func compare(t *testing.T, sides []*side, label string, r diffReq, hdrOf func(s *side) map[string]string, tl *tally) {
	t.Helper()
	var got [2]answer
	var sent map[string]string
	for j, s := range sides {
		h := map[string]string{}
		for k, v := range r.hdr {
			h[k] = v
		}
		for k, v := range hdrOf(s) {
			h[k] = v
		}
		got[j] = s.do(t, r.method, r.path, h, r.body)
		sent = h // blobshare's, to sort a difference by the headers sent
	}
	r.hdr = sent
	if got[0].status == got[1].status && got[0].code == got[1].code {
		tl.add(nil, "")
		return
	}
	tl.add(explain(r, got[0], got[1]), fmt.Sprintf("%s: %s %s: azurite %d %s, blobshare %d %s",
		label, r.method, r.path, got[0].status, got[0].code, got[1].status, got[1].code))
}

// tally counts the requests compared and sorts their differences.
type tally struct {
	n           int
	known       map[string]int
	unexplained []string
}

func newTally() *tally { return &tally{known: map[string]int{}} }

// add counts one comparison: equal answers (diff ""), a known difference
// k, or an unexplained one.
func (tl *tally) add(k *knownDiff, diff string) {
	tl.n++
	switch {
	case diff == "":
	case k != nil:
		tl.known[k.name]++
	default:
		tl.unexplained = append(tl.unexplained, diff)
	}
}

// each runs f(0..n-1) in order. (Sending from several goroutines made no
// difference: Azurite's single Node.js process sets the pace.)
func each(n int, f func(i int)) {
	for i := range n {
		f(i)
	}
}

// TestDifferentialConditionMatrix: every operation of matrixOps with
// every combination of condCases, on both servers.
func TestDifferentialConditionMatrix(t *testing.T) {
	sides := startMatrix(t)
	if sides == nil {
		return
	}
	tl := newTally()
	cases, ops := condCases(), matrixOps()
	each(len(ops)*len(cases), func(i int) {
		op, c := ops[i/len(cases)], cases[i%len(cases)]
		name := fmt.Sprintf("m%d-%d", i/len(cases), i%len(cases))
		ref := map[string]answer{}
		for _, s := range sides {
			ref[s.name] = op.setup(t, s, name)
		}
		compare(t, sides, op.name+" with "+c.String(), op.req(name), func(s *side) map[string]string {
			return c.values(ref[s.name].etag, ref[s.name].lm, op.prefix)
		}, tl)
	})
	// Values the combinations above do not make: If-Match: * and lists
	// of ETags, on a blob that exists and on one that does not.
	for i, hdr := range []map[string]string{
		{"If-Match": "*"}, {"If-None-Match": "*"}, {"If-Match": "@etag, \"0x8D0000000000000\""}, {"If-None-Match": "\"0x8D0000000000000\", \"0x8D0000000000001\""},
	} {
		for _, exists := range []bool{true, false} {
			name := fmt.Sprintf("x%d-%v", i, exists)
			for _, s := range sides {
				if exists {
					putBlob(t, s, "/mtx/"+name, nil, "seed")
				}
			}
			for _, r := range []diffReq{
				{method: "PUT", path: "/mtx/" + name + "?comp=metadata", hdr: map[string]string{"x-ms-meta-m": "v"}},
				{method: "PUT", path: "/mtx/" + name, hdr: map[string]string{"x-ms-blob-type": "BlockBlob"}, body: "new"},
			} {
				compare(t, sides, fmt.Sprintf("%v (blob exists: %v)", hdr, exists), r, func(s *side) map[string]string {
					out := map[string]string{}
					for k, v := range hdr {
						out[k] = strings.ReplaceAll(v, "@etag", s.etags["/mtx/"+name])
					}
					return out
				}, tl)
			}
		}
	}
	report(t, tl)
}

// leaseState is a state a blob's lease is brought into with holder
// idA: the lease operations that bring it there.
type leaseState struct {
	name string
	ops  []map[string]string
}

// TestDifferentialLeaseMatrix: every lease state Azurite can be brought
// into without waiting (available, leased, breaking, broken, released)
// against writes and reads with the holder's id, another id and none, and
// every lease action, on both servers; then the same for container leases
// (containerLeaseMatrix). (Expired needs the clock to pass a
// lease's end: blobsvc's TestWriteOutcomeTable and TestLeaseTable cover
// it against Lease Blob's tables.)
func TestDifferentialLeaseMatrix(t *testing.T) {
	sides := startMatrix(t)
	if sides == nil {
		return
	}
	acquire := map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1", "x-ms-proposed-lease-id": idA}
	states := []leaseState{
		{"available", nil},
		{"leased", []map[string]string{acquire}},
		{"breaking", []map[string]string{acquire, {"x-ms-lease-action": "break", "x-ms-lease-break-period": "60"}}},
		{"broken", []map[string]string{acquire, {"x-ms-lease-action": "break", "x-ms-lease-break-period": "0"}}},
		{"released", []map[string]string{acquire, {"x-ms-lease-action": "release", "x-ms-lease-id": idA}}},
		{"broken, then written", []map[string]string{acquire, {"x-ms-lease-action": "break", "x-ms-lease-break-period": "0"}, nil}},
	}
	withID := func(id string, h map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range h {
			out[k] = v
		}
		if id != "" {
			out["x-ms-lease-id"] = id
		}
		return out
	}
	type leaseOp struct {
		name string
		req  func(name string) diffReq
	}
	var ops []leaseOp
	for _, id := range []string{idA, idB, ""} {
		who := map[string]string{idA: "(A)", idB: "(B)", "": "no lease"}[id]
		ops = append(ops,
			leaseOp{"Put Blob, " + who, func(n string) diffReq {
				return diffReq{method: "PUT", path: "/mtx/" + n, hdr: withID(id, map[string]string{"x-ms-blob-type": "BlockBlob"}), body: "w"}
			}},
			leaseOp{"Set Blob Metadata, " + who, func(n string) diffReq {
				return diffReq{method: "PUT", path: "/mtx/" + n + "?comp=metadata", hdr: withID(id, map[string]string{"x-ms-meta-m": "v"})}
			}},
			leaseOp{"Delete Blob, " + who, func(n string) diffReq { return diffReq{method: "DELETE", path: "/mtx/" + n, hdr: withID(id, nil)} }},
			leaseOp{"Put Block, " + who, func(n string) diffReq {
				return diffReq{method: "PUT", path: "/mtx/" + n + "?comp=block&blockid=YmxrMQ%3D%3D", hdr: withID(id, nil), body: "b"}
			}},
			leaseOp{"Copy Blob onto it, " + who, func(n string) diffReq {
				return diffReq{method: "PUT", path: "/mtx/" + n, hdr: withID(id, map[string]string{"x-ms-copy-source": "@url:/mtx/src"})}
			}},
			leaseOp{"Set Blob Tags, " + who, func(n string) diffReq {
				return diffReq{method: "PUT", path: "/mtx/" + n + "?comp=tags", hdr: withID(id, nil), body: "<Tags><TagSet></TagSet></Tags>"}
			}},
			leaseOp{"Get Blob, " + who, func(n string) diffReq { return diffReq{method: "GET", path: "/mtx/" + n, hdr: withID(id, nil)} }},
			leaseOp{"Get Blob Properties, " + who, func(n string) diffReq { return diffReq{method: "HEAD", path: "/mtx/" + n, hdr: withID(id, nil)} }},
		)
		if id == "" {
			continue
		}
		for _, action := range []string{"acquire", "renew", "change", "release"} {
			h := map[string]string{"x-ms-lease-action": action}
			switch action {
			case "acquire":
				h = map[string]string{"x-ms-lease-action": action, "x-ms-lease-duration": "-1", "x-ms-proposed-lease-id": id}
			case "change":
				h["x-ms-lease-id"], h["x-ms-proposed-lease-id"] = id, idB
				if id == idB {
					h["x-ms-proposed-lease-id"] = idA
				}
			default:
				h["x-ms-lease-id"] = id
			}
			ops = append(ops, leaseOp{"Lease Blob " + action + " " + who, func(n string) diffReq {
				return diffReq{method: "PUT", path: "/mtx/" + n + "?comp=lease", hdr: h}
			}})
		}
	}
	for _, p := range []string{"0", "60"} {
		ops = append(ops, leaseOp{"Lease Blob break, period " + p, func(n string) diffReq {
			return diffReq{method: "PUT", path: "/mtx/" + n + "?comp=lease", hdr: map[string]string{"x-ms-lease-action": "break", "x-ms-lease-break-period": p}}
		}})
	}
	// Expired leases: 15-second leases taken on every blob at once first,
	// so that they run out while the other states are compared; each
	// operation then once both servers report them all expired.
	expiring := map[string]bool{}
	for _, written := range []bool{false, true} {
		for oi := range ops {
			name := fmt.Sprintf("le%v-%d", written, oi)
			expiring[name] = written
			for _, s := range sides {
				putBlob(t, s, "/mtx/"+name, nil, "seed")
				mustDo(t, s, "PUT", "/mtx/"+name+"?comp=lease", map[string]string{"x-ms-lease-action": "acquire",
					"x-ms-lease-duration": "15", "x-ms-proposed-lease-id": idA}, "", http.StatusCreated)
			}
		}
	}
	tl := newTally()
	each(len(states)*len(ops), func(i int) {
		st, op := states[i/len(ops)], ops[i%len(ops)]
		name := fmt.Sprintf("l%d-%d", i/len(ops), i%len(ops))
		for _, s := range sides {
			putBlob(t, s, "/mtx/"+name, nil, "seed")
			for _, h := range st.ops {
				if h == nil { // a write without a lease id
					mustDo(t, s, "PUT", "/mtx/"+name+"?comp=metadata", map[string]string{"x-ms-meta-w": "1"}, "", http.StatusOK)
					continue
				}
				a := s.do(t, "PUT", "/mtx/"+name+"?comp=lease", h, "")
				if a.status >= 300 {
					t.Fatalf("%s: bringing %s to %s: %d %s", s.name, name, st.name, a.status, a.code)
				}
			}
		}
		label := op.name + " on a " + st.name + " lease"
		compare(t, sides, label, op.req(name), func(*side) map[string]string { return nil }, tl)
		compareLeaseState(t, sides, label, diffReq{method: "HEAD", path: "/mtx/" + name, copyOnto: strings.HasPrefix(op.name, "Copy Blob")}, tl)
	})
	containerLeaseMatrix(t, sides, states, tl)
	waitExpired(t, sides, expiring)
	names := make([]string, 0, len(expiring))
	for name := range expiring {
		names = append(names, name)
	}
	each(len(names), func(i int) {
		name, written := names[i], expiring[names[i]]
		var oi int
		fmt.Sscanf(name[strings.LastIndex(name, "-")+1:], "%d", &oi)
		st := "expired"
		if written {
			st = "expired, then written"
			for _, s := range sides {
				mustDo(t, s, "PUT", "/mtx/"+name+"?comp=metadata", map[string]string{"x-ms-meta-w": "1"}, "", http.StatusOK)
			}
		}
		label := ops[oi].name + " on an " + st + " lease"
		compare(t, sides, label, ops[oi].req(name), func(*side) map[string]string { return nil }, tl)
		compareLeaseState(t, sides, label, diffReq{method: "HEAD", path: "/mtx/" + name, copyOnto: strings.HasPrefix(ops[oi].name, "Copy Blob"),
			renewB: ops[oi].name == "Lease Blob renew (B)"}, tl)
	})
	report(t, tl)
}

// containerLeaseMatrix is the lease matrix of containers: the same
// states (a fresh container each time; "written" is a Set Container
// Metadata) against Delete Container, Set Container Metadata, Set
// Container ACL and Get Container Properties with the holder's id,
// another id and none, and every Lease Container action.
func containerLeaseMatrix(t *testing.T, sides []*side, states []leaseState, tl *tally) {
	t.Helper()
	type op struct {
		name string
		req  func(c string) diffReq
	}
	var ops []op
	for _, id := range []string{idA, idB, ""} {
		who := map[string]string{idA: "(A)", idB: "(B)", "": "no lease"}[id]
		hdr := func(h map[string]string) map[string]string {
			out := map[string]string{}
			for k, v := range h {
				out[k] = v
			}
			if id != "" {
				out["x-ms-lease-id"] = id
			}
			return out
		}
		ops = append(ops,
			op{"Delete Container, " + who, func(c string) diffReq {
				return diffReq{method: "DELETE", path: "/" + c + "?restype=container", hdr: hdr(nil)}
			}},
			op{"Set Container Metadata, " + who, func(c string) diffReq {
				return diffReq{method: "PUT", path: "/" + c + "?restype=container&comp=metadata", hdr: hdr(map[string]string{"x-ms-meta-m": "v"})}
			}},
			op{"Set Container ACL, " + who, func(c string) diffReq {
				return diffReq{method: "PUT", path: "/" + c + "?restype=container&comp=acl", hdr: hdr(nil), body: "<SignedIdentifiers></SignedIdentifiers>"}
			}},
			op{"Get Container Properties, " + who, func(c string) diffReq {
				return diffReq{method: "HEAD", path: "/" + c + "?restype=container", hdr: hdr(nil)}
			}},
		)
		if id == "" {
			continue
		}
		for _, action := range []string{"acquire", "renew", "change", "release"} {
			h := map[string]string{"x-ms-lease-action": action, "x-ms-lease-id": id}
			switch action {
			case "acquire":
				h = map[string]string{"x-ms-lease-action": action, "x-ms-lease-duration": "-1", "x-ms-proposed-lease-id": id}
			case "change":
				h["x-ms-proposed-lease-id"] = map[string]string{idA: idB, idB: idA}[id]
			}
			ops = append(ops, op{"Lease Container " + action + " " + who, func(c string) diffReq {
				return diffReq{method: "PUT", path: "/" + c + "?restype=container&comp=lease", hdr: h}
			}})
		}
	}
	for _, p := range []string{"0", "60"} {
		ops = append(ops, op{"Lease Container break, period " + p, func(c string) diffReq {
			return diffReq{method: "PUT", path: "/" + c + "?restype=container&comp=lease", hdr: map[string]string{"x-ms-lease-action": "break", "x-ms-lease-break-period": p}}
		}})
	}
	each(len(states)*len(ops), func(i int) {
		st, o := states[i/len(ops)], ops[i%len(ops)]
		c := fmt.Sprintf("lc%d-%d", i/len(ops), i%len(ops))
		for _, s := range sides {
			mustDo(t, s, "PUT", "/"+c+"?restype=container", nil, "", http.StatusCreated)
			for _, h := range st.ops {
				if h == nil {
					mustDo(t, s, "PUT", "/"+c+"?restype=container&comp=metadata", map[string]string{"x-ms-meta-w": "1"}, "", http.StatusOK)
					continue
				}
				if a := s.do(t, "PUT", "/"+c+"?restype=container&comp=lease", h, ""); a.status >= 300 {
					t.Fatalf("%s: bringing container %s to %s: %d %s", s.name, c, st.name, a.status, a.code)
				}
			}
		}
		label := o.name + " on a " + st.name + " container lease"
		compare(t, sides, label, o.req(c), func(*side) map[string]string { return nil }, tl)
		compareLeaseState(t, sides, label, diffReq{method: "HEAD", path: "/" + c + "?restype=container"}, tl)
	})
}

// waitExpired polls both sides until every blob of names reports its
// lease expired (the leases are 15 s long; the poll gives up after a
// minute).
func waitExpired(t *testing.T, sides []*side, names map[string]bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for name := range names {
		for _, s := range sides {
			for {
				a := s.do(t, "HEAD", "/mtx/"+name, nil, "")
				if a.lease == "expired" {
					break
				}
				if a.lease != "leased" || time.Now().After(deadline) {
					t.Fatalf("%s: lease of %s is %q, waiting for it to expire", s.name, name, a.lease)
				}
				time.Sleep(200 * time.Millisecond) // polling a real server's clock: nothing to wait on but time
			}
		}
	}
}

// compareLeaseState sends r, a HEAD, to both sides after an operation:
// the lease state a write or a lease action leaves must agree too, or be
// a known difference.
func compareLeaseState(t *testing.T, sides []*side, label string, r diffReq, tl *tally) {
	t.Helper()
	var got [2]answer
	for j, s := range sides {
		got[j] = s.do(t, r.method, r.path, nil, "")
	}
	if got[0].status == got[1].status && got[0].lease == got[1].lease {
		tl.add(nil, "")
		return
	}
	tl.add(explain(r, got[0], got[1]), fmt.Sprintf("%s, then HEAD %s: azurite %d lease %q, blobshare %d lease %q",
		label, r.path, got[0].status, got[0].lease, got[1].status, got[1].lease))
}

// report logs the known differences met and fails on unexplained ones.
func report(t *testing.T, tl *tally) {
	t.Helper()
	total := 0
	for name, k := range tl.known {
		t.Logf("known difference %q: %d requests", name, k)
		total += k
	}
	for _, d := range tl.unexplained {
		t.Error(d)
	}
	t.Logf("%d requests compared, %d known differences, %d unexplained", tl.n, total, len(tl.unexplained))
}
