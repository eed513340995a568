package queue_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
)

// The differential test sends the same seeded sequences of Queue requests
// to Azurite's Queue service and to blobshare's and compares, request by
// request, the status, x-ms-error-code and what the answer says that does
// not depend on the server (which messages, their texts and dequeue
// counts, metadata, counts, listed names). Message ids and pop receipts
// differ between the servers, so the sequences name messages by handle
// and receipts by age (current, stale, the put's), and each side
// translates them to its own.
//
// Every time is kept far from its edge (hidden messages stay hidden for
// an hour or more, TTLs are -1 or hours, no update makes a message
// visible again), so the answers do not depend on how long either server
// takes; visibility and TTL edges are msgqueue's clock-driven tests.
//
// A difference is a failure unless it is one of knownDifferences, each
// written down in queue/doc.go with Azure's documentation's words.

// diffSeeds sequences of diffOps requests; BLOBSHARE_DIFF_SEEDS=n runs
// n sequences instead (for a longer hunt).
const (
	diffSeeds = 12
	diffOps   = 150
)

func diffSeedCount(t *testing.T) uint64 {
	if v := os.Getenv("BLOBSHARE_DIFF_SEEDS"); v != "" {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n == 0 {
			t.Fatalf("BLOBSHARE_DIFF_SEEDS=%q: want a positive count", v)
		}
		return n
	}
	return diffSeeds
}

// knownDifference is a documented divergence: blobshare's answer, then
// Azurite's, for the same request.
type knownDifference struct {
	ours, azurite string // "status code"
	why           string
}

var knownDifferences = []knownDifference{
	{"404 MessageNotFound", "400 PopReceiptMismatch",
		"a stale pop receipt of an existing message: Azure documents 404 (queue/doc.go, msgqueue/doc.go)"},
}

// diffSide is one server and its translation of handles.
type diffSide struct {
	name     string
	c        *rawClient
	ids      map[int]string   // message handle → id
	handleOf map[string]int   // id → handle
	receipts map[int][]string // handle → every receipt issued, oldest first
	marker   string           // the last List Queues NextMarker
}

func newDiffSide(t *testing.T, name, base string) *diffSide {
	return &diffSide{name: name, c: newRawClient(t, base), ids: map[int]string{}, handleOf: map[string]int{}, receipts: map[int][]string{}}
}

// diffOp is one request of a sequence, in symbolic form.
type diffOp struct {
	desc   string
	method string
	path   func(s *diffSide) string
	query  func(s *diffSide) string
	header http.Header
	body   []byte
	// after reads a successful answer into the side's state and returns
	// what must be equal on both sides.
	after func(t *testing.T, s *diffSide, r rawResponse) string
	// list: a List Queues request (a marker is only sent by a list that
	// directly follows another: markers are opaque, and what one means
	// after queues were created or deleted is not documented).
	list bool
	// malformed: the body is not exactly one <QueueMessage> document
	// (another root element, something after the document, bytes that are
	// not UTF-8).
	malformed bool
}

func fixed(s string) func(*diffSide) string { return func(*diffSide) string { return s } }

// diffGen makes the operations of one seeded sequence.
type diffGen struct {
	rng         *rand.Rand
	prefix      string
	queues      []string
	nextHandle  int
	handleQueue map[int]string
}

func (g *diffGen) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }

func (g *diffGen) queueName() string {
	if g.rng.IntN(12) == 0 {
		return g.pick("ab", "Alpha", "a--b", strings.Repeat("x", 64), "-ab", "ab-")
	}
	return g.queues[g.rng.IntN(len(g.queues))]
}

// param adds name=value to kv unless value is "absent".
func param(kv []string, name, value string) []string {
	if value == "absent" {
		return kv
	}
	return append(kv, name, value)
}

func (g *diffGen) metadata() http.Header {
	h := http.Header{}
	switch g.rng.IntN(3) {
	case 1:
		h.Set("x-ms-meta-owner", "alice")
	case 2:
		h.Set("x-ms-meta-owner", "bob")
		h.Set("x-ms-meta-stage", "2")
	}
	return h
}

func (g *diffGen) messageText(h int) string {
	switch g.rng.IntN(10) {
	case 0:
		return strings.Repeat("a", 64<<10) // exactly the limit
	case 1:
		return strings.Repeat("a", 64<<10+1)
	case 2:
		return strings.Repeat("é", 32<<10+1) // 64 KiB + 2 bytes of UTF-8
	case 3:
		return fmt.Sprintf("t%d <&> \"quoted\"", h)
	default:
		return fmt.Sprintf("t%d", h)
	}
}

// badBody is a Put/Update body that is not one QueueMessage with a
// MessageText.
func (g *diffGen) badBody() []byte {
	return []byte(g.pick(
		"<QueueMessage><MessageText>x</MessageText>",
		"not xml at all",
		"<QueueMessage></QueueMessage>",
		"<Other><MessageText>x</MessageText></Other>",
		"<QueueMessage><MessageText>x</MessageText></QueueMessage><QueueMessage>",
		"<QueueMessage><MessageText>a<b>c</b></MessageText></QueueMessage>",
		"<QueueMessage><MessageText>\xff\xfe</MessageText></QueueMessage>",
	))
}

func malformed(body []byte) bool {
	b := string(body)
	return strings.HasPrefix(b, "<") && (!strings.HasPrefix(b, "<QueueMessage>") || strings.Count(b, "<QueueMessage>") > 1 || !utf8.ValidString(b))
}

// handle picks a known message handle (or -1 for none).
func (g *diffGen) handle() int {
	if g.nextHandle == 0 {
		return -1
	}
	return g.rng.IntN(g.nextHandle)
}

// receiptChoice picks which receipt of handle h an operation sends.
func (g *diffGen) receiptChoice() (string, func(s *diffSide, h int) (string, bool)) {
	switch g.rng.IntN(10) {
	case 0:
		return "stale receipt", func(s *diffSide, h int) (string, bool) {
			rs := s.receipts[h]
			if len(rs) < 2 {
				return rs[len(rs)-1], true
			}
			return rs[len(rs)-2], true
		}
	case 1:
		return "put receipt", func(s *diffSide, h int) (string, bool) { return s.receipts[h][0], true }
	case 2:
		return "made-up receipt", func(*diffSide, int) (string, bool) { return "AgAAAAMAAAAAAAAAAAAAAAAAAAA=", true }
	case 3:
		return "no receipt", func(*diffSide, int) (string, bool) { return "", false }
	default:
		return "current receipt", func(s *diffSide, h int) (string, bool) {
			rs := s.receipts[h]
			return rs[len(rs)-1], true
		}
	}
}

func messagesSummary(t *testing.T, s *diffSide, r rawResponse, record bool) string {
	var out []string
	for _, m := range parseMessages(t, r.Body) {
		h, ok := s.handleOf[m.MessageID]
		if !ok {
			t.Fatalf("%s answered unknown message %s", s.name, m.MessageID)
		}
		if record {
			s.receipts[h] = append(s.receipts[h], m.PopReceipt)
		}
		out = append(out, fmt.Sprintf("h%d dc%d %q", h, m.DequeueCount, m.MessageText))
	}
	return strings.Join(out, "; ")
}

func (g *diffGen) next() diffOp {
	switch n := g.rng.IntN(100); {
	case n < 8: // Create Queue
		name, md := g.queueName(), g.metadata()
		return diffOp{desc: "create " + name + fmt.Sprint(md), method: "PUT", path: fixed("/" + name), query: fixed(""), header: md}
	case n < 11: // Delete Queue
		name := g.queueName()
		return diffOp{desc: "delete queue " + name, method: "DELETE", path: fixed("/" + name), query: fixed("")}
	case n < 16: // Get Queue Metadata
		name := g.queueName()
		return diffOp{desc: "metadata of " + name, method: "GET", path: fixed("/" + name), query: fixed("comp=metadata"),
			after: func(t *testing.T, s *diffSide, r rawResponse) string {
				var md []string
				for k, v := range r.Header {
					if strings.HasPrefix(strings.ToLower(k), "x-ms-meta-") {
						md = append(md, strings.ToLower(k)+"="+v[0])
					}
				}
				slices.Sort(md)
				return "count " + r.Header.Get("x-ms-approximate-messages-count") + " " + strings.Join(md, ",")
			}}
	case n < 19: // Set Queue Metadata
		name, md := g.queueName(), g.metadata()
		return diffOp{desc: "set metadata of " + name + fmt.Sprint(md), method: "PUT", path: fixed("/" + name), query: fixed("comp=metadata"), header: md}
	case n < 22: // List Queues
		var kv []string
		kv = param(kv, "prefix", g.pick("absent", g.prefix, g.prefix+"a", "zzz"))
		kv = param(kv, "maxresults", g.pick("absent", "absent", "1", "2", "2", "0", "abc"))
		kv = param(kv, "include", g.pick("absent", "metadata"))
		if kv == nil || !slices.Contains(kv, "prefix") {
			kv = append(kv, "prefix", g.prefix)
		}
		useMarker := g.rng.IntN(2) == 0
		return diffOp{desc: "list " + strings.Join(kv, " ") + fmt.Sprintf(" marker=%v", useMarker), method: "GET", path: fixed("/"), list: true,
			query: func(s *diffSide) string {
				if useMarker && s.marker != "" {
					return q(append(kv, "comp", "list", "marker", s.marker)...)
				}
				return q(append(kv, "comp", "list")...)
			},
			after: func(t *testing.T, s *diffSide, r rawResponse) string {
				var res struct {
					Queues []struct {
						Name     string `xml:"Name"`
						Metadata struct {
							Inner string `xml:",innerxml"`
						} `xml:"Metadata"`
					} `xml:"Queues>Queue"`
					NextMarker string `xml:"NextMarker"`
				}
				if err := xmlUnmarshal(r.Body, &res); err != nil {
					t.Fatalf("%s list answer: %v: %q", s.name, err, r.Body)
				}
				s.marker = res.NextMarker
				var names []string
				for _, q := range res.Queues {
					names = append(names, q.Name+"{"+normalizeMetadataXML(q.Metadata.Inner)+"}")
				}
				return fmt.Sprintf("%v more=%v", names, res.NextMarker != "")
			}}
	case n < 24: // Get Queue ACL
		name := g.queueName()
		return diffOp{desc: "get acl of " + name, method: "GET", path: fixed("/" + name), query: fixed("comp=acl"),
			after: func(t *testing.T, s *diffSide, r rawResponse) string {
				var res struct {
					IDs []struct {
						ID   string `xml:"Id"`
						Perm string `xml:"AccessPolicy>Permission"`
					} `xml:"SignedIdentifier"`
				}
				if err := xmlUnmarshal(r.Body, &res); err != nil {
					t.Fatalf("%s acl answer: %v: %q", s.name, err, r.Body)
				}
				return fmt.Sprint(res.IDs)
			}}
	case n < 26: // Set Queue ACL
		name := g.queueName()
		ids := 1 + g.rng.IntN(6)
		perm := g.pick("raup", "r", "pu", "rw")
		var b strings.Builder
		b.WriteString("<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers>")
		for i := range ids {
			fmt.Fprintf(&b, "<SignedIdentifier><Id>id%d</Id><AccessPolicy><Start>2026-01-01T00:00:00.0000000Z</Start><Expiry>2027-01-01T00:00:00.0000000Z</Expiry><Permission>%s</Permission></AccessPolicy></SignedIdentifier>", i, perm)
		}
		b.WriteString("</SignedIdentifiers>")
		return diffOp{desc: fmt.Sprintf("set acl of %s: %d ids %q", name, ids, perm), method: "PUT", path: fixed("/" + name), query: fixed("comp=acl"), body: []byte(b.String())}
	case n < 46: // Put Message
		name := g.queueName()
		h := g.nextHandle
		var kv []string
		vis := g.pick("absent", "absent", "absent", "absent", "0", "0", "3600", "604800", "604801", "-1", "abc")
		ttl := g.pick("absent", "absent", "absent", "absent", "-1", "-1", "7200", "7200", "3600", "0", "-2", "abc", "2147483648")
		kv = param(kv, "visibilitytimeout", vis)
		kv = param(kv, "messagettl", ttl)
		text := g.messageText(h)
		body := messageBody(text)
		desc := fmt.Sprintf("put h%d (%d bytes) in %s %v", h, len(text), name, kv)
		if g.rng.IntN(25) == 0 {
			body = g.badBody()
			desc += fmt.Sprintf(" body %q", body)
		}
		return diffOp{desc: desc, method: "POST", malformed: malformed(body), path: fixed("/" + name + "/messages"), query: fixed(q(kv...)), body: body,
			after: func(t *testing.T, s *diffSide, r rawResponse) string {
				ms := parseMessages(t, r.Body)
				if len(ms) != 1 {
					t.Fatalf("%s put answered %d messages", s.name, len(ms))
				}
				s.ids[h], s.handleOf[ms[0].MessageID], s.receipts[h] = ms[0].MessageID, h, []string{ms[0].PopReceipt}
				g.nextHandle = h + 1
				g.handleQueue[h] = name
				return "put, expires " + map[bool]string{true: "never", false: "later"}[strings.HasPrefix(ms[0].ExpirationTime, "Fri, 31 Dec 9999")]
			}}
	case n < 60: // Get Messages
		name := g.queueName()
		var kv []string
		kv = param(kv, "numofmessages", g.pick("absent", "1", "3", "32", "absent", "1", "3", "32", "0", "33", "abc"))
		kv = param(kv, "visibilitytimeout", g.pick("3600", "3600", "3600", "absent-not-allowed", "absent-not-allowed", "0", "604801", "abc"))
		for i := range kv {
			if kv[i] == "absent-not-allowed" { // the 30 s default would reappear during the run
				kv[i] = "7200"
			}
		}
		return diffOp{desc: "get " + name + fmt.Sprint(kv), method: "GET", path: fixed("/" + name + "/messages"), query: fixed(q(kv...)),
			after: func(t *testing.T, s *diffSide, r rawResponse) string { return messagesSummary(t, s, r, true) }}
	case n < 68: // Peek Messages
		name := g.queueName()
		kv := param([]string{"peekonly", "true"}, "numofmessages", g.pick("absent", "1", "32", "absent", "1", "32", "0", "33", "abc"))
		return diffOp{desc: "peek " + name + fmt.Sprint(kv), method: "GET", path: fixed("/" + name + "/messages"), query: fixed(q(kv...)),
			after: func(t *testing.T, s *diffSide, r rawResponse) string { return messagesSummary(t, s, r, false) }}
	case n < 80: // Delete Message
		h := g.handle()
		if h < 0 {
			return g.next()
		}
		which, receipt := g.receiptChoice()
		name := g.handleQueue[h]
		unknownID := g.rng.IntN(12) == 0
		return diffOp{desc: fmt.Sprintf("delete h%d in %s with %s (unknown id %v)", h, name, which, unknownID), method: "DELETE",
			path: func(s *diffSide) string {
				if unknownID {
					return "/" + name + "/messages/00000000-0000-0000-0000-000000000000"
				}
				return "/" + name + "/messages/" + s.ids[h]
			},
			query: func(s *diffSide) string {
				if r, ok := receipt(s, h); ok {
					return q("popreceipt", r)
				}
				return ""
			}}
	case n < 94: // Update Message
		h := g.handle()
		if h < 0 {
			return g.next()
		}
		which, receipt := g.receiptChoice()
		name := g.handleQueue[h]
		vis := g.pick("3600", "3600", "3600", "7200", "7200", "absent", "-1", "604801", "abc")
		var body []byte
		desc := fmt.Sprintf("update h%d in %s with %s vis %s", h, name, which, vis)
		switch g.rng.IntN(12) {
		case 0, 1, 2: // visibility only
		case 3:
			body = g.badBody()
			desc += fmt.Sprintf(" body %q", body)
		default:
			text := g.messageText(h)
			body = messageBody("u" + text)
			desc += fmt.Sprintf(" text of %d bytes", len(text)+1)
		}
		return diffOp{desc: desc, method: "PUT", body: body, malformed: malformed(body),
			path: func(s *diffSide) string { return "/" + name + "/messages/" + s.ids[h] },
			query: func(s *diffSide) string {
				kv := param(nil, "visibilitytimeout", vis)
				if r, ok := receipt(s, h); ok {
					kv = append(kv, "popreceipt", r)
				}
				return q(kv...)
			},
			after: func(t *testing.T, s *diffSide, r rawResponse) string {
				s.receipts[h] = append(s.receipts[h], r.Header.Get("x-ms-popreceipt"))
				return "updated"
			}}
	case n < 96: // Clear Messages
		name := g.queueName()
		return diffOp{desc: "clear " + name, method: "DELETE", path: fixed("/" + name + "/messages"), query: fixed("")}
	case n < 98: // Get / Set Service Properties
		if g.rng.IntN(2) == 0 {
			return diffOp{desc: "get service properties", method: "GET", path: fixed("/"), query: fixed("restype=service&comp=properties"),
				after: func(t *testing.T, s *diffSide, r rawResponse) string {
					var p struct {
						HourEnabled string   `xml:"HourMetrics>Enabled"`
						HourDays    string   `xml:"HourMetrics>RetentionPolicy>Days"`
						Origins     []string `xml:"Cors>CorsRule>AllowedOrigins"`
					}
					if err := xmlUnmarshal(r.Body, &p); err != nil {
						t.Fatalf("%s service properties: %v: %q", s.name, err, r.Body)
					}
					return fmt.Sprintf("%+v", p)
				}}
		}
		days := g.pick("3", "7")
		origin := g.pick("*", "http://example.com")
		body := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>` +
			`<HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>true</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>` + days + `</Days></RetentionPolicy></HourMetrics>` +
			`<Cors><CorsRule><AllowedOrigins>` + origin + `</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>60</MaxAgeInSeconds><ExposedHeaders>*</ExposedHeaders><AllowedHeaders>*</AllowedHeaders></CorsRule></Cors>` +
			`</StorageServiceProperties>`
		if g.rng.IntN(6) == 0 {
			body = "<StorageServiceProperties>"
		}
		return diffOp{desc: "set service properties " + days + " " + origin, method: "PUT", path: fixed("/"), query: fixed("restype=service&comp=properties"), body: []byte(body)}
	default: // requests no operation matches
		name := g.queues[0]
		switch g.rng.IntN(3) {
		case 0:
			return diffOp{desc: "unknown comp", method: "GET", path: fixed("/" + name), query: fixed("comp=bogus")}
		case 1:
			return diffOp{desc: "POST on a queue", method: "POST", path: fixed("/" + name), query: fixed("")}
		default:
			return diffOp{desc: "PUT on messages", method: "PUT", path: fixed("/" + name + "/messages"), query: fixed(""), body: messageBody("x")}
		}
	}
}

// TestDifferentialAzurite runs diffSeeds sequences of diffOps requests
// against Azurite's Queue service and blobshare's.
func TestDifferentialAzurite(t *testing.T) {
	az := azuritetest.StartQueue(t)
	ours := newEnv(t, nil)
	known := map[string]int{}
	compared, cut := 0, 0
	seeds := diffSeedCount(t)
	for seed := range seeds {
		g := &diffGen{rng: rand.New(rand.NewPCG(seed, 1)), prefix: fmt.Sprintf("s%d-", seed), handleQueue: map[int]string{}}
		for _, n := range []string{"alpha", "beta", "gamma-1"} {
			g.queues = append(g.queues, g.prefix+n)
		}
		sides := []*diffSide{newDiffSide(t, "blobshare", ours.URL), newDiffSide(t, "azurite", az.Endpoint)}
		var history []string
		for i := range diffOps {
			op := g.next()
			if !op.list {
				for _, s := range sides {
					s.marker = ""
				}
			}
			var answers [2]string
			var resps [2]rawResponse
			for j, s := range sides {
				resps[j] = s.c.do(t, op.method, op.path(s), op.query(s), op.header.Clone(), op.body)
				answers[j] = fmt.Sprintf("%d %s", resps[j].Status, resps[j].Code)
			}
			ok0, ok1 := resps[0].Status < 300, resps[1].Status < 300
			if ok0 && ok1 && op.after != nil {
				for j, s := range sides {
					answers[j] += " | " + op.after(t, s, resps[j])
				}
			}
			compared++
			history = append(history, fmt.Sprintf("op %d: %s → %s", i, op.desc, answers[0]))
			if answers[0] == answers[1] {
				continue
			}
			if d := whyKnown(op, answers[0], answers[1], resps[1]); d != "" {
				known[d]++
				if ok0 != ok1 {
					cut++
					break // one server changed state, the other did not
				}
				continue
			}
			t.Errorf("seed %d op %d: %s\n  blobshare: %s\n  azurite:   %s\n  azurite body: %.400s\n  the sequence so far (blobshare's answers):\n    %s",
				seed, i, op.desc, answers[0], answers[1], resps[1].Body, strings.Join(history[max(0, len(history)-25):], "\n    "))
			break // the two states may differ from here on
		}
	}
	t.Logf("%d requests compared on each side (%d of %d sequences cut short by a documented difference that changed one side only); documented differences seen: %v",
		compared, cut, seeds, known)
}

// whyKnown returns the reason if the pair of answers is a
// documented difference.
func whyKnown(op diffOp, ours, azurite string, azResp rawResponse) string {
	if op.malformed && ours == "400 InvalidXmlDocument" && azurite != ours {
		return "Azurite takes MessageText under any root element, ignores what follows the document and takes bytes that are not UTF-8; blobshare wants exactly the documented <QueueMessage> in UTF-8 (queue/doc.go)"
	}
	if azurite == "400 " && len(azResp.Body) == 0 &&
		(strings.HasPrefix(ours, "400 ") || ours == "405 UnsupportedHttpVerb" || ours == "413 RequestBodyTooLarge") {
		return "Azurite's generated request validator answers 400 without an error code or body; blobshare answers Azure's documented code (queue/doc.go)"
	}
	for _, d := range knownDifferences {
		if ours == d.ours && azurite == d.azurite {
			return d.why
		}
	}
	return ""
}
