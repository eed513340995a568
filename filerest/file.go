package filerest

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"

	"github.com/blobshare/blobshare/storagehttp"
)

func (s *Server) createFile(w http.ResponseWriter, c *call) error {
	h := c.r.Header
	size, ok, err := parseSizeHeader(h, "x-ms-content-length", maxFileSize)
	if err != nil {
		return err
	}
	if !ok {
		return storagehttp.MissingHeader("x-ms-content-length")
	}
	md, err := storagehttp.ParseMetadata(h)
	if err != nil {
		return err
	}
	props, err := parseSMBProps(h, storagehttp.InfoFrom(c.r.Context()).Start, false)
	if err != nil {
		return err
	}
	if props.PermissionKey, err = s.permissionKey(c); err != nil {
		return err
	}
	if err := propertySemantics(c.r.Header, &props); err != nil {
		return err
	}
	content, _, err := parseContent(h)
	if err != nil {
		return err
	}
	if content.Type == "" {
		content.Type = "application/octet-stream"
	}
	lease, err := leaseHeader(h, "x-ms-lease-id")
	if err != nil {
		return err
	}
	// API 2026-02-06+: an optional body (≤ 4 MiB) becomes the first bytes,
	// possibly sent as a structured message.
	bodyLen, structured, err := structuredBody(c.r)
	if err != nil {
		return err
	}
	if bodyLen > size {
		name := "Content-Length"
		if structured {
			name = storagehttp.HeaderStructuredContentLength
		}
		return storagehttp.InvalidHeader(name, strconv.FormatInt(bodyLen, 10))
	}
	if structured && bodyLen == 0 {
		// A message of no data is still checked (and so never ignored).
		if _, err := io.Copy(io.Discard, c.r.Body); err != nil {
			return err
		}
	}
	if bodyLen > 0 && (h.Get("Content-MD5") != "" || structured) {
		// Verify the body (its MD5, its structured message's CRC-64s)
		// before the file is created or replaced: a mismatch must leave
		// an existing file as it was. The body goes to an unlinked spill
		// file, not memory.
		var want []byte
		if v := h.Get("Content-MD5"); v != "" {
			if want, err = parseMD5("Content-MD5", v); err != nil {
				return err
			}
		}
		f, err := s.spill(&bodyReader{r: c.r.Body, left: bodyLen, h: md5.New(), want: want}, c.fsPath())
		if err != nil {
			return err
		}
		defer f.Close()
		c.r.Body = io.NopCloser(io.NewSectionReader(f, 0, bodyLen))
	}
	if err := s.breakCaches(c, locks.OpCreateOverwrite); err != nil {
		return err
	}
	a, err := s.fs.CreateFile(c.r.Context(), fs.CreateFileRequest{
		Path: c.fsPath(), Size: size, Props: props, Content: content, Metadata: md, LeaseID: lease,
	})
	if err != nil {
		return err
	}
	out := w.Header()
	if bodyLen > 0 {
		var sum []byte
		a, sum, _, err = s.putBody(w, c.r, fs.PutRangeRequest{
			Path: c.fsPath(), Offset: 0, Length: bodyLen, LeaseID: lease,
		}, true)
		if err != nil {
			return err
		}
		out.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum))
	}
	storagehttp.AnswerStructured(out, structured)
	setSMB(out, a)
	out.Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusCreated)
	return nil
}

func (s *Server) putRange(w http.ResponseWriter, c *call) error {
	h := c.r.Header
	rg, ok, err := requestRange(h, true)
	if err != nil {
		return err
	}
	if !ok {
		return storagehttp.MissingHeader("x-ms-range")
	}
	lease, err := leaseHeader(h, "x-ms-lease-id")
	if err != nil {
		return err
	}
	req := fs.PutRangeRequest{Path: c.fsPath(), Offset: rg.start, Length: rg.length(), LeaseID: lease}
	if req.PreserveLastWrite, err = preserveLastWrite(h); err != nil {
		return err
	}
	clear := strings.EqualFold(h.Get("x-ms-write"), "clear")
	out := w.Header()
	structured := false
	if clear {
		if err := storagehttp.RefuseStructuredBody(h); err != nil {
			return err
		}
		if c.r.ContentLength > 0 {
			return storagehttp.InvalidHeader("Content-Length", strconv.FormatInt(c.r.ContentLength, 10))
		}
		if h.Get("Content-MD5") != "" {
			return storagehttp.InvalidHeader("Content-MD5", h.Get("Content-MD5"))
		}
	} else {
		if rg.length() > maxPutRange {
			return storagehttp.NewError(http.StatusRequestEntityTooLarge, CodeRequestBodyTooLarge,
				"The request body is too large and exceeds the maximum permissible limit.",
				Detail{Name: "MaxLimit", Value: strconv.Itoa(maxPutRange)})
		}
		if c.r.ContentLength < 0 {
			return storagehttp.NewError(http.StatusLengthRequired, CodeMissingContentLength,
				"The Content-Length header is required for this request.")
		}
		// With a structured body the data's length is
		// x-ms-structured-content-length, Content-Length the message's.
		var bodyLen int64
		if bodyLen, structured, err = structuredBody(c.r); err != nil {
			return err
		}
		if bodyLen != rg.length() {
			name := "Content-Length"
			if structured {
				name = storagehttp.HeaderStructuredContentLength
			}
			return storagehttp.NewError(http.StatusBadRequest, CodeInvalidHeaderValue,
				"The range specified does not match the length of the request body.",
				Detail{Name: "HeaderName", Value: name}, Detail{Name: "HeaderValue", Value: strconv.FormatInt(bodyLen, 10)})
		}
	}
	var a fs.Attr
	var sum, crc []byte
	if err := s.breakCaches(c, locks.OpPutRange); err != nil {
		return err
	}
	if clear {
		a, err = s.fs.PutRange(c.r.Context(), req)
	} else {
		a, sum, crc, err = s.putBody(w, c.r, req, true)
	}
	if err != nil {
		return err
	}
	setCommon(out, a)
	out.Set("x-ms-file-last-write-time", storagehttp.FormatTime7(a.LastWrite))
	out.Set("x-ms-request-server-encrypted", "true")
	if sum != nil {
		out.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum))
	}
	if crc != nil {
		out.Set("x-ms-content-crc64", base64.StdEncoding.EncodeToString(crc))
	}
	storagehttp.AnswerStructured(out, structured)
	w.WriteHeader(http.StatusCreated)
	return nil
}

// preserveLastWrite reads x-ms-file-last-write-time of Put Range and Put
// Range From URL: "now" (the default) or "preserve"; a time is 400.
func preserveLastWrite(h http.Header) (bool, error) {
	t, ok, err := parseSMBTime(h, "x-ms-file-last-write-time", "now", "preserve")
	if err != nil || !ok {
		return false, err
	}
	if t.Keyword == "" {
		return false, storagehttp.InvalidHeader("x-ms-file-last-write-time", h.Get("x-ms-file-last-write-time"))
	}
	return t.Keyword == "preserve", nil
}

// sourcePath resolves an x-ms-copy-source / x-ms-file-rename-source URL
// to an fs path in this account. A SAS query on it is ignored: the
// request itself is already authorized for the account.
func (s *Server) sourcePath(header, v string, allowTrailingDot bool) (resourcePath, error) {
	if len(v) > maxCopySourceLen {
		return resourcePath{}, storagehttp.InvalidHeader(header, v)
	}
	u, err := url.Parse(v)
	if err != nil || u.Path == "" {
		return resourcePath{}, storagehttp.InvalidHeader(header, v)
	}
	if !u.IsAbs() { // a rename source may be relative to the share
		return resourcePath{}, storagehttp.InvalidHeader(header, v)
	}
	p, err := parsePath(u.Host, u.EscapedPath(), allowTrailingDot)
	if err != nil {
		return resourcePath{}, err
	}
	if p.Account != s.account || p.Share == "" || len(p.Parts) == 0 {
		return resourcePath{}, storagehttp.NewError(http.StatusBadRequest, CodeCannotVerifyCopySource,
			"The source must be a file or directory of this account.", Detail{Name: "HeaderName", Value: header})
	}
	return p, nil
}

// copySourceSnapshot is the share snapshot a Copy File source URL names
// (?sharesnapshot=, restoring a file from a snapshot), "" for none; a
// malformed one is 400 InvalidHeaderValue.
func copySourceSnapshot(v string) (string, error) {
	u, err := url.Parse(v)
	if err != nil {
		return "", storagehttp.InvalidHeader("x-ms-copy-source", v)
	}
	snap := u.Query().Get("sharesnapshot")
	if snap == "" {
		return "", nil
	}
	if _, err := fs.ParseSnapshot(snap); err != nil {
		return "", storagehttp.InvalidHeader("x-ms-copy-source", v)
	}
	return snap, nil
}

// authorizeCopySource checks the source of Put Range From URL: it must
// carry its own SAS (storagehttp.SAS.AuthorizeCopySource). With
// authentication off nothing is checked.
func (s *Server) authorizeCopySource(c *call, raw string) error {
	if s.sas == nil {
		return nil
	}
	return s.sas.AuthorizeCopySource(c.r, "x-ms-copy-source", raw)
}

func fsPathOf(p resourcePath) string { return p.Share + "/" + p.Path() }

func (s *Server) putRangeFromURL(w http.ResponseWriter, c *call) error {
	h := c.r.Header
	if err := storagehttp.RefuseStructuredBody(h); err != nil { // no body to frame
		return err
	}
	if v := h.Get("x-ms-write"); !strings.EqualFold(v, "update") {
		if v == "" {
			return storagehttp.MissingHeader("x-ms-write")
		}
		return storagehttp.InvalidHeader("x-ms-write", v)
	}
	// A source on the Blob service (blobsource.go) is authorized and read
	// there; otherwise it is a file of this account.
	fromBlob := s.isBlobSource(h.Get("x-ms-copy-source"))
	var src resourcePath
	if !fromBlob {
		var err error
		if src, err = s.sourcePath("x-ms-copy-source", h.Get("x-ms-copy-source"), true); err != nil {
			return err
		}
		if err := s.authorizeCopySource(c, h.Get("x-ms-copy-source")); err != nil {
			return err
		}
	}
	dst, ok, err := requestRange(h, true)
	if err != nil {
		return err
	}
	if !ok {
		return storagehttp.MissingHeader("x-ms-range")
	}
	sv := h.Get("x-ms-source-range")
	if sv == "" {
		return storagehttp.MissingHeader("x-ms-source-range")
	}
	srg, err := parseRange("x-ms-source-range", sv, true)
	if err != nil {
		return err
	}
	if srg.length() != dst.length() {
		return storagehttp.InvalidHeader("x-ms-source-range", sv)
	}
	if dst.length() > maxPutRange {
		return storagehttp.NewError(http.StatusRequestEntityTooLarge, CodeRequestBodyTooLarge,
			"The request body is too large and exceeds the maximum permissible limit.")
	}
	lease, err := leaseHeader(h, "x-ms-lease-id")
	if err != nil {
		return err
	}
	wantCRC, err := storagehttp.CRC64Header(h, "x-ms-source-content-crc64")
	if err != nil {
		return err
	}
	preserve, err := preserveLastWrite(h)
	if err != nil {
		return err
	}
	// The source range is hashed as fs copies it: a wrong
	// x-ms-source-content-crc64 fails the copy before anything commits.
	var check *bodyReader
	verify := func(r io.Reader) io.Reader {
		check = &bodyReader{r: r, left: dst.length(), h: md5.New(), crc: storagehttp.NewCRC64(), wantCRC: wantCRC}
		return check
	}
	var a fs.Attr
	if fromBlob {
		a, err = s.putRangeFromBlob(c, fs.PutRangeRequest{Path: c.fsPath(), Offset: dst.start, Length: dst.length(),
			LeaseID: lease, PreserveLastWrite: preserve}, srg.start, verify)
	} else {
		a, err = s.fs.PutRangeFrom(c.r.Context(), fs.PutRangeFromRequest{
			Path: c.fsPath(), Offset: dst.start, Length: dst.length(),
			SourcePath: fsPathOf(src), SourceOffset: srg.start, LeaseID: lease, PreserveLastWrite: preserve,
			Verify: verify,
		})
	}
	if check != nil && check.err != nil {
		return check.err
	}
	if err != nil {
		return err
	}
	setCommon(w.Header(), a)
	w.Header().Set("x-ms-content-crc64", base64.StdEncoding.EncodeToString(storagehttp.CRC64Bytes(check.crc.Sum64())))
	w.Header().Set("x-ms-file-last-write-time", storagehttp.FormatTime7(a.LastWrite))
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusCreated)
	return nil
}

// setFileHeaders writes what Get File and Get File Properties share.
func setFileHeaders(h http.Header, a fs.Attr, l locks.LeaseInfo, full bool) {
	setSMB(h, a)
	storagehttp.SetMetadataHeaders(h, a.Metadata)
	setContent(h, a.Content, full)
	setLease(h, l)
	setCopy(h, a.Copy)
	put(h, hType, "File")
	put(h, hServerEncrypted, "true")
	put(h, hAcceptRanges, "bytes")
}

func (s *Server) getFileProperties(w http.ResponseWriter, c *call) error {
	lease, err := leaseHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	var a fs.Attr
	var l locks.LeaseInfo
	if snap := c.q.Get("sharesnapshot"); snap != "" {
		a, err = s.fs.SnapshotStat(c.r.Context(), snap, c.fsPath())
	} else {
		if err := s.breakCaches(c, locks.OpGetProperties); err != nil {
			return err
		}
		a, l, err = s.fs.Stat(c.r.Context(), c.fsPath(), lease)
	}
	if err != nil {
		return err
	}
	if a.Kind != fs.KindFile {
		return errNotAFile(c)
	}
	h := w.Header()
	setFileHeaders(h, a, l, true)
	if c.route.comp == "" { // HEAD Get File Properties: the file's size
		put(h, hContentLength, strconv.FormatInt(a.Size, 10))
	} else { // Get File Metadata (GET or HEAD): no body
		put(h, hContentLength, "0")
		h.Del("Content-Type")
		h.Del("Content-MD5")
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// errNotAFile answers a file read (Get File, Get File Properties) on a
// directory as the service does: 404 ResourceNotFound, which clients take
// for "no such file".
func errNotAFile(c *call) error {
	return &fs.Error{Op: "get file", Path: c.fsPath(), Err: fs.ErrNotFound}
}

func (s *Server) getFile(w http.ResponseWriter, c *call) error {
	h := c.r.Header
	lease, err := leaseHeader(h, "x-ms-lease-id")
	if err != nil {
		return err
	}
	rg, ranged, err := requestRange(h, false)
	if err != nil {
		return err
	}
	wantMD5, err := parseBoolHeader(h, "x-ms-range-get-content-md5")
	if err != nil {
		return err
	}
	structured, err := storagehttp.StructuredResponse(h)
	if err != nil {
		return err
	}
	req := fs.GetFileRequest{Path: c.fsPath(), Length: -1, Ranged: ranged, LeaseID: lease}
	if ranged {
		req.Offset = rg.start
		if rg.end >= 0 {
			req.Length = rg.length()
		}
	}
	if wantMD5 && (!ranged || rg.end < 0 || rg.length() > maxPutRange) {
		return storagehttp.InvalidHeader("x-ms-range-get-content-md5", h.Get("x-ms-range-get-content-md5"))
	}
	var fr *fs.FileReader
	if snap := c.q.Get("sharesnapshot"); snap != "" {
		fr, err = s.fs.SnapshotGetFile(c.r.Context(), snap, req)
	} else {
		if err := s.breakCaches(c, locks.OpGetFile); err != nil {
			return err
		}
		fr, err = s.fs.GetFile(c.r.Context(), req)
	}
	if errors.Is(err, fs.ErrIsDir) {
		return errNotAFile(c)
	}
	if err != nil {
		return err
	}
	defer fr.Close()
	out := w.Header()
	setFileHeaders(out, fr.Attr, fr.Lease, !ranged)
	var body io.Reader = fr
	if wantMD5 {
		buf := make([]byte, fr.Length) // ≤ 4 MiB, checked above
		if _, err := io.ReadFull(fr, buf); err != nil {
			return err
		}
		sum := md5.Sum(buf)
		out.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
		body = bytes.NewReader(buf)
	}
	length := fr.Length
	if structured {
		body, length = storagehttp.StructuredReply(out, body, fr.Length)
	}
	out.Set("Content-Length", strconv.FormatInt(length, 10))
	status := http.StatusOK
	if ranged {
		status = http.StatusPartialContent
		end := fr.Offset + fr.Length - 1
		out.Set("Content-Range", "bytes "+strconv.FormatInt(fr.Offset, 10)+"-"+strconv.FormatInt(end, 10)+"/"+strconv.FormatInt(fr.Attr.Size, 10))
	}
	w.WriteHeader(status)
	if c.r.Method == http.MethodHead {
		return nil
	}
	copyBody := func() (int64, error) { return io.CopyN(w, body, length) }
	if body == io.Reader(fr) {
		// The whole range as stored: the reader writes itself out, so
		// the blob store's files can reach the socket by sendfile.
		copyBody = func() (int64, error) { return fr.WriteTo(w) }
	}
	if n, err := copyBody(); err != nil || n != length {
		if err == nil {
			err = fmt.Errorf("wrote %d of %d bytes: %w", n, length, io.ErrUnexpectedEOF)
		}
		// Headers are gone; abort the connection so the client sees a
		// short body rather than a silent truncation.
		s.log.Warn("rest: get file stream failed", "path", c.fsPath(), "request_id", storagehttp.InfoFrom(c.r.Context()).ID, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

func (s *Server) setFileProperties(w http.ResponseWriter, c *call) error {
	h := c.r.Header
	lease, err := leaseHeader(h, "x-ms-lease-id")
	if err != nil {
		return err
	}
	props, err := parseSMBProps(h, storagehttp.InfoFrom(c.r.Context()).Start, false)
	if err != nil {
		return err
	}
	if props.PermissionKey, err = s.permissionKey(c); err != nil {
		return err
	}
	req := fs.SetPropertiesRequest{Path: c.fsPath(), Props: props, LeaseID: lease}
	size, resize, err := parseSizeHeader(h, "x-ms-content-length", maxFileSize)
	if err != nil {
		return err
	}
	if resize {
		req.Size = &size
	}
	content, any, err := parseContent(h)
	if err != nil {
		return err
	}
	// The content group is replaced as a whole, except by a pure resize.
	if any || !resize {
		req.Content = &content
	}
	if err := s.breakCaches(c, locks.OpSetProperties); err != nil {
		return err
	}
	a, err := s.fs.SetProperties(c.r.Context(), req)
	if err != nil {
		return err
	}
	setSMB(w.Header(), a)
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) setFileMetadata(w http.ResponseWriter, c *call) error {
	lease, err := leaseHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	md, err := storagehttp.ParseMetadata(c.r.Header)
	if err != nil {
		return err
	}
	if err := s.breakCaches(c, locks.OpSetMetadata); err != nil {
		return err
	}
	a, err := s.fs.SetMetadata(c.r.Context(), c.fsPath(), md, lease)
	if err != nil {
		return err
	}
	setCommon(w.Header(), a)
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteFile(w http.ResponseWriter, c *call) error {
	lease, err := leaseHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	if err := s.breakCaches(c, locks.OpDelete); err != nil {
		return err
	}
	if err := s.fs.DeleteFile(c.r.Context(), c.fsPath(), lease); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func (s *Server) listRanges(w http.ResponseWriter, c *call) error {
	lease, err := leaseHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	var lr locks.Range
	if rg, ok, err := requestRange(c.r.Header, true); err != nil {
		return err
	} else if ok {
		lr = locks.Range{Offset: uint64(rg.start), Length: uint64(rg.length())}
	}
	snap := c.q.Get("sharesnapshot")
	out := rangesXML{}
	var ranges, cleared []fs.Range
	var a fs.Attr
	switch prev, diff := c.q["prevsharesnapshot"]; {
	case diff:
		// Changed ranges since an older snapshot (fs.RangeDiff: block
		// granularity, clipped to the data ranges).
		if _, err := fs.ParseSnapshot(prev[0]); err != nil {
			return storagehttp.InvalidQuery("prevsharesnapshot", prev[0], "not a share snapshot time")
		}
		follow, err := parseBoolHeader(c.r.Header, "x-ms-file-support-rename")
		if err != nil {
			return err
		}
		d, err := s.fs.RangeDiff(c.r.Context(), fs.RangeDiffRequest{Path: c.fsPath(), Snapshot: snap, Previous: prev[0],
			Range: lr, LeaseID: lease, FollowRenames: follow})
		if err != nil {
			return err
		}
		ranges, cleared, a = d.Ranges, d.Cleared, d.Attr
		out.Clear = []rangeXML{}
	case snap != "":
		ranges, a, err = s.fs.SnapshotListRanges(c.r.Context(), snap, c.fsPath(), lr)
	default:
		ranges, a, err = s.fs.ListRanges(c.r.Context(), c.fsPath(), lr, lease)
	}
	if errors.Is(err, fs.ErrIsDir) {
		return errNotAFile(c)
	}
	if err != nil {
		return err
	}
	for _, r := range ranges {
		x := rangeXML{Start: r.Start, End: r.End}
		x.XMLName.Local = "Range"
		out.Ranges = append(out.Ranges, x)
	}
	for _, r := range cleared {
		x := rangeXML{Start: r.Start, End: r.End}
		x.XMLName.Local = "ClearRange"
		out.Clear = append(out.Clear, x)
	}
	setCommon(w.Header(), a)
	w.Header().Set("x-ms-content-length", strconv.FormatInt(a.Size, 10))
	return storagehttp.WriteXML(w, http.StatusOK, out)
}

func (s *Server) copyFile(w http.ResponseWriter, c *call) error {
	h := c.r.Header
	src, err := s.sourcePath("x-ms-copy-source", h.Get("x-ms-copy-source"), true)
	if err != nil {
		return err
	}
	lease, err := leaseHeader(h, "x-ms-lease-id")
	if err != nil {
		return err
	}
	md, err := storagehttp.ParseMetadata(h)
	if err != nil {
		return err
	}
	props, err := parseSMBProps(h, storagehttp.InfoFrom(c.r.Context()).Start, true)
	if err != nil {
		return err
	}
	if h.Get("x-ms-file-attributes") == "" {
		// Without the header the copy is a new file's attributes, not the
		// source's (see "Copy File" in doc.go).
		a := fs.AttrArchive
		props.Attributes = &a
	}
	ignoreRO, err := parseBoolHeader(h, "x-ms-file-copy-ignore-readonly")
	if err != nil {
		return err
	}
	setArchive, err := parseBoolHeader(h, "x-ms-file-copy-set-archive")
	if err != nil {
		return err
	}
	from, err := copyFromSource(h)
	if err != nil {
		return err
	}
	// The destination's permission (mode override, or no mode): an inline
	// x-ms-file-permission is stored in the share, a key must exist there.
	pk, err := s.permissionKey(c)
	if err != nil {
		return err
	}
	permKey := ""
	if pk != nil && *pk != fs.DefaultPermissionKey {
		permKey = *pk
	}
	snap, err := copySourceSnapshot(h.Get("x-ms-copy-source"))
	if err != nil {
		return err
	}
	req := fs.CopyFileRequest{Source: fsPathOf(src), SourceSnapshot: snap, Dest: c.fsPath(), Props: props, FromSource: from,
		PermissionKey: permKey, LeaseID: lease, IgnoreReadOnly: ignoreRO, SetArchive: setArchive,
		CopyID: uuid.NewString(), CopySource: h.Get("x-ms-copy-source")}
	if len(md) > 0 {
		req.Metadata = md
	}
	a, err := s.fs.CopyFile(c.r.Context(), req)
	if err != nil {
		return err
	}
	out := w.Header()
	setCommon(out, a)
	out.Set("x-ms-copy-id", req.CopyID)
	out.Set("x-ms-copy-status", "success")
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func (s *Server) rename(w http.ResponseWriter, c *call) error {
	h := c.r.Header
	srcDot, err := parseBoolHeader(h, "x-ms-source-allow-trailing-dot")
	if err != nil {
		return err
	}
	src, err := s.sourcePath("x-ms-file-rename-source", h.Get("x-ms-file-rename-source"), srcDot)
	if err != nil {
		return err
	}
	if src.Share != c.path.Share {
		return storagehttp.NewError(http.StatusBadRequest, CodeInvalidInput, "The source and the destination must be in the same share.",
			Detail{Name: "HeaderName", Value: "x-ms-file-rename-source"})
	}
	replace, err := parseBoolHeader(h, "x-ms-file-rename-replace-if-exists")
	if err != nil {
		return err
	}
	ignoreRO, err := parseBoolHeader(h, "x-ms-file-rename-ignore-readonly")
	if err != nil {
		return err
	}
	srcLease, err := leaseHeader(h, "x-ms-source-lease-id")
	if err != nil {
		return err
	}
	dstLease, err := leaseHeader(h, "x-ms-destination-lease-id")
	if err != nil {
		return err
	}
	props, err := parseSMBProps(h, storagehttp.InfoFrom(c.r.Context()).Start, false)
	if err != nil {
		return err
	}
	if props.PermissionKey, err = s.permissionKey(c); err != nil {
		return err
	}
	md, err := storagehttp.ParseMetadata(h)
	if err != nil {
		return err
	}
	// Rename File must name a file and Rename Directory a directory.
	sa, _, err := s.fs.Stat(c.r.Context(), fsPathOf(src), "")
	if err != nil {
		return err
	}
	if (c.route.restype == "directory") != (sa.Kind != fs.KindFile) {
		return storagehttp.NewError(http.StatusConflict, CodeResourceTypeMismatch,
			"The specified resource type does not match the type of the existing resource.",
			Detail{Name: "HeaderName", Value: "x-ms-file-rename-source"})
	}
	req := fs.RenamePathRequest{Source: fsPathOf(src), Dest: c.fsPath(), ReplaceIfExists: replace, IgnoreReadOnly: ignoreRO,
		SourceLeaseID: srcLease, DestLeaseID: dstLease, Props: props}
	if len(md) > 0 {
		req.Metadata = md
	}
	a, err := s.fs.RenamePath(c.r.Context(), req)
	if err != nil {
		return err
	}
	setSMB(w.Header(), a)
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) leaseFile(w http.ResponseWriter, c *call) error {
	h := c.r.Header
	req := locks.LeaseRequest{}
	action := strings.ToLower(h.Get("x-ms-lease-action"))
	var err error
	if req.LeaseID, err = leaseHeader(h, "x-ms-lease-id"); err != nil {
		return err
	}
	if req.ProposedID, err = leaseHeader(h, "x-ms-proposed-lease-id"); err != nil {
		return err
	}
	status := http.StatusOK
	switch action {
	case "acquire":
		req.Action, status = locks.LeaseAcquire, http.StatusCreated
		d := h.Get("x-ms-lease-duration")
		if d == "" {
			return storagehttp.MissingHeader("x-ms-lease-duration")
		}
		if d != "-1" {
			return storagehttp.InvalidHeader("x-ms-lease-duration", d)
		}
	case "change":
		req.Action = locks.LeaseChange
		if req.LeaseID == "" {
			return storagehttp.MissingHeader("x-ms-lease-id")
		}
		if req.ProposedID == "" {
			return storagehttp.MissingHeader("x-ms-proposed-lease-id")
		}
	case "release":
		req.Action = locks.LeaseRelease
		if req.LeaseID == "" {
			return storagehttp.MissingHeader("x-ms-lease-id")
		}
	case "break":
		req.Action, status = locks.LeaseBreak, http.StatusAccepted
	}
	if action != "acquire" {
		if d := h.Get("x-ms-lease-duration"); d != "" {
			return storagehttp.InvalidHeader("x-ms-lease-duration", d)
		}
	}
	id, a, err := s.fs.LeaseFile(c.r.Context(), c.fsPath(), req)
	if err != nil {
		return err
	}
	out := w.Header()
	setCommon(out, a)
	switch req.Action {
	case locks.LeaseAcquire, locks.LeaseChange:
		out.Set("x-ms-lease-id", id)
	case locks.LeaseBreak:
		out.Set("x-ms-lease-time", "0")
	}
	w.WriteHeader(status)
	return nil
}

// abortCopy answers Abort Copy. Copies complete synchronously, so there
// is never a pending copy to abort: 409 NoPendingCopyOperation once the
// file is known to exist (404 otherwise).
func (s *Server) abortCopy(w http.ResponseWriter, c *call) error {
	id := c.q.Get("copyid")
	if id == "" {
		return storagehttp.MissingQuery("copyid")
	}
	if _, err := uuid.Parse(id); err != nil {
		return storagehttp.InvalidQuery("copyid", id, "not a copy id")
	}
	if _, err := leaseHeader(c.r.Header, "x-ms-lease-id"); err != nil {
		return err
	}
	if _, _, err := s.fs.Stat(c.r.Context(), c.fsPath(), ""); err != nil {
		return err
	}
	return storagehttp.NewError(http.StatusConflict, "NoPendingCopyOperation", "There is currently no pending copy operation.")
}
