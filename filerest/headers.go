package filerest

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"

	"github.com/blobshare/blobshare/storagehttp"
)

// defaultPermissionKey is reported for entries without their own
// security descriptor (the service's key shape is digits*digits).
const defaultPermissionKey = "4066528134148476695*1"

// setCommon sets ETag and Last-Modified of an entry.
func setCommon(h http.Header, a fs.Attr) {
	if a.ETag != "" {
		put(h, hETag, a.ETag)
	}
	if !a.Modified.IsZero() {
		put(h, hLastModified, a.Modified.UTC().Format(http.TimeFormat))
	}
}

// Response headers every file and directory read sets, in the canonical
// form http.Header keeps them in (http.CanonicalHeaderKey), for put.
const (
	hETag            = "Etag"
	hLastModified    = "Last-Modified"
	hFileAttributes  = "X-Ms-File-Attributes"
	hFileCreation    = "X-Ms-File-Creation-Time"
	hFileLastWrite   = "X-Ms-File-Last-Write-Time"
	hFileChange      = "X-Ms-File-Change-Time"
	hFileID          = "X-Ms-File-Id"
	hFileParentID    = "X-Ms-File-Parent-Id"
	hFilePermKey     = "X-Ms-File-Permission-Key"
	hLeaseStatus     = "X-Ms-Lease-Status"
	hLeaseState      = "X-Ms-Lease-State"
	hLeaseDuration   = "X-Ms-Lease-Duration"
	hType            = "X-Ms-Type"
	hServerEncrypted = "X-Ms-Server-Encrypted"
	hAcceptRanges    = "Accept-Ranges"
	hContentLength   = "Content-Length"
)

// put is Header.Set for a key already in canonical form: a read's
// response sets some twenty headers, and canonicalising each name anew
// cost Get File Properties an allocation per header.
func put(h http.Header, k, v string) { h[k] = []string{v} }

// setSMB sets the SMB property set (filerest.md §3.2) of an entry.
func setSMB(h http.Header, a fs.Attr) {
	setCommon(h, a)
	put(h, hFileAttributes, formatAttributes(a.Attributes))
	put(h, hFileCreation, storagehttp.FormatTime7(a.Created))
	put(h, hFileLastWrite, storagehttp.FormatTime7(a.LastWrite))
	put(h, hFileChange, storagehttp.FormatTime7(a.Change))
	put(h, hFileID, strconv.FormatUint(uint64(a.ID), 10))
	put(h, hFileParentID, strconv.FormatUint(uint64(a.Parent), 10))
	key := a.PermissionKey
	if key == "" {
		key = defaultPermissionKey
	}
	put(h, hFilePermKey, key)
}

// parseSMBProps reads x-ms-file-attributes and the three SMB times.
// Keywords: "preserve" (nil: keep), "now" (the request time), "none" for
// attributes (the empty set), "source" where source is allowed. For a
// create, absent means the fs default (nil).
func parseSMBProps(h http.Header, now time.Time, allowSource bool) (fs.SMBProperties, error) {
	var p fs.SMBProperties
	kw := []string{"now", "preserve"}
	if allowSource {
		kw = append(kw, "source")
	}
	if v := strings.TrimSpace(h.Get("x-ms-file-attributes")); v != "" {
		switch {
		case strings.EqualFold(v, "preserve"), allowSource && strings.EqualFold(v, "source"):
		default:
			a, err := parseAttributes("x-ms-file-attributes", v)
			if err != nil {
				return p, err
			}
			p.Attributes = &a
		}
	}
	for _, f := range []struct {
		name string
		dst  **time.Time
	}{
		{"x-ms-file-creation-time", &p.Created},
		{"x-ms-file-last-write-time", &p.LastWrite},
		{"x-ms-file-change-time", &p.Change},
	} {
		t, ok, err := parseSMBTime(h, f.name, kw...)
		if err != nil {
			return p, err
		}
		if !ok {
			continue
		}
		switch t.Keyword {
		case "now":
			n := now.UTC()
			*f.dst = &n
		case "preserve", "source":
		default:
			tt := t.Time
			*f.dst = &tt
		}
	}
	if v := h.Get("x-ms-file-permission"); len(v) > maxInlinePerm {
		return p, storagehttp.NewError(http.StatusBadRequest, "FileInvalidPermission",
			"The permission is too long: use a permission key for more than 8 KiB.",
			Detail{Name: "HeaderName", Value: "x-ms-file-permission"})
	}
	if f := h.Get("x-ms-file-permission-format"); f != "" && !strings.EqualFold(f, "sddl") && !strings.EqualFold(f, "binary") {
		return p, storagehttp.InvalidHeader("x-ms-file-permission-format", f)
	}
	return p, nil
}

// copyFromSource reads which SMB properties Copy File takes from the
// source (header value "source", any case) and the permission copy mode:
// "source" copies the source's permission; "override" needs
// x-ms-file-permission or x-ms-file-permission-key.
func copyFromSource(h http.Header) (fs.CopyFromSource, error) {
	is := func(name string) bool { return strings.EqualFold(strings.TrimSpace(h.Get(name)), "source") }
	from := fs.CopyFromSource{
		Attributes: is("x-ms-file-attributes"),
		Created:    is("x-ms-file-creation-time"),
		LastWrite:  is("x-ms-file-last-write-time"),
		Change:     is("x-ms-file-change-time"),
	}
	switch m := h.Get("x-ms-file-permission-copy-mode"); {
	case m == "":
	case strings.EqualFold(m, "source"):
		from.Permission = true
	case strings.EqualFold(m, "override"):
		if h.Get("x-ms-file-permission") == "" && h.Get("x-ms-file-permission-key") == "" {
			return from, storagehttp.MissingHeader("x-ms-file-permission")
		}
	default:
		return from, storagehttp.InvalidHeader("x-ms-file-permission-copy-mode", m)
	}
	return from, nil
}

// setCopy writes the record of the last Copy File into a file.
func setCopy(h http.Header, c *fs.CopyInfo) {
	if c == nil {
		return
	}
	h.Set("x-ms-copy-id", c.ID)
	h.Set("x-ms-copy-source", c.Source)
	h.Set("x-ms-copy-status", c.Status)
	h.Set("x-ms-copy-progress", c.Progress)
	h.Set("x-ms-copy-completion-time", c.Completed.UTC().Format(http.TimeFormat))
}

// contentHeaderNames are the request headers of the content-header group.
var contentHeaderNames = []string{"x-ms-content-type", "x-ms-content-encoding", "x-ms-content-language",
	"x-ms-content-disposition", "x-ms-cache-control", "x-ms-content-md5"}

// parseContent reads the content-header group; any reports whether one
// of its headers was present.
func parseContent(h http.Header) (c fs.ContentHeaders, any bool, err error) {
	for _, n := range contentHeaderNames {
		if _, ok := h[http.CanonicalHeaderKey(n)]; ok {
			any = true
		}
	}
	c = fs.ContentHeaders{
		Type:         h.Get("x-ms-content-type"),
		Encoding:     h.Get("x-ms-content-encoding"),
		Language:     h.Get("x-ms-content-language"),
		Disposition:  h.Get("x-ms-content-disposition"),
		CacheControl: h.Get("x-ms-cache-control"),
	}
	if v := h.Get("x-ms-content-md5"); v != "" {
		c.MD5, err = parseBase64("x-ms-content-md5", v)
	}
	return c, any, err
}

// setContent writes the stored content headers of a file (Get File,
// Get File Properties). Without a stored type no Content-Type is sent,
// and net/http is stopped from sniffing one.
func setContent(h http.Header, c fs.ContentHeaders, full bool) {
	if c.Type != "" {
		h.Set("Content-Type", c.Type)
	} else {
		h["Content-Type"] = nil
	}
	for _, kv := range [][2]string{{"Content-Encoding", c.Encoding}, {"Content-Language", c.Language},
		{"Content-Disposition", c.Disposition}, {"Cache-Control", c.CacheControl}} {
		if kv[1] != "" {
			h.Set(kv[0], kv[1])
		}
	}
	if len(c.MD5) > 0 {
		sum := base64.StdEncoding.EncodeToString(c.MD5)
		if full {
			h.Set("Content-MD5", sum)
		} else {
			h.Set("x-ms-content-md5", sum)
		}
	}
}

// setLease writes the lease headers of Get File / Get File Properties.
func setLease(h http.Header, l locks.LeaseInfo) {
	switch l.State {
	case locks.LeaseLeased:
		put(h, hLeaseStatus, "locked")
		put(h, hLeaseState, "leased")
		put(h, hLeaseDuration, "infinite")
	case locks.LeaseBroken:
		put(h, hLeaseStatus, "unlocked")
		put(h, hLeaseState, "broken")
	default:
		put(h, hLeaseStatus, "unlocked")
		put(h, hLeaseState, "available")
	}
}

// leaseHeader reads an optional lease-id header and checks it is a GUID.
func leaseHeader(h http.Header, name string) (string, error) {
	v := h.Get(name)
	if v == "" {
		return "", nil
	}
	if _, err := uuid.Parse(v); err != nil || len(v) != 36 {
		return "", storagehttp.InvalidHeader(name, v)
	}
	return v, nil
}
