package blob

import (
	"encoding/xml"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/storagehttp"
)

// Page blob operations: Put Blob with x-ms-blob-type PageBlob, Put Page
// (update and clear), Get Page Ranges, and Set Blob Properties with a new
// length or a sequence-number action.

// pageListXML is Get Page Ranges' body.
type pageListXML struct {
	XMLName xml.Name `xml:"PageList"`
	Items   []any    // PageRange and ClearRange elements
}

type pageRangeXML struct {
	XMLName xml.Name
	Start   int64 `xml:"Start"`
	End     int64 `xml:"End"`
}

// sequenceNumber reads x-ms-blob-sequence-number (0 to 2^63-1); absent →
// ok false.
func sequenceNumber(h http.Header) (int64, bool, error) {
	v := h.Get("x-ms-blob-sequence-number")
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false, storagehttp.InvalidHeader("x-ms-blob-sequence-number", v)
	}
	return n, true, nil
}

func (s *Server) createPageBlob(w http.ResponseWriter, c *call) error {
	if err := storagehttp.RefuseStructuredBody(c.r.Header); err != nil { // Put Page writes the content
		return err
	}
	if c.r.ContentLength != 0 {
		return storagehttp.InvalidHeader("Content-Length", strconv.FormatInt(c.r.ContentLength, 10))
	}
	raw := c.r.Header.Get("x-ms-blob-content-length")
	if raw == "" {
		return storagehttp.MissingHeader("x-ms-blob-content-length")
	}
	length, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || length < 0 || length%blobsvc.PageSize != 0 || length > blobsvc.MaxPageBlobLen {
		return storagehttp.InvalidHeader("x-ms-blob-content-length", raw)
	}
	seq, _, err := sequenceNumber(c.r.Header)
	if err != nil {
		return err
	}
	o, err := writeOptions(c.r.Header, true)
	if err != nil {
		return err
	}
	b, err := s.svc.CreatePageBlob(c.r.Context(), c.path.container, c.path.blob, length, seq, o)
	if err != nil {
		return err
	}
	w.Header().Set("x-ms-request-server-encrypted", "true")
	written(w, http.StatusCreated, b.ETag, b.LastModified)
	return nil
}

// pageRange reads Put Page's and Get Page Ranges' range: x-ms-range or
// Range, "bytes=N-M".
func pageRange(h http.Header, required bool) (*blobsvc.Range, error) {
	r, err := byteRange(h)
	if err != nil {
		return nil, err
	}
	if r == nil && required {
		return nil, storagehttp.MissingHeader("x-ms-range")
	}
	if r != nil && r.End < 0 && required {
		return nil, storagehttp.InvalidHeader("x-ms-range", h.Get("x-ms-range")+h.Get("Range"))
	}
	return r, nil
}

func (s *Server) putPage(w http.ResponseWriter, c *call) error {
	h := c.r.Header
	fromURL := h.Get("x-ms-copy-source") != "" // Put Page From URL
	action := strings.ToLower(h.Get("x-ms-page-write"))
	if action != "update" && action != "clear" {
		if action == "" {
			return storagehttp.MissingHeader("x-ms-page-write")
		}
		return storagehttp.InvalidHeader("x-ms-page-write", h.Get("x-ms-page-write"))
	}
	rng, err := pageRange(h, true)
	if err != nil {
		return err
	}
	want := rng.End - rng.Start + 1
	if fromURL && (action != "update" || c.r.ContentLength > 0 || h.Get("x-ms-source-range") == "") {
		return storagehttp.InvalidHeader("x-ms-copy-source", h.Get("x-ms-copy-source"))
	}
	if action == "clear" {
		if err := storagehttp.RefuseStructuredBody(h); err != nil {
			return err
		}
	}
	// The length checked against the range is the content's: with a
	// structured body, x-ms-structured-content-length.
	body, size, structured, err := requestBody(c.r, fromURL, c.r.Body)
	if err != nil {
		return err
	}
	if !fromURL && (action == "update" && size != want || action == "clear" && c.r.ContentLength > 0) {
		name := "Content-Length"
		if structured {
			name = storagehttp.HeaderStructuredContentLength
		}
		return storagehttp.InvalidHeader(name, strconv.FormatInt(size, 10))
	}
	if fromURL {
		_, rc, err := s.openSource(c)
		if err != nil {
			return err
		}
		defer rc.Close()
		body = rc
	}
	var seq blobsvc.SequenceConditions
	for _, x := range []struct {
		name string
		dst  **int64
	}{{"x-ms-if-sequence-number-le", &seq.LE}, {"x-ms-if-sequence-number-lt", &seq.LT}, {"x-ms-if-sequence-number-eq", &seq.EQ}} {
		if *x.dst, err = optionalInt64Header(h, x.name); err != nil {
			// A negative sequence number condition (-1 among them) is
			// 400 InvalidInput on Azure (the azblob recordings of
			// TestBlobPutPagesIfSequenceNumber*NegOne).
			return &storagehttp.Error{Status: http.StatusBadRequest, Code: storagehttp.CodeInvalidInput,
				Message: "One of the request inputs is not valid.", Err: err}
		}
	}
	var o blobsvc.WriteOptions
	if o.LeaseID, o.Cond, err = guards(h); err != nil {
		return err
	}
	sum, err := transactionalMD5(h, fromURL)
	if err != nil {
		return err
	}
	body, crc, err := crc64Body(h, fromURL, body, want)
	if err != nil {
		return err
	}
	if sum != nil && action == "update" {
		body = newMD5Reader(body, sum, want)
	}
	b, err := s.svc.PutPages(c.r.Context(), c.path.container, c.path.blob, rng.Start, rng.End, body, action == "clear", seq, o)
	if err != nil {
		return err
	}
	if action == "update" {
		if sum != nil {
			w.Header().Set("Content-MD5", b64(sum))
		}
		setCRC64(w.Header(), crc)
	}
	storagehttp.AnswerStructured(w.Header(), structured)
	w.Header().Set("x-ms-blob-sequence-number", strconv.FormatInt(b.Page.SequenceNumber, 10))
	w.Header().Set("x-ms-request-server-encrypted", "true")
	written(w, http.StatusCreated, b.ETag, b.LastModified)
	return nil
}

func (s *Server) getPageRanges(w http.ResponseWriter, c *call) error {
	if c.q.Has("prevsnapshoturl") {
		return storagehttp.InvalidQuery("prevsnapshoturl", c.q.Get("prevsnapshoturl"), "managed-disk differences are not supported")
	}
	rng, err := pageRange(c.r.Header, false)
	if err != nil {
		return err
	}
	// The ranges answered are whole pages: a range that cuts a page is
	// widened to it (azblob's TestPutGetPages, recorded against Azure,
	// writes bytes 0-1023, asks for bytes=0-1022 and expects the range
	// 0-1023).
	from, to := int64(0), int64(-1)
	if rng != nil {
		from, to = rng.Start&^(blobsvc.PageSize-1), rng.End
		if to >= 0 {
			to |= blobsvc.PageSize - 1
		}
	}
	leaseID, cond, err := guards(c.r.Header)
	if err != nil {
		return err
	}
	out := pageListXML{Items: []any{}}
	var b blobsvc.Blob
	if prev := c.q.Get("prevsnapshot"); prev != "" {
		var changed, cleared []blobsvc.PageRange
		b, changed, cleared, err = s.svc.PageRangesDiff(c.r.Context(), c.path.container, c.path.blob, c.q.Get("snapshot"), prev, leaseID, cond, from, to)
		if errors.Is(err, blobsvc.ErrNotModified) {
			notModified(w, b.ETag, b.LastModified)
			return nil
		}
		if err != nil {
			return err
		}
		// Both kinds in one list ordered by start, as Azure sends them.
		i, j := 0, 0
		for i < len(changed) || j < len(cleared) {
			if j == len(cleared) || i < len(changed) && changed[i].Start < cleared[j].Start {
				out.Items = append(out.Items, pageRangeXML{XMLName: xml.Name{Local: "PageRange"}, Start: changed[i].Start, End: changed[i].End})
				i++
			} else {
				out.Items = append(out.Items, pageRangeXML{XMLName: xml.Name{Local: "ClearRange"}, Start: cleared[j].Start, End: cleared[j].End})
				j++
			}
		}
	} else {
		var ranges []blobsvc.PageRange
		b, ranges, err = s.svc.PageRanges(c.r.Context(), c.path.container, c.path.blob, c.q.Get("snapshot"), leaseID, cond, from, to)
		if errors.Is(err, blobsvc.ErrNotModified) {
			// As Get Blob: 304 with x-ms-error-code ConditionNotMet, what
			// Azure answers (azure-sdk-for-go's recording of
			// TestBlobGetPageRangesIfModifiedSinceFalse).
			notModified(w, b.ETag, b.LastModified)
			return nil
		}
		if err != nil {
			return err
		}
		for _, r := range ranges {
			out.Items = append(out.Items, pageRangeXML{XMLName: xml.Name{Local: "PageRange"}, Start: r.Start, End: r.End})
		}
	}
	w.Header().Set("ETag", b.ETag)
	w.Header().Set("Last-Modified", httpTime(b.LastModified))
	w.Header().Set("x-ms-blob-content-length", strconv.FormatInt(b.Size, 10))
	return storagehttp.WriteXML(w, http.StatusOK, out)
}

// pageBlobChanges reads Set Blob Properties' x-ms-blob-content-length and
// x-ms-sequence-number-action (max and update need
// x-ms-blob-sequence-number; increment refuses it).
func pageBlobChanges(h http.Header) (blobsvc.PageBlobChanges, error) {
	var ch blobsvc.PageBlobChanges
	if v := h.Get("x-ms-blob-content-length"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n%blobsvc.PageSize != 0 || n > blobsvc.MaxPageBlobLen {
			return ch, storagehttp.InvalidHeader("x-ms-blob-content-length", v)
		}
		ch.Length = &n
	}
	seq, hasSeq, err := sequenceNumber(h)
	if err != nil {
		return ch, err
	}
	switch a := blobsvc.SequenceAction(strings.ToLower(h.Get("x-ms-sequence-number-action"))); a {
	case "":
	case blobsvc.SequenceMax, blobsvc.SequenceUpdate:
		if !hasSeq {
			return ch, storagehttp.MissingHeader("x-ms-blob-sequence-number")
		}
		ch.Action, ch.Sequence = a, seq
	case blobsvc.SequenceIncrement:
		if hasSeq {
			return ch, storagehttp.InvalidHeader("x-ms-blob-sequence-number", h.Get("x-ms-blob-sequence-number"))
		}
		ch.Action = a
	default:
		return ch, storagehttp.InvalidHeader("x-ms-sequence-number-action", h.Get("x-ms-sequence-number-action"))
	}
	return ch, nil
}
