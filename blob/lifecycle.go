package blob

import (
	"fmt"
	"net/http"
	"time"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/storagehttp"
)

// Handlers of the blob and container lifecycle: Restore Container,
// Undelete Blob, Seal Append Blob, and the tier and property helpers of
// the writes that set them.

// restoreContainer is Restore Container (restype=container&comp=undelete):
// x-ms-deleted-container-name and x-ms-deleted-container-version name
// the soft-deleted container, the URL the container it becomes.
func (s *Server) restoreContainer(w http.ResponseWriter, c *call) error {
	name := c.r.Header.Get("x-ms-deleted-container-name")
	if name == "" {
		return storagehttp.MissingHeader("x-ms-deleted-container-name")
	}
	version := c.r.Header.Get("x-ms-deleted-container-version")
	if version == "" {
		return storagehttp.MissingHeader("x-ms-deleted-container-version")
	}
	if p, err := parsePath(storagehttp.RequestHost(c.r), c.r.URL.EscapedPath()); err != nil || p.scope == scopeService {
		return storagehttp.InvalidQuery("restype", "container", "a container operation needs a container name")
	}
	ct, err := s.svc.RestoreContainer(c.r.Context(), name, version, c.path.container)
	if err != nil {
		return err
	}
	written(w, http.StatusCreated, ct.ETag, ct.LastModified)
	return nil
}

// sealBlob is Seal Append Blob (comp=seal).
func (s *Server) sealBlob(w http.ResponseWriter, c *call) error {
	var o blobsvc.AppendOptions
	var err error
	if o.LeaseID, o.Cond, err = guards(c.r.Header); err != nil {
		return err
	}
	if o.AppendPos, err = optionalInt64Header(c.r.Header, "x-ms-blob-condition-appendpos"); err != nil {
		return err
	}
	b, err := s.svc.SealAppendBlob(c.r.Context(), c.path.container, c.path.blob, o)
	if err != nil {
		return err
	}
	w.Header().Set("x-ms-blob-sealed", "true")
	written(w, http.StatusOK, b.ETag, b.LastModified)
	return nil
}

// undeleteBlob is Undelete Blob (comp=undelete).
func (s *Server) undeleteBlob(w http.ResponseWriter, c *call) error {
	if err := s.svc.UndeleteBlob(c.r.Context(), c.path.container, c.path.blob); err != nil {
		return err
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

// setTierHeaders answers a blob's access tier on Get Blob and Get Blob
// Properties (azblob's TestDownloadStreamAccessTierHeaders expects the
// tier and its change time on a download too). x-ms-access-tier-inferred
// comes only when true: "If the access tier is not explicitly set on the
// blob, the tier is inferred based on its content length, and this
// header is returned with a value of true" (azblob's
// TestBlobTierInferred expects none after Set Blob Tier).
func setTierHeaders(h http.Header, b blobsvc.Blob) {
	if t := tierOf(b); t != "" {
		h.Set("x-ms-access-tier", t)
	}
	if b.Tier == "" {
		if b.Type != blobsvc.AppendBlob {
			h.Set("x-ms-access-tier-inferred", "true")
		}
		return
	}
	h.Set("x-ms-access-tier-change-time", httpTime(b.TierChanged))
}

// setRehydrateHeaders answers a rehydration under way: x-ms-archive-status
// (rehydrate-pending-to-hot, -cool or -cold) and x-ms-rehydrate-priority
// (Get Blob Properties: "If an object is in rehydrate pending state then
// this header is returned with priority of rehydrate").
func setRehydrateHeaders(h http.Header, b blobsvc.Blob) {
	if b.Rehydrate == nil {
		return
	}
	h.Set("x-ms-archive-status", blobsvc.ArchiveStatus(b))
	h.Set("x-ms-rehydrate-priority", b.Rehydrate.Priority)
}

// tierConditions reads Delete Blob's conditions on the access tier's
// change time (x-ms-access-tier-if-modified-since, -if-unmodified-since:
// "operate only on a blob if the access-tier has been modified since" /
// "has not been modified since" the date) into cond. Both at once are
// 400 MultipleConditionHeadersNotSupported ("If this is specified,
// AccessTierIfUnmodifiedSince cannot be specified"; the code is
// blobshare's choice, the one of the other conditional headers); a date
// that is not an HTTP date 400 InvalidHeaderValue.
func tierConditions(h http.Header, cond *blobsvc.Conditions) error {
	for _, d := range []struct {
		name string
		dst  **time.Time
	}{{"x-ms-access-tier-if-modified-since", &cond.AccessTierIfModifiedSince}, {"x-ms-access-tier-if-unmodified-since", &cond.AccessTierIfUnmodifiedSince}} {
		v := h.Get(d.name)
		if v == "" {
			continue
		}
		t, err := http.ParseTime(v)
		if err != nil {
			return storagehttp.InvalidHeader(d.name, v)
		}
		*d.dst = &t
	}
	if cond.AccessTierIfModifiedSince != nil && cond.AccessTierIfUnmodifiedSince != nil {
		return fmt.Errorf("x-ms-access-tier-if-modified-since with -if-unmodified-since: %w", blobsvc.ErrMultipleConditions)
	}
	return nil
}

// overlayProperties is base with each property req sets.
func overlayProperties(base, req blobsvc.Properties) blobsvc.Properties {
	for _, f := range []struct{ dst, src *string }{
		{&base.ContentType, &req.ContentType}, {&base.ContentEncoding, &req.ContentEncoding},
		{&base.ContentLanguage, &req.ContentLanguage}, {&base.ContentDisposition, &req.ContentDisposition},
		{&base.CacheControl, &req.CacheControl},
	} {
		if *f.src != "" {
			*f.dst = *f.src
		}
	}
	if req.ContentMD5 != nil {
		base.ContentMD5 = req.ContentMD5
	}
	return base
}
