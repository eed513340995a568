package table

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/blobshare/blobshare/storagehttp"
	"github.com/blobshare/blobshare/tablesvc"
)

// Entity group transactions (performing-entity-group-transactions): one
// POST /<account>/$batch, multipart/mixed, holding one change set of up
// to 100 entity writes on one table and one PartitionKey (or a single
// point query). The answer is 202 with one response per operation, or,
// when an operation fails, the one failing response whose error message
// starts with the operation's 0-based index; nothing is then applied.

// maxBatchOps is the change set limit.
const maxBatchOps = 100

// batchPart is one operation of a change set as sent.
type batchPart struct {
	contentID string
	method    string
	target    *url.URL
	path      resourcePath
	header    http.Header
	body      []byte
}

// opError is a failure of operation index: answered inside the 202.
type opError struct {
	index int
	err   error
}

func (e *opError) Error() string {
	return "batch operation " + strconv.Itoa(e.index) + ": " + e.err.Error()
}
func (e *opError) Unwrap() error { return e.err }

func errBatch(msg string) *storagehttp.Error { return invalidInput(msg) }

// readBatch reads the batch body: the parts of its one change set, or a
// single query part (query true). A body that is not that structure is a
// top-level 400; a part that cannot be an operation is an *opError.
func readBatch(r *http.Request, account string) (parts []batchPart, query bool, err error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" || params["boundary"] == "" {
		return nil, false, errBatch("The batch request must be multipart/mixed with a boundary.")
	}
	outer := multipart.NewReader(r.Body, params["boundary"])
	first, err := outer.NextPart()
	if err != nil {
		return nil, false, batchReadErr(err, "The batch request holds no change set.")
	}
	mt, params, err = mime.ParseMediaType(first.Header.Get("Content-Type"))
	switch {
	case err == nil && mt == "multipart/mixed" && params["boundary"] != "":
		inner := multipart.NewReader(first, params["boundary"])
		for {
			p, err := inner.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, false, batchReadErr(err, "The change set is not valid multipart/mixed.")
			}
			if len(parts) == maxBatchOps {
				return nil, false, &opError{0, invalidInput("The batch request operation exceeds the maximum 100 changes per change set.")}
			}
			raw, err := io.ReadAll(p)
			if err != nil {
				return nil, false, batchReadErr(err, "The change set is not valid multipart/mixed.")
			}
			bp, err := readPart(p.Header.Get("Content-ID"), raw, account, storagehttp.RequestHost(r))
			if err != nil {
				return nil, false, &opError{len(parts), err}
			}
			parts = append(parts, bp)
		}
		if len(parts) == 0 {
			return nil, false, errBatch("The change set holds no operation.")
		}
	case err == nil && mt == "application/http":
		raw, err := io.ReadAll(first)
		if err != nil {
			return nil, false, batchReadErr(err, "The batch request is not valid multipart/mixed.")
		}
		bp, err := readPart(first.Header.Get("Content-ID"), raw, account, storagehttp.RequestHost(r))
		if err != nil {
			return nil, false, &opError{0, err}
		}
		if bp.method != http.MethodGet {
			return nil, false, &opError{0, invalidInput("An operation outside a change set must be a query.")}
		}
		parts, query = []batchPart{bp}, true
	default:
		return nil, false, errBatch("A batch part must be a change set (multipart/mixed) or a query (application/http).")
	}
	if _, err := outer.NextPart(); !errors.Is(err, io.EOF) {
		return nil, false, batchReadErr(err, "A batch request holds exactly one change set or query.")
	}
	return parts, query, nil
}

// batchReadErr keeps an over-long body's 413 and makes anything else of
// the multipart structure a 400.
func batchReadErr(err error, msg string) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	return &storagehttp.Error{Status: http.StatusBadRequest, Code: storagehttp.CodeInvalidInput, Message: msg, Err: err}
}

// readPart reads one application/http part: request line (the URL may be
// absolute: only its path counts), headers, blank line, body.
//
// host is the batch request's host (storagehttp.RequestHost): a part's
// absolute URL is read against its own host, a relative one against the
// batch's; under PathStyleOnly (host "") every path is path-style.
func readPart(contentID string, raw []byte, account, host string) (batchPart, error) {
	bp := batchPart{contentID: contentID}
	br := bufio.NewReader(bytes.NewReader(raw))
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	if err != nil {
		return bp, invalidInput("A batch operation has no request line.")
	}
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !strings.HasPrefix(proto, "HTTP/") || method == "" {
		return bp, invalidInput("A batch operation's request line is malformed.")
	}
	u, err := url.Parse(target)
	if err != nil {
		return bp, invalidInput("A batch operation's URL is malformed.")
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil && !errors.Is(err, io.EOF) {
		return bp, invalidInput("A batch operation's headers are malformed.")
	}
	body, _ := io.ReadAll(br) // from memory: cannot fail
	bp.method, bp.target, bp.header, bp.body = method, u, http.Header(hdr), bytes.TrimSpace(body)
	if host != "" && u.Host != "" {
		host = u.Host
	}
	if bp.path, err = parsePath(host, u.EscapedPath()); err != nil {
		return bp, err
	}
	if bp.path.account != account || bp.path.scope != scopeEntities && bp.path.scope != scopeEntity {
		return bp, invalidInput("A batch operation must address an entity of this account.")
	}
	if bp.method, err = effectiveMethod(&http.Request{Method: method, Header: bp.header}); err != nil {
		return bp, err
	}
	return bp, nil
}

// batch serves POST /<account>/$batch.
func (s *Server) batch(w http.ResponseWriter, c *call) error {
	parts, query, err := readBatch(c.r, s.account)
	var oe *opError
	if errors.As(err, &oe) {
		return s.writeBatchFailure(w, c, parts, oe)
	}
	if err != nil {
		return err
	}
	if query {
		return s.batchQuery(w, c, parts[0])
	}
	table := parts[0].path.table
	// A missing table fails the change set at its first operation before
	// any validation of the operations (Azurite; the entity group lives
	// in the table).
	if err := tablesvc.ValidTableName(table); err == nil {
		if _, err := s.svc.Table(c.r.Context(), table); err != nil {
			return s.writeBatchFailure(w, c, parts, &opError{0, err})
		}
	}
	ops := make([]tablesvc.Op, len(parts))
	for i, p := range parts {
		if err := tablesvc.ValidTableName(p.path.table); err != nil {
			return s.writeBatchFailure(w, c, parts, &opError{i, err})
		}
		if !strings.EqualFold(p.path.table, table) {
			return s.writeBatchFailure(w, c, parts, &opError{i, invalidInput("All operations of a change set must address the same table.")})
		}
		if p.method == http.MethodGet {
			return s.writeBatchFailure(w, c, parts, &opError{i, invalidInput("A query cannot be part of a change set.")})
		}
		op, err := buildOp(p.method, p.path, p.header, p.body)
		if err == nil {
			err = c.sas.checkEntity(table, permsOf(op.Kind), op.Entity.PartitionKey, op.Entity.RowKey)
		}
		if err != nil {
			return s.writeBatchFailure(w, c, parts, &opError{i, err})
		}
		ops[i] = op
	}
	results, err := s.svc.Batch(c.r.Context(), table, ops)
	var be *tablesvc.BatchError
	if errors.As(err, &be) {
		return s.writeBatchFailure(w, c, parts, &opError{be.Index, be.Err})
	}
	if err != nil {
		return err
	}
	base := baseURL(c.r, s.account)
	var resps [][]byte
	for i, p := range parts {
		e := results[i]
		hdr := [][2]string{{"Content-ID", contentID(p, i)}}
		switch ops[i].Kind {
		case tablesvc.Delete:
			resps = append(resps, responsePart(http.StatusNoContent, hdr, nil))
			continue
		case tablesvc.Insert:
		default:
			resps = append(resps, responsePart(http.StatusNoContent, append(hdr, [2]string{"ETag", e.ETag()}), nil))
			continue
		}
		loc := base + "/" + entityPath(table, e.PartitionKey, e.RowKey)
		hdr = append(hdr, [2]string{"Location", loc}, [2]string{"DataServiceId", loc}, [2]string{"ETag", e.ETag()})
		switch preference(&http.Request{Header: p.header}) {
		case "return-no-content":
			resps = append(resps, responsePart(http.StatusNoContent, append(hdr, [2]string{"Preference-Applied", "return-no-content"}), nil))
			continue
		case "return-content":
			hdr = append(hdr, [2]string{"Preference-Applied", "return-content"})
		}
		l, err := negotiate(&http.Request{Header: p.header}, p.target.Query())
		if err != nil {
			l = minimalMeta
		}
		out := entityOut{level: l, base: base, table: table}
		body := out.appendEntity(nil, e, base+"/$metadata#"+table+"/@Element")
		resps = append(resps, responsePart(http.StatusCreated, append(hdr, [2]string{"Content-Type", l.contentType()}), body))
	}
	return writeBatchResponse(w, resps, true)
}

// batchQuery answers a batch holding one point query.
func (s *Server) batchQuery(w http.ResponseWriter, c *call, p batchPart) error {
	sub, err := http.NewRequestWithContext(c.r.Context(), http.MethodGet, p.target.String(), nil)
	if err != nil {
		return invalidInput("A batch operation's URL is malformed.")
	}
	sub.Header = p.header
	sub.Host = c.r.Host
	rec := &partRecorder{header: http.Header{}}
	if p.path.scope != scopeEntity {
		storagehttp.WriteODataError(rec, c.r, toError(invalidInput("A batch may only hold a point query.")))
	} else if err := s.getEntity(rec, &call{r: sub, q: p.target.Query(), path: p.path, method: http.MethodGet, sas: c.sas}); err != nil {
		storagehttp.WriteODataError(rec, c.r, toError(err))
	}
	hdr := [][2]string{{"Content-ID", contentID(p, 0)}}
	for _, k := range []string{"Content-Type", "ETag"} {
		if v := rec.header.Get(k); v != "" {
			hdr = append(hdr, [2]string{k, v})
		}
	}
	return writeBatchResponse(w, [][]byte{responsePart(rec.status, hdr, rec.body.Bytes())}, false)
}

// writeBatchFailure answers 202 with the one failing operation's response.
func (s *Server) writeBatchFailure(w http.ResponseWriter, c *call, parts []batchPart, oe *opError) error {
	e := toError(oe.err)
	if e.Status >= 500 {
		return oe.err
	}
	rec := &partRecorder{header: http.Header{}}
	storagehttp.WriteODataErrorPrefixed(rec, c.r, e, strconv.Itoa(oe.index)+":")
	id := strconv.Itoa(oe.index + 1)
	if oe.index < len(parts) {
		id = contentID(parts[oe.index], oe.index)
	}
	hdr := [][2]string{{"Content-ID", id}, {"Content-Type", rec.header.Get("Content-Type")}}
	return writeBatchResponse(w, [][]byte{responsePart(e.Status, hdr, rec.body.Bytes())}, true)
}

func contentID(p batchPart, i int) string {
	if p.contentID != "" {
		return p.contentID
	}
	return strconv.Itoa(i + 1)
}

// responsePart renders one application/http response.
func responsePart(status int, hdr [][2]string, body []byte) []byte {
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + statusLine(status) + "\r\n")
	for _, kv := range hdr {
		b.WriteString(kv[0] + ": " + kv[1] + "\r\n")
	}
	b.WriteString("X-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\n\r\n")
	b.Write(body)
	return b.Bytes()
}

// writeBatchResponse answers 202: a batchresponse holding the responses,
// inside a changesetresponse when changeset.
func writeBatchResponse(w http.ResponseWriter, resps [][]byte, changeset bool) error {
	var out bytes.Buffer
	mw := multipart.NewWriter(&out)
	if err := mw.SetBoundary("batchresponse_" + uuid.NewString()); err != nil {
		return err
	}
	partHeader := textproto.MIMEHeader{"Content-Type": {"application/http"}, "Content-Transfer-Encoding": {"binary"}}
	if changeset {
		var inner bytes.Buffer
		cw := multipart.NewWriter(&inner)
		if err := cw.SetBoundary("changesetresponse_" + uuid.NewString()); err != nil {
			return err
		}
		for _, r := range resps {
			pw, err := cw.CreatePart(partHeader)
			if err != nil {
				return err
			}
			_, _ = pw.Write(r)
		}
		if err := cw.Close(); err != nil {
			return err
		}
		pw, err := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"multipart/mixed; boundary=" + cw.Boundary()}})
		if err != nil {
			return err
		}
		_, _ = pw.Write(inner.Bytes())
	} else {
		for _, r := range resps {
			pw, err := mw.CreatePart(partHeader)
			if err != nil {
				return err
			}
			_, _ = pw.Write(r)
		}
	}
	if err := mw.Close(); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "multipart/mixed; boundary="+mw.Boundary())
	h.Set("Content-Length", strconv.Itoa(out.Len()))
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write(out.Bytes())
	return nil
}

// partRecorder captures a response rendered for a batch part.
type partRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (p *partRecorder) Header() http.Header { return p.header }
func (p *partRecorder) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}
func (p *partRecorder) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return p.body.Write(b)
}
