package blob

import (
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/storagehttp"
)

const defaultContentType = "application/octet-stream"

func httpTime(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// endpoint is the service URL as the client addressed it, for the
// ServiceEndpoint attribute of listings.
func (s *Server) endpoint(r *http.Request) string {
	return storagehttp.ServiceEndpoint(r, "blob", s.account)
}

// written sends the ETag and Last-Modified of a write with status.
func written(w http.ResponseWriter, status int, etag string, lm time.Time) {
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Last-Modified", httpTime(lm))
	h.Set("Content-Length", "0")
	w.WriteHeader(status)
}

func setLeaseHeaders(h http.Header, l blobsvc.Lease, now time.Time) {
	h.Set("x-ms-lease-status", l.Status(now))
	h.Set("x-ms-lease-state", string(l.Effective(now).State))
	if d := l.DurationName(now); d != "" {
		h.Set("x-ms-lease-duration", d)
	}
}

// notModified answers 304 with the resource's validators and no body.
func notModified(w http.ResponseWriter, etag string, lm time.Time) {
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Last-Modified", httpTime(lm))
	h.Set(storagehttp.ErrorCodeHeader, "ConditionNotMet")
	w.WriteHeader(http.StatusNotModified)
}

// ---- service ----

func (s *Server) listContainers(w http.ResponseWriter, c *call) error {
	limit, err := maxResults(c.q)
	if err != nil {
		return err
	}
	prefix, marker := c.q.Get("prefix"), c.q.Get("marker")
	var cs []blobsvc.ListedContainer
	var next string
	if includes(c.q)["deleted"] {
		cs, next, err = s.svc.ListContainersWithDeleted(c.r.Context(), prefix, marker, limit)
	} else {
		var live []blobsvc.Container
		live, next, err = s.svc.ListContainers(c.r.Context(), prefix, marker, limit)
		for _, ct := range live {
			cs = append(cs, blobsvc.ListedContainer{Container: ct})
		}
	}
	if err != nil {
		return err
	}
	// System containers ($logs) only with include=system: "The $logs
	// container is not displayed when a container listing operation is
	// performed, such as the List Containers operation".
	if !includes(c.q)["system"] {
		cs = slices.DeleteFunc(cs, func(it blobsvc.ListedContainer) bool { return blobsvc.IsSystemContainer(it.Container.Name) })
	}
	withMD := includes(c.q)["metadata"]
	now := s.svc.Now()
	out := containerListXML{ServiceEndpoint: s.endpoint(c.r), Prefix: prefix, Marker: marker, NextMarker: next, Containers: []containerXML{}}
	if _, ok := c.q["maxresults"]; ok {
		out.MaxResults = limit
	}
	for _, it := range cs {
		ct := it.Container
		x := containerXML{Name: ct.Name, Properties: containerPropsXML{
			LastModified: httpTime(ct.LastModified), ETag: ct.ETag,
			LeaseStatus: ct.Lease.Status(now), LeaseState: string(ct.Lease.Effective(now).State),
			LeaseDuration: ct.Lease.DurationName(now), PublicAccess: string(ct.PublicAccess),
		}}
		if d := it.Deleted; d != nil {
			x.Deleted, x.Version = true, d.Version
			x.Properties.LeaseStatus, x.Properties.LeaseState, x.Properties.LeaseDuration = "", "", ""
			x.Properties.DeletedTime = httpTime(d.Time)
			x.Properties.RemainingRetentionDays = int(math.Ceil(d.Expires.Sub(now).Hours() / 24))
		}
		if withMD {
			md := ct.Metadata
			if md == nil {
				md = map[string]string{}
			}
			x.Metadata = storagehttp.NewMetadataXML(md)
		}
		out.Containers = append(out.Containers, x)
	}
	return storagehttp.WriteXML(w, http.StatusOK, out)
}

// defaultServiceProperties is answered until Set Service Properties
// stores a document.
const defaultServiceProperties = `<StorageServiceProperties><Logging><Version>1.0</Version><Read>false</Read><Write>false</Write><Delete>false</Delete><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>` +
	`<HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>` +
	`<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>` +
	`<Cors /><DeleteRetentionPolicy><Enabled>false</Enabled></DeleteRetentionPolicy><StaticWebsite><Enabled>false</Enabled></StaticWebsite></StorageServiceProperties>`

func (s *Server) getServiceProperties(w http.ResponseWriter, c *call) error {
	doc, err := s.svc.ServiceProperties(c.r.Context())
	if err != nil {
		return err
	}
	if doc == nil {
		doc = []byte(defaultServiceProperties)
	}
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(storagehttp.XMLDecl)+len(doc)))
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, storagehttp.XMLDecl)
	_, _ = w.Write(doc)
	return nil
}

func (s *Server) getAccountInfo(w http.ResponseWriter, c *call) error {
	h := w.Header()
	h.Set("x-ms-sku-name", "Standard_LRS")
	h.Set("x-ms-account-kind", "StorageV2")
	h.Set("x-ms-is-hns-enabled", "false")
	h.Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

// ---- containers ----

func (s *Server) createContainer(w http.ResponseWriter, c *call) error {
	md, err := storagehttp.ParseMetadata(c.r.Header)
	if err != nil {
		return err
	}
	access, err := publicAccess(c.r.Header)
	if err != nil {
		return err
	}
	ct, err := s.svc.CreateContainer(c.r.Context(), c.path.container, md, access)
	if err != nil {
		return err
	}
	written(w, http.StatusCreated, ct.ETag, ct.LastModified)
	return nil
}

func (s *Server) getContainerProperties(w http.ResponseWriter, c *call) error {
	leaseID, err := leaseIDHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	ct, err := s.svc.GetContainer(c.r.Context(), c.path.container, leaseID)
	if err != nil {
		return err
	}
	h := w.Header()
	storagehttp.SetMetadataHeaders(h, ct.Metadata)
	setLeaseHeaders(h, ct.Lease, s.svc.Now())
	if ct.PublicAccess != "" {
		h.Set("x-ms-blob-public-access", string(ct.PublicAccess))
	}
	h.Set("x-ms-has-immutability-policy", "false")
	h.Set("x-ms-has-legal-hold", "false")
	written(w, http.StatusOK, ct.ETag, ct.LastModified)
	return nil
}

func (s *Server) setContainerMetadata(w http.ResponseWriter, c *call) error {
	md, err := storagehttp.ParseMetadata(c.r.Header)
	if err != nil {
		return err
	}
	leaseID, cond, err := guards(c.r.Header)
	if err != nil {
		return err
	}
	ct, err := s.svc.SetContainerMetadata(c.r.Context(), c.path.container, md, leaseID, cond)
	if err != nil {
		return err
	}
	written(w, http.StatusOK, ct.ETag, ct.LastModified)
	return nil
}

func (s *Server) deleteContainer(w http.ResponseWriter, c *call) error {
	leaseID, cond, err := guards(c.r.Header)
	if err != nil {
		return err
	}
	if err := s.svc.DeleteContainer(c.r.Context(), c.path.container, leaseID, cond); err != nil {
		return err
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func (s *Server) leaseContainer(w http.ResponseWriter, c *call) error {
	req, err := leaseRequest(c.r.Header)
	if err != nil {
		return err
	}
	cond, err := conditions(c.r.Header)
	if err != nil {
		return err
	}
	ct, res, err := s.svc.LeaseContainer(c.r.Context(), c.path.container, req, cond)
	if err != nil {
		return err
	}
	leaseReply(w, req.Action, res, ct.ETag, ct.LastModified)
	return nil
}

// leaseReply answers a lease operation: acquire 201, break 202, others
// 200; the lease id (not for release or break) or the lease time (break).
func leaseReply(w http.ResponseWriter, action blobsvc.LeaseAction, res blobsvc.LeaseResult, etag string, lm time.Time) {
	status := http.StatusOK
	switch action {
	case blobsvc.LeaseAcquire:
		status = http.StatusCreated
	case blobsvc.LeaseBreak:
		status = http.StatusAccepted
		w.Header().Set("x-ms-lease-time", strconv.Itoa(res.Time))
	}
	if res.ID != "" {
		w.Header().Set("x-ms-lease-id", res.ID)
	}
	written(w, status, etag, lm)
}

func (s *Server) listBlobs(w http.ResponseWriter, c *call) error {
	limit, err := maxResults(c.q)
	if err != nil {
		return err
	}
	inc := includes(c.q)
	marker, err := decodeMarker(c.q.Get("marker"))
	if err != nil {
		return err
	}
	o := blobsvc.ListOptions{Prefix: c.q.Get("prefix"), Delimiter: c.q.Get("delimiter"), Marker: marker, Max: limit,
		IncludeUncommitted: inc["uncommittedblobs"], IncludeSnapshots: inc["snapshots"], IncludeDeleted: inc["deleted"],
		StartFrom: c.q.Get("startFrom"), EndBefore: c.q.Get("endBefore")}
	items, next, err := s.svc.ListBlobs(c.r.Context(), c.path.container, o)
	if err != nil {
		return err
	}
	withMD := inc["metadata"]
	now := s.svc.Now()
	out := blobListXML{ServiceEndpoint: s.endpoint(c.r), ContainerName: c.path.container, Prefix: o.Prefix, Marker: c.q.Get("marker"),
		Delimiter: o.Delimiter, NextMarker: encodeMarker(next)}
	if _, ok := c.q["maxresults"]; ok {
		out.MaxResults = limit
	}
	for _, it := range items {
		if it.Blob == nil {
			out.Blobs.Items = append(out.Blobs.Items, blobPrefixXML{Name: listedName(it.Prefix)})
			continue
		}
		b := it.Blob
		x := blobItemXML{Name: listedName(b.Name), Snapshot: b.Snapshot, Properties: blobPropsXML{
			CreationTime: httpTime(b.Created), LastModified: httpTime(b.LastModified), ETag: b.ETag,
			ContentLength: b.Size, ContentType: b.Properties.ContentType, ContentEncoding: b.Properties.ContentEncoding,
			ContentLanguage: b.Properties.ContentLanguage, ContentMD5: b64(b.Properties.ContentMD5),
			ContentDisposition: b.Properties.ContentDisposition, CacheControl: b.Properties.CacheControl,
			BlobType: string(b.Type), AccessTier: tierOf(*b), AccessTierInferred: b.Tier == "" && b.Type != blobsvc.AppendBlob,
			LeaseStatus: b.Lease.Status(now), LeaseState: string(b.Lease.Effective(now).State), LeaseDuration: b.Lease.DurationName(now),
			ServerEncrypted: true, CustomerProvidedKeySha256: b.EncryptionKeySHA256,
		}}
		if b.Tier != "" {
			x.Properties.AccessTierChangeTime = httpTime(b.TierChanged)
		}
		if r := b.Rehydrate; r != nil {
			x.Properties.ArchiveStatus, x.Properties.RehydratePriority = blobsvc.ArchiveStatus(*b), r.Priority
		}
		if b.Type == blobsvc.AppendBlob {
			x.Properties.Sealed = b.Sealed
		}
		if d := b.Deleted; d != nil {
			x.Deleted = true
			x.Properties.DeletedTime = httpTime(d.Time)
			x.Properties.RemainingRetentionDays = int(math.Ceil(d.Expires.Sub(now).Hours() / 24))
			x.Properties.LeaseStatus, x.Properties.LeaseState, x.Properties.LeaseDuration = "", "", ""
		}
		if withMD {
			md := b.Metadata
			if md == nil {
				md = map[string]string{}
			}
			x.Metadata = storagehttp.NewMetadataXML(md)
		}
		x.Properties.TagCount = len(b.Tags)
		if cp := b.Copy; cp != nil && inc["copy"] {
			x.Properties.CopyID, x.Properties.CopyStatus, x.Properties.CopySource = cp.ID, cp.StatusName(), cp.Source
			listCopyState(&x.Properties, cp)
		}
		if cp := b.Copy; cp != nil && cp.Incremental {
			x.Properties.IncrementalCopy = true
		}
		if inc["tags"] && len(b.Tags) > 0 {
			x.Tags = toTagsXML(b.Tags)
		}
		out.Blobs.Items = append(out.Blobs.Items, x)
	}
	return storagehttp.WriteXML(w, http.StatusOK, out)
}

// ---- blobs ----

// writeOptions reads what Put Blob and Put Block List share: properties,
// metadata, lease id and conditions.
func writeOptions(h http.Header, fallback bool) (blobsvc.WriteOptions, error) {
	var o blobsvc.WriteOptions
	var err error
	if o.Properties, err = blobProperties(h, fallback); err != nil {
		return o, err
	}
	if o.Properties.ContentType == "" {
		o.Properties.ContentType = defaultContentType
	}
	if o.Metadata, err = storagehttp.ParseMetadata(h); err != nil {
		return o, err
	}
	if o.LeaseID, o.Cond, err = guards(h); err != nil {
		return o, err
	}
	if o.Tags, err = tagsHeader(h); err != nil {
		return o, err
	}
	o.Tier = h.Get("x-ms-access-tier")
	// Copy Blob's x-ms-rehydrate-priority matters only for an archived
	// source, which a copy refuses here (409 BlobArchived): checked,
	// nothing more.
	if err := blobsvc.CheckRehydratePriority(h.Get("x-ms-rehydrate-priority")); err != nil {
		return o, storagehttp.InvalidHeader("x-ms-rehydrate-priority", h.Get("x-ms-rehydrate-priority"))
	}
	return o, nil
}

// tagsHeader reads x-ms-tags, a URL-encoded query string of tags;
// absent → nil. A repeated key or an invalid tag is 400 InvalidTag.
func tagsHeader(h http.Header) (map[string]string, error) {
	v := h.Get("x-ms-tags")
	if v == "" {
		return nil, nil
	}
	q, err := url.ParseQuery(v)
	if err != nil {
		return nil, storagehttp.InvalidHeader("x-ms-tags", v)
	}
	tags := make(map[string]string, len(q))
	for k, vs := range q {
		if len(vs) != 1 {
			return nil, fmt.Errorf("tag %q repeated: %w", k, blobsvc.ErrInvalidTag)
		}
		tags[k] = vs[0]
	}
	if err := blobsvc.ValidTags(tags); err != nil {
		return nil, err
	}
	return tags, nil
}

func (s *Server) getBlobTags(w http.ResponseWriter, c *call) error {
	leaseID, err := leaseIDHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	b, err := s.svc.GetBlob(c.r.Context(), c.path.container, c.path.blob, c.q.Get("snapshot"), leaseID, blobsvc.Conditions{})
	if err != nil {
		return err
	}
	return storagehttp.WriteXML(w, http.StatusOK, toTagsXML(b.Tags))
}

func (s *Server) setBlobTags(w http.ResponseWriter, c *call) error {
	leaseID, cond, err := guards(blobIfHeaders(c.r.Header))
	if err != nil {
		return err
	}
	// Content-MD5 and x-ms-content-crc64 are the document's, checked.
	sums, err := storagehttp.NewBodySums(c.r.Header, c.r.Body)
	if err != nil {
		return err
	}
	c.r.Body = io.NopCloser(sums)
	var in tagsXML
	derr := storagehttp.DecodeXMLBody(c.r, &in, maxSmallBody)
	if err := sums.Verify(maxSmallBody + 1); err != nil {
		return err
	}
	if derr != nil {
		return derr
	}
	tags := make(map[string]string, len(in.TagSet))
	for _, t := range in.TagSet {
		if _, dup := tags[t.Key]; dup {
			return fmt.Errorf("tag %q repeated: %w", t.Key, blobsvc.ErrInvalidTag)
		}
		tags[t.Key] = t.Value
	}
	if err := s.svc.SetBlobTags(c.r.Context(), c.path.container, c.path.blob, tags, leaseID, cond); err != nil {
		return err
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) putBlob(w http.ResponseWriter, c *call) error {
	if c.r.Header.Get("x-ms-copy-source") != "" {
		if err := storagehttp.RefuseStructuredBody(c.r.Header); err != nil { // no body to frame
			return err
		}
		if c.r.Header.Get("x-ms-blob-type") != "" {
			return s.putBlobFromURL(w, c)
		}
		return s.copyBlob(w, c)
	}
	var typ blobsvc.BlobType
	switch t := c.r.Header.Get("x-ms-blob-type"); t {
	case "BlockBlob":
		typ = blobsvc.BlockBlob
	case "AppendBlob":
		// Put Blob only creates an empty append blob; Append Block fills it.
		if c.r.ContentLength != 0 {
			return storagehttp.InvalidHeader("Content-Length", strconv.FormatInt(c.r.ContentLength, 10))
		}
		typ = blobsvc.AppendBlob
	case "PageBlob":
		return s.createPageBlob(w, c)
	case "":
		return storagehttp.MissingHeader("x-ms-blob-type")
	default:
		return storagehttp.InvalidHeader("x-ms-blob-type", t)
	}
	o, err := writeOptions(c.r.Header, true)
	if err != nil {
		return err
	}
	o.Type = typ
	if o.ContentMD5, err = md5Header(c.r.Header, "Content-MD5"); err != nil {
		return err
	}
	if o.Properties.ContentMD5 == nil {
		o.Properties.ContentMD5 = o.ContentMD5
	}
	return s.storeBlob(w, c, c.r.Body, false, o)
}

// storeBlob ends Put Blob and Put Blob From URL: body (the request's,
// decoded if it is a structured message, or the source's) becomes the
// blob, checked against the request's CRC-64 if it sent one, and the
// answer is 201 with the content's MD5.
func (s *Server) storeBlob(w http.ResponseWriter, c *call, body io.Reader, fromURL bool, o blobsvc.WriteOptions) error {
	body, size, structured, err := requestBody(c.r, fromURL, body)
	if err != nil {
		return err
	}
	body, crc, err := crc64Body(c.r.Header, fromURL, body, size)
	if err != nil {
		return err
	}
	b, err := s.svc.PutBlob(c.r.Context(), c.path.container, c.path.blob, body, o)
	if err != nil {
		return err
	}
	w.Header().Set("Content-MD5", b64(b.Properties.ContentMD5))
	setCRC64(w.Header(), crc)
	storagehttp.AnswerStructured(w.Header(), structured)
	w.Header().Set("x-ms-request-server-encrypted", "true")
	written(w, http.StatusCreated, b.ETag, b.LastModified)
	return nil
}

// putBlobFromURL is Put Blob From URL (x-ms-copy-source with
// x-ms-blob-type): a new block blob holding the source's bytes, read with
// the source's own authorization and streamed into the content store. It
// takes the source's properties unless x-ms-copy-source-blob-properties
// is false (then the request's), the request's metadata, and the
// request's tags or, with x-ms-copy-source-tag-option: COPY, the
// source's; x-ms-source-content-md5 must match what arrives.
func (s *Server) putBlobFromURL(w http.ResponseWriter, c *call) error {
	h := c.r.Header
	if t := h.Get("x-ms-blob-type"); t != "BlockBlob" {
		return storagehttp.InvalidHeader("x-ms-blob-type", t)
	}
	if c.r.ContentLength > 0 {
		return storagehttp.InvalidHeader("Content-Length", strconv.FormatInt(c.r.ContentLength, 10))
	}
	o, err := writeOptions(h, false)
	if err != nil {
		return err
	}
	if o.ContentMD5, err = md5Header(h, "x-ms-source-content-md5"); err != nil {
		return err
	}
	copyTags, err := copySourceTags(h)
	if err != nil {
		return err
	}
	src, rc, err := s.openSource(c)
	if err != nil {
		return err
	}
	defer rc.Close()
	if !strings.EqualFold(h.Get("x-ms-copy-source-blob-properties"), "false") {
		// The source's properties and tier, under those the request sets
		// (x-ms-blob-content-*, x-ms-access-tier: azblob's
		// TestPutBlobFromURLWithHeaders expects its headers on the blob,
		// TestPutBlobFromUrlWithCPK the source's tier without them).
		req, err := blobProperties(h, false)
		if err != nil {
			return err
		}
		o.Properties = overlayProperties(src.Properties, req)
		if o.Tier == "" && src.Type == blobsvc.BlockBlob {
			o.Tier = src.Tier
		}
	}
	if copyTags {
		o.Tags = src.Tags
	}
	// An unmet destination condition is 412 ConditionNotMet, as for Copy
	// Blob (blob/doc.go, "Copies").
	return s.storeBlob(w, c, rc, true, o)
}

// copySourceTags reads x-ms-copy-source-tag-option: COPY gives the
// destination the source's tags, REPLACE (the default) the request's
// x-ms-tags, none without them.
func copySourceTags(h http.Header) (bool, error) {
	opt := h.Get("x-ms-copy-source-tag-option")
	copyTags := strings.EqualFold(opt, "COPY")
	if opt != "" && !copyTags && !strings.EqualFold(opt, "REPLACE") {
		return false, storagehttp.InvalidHeader("x-ms-copy-source-tag-option", opt)
	}
	return copyTags, nil
}

func (s *Server) putBlock(w http.ResponseWriter, c *call) error {
	fromURL := c.r.Header.Get("x-ms-copy-source") != ""
	body, size, structured, err := requestBody(c.r, fromURL, c.r.Body)
	if err != nil {
		return err
	}
	if fromURL { // Put Block From URL
		_, rc, err := s.openSource(c)
		if err != nil {
			return err
		}
		defer rc.Close()
		body = rc
	}
	id := c.q.Get("blockid")
	if id == "" {
		return storagehttp.MissingQuery("blockid")
	}
	leaseID, err := leaseIDHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	sum, err := transactionalMD5(c.r.Header, fromURL)
	if err != nil {
		return err
	}
	body, crc, err := crc64Body(c.r.Header, fromURL, body, size)
	if err != nil {
		return err
	}
	if err := s.svc.StageBlock(c.r.Context(), c.path.container, c.path.blob, id, body, sum, leaseID); err != nil {
		return err
	}
	if sum != nil {
		w.Header().Set("Content-MD5", b64(sum))
	}
	setCRC64(w.Header(), crc)
	storagehttp.AnswerStructured(w.Header(), structured)
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusCreated)
	return nil
}

func (s *Server) putBlockList(w http.ResponseWriter, c *call) error {
	o, err := writeOptions(c.r.Header, false)
	if err != nil {
		return err
	}
	// Content-MD5 and x-ms-content-crc64 are the block list's (the
	// blob's MD5 is x-ms-blob-content-md5), checked once it is read.
	sums, err := storagehttp.NewBodySums(c.r.Header, c.r.Body)
	if err != nil {
		return err
	}
	refs, perr := parseBlockList(sums)
	if err := sums.Verify(maxBlockListBody + 1); err != nil {
		return err
	}
	if perr != nil {
		return perr
	}
	for _, ref := range refs {
		if blobsvc.ValidBlockID(ref.ID) != nil {
			return fmt.Errorf("block %q: %w", ref.ID, blobsvc.ErrInvalidBlockList)
		}
	}
	b, err := s.svc.CommitBlockList(c.r.Context(), c.path.container, c.path.blob, refs, o)
	if err != nil {
		return err
	}
	if crc := sums.CRC64(); crc != nil {
		w.Header().Set("x-ms-content-crc64", b64(crc))
	}
	w.Header().Set("x-ms-request-server-encrypted", "true")
	written(w, http.StatusCreated, b.ETag, b.LastModified)
	return nil
}

func (s *Server) getBlockList(w http.ResponseWriter, c *call) error {
	leaseID, err := leaseIDHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	which := strings.ToLower(c.q.Get("blocklisttype"))
	if which == "" {
		which = "committed"
	}
	if which != "committed" && which != "uncommitted" && which != "all" {
		return storagehttp.InvalidQuery("blocklisttype", c.q.Get("blocklisttype"), "must be committed, uncommitted or all")
	}
	lists, err := s.svc.GetBlockList(c.r.Context(), c.path.container, c.path.blob, leaseID)
	if err != nil {
		return err
	}
	var out blockListXML
	if which != "uncommitted" {
		out.Committed = toBlocksXML(lists.Committed)
	}
	if which != "committed" {
		out.Uncommitted = toBlocksXML(lists.Uncommitted)
	}
	if b := lists.Blob; b != nil {
		w.Header().Set("ETag", b.ETag)
		w.Header().Set("Last-Modified", httpTime(b.LastModified))
		w.Header().Set("x-ms-blob-content-length", strconv.FormatInt(b.Size, 10))
	}
	return storagehttp.WriteXML(w, http.StatusOK, out)
}

// setBlobHeaders writes a blob's properties as response headers (Get
// Blob, Get Blob Properties); Content-Length is the caller's.
func setBlobHeaders(h http.Header, b blobsvc.Blob, now time.Time) {
	h.Set("ETag", b.ETag)
	h.Set("Last-Modified", httpTime(b.LastModified))
	h.Set("x-ms-creation-time", httpTime(b.Created))
	h.Set("x-ms-blob-type", string(b.Type))
	h.Set("Accept-Ranges", "bytes")
	h.Set("x-ms-server-encrypted", "true")
	p := b.Properties
	if p.ContentType != "" {
		h.Set("Content-Type", p.ContentType)
	} else {
		// Set Blob Properties without x-ms-blob-content-type clears it,
		// and Azure then sends no Content-Type (the azblob recording of
		// TestBlobSetPropertiesEmptyValue); nil also keeps net/http
		// from sniffing one for Get Blob's body.
		h["Content-Type"] = nil
	}
	for k, v := range map[string]string{"Content-Encoding": p.ContentEncoding, "Content-Language": p.ContentLanguage,
		"Content-Disposition": p.ContentDisposition, "Cache-Control": p.CacheControl} {
		if v != "" {
			h.Set(k, v)
		}
	}
	setLeaseHeaders(h, b.Lease, now)
	storagehttp.SetMetadataHeaders(h, b.Metadata)
	if b.Type == blobsvc.AppendBlob {
		h.Set("x-ms-blob-committed-block-count", strconv.Itoa(len(b.Blocks)))
		if b.Sealed {
			h.Set("x-ms-blob-sealed", "true")
		}
	}
	if b.Type == blobsvc.PageBlob && b.Page != nil {
		h.Set("x-ms-blob-sequence-number", strconv.FormatInt(b.Page.SequenceNumber, 10))
	}
	if len(b.Tags) > 0 {
		h.Set("x-ms-tag-count", strconv.Itoa(len(b.Tags)))
	}
	if cp := b.Copy; cp != nil {
		h.Set("x-ms-copy-id", cp.ID)
		h.Set("x-ms-copy-source", cp.Source)
		h.Set("x-ms-copy-status", cp.StatusName())
		setCopyStateHeaders(h, cp)
	}
}

func (s *Server) getBlobProperties(w http.ResponseWriter, c *call) error {
	leaseID, cond, err := guards(c.r.Header)
	if err != nil {
		return err
	}
	b, err := s.svc.GetBlob(c.r.Context(), c.path.container, c.path.blob, c.q.Get("snapshot"), leaseID, cond)
	if errors.Is(err, blobsvc.ErrNotModified) {
		notModified(w, b.ETag, b.LastModified)
		return nil
	}
	if err != nil {
		return err
	}
	h := w.Header()
	setBlobHeaders(h, b, s.svc.Now())
	if c.path.scope == scopeBlob && c.q.Get("comp") == "metadata" {
		h.Del("Content-Type")
		written(w, http.StatusOK, b.ETag, b.LastModified)
		return nil
	}
	setTierHeaders(h, b)
	setRehydrateHeaders(h, b)
	if b.Properties.ContentMD5 != nil {
		h.Set("Content-MD5", b64(b.Properties.ContentMD5))
	}
	h.Set("Content-Length", strconv.FormatInt(b.Size, 10))
	w.WriteHeader(http.StatusOK)
	return nil
}

// maxRangeMD5 is the largest range x-ms-range-get-content-md5 may ask
// for (Azure's 4 MiB).
const maxRangeMD5 = 4 << 20

func (s *Server) getBlob(w http.ResponseWriter, c *call) error {
	leaseID, cond, err := guards(c.r.Header)
	if err != nil {
		return err
	}
	rng, err := byteRange(c.r.Header)
	if err != nil {
		return err
	}
	wantMD5 := strings.EqualFold(c.r.Header.Get("x-ms-range-get-content-md5"), "true")
	if wantMD5 && (rng == nil || rng.End < 0 || rng.End-rng.Start+1 > maxRangeMD5) {
		return storagehttp.OutOfRange("x-ms-range-get-content-md5", "true")
	}
	wantCRC := strings.EqualFold(c.r.Header.Get("x-ms-range-get-content-crc64"), "true")
	if wantCRC && (rng == nil || rng.End < 0 || rng.End-rng.Start+1 > maxRangeMD5) {
		return storagehttp.OutOfRange("x-ms-range-get-content-crc64", "true")
	}
	if wantMD5 && wantCRC {
		return storagehttp.InvalidHeader("x-ms-range-get-content-crc64", "true")
	}
	structured, err := storagehttp.StructuredResponse(c.r.Header)
	if err != nil {
		return err
	}
	b, rc, off, n, err := s.svc.OpenBlob(c.r.Context(), c.path.container, c.path.blob, c.q.Get("snapshot"), rng, leaseID, cond)
	if errors.Is(err, blobsvc.ErrNotModified) {
		notModified(w, b.ETag, b.LastModified)
		return nil
	}
	if errors.Is(err, blobsvc.ErrInvalidRange) {
		w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(b.Size, 10))
		return err
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	h := w.Header()
	setBlobHeaders(h, b, s.svc.Now())
	setTierHeaders(h, b)
	setRehydrateHeaders(h, b)
	status := http.StatusOK
	var body io.Reader = rc
	if rng != nil {
		status = http.StatusPartialContent
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, b.Size))
		h.Set("x-ms-blob-content-length", strconv.FormatInt(b.Size, 10))
		if b.Properties.ContentMD5 != nil {
			h.Set("x-ms-blob-content-md5", b64(b.Properties.ContentMD5))
		}
		if wantMD5 || wantCRC {
			// At most 4 MiB: the range is read once to hash it, then
			// served from memory.
			buf, err := io.ReadAll(io.LimitReader(rc, maxRangeMD5))
			if err != nil {
				return err
			}
			if wantMD5 {
				sum := md5.Sum(buf)
				h.Set("Content-MD5", b64(sum[:]))
			} else {
				crc := storagehttp.NewCRC64()
				crc.Write(buf)
				h.Set("x-ms-content-crc64", b64(storagehttp.CRC64Bytes(crc.Sum64())))
			}
			body = bytes.NewReader(buf)
		}
	} else if b.Properties.ContentMD5 != nil {
		h.Set("Content-MD5", b64(b.Properties.ContentMD5))
	}
	length := n
	if structured {
		body, length = storagehttp.StructuredReply(h, body, n)
	}
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	w.WriteHeader(status)
	if _, err := io.Copy(w, body); err != nil {
		// Headers are gone: all that is left is to cut the response.
		s.log.Debug("blob: download interrupted", "path", c.r.URL.Path, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

func (s *Server) setBlobProperties(w http.ResponseWriter, c *call) error {
	p, err := blobProperties(c.r.Header, false)
	if err != nil {
		return err
	}
	leaseID, cond, err := guards(c.r.Header)
	if err != nil {
		return err
	}
	var b blobsvc.Blob
	if h := c.r.Header; h.Get("x-ms-blob-content-length") != "" || h.Get("x-ms-sequence-number-action") != "" {
		ch, err := pageBlobChanges(h)
		if err != nil {
			return err
		}
		b, err = s.svc.SetPageBlobProperties(c.r.Context(), c.path.container, c.path.blob, p, ch, leaseID, cond)
		if err != nil {
			return err
		}
		w.Header().Set("x-ms-blob-sequence-number", strconv.FormatInt(b.Page.SequenceNumber, 10))
	} else if b, err = s.svc.SetBlobProperties(c.r.Context(), c.path.container, c.path.blob, p, leaseID, cond); err != nil {
		return err
	}
	written(w, http.StatusOK, b.ETag, b.LastModified)
	return nil
}

func (s *Server) setBlobMetadata(w http.ResponseWriter, c *call) error {
	md, err := storagehttp.ParseMetadata(c.r.Header)
	if err != nil {
		return err
	}
	leaseID, cond, err := guards(c.r.Header)
	if err != nil {
		return err
	}
	b, err := s.svc.SetBlobMetadata(c.r.Context(), c.path.container, c.path.blob, md, leaseID, cond)
	if err != nil {
		return err
	}
	w.Header().Set("x-ms-request-server-encrypted", "true")
	written(w, http.StatusOK, b.ETag, b.LastModified)
	return nil
}

func (s *Server) deleteBlob(w http.ResponseWriter, c *call) error {
	if c.q.Has("versionid") {
		return storagehttp.InvalidQuery("versionid", c.q.Get("versionid"), "versions are not supported")
	}
	snaps := blobsvc.DeleteSnapshots(c.r.Header.Get("x-ms-delete-snapshots"))
	if snaps != "" && snaps != blobsvc.DeleteSnapshotsInclude && snaps != blobsvc.DeleteSnapshotsOnly {
		return storagehttp.InvalidHeader("x-ms-delete-snapshots", string(snaps))
	}
	leaseID, cond, err := guards(c.r.Header)
	if err != nil {
		return err
	}
	if err := tierConditions(c.r.Header, &cond); err != nil {
		return err
	}
	if dt := c.q.Get("deletetype"); c.q.Has("deletetype") {
		// "The value of deletetype can only be permanent."
		if !strings.EqualFold(dt, "permanent") {
			return storagehttp.InvalidQuery("deletetype", dt, "the only value is permanent")
		}
		if err := s.svc.PermanentDelete(c.r.Context(), c.path.container, c.path.blob, c.q.Get("snapshot")); err != nil {
			return err
		}
		w.Header().Set("x-ms-delete-type-permanent", "true")
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	soft, err := s.svc.DeleteBlob(c.r.Context(), c.path.container, c.path.blob, c.q.Get("snapshot"), snaps, leaseID, cond)
	if err != nil {
		return err
	}
	w.Header().Set("x-ms-delete-type-permanent", strconv.FormatBool(!soft))
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func (s *Server) leaseBlob(w http.ResponseWriter, c *call) error {
	req, err := leaseRequest(c.r.Header)
	if err != nil {
		return err
	}
	cond, err := conditions(c.r.Header)
	if err != nil {
		return err
	}
	b, res, err := s.svc.LeaseBlob(c.r.Context(), c.path.container, c.path.blob, req, cond)
	if err != nil {
		return err
	}
	leaseReply(w, req.Action, res, b.ETag, b.LastModified)
	return nil
}

// blobIfHeaders returns h with the x-ms-blob-if-* headers of Set Blob
// Tags (how the SDKs send its BlobModifiedAccessConditions) in the places
// of the conditional headers they stand for; a plain conditional header
// counts where its x-ms-blob- form is absent.
func blobIfHeaders(h http.Header) http.Header {
	out := h.Clone()
	for _, n := range []string{"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"} {
		if v := h.Get("x-ms-blob-" + n); v != "" {
			out.Set(n, v)
		}
	}
	return out
}

// sourceConditions reads the x-ms-source-if-* headers of Copy Blob.
func sourceConditions(h http.Header) (blobsvc.Conditions, error) {
	src := http.Header{}
	for _, n := range []string{"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"} {
		if v := h.Get("x-ms-source-" + n); v != "" {
			src.Set(n, v)
		}
	}
	if v := h.Get("x-ms-source-if-tags"); v != "" {
		src.Set("x-ms-if-tags", v)
	}
	// A source is always checked against its customer-provided key: a
	// copy without x-ms-source-encryption-* cannot read a blob that has
	// one (prepareCPK leaves the hash, or "", where it takes a key).
	src[http.CanonicalHeaderKey(hdrKeySHA256)] = []string{h.Get(srcPrefix + "encryption-key-sha256")}
	c, err := conditions(src)
	var e *storagehttp.Error
	if errors.As(err, &e) && len(e.Details) > 0 {
		e.Details[0].Value = "x-ms-source-" + e.Details[0].Value
	}
	return c, err
}

// copyBlob is Copy Blob and Copy Blob From URL (x-ms-requires-sync): both
// are synchronous here, for a source in this account addressed
// path-style (http://host/<account>/<container>/<blob>).
func (s *Server) copyBlob(w http.ResponseWriter, c *call) error {
	src, err := s.copySource(c.r.Header)
	if err != nil {
		return err
	}
	// Copy Blob proper may read a source of its own account with the
	// request's Shared Key; a SAS covers only the destination, and Copy
	// Blob From URL never lends the request's credentials to the source.
	sharedKey := storagehttp.InfoFrom(c.r.Context()).Grant.SAS == nil
	if !sharedKey || strings.EqualFold(c.r.Header.Get("x-ms-requires-sync"), "true") {
		if err := s.authorizeSource(c.r, src); err != nil {
			return err
		}
	}
	o, err := writeOptions(c.r.Header, false)
	if err != nil {
		return err
	}
	if len(o.Metadata) == 0 {
		o.Metadata = nil // the source's metadata is copied
	}
	// Tags: the request's x-ms-tags, or the source's with
	// x-ms-copy-source-tag-option: COPY (Copy Blob From URL's header;
	// honoured on the asynchronous form too, where it means the same).
	if o.CopySourceTags, err = copySourceTags(c.r.Header); err != nil {
		return err
	}
	if v := c.r.Header.Get("x-ms-seal-blob"); v != "" {
		seal, err := strconv.ParseBool(v)
		if err != nil {
			return storagehttp.InvalidHeader("x-ms-seal-blob", v)
		}
		o.Seal = &seal
	}
	// Copy Blob From URL checks x-ms-source-content-md5 or -crc64
	// against the bytes that arrive ("the storage service compares the
	// hash of the content that has arrived from the copy source with
	// this header value") and answers them as Content-MD5 and
	// x-ms-content-crc64 (the azure-sdk-for-js recording of
	// syncCopyFromURL shows the CRC-64 of an unchecked copy).
	sync := strings.EqualFold(c.r.Header.Get("x-ms-requires-sync"), "true")
	var sum []byte
	var crc *storagehttp.CRC64Reader
	if sync {
		if sum, err = transactionalMD5(c.r.Header, true); err != nil {
			return err
		}
		var werr error
		o.Wrap = func(r io.Reader) io.Reader {
			var out io.Reader
			out, crc, werr = crc64Body(c.r.Header, true, r, -1)
			if werr != nil {
				return errReader{werr}
			}
			if sum != nil {
				out = newMD5Reader(out, sum, -1)
			}
			return out
		}
		if _, _, err := crc64Body(c.r.Header, true, nil, -1); err != nil {
			return err
		}
	}
	b, err := s.svc.CopyBlob(c.r.Context(), src, c.path.container, c.path.blob, o)
	if e := sourceCPKError(err); e != nil { // the destination's key is not checked: the copy replaces it
		return e
	}
	if err != nil {
		return err
	}
	h := w.Header()
	if sum != nil {
		h.Set("Content-MD5", b64(sum))
	}
	setCRC64(h, crc)
	if b.Copy != nil {
		h.Set("x-ms-copy-id", b.Copy.ID)
	}
	h.Set("x-ms-copy-status", "success")
	written(w, http.StatusAccepted, b.ETag, b.LastModified)
	return nil
}

// copySource reads x-ms-copy-source (a blob of this account, path-style,
// optionally ?snapshot=) and the x-ms-source-if-* conditions.
func (s *Server) copySource(h http.Header) (blobsvc.CopySource, error) {
	raw := h.Get("x-ms-copy-source")
	u, err := url.Parse(raw)
	if err != nil {
		return blobsvc.CopySource{}, storagehttp.InvalidHeader("x-ms-copy-source", raw)
	}
	p, err := parsePath(u.Host, u.EscapedPath())
	if err != nil || p.scope != scopeBlob {
		return blobsvc.CopySource{}, storagehttp.InvalidHeader("x-ms-copy-source", raw)
	}
	if p.account != s.account {
		return blobsvc.CopySource{}, storagehttp.NewError(http.StatusBadRequest, "CannotVerifyCopySource",
			"Copies from another account are not supported by this server.")
	}
	if u.Query().Has("versionid") {
		return blobsvc.CopySource{}, storagehttp.InvalidHeader("x-ms-copy-source", raw)
	}
	cond, err := sourceConditions(h)
	if err != nil {
		return blobsvc.CopySource{}, err
	}
	return blobsvc.CopySource{Container: p.container, Name: p.blob, Snapshot: u.Query().Get("snapshot"), URL: raw, Cond: cond}, nil
}

// openSource opens the bytes of a From URL operation's source (the
// x-ms-source-range, or the whole blob) and returns the source blob too.
func (s *Server) openSource(c *call) (blobsvc.Blob, io.ReadCloser, error) {
	src, err := s.copySource(c.r.Header)
	if err != nil {
		return blobsvc.Blob{}, nil, err
	}
	if err := s.authorizeSource(c.r, src); err != nil {
		return blobsvc.Blob{}, nil, err
	}
	var rng *blobsvc.Range
	if v := c.r.Header.Get("x-ms-source-range"); v != "" {
		h := http.Header{}
		h.Set("x-ms-range", v)
		if rng, err = byteRange(h); err != nil {
			return blobsvc.Blob{}, nil, storagehttp.InvalidHeader("x-ms-source-range", v)
		}
	}
	b, rc, _, _, err := s.svc.OpenBlob(c.r.Context(), src.Container, src.Name, src.Snapshot, rng, "", src.Cond)
	if err := sourceCPKError(err); err != nil {
		return b, nil, err
	}
	if errors.Is(err, blobsvc.ErrNotModified) {
		// The source answered its read 304: Azure reports what the
		// source said as CannotVerifyCopySource, with its status (the
		// azblob live test TestPutBlobFromUrlSourceIfNoneMatchFalse
		// expects that code and "304").
		return b, nil, storagehttp.NewError(http.StatusNotModified, "CannotVerifyCopySource",
			"304 The condition specified using HTTP conditional header(s) is not met.")
	}
	return b, rc, blobsvc.SourceCondition(err)
}

// abortCopy answers Abort Copy Blob: copies here finish before Copy Blob
// answers, so there is never one to abort (409 NoPendingCopyOperation).
func (s *Server) abortCopy(w http.ResponseWriter, c *call) error {
	if c.r.Header.Get("x-ms-copy-action") != "abort" {
		return storagehttp.InvalidHeader("x-ms-copy-action", c.r.Header.Get("x-ms-copy-action"))
	}
	// copyid is a GUID, checked before the blob is looked up: azblob's
	// TestBlobAbortCopyNoCopyStarted, recorded against Azure, aborts
	// copyid=copynotstarted on a missing blob and expects 400
	// InvalidQueryParameterValue.
	id := c.q.Get("copyid")
	if !c.q.Has("copyid") {
		return storagehttp.MissingQuery("copyid")
	}
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return storagehttp.InvalidQuery("copyid", id, "not a copy id")
	}
	if _, err := s.svc.GetBlob(c.r.Context(), c.path.container, c.path.blob, "", "", blobsvc.Conditions{}); err != nil {
		return err
	}
	return storagehttp.NewError(http.StatusConflict, "NoPendingCopyOperation", "There is currently no pending copy operation.")
}

func (s *Server) snapshotBlob(w http.ResponseWriter, c *call) error {
	md, err := storagehttp.ParseMetadata(c.r.Header)
	if err != nil {
		return err
	}
	if len(md) == 0 {
		md = nil // the blob's metadata is kept
	}
	leaseID, cond, err := guards(c.r.Header)
	if err != nil {
		return err
	}
	sn, err := s.svc.SnapshotBlob(c.r.Context(), c.path.container, c.path.blob, md, leaseID, cond)
	if errors.Is(err, blobsvc.ErrNotModified) {
		notModified(w, sn.ETag, sn.LastModified)
		return nil
	}
	if err != nil {
		return err
	}
	w.Header().Set("x-ms-snapshot", sn.Snapshot)
	// With a customer-provided key Azure answers false: the request has
	// no content to encrypt (azblob's TestBlobSnapshotWithCPK recording).
	w.Header().Set("x-ms-request-server-encrypted", strconv.FormatBool(c.r.Header.Get(hdrKey) == ""))
	written(w, http.StatusCreated, sn.ETag, sn.LastModified)
	return nil
}

// optionalInt64Header reads a non-negative integer header; absent → nil.
func optionalInt64Header(h http.Header, name string) (*int64, error) {
	v := h.Get(name)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return nil, storagehttp.InvalidHeader(name, v)
	}
	return &n, nil
}

// maxAppendBlock is the largest Append Block body (Azure's 100 MiB since
// version 2022-11-02).
const maxAppendBlock = 100 << 20

func (s *Server) appendBlock(w http.ResponseWriter, c *call) error {
	fromURL := c.r.Header.Get("x-ms-copy-source") != ""
	limit := int64(maxAppendBlock)
	if storagehttp.HasStructuredBody(c.r) {
		limit += storagehttp.MaxStructuredOverhead
	}
	body, size, structured, err := requestBody(c.r, fromURL, http.MaxBytesReader(w, c.r.Body, limit))
	if err != nil {
		return err
	}
	if size == 0 && !fromURL {
		return storagehttp.InvalidHeader("Content-Length", "0")
	}
	if size > maxAppendBlock {
		return storagehttp.NewError(http.StatusRequestEntityTooLarge, storagehttp.CodeRequestBodyTooLarge,
			"The request body is too large and exceeds the maximum permissible limit.")
	}
	var o blobsvc.AppendOptions
	if o.LeaseID, o.Cond, err = guards(c.r.Header); err != nil {
		return err
	}
	if o.MaxSize, err = optionalInt64Header(c.r.Header, "x-ms-blob-condition-maxsize"); err != nil {
		return err
	}
	if o.AppendPos, err = optionalInt64Header(c.r.Header, "x-ms-blob-condition-appendpos"); err != nil {
		return err
	}
	if o.ContentMD5, err = transactionalMD5(c.r.Header, fromURL); err != nil {
		return err
	}
	if fromURL { // Append Block From URL
		_, rc, err := s.openSource(c)
		if err != nil {
			return err
		}
		defer rc.Close()
		body = io.LimitReader(rc, maxAppendBlock)
	}
	body, crc, err := crc64Body(c.r.Header, fromURL, body, size)
	if err != nil {
		return err
	}
	b, offset, err := s.svc.AppendBlock(c.r.Context(), c.path.container, c.path.blob, body, o)
	if err != nil {
		return err
	}
	h := w.Header()
	if o.ContentMD5 != nil {
		h.Set("Content-MD5", b64(o.ContentMD5))
	}
	setCRC64(h, crc)
	storagehttp.AnswerStructured(h, structured)
	h.Set("x-ms-blob-append-offset", strconv.FormatInt(offset, 10))
	h.Set("x-ms-blob-committed-block-count", strconv.Itoa(len(b.Blocks)))
	h.Set("x-ms-request-server-encrypted", "true")
	written(w, http.StatusCreated, b.ETag, b.LastModified)
	return nil
}

// publicAccess reads x-ms-blob-public-access: container, blob, or absent
// (private).
func publicAccess(h http.Header) (blobsvc.PublicAccess, error) {
	switch v := h.Get("x-ms-blob-public-access"); v {
	case "":
		return blobsvc.AccessPrivate, nil
	case "container", "blob":
		return blobsvc.PublicAccess(v), nil
	default:
		return "", storagehttp.InvalidHeader("x-ms-blob-public-access", v)
	}
}

func (s *Server) getContainerACL(w http.ResponseWriter, c *call) error {
	leaseID, err := leaseIDHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	ct, err := s.svc.GetContainer(c.r.Context(), c.path.container, leaseID)
	if err != nil {
		return err
	}
	if ct.PublicAccess != "" {
		w.Header().Set("x-ms-blob-public-access", string(ct.PublicAccess))
	}
	w.Header().Set("ETag", ct.ETag)
	w.Header().Set("Last-Modified", httpTime(ct.LastModified))
	return storagehttp.WriteXML(w, http.StatusOK, storagehttp.SignedIdentifiersDoc(ct.ACL))
}

func (s *Server) setContainerACL(w http.ResponseWriter, c *call) error {
	access, err := publicAccess(c.r.Header)
	if err != nil {
		return err
	}
	leaseID, cond, err := guards(c.r.Header)
	if err != nil {
		return err
	}
	ids, err := storagehttp.DecodeSignedIdentifiers(c.r, maxSmallBody)
	if err != nil {
		return err
	}
	ct, err := s.svc.SetContainerACL(c.r.Context(), c.path.container, access, ids, leaseID, cond)
	if err != nil {
		return err
	}
	written(w, http.StatusOK, ct.ETag, ct.LastModified)
	return nil
}

// tierOf is the access tier reported: the stored one, or the inferred
// default (Hot for block blobs, P10 for page blobs, none for append).
func tierOf(b blobsvc.Blob) string {
	switch {
	case b.Tier != "":
		return b.Tier
	case b.Type == blobsvc.PageBlob:
		return "P10"
	case b.Type == blobsvc.AppendBlob:
		return ""
	}
	return "Hot"
}

func (s *Server) setBlobTier(w http.ResponseWriter, c *call) error {
	tier := c.r.Header.Get("x-ms-access-tier")
	if tier == "" {
		return storagehttp.MissingHeader("x-ms-access-tier")
	}
	leaseID, err := leaseIDHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	priority := c.r.Header.Get("x-ms-rehydrate-priority")
	if blobsvc.CheckRehydratePriority(priority) != nil {
		return storagehttp.InvalidHeader("x-ms-rehydrate-priority", priority)
	}
	if err := s.svc.SetBlobTier(c.r.Context(), c.path.container, c.path.blob, c.q.Get("snapshot"), tier, priority, leaseID); err != nil {
		return err
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

// findBlobsByTags is Find Blobs by Tags, on the account (every
// container) or on one container.
func (s *Server) findBlobsByTags(w http.ResponseWriter, c *call) error {
	where := c.q.Get("where")
	if where == "" {
		return storagehttp.MissingQuery("where")
	}
	limit, err := maxResults(c.q)
	if err != nil {
		return err
	}
	container := ""
	if c.path.scope == scopeContainer {
		container = c.path.container
	}
	found, next, err := s.svc.FindBlobsByTags(c.r.Context(), container, where, c.q.Get("marker"), limit)
	if errors.Is(err, blobsvc.ErrInvalidTagsCondition) {
		return storagehttp.InvalidQuery("where", where, err.Error())
	}
	if err != nil {
		return err
	}
	out := findBlobsXML{ServiceEndpoint: s.endpoint(c.r), Where: where, NextMarker: next, Blobs: []foundBlobXML{}}
	for _, b := range found {
		out.Blobs = append(out.Blobs, foundBlobXML{Name: b.Name, ContainerName: b.Container, Tags: toTagsXML(b.Tags)})
	}
	return storagehttp.WriteXML(w, http.StatusOK, out)
}
