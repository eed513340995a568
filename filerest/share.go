package filerest

import (
	"encoding/xml"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/storagehttp"
)

// serviceEndpoint is the account URL as the client addressed it.
func serviceEndpoint(r *http.Request, account string) string {
	return storagehttp.ServiceEndpoint(r, "file", account)
}

// listParams reads prefix, marker and maxresults (≤ 0 → 400, above 5000
// capped).
func listParams(c *call) (fs.ListRequest, error) {
	req := fs.ListRequest{Prefix: c.q.Get("prefix"), Marker: c.q.Get("marker"), MaxResults: maxListResults}
	if v, ok := c.q["maxresults"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil {
			return req, storagehttp.InvalidQuery("maxresults", v[0], "not an integer")
		}
		if n <= 0 {
			return req, storagehttp.OutOfRangeQuery("maxresults", v[0], 1, maxListResults)
		}
		req.MaxResults = min(n, maxListResults)
	}
	return req, nil
}

// includeSet parses a comma-joined include list against allowed values
// (case-insensitive); unknown values → 400 InvalidQueryParameterValue.
func includeSet(c *call, allowed ...string) (map[string]bool, error) {
	out := map[string]bool{}
	v := c.q.Get("include")
	if v == "" {
		return out, nil
	}
	for _, tok := range strings.Split(v, ",") {
		tok = strings.TrimSpace(tok)
		ok := false
		for _, a := range allowed {
			if strings.EqualFold(tok, a) {
				out[strings.ToLower(a)] = true
				ok = true
			}
		}
		if !ok {
			return nil, storagehttp.InvalidQuery("include", v, "unknown value "+tok)
		}
	}
	return out, nil
}

func (s *Server) listShares(w http.ResponseWriter, c *call) error {
	req, err := listParams(c)
	if err != nil {
		return err
	}
	// With "snapshots" each share's snapshots come before it, oldest
	// first; with "deleted" the soft-deleted shares of the page's name
	// range follow the live share of their name.
	inc, err := includeSet(c, "metadata", "snapshots", "deleted")
	if err != nil {
		return err
	}
	res, err := s.fs.ListShares(c.r.Context(), req)
	if err != nil {
		return err
	}
	out := listSharesXML{ServiceEndpoint: serviceEndpoint(c.r, s.account), NextMarker: res.NextMarker}
	if _, ok := c.q["prefix"]; ok {
		out.Prefix = &req.Prefix
	}
	if _, ok := c.q["marker"]; ok {
		out.Marker = &req.Marker
	}
	if _, ok := c.q["maxresults"]; ok {
		out.MaxResults = &req.MaxResults
	}
	shares := res.Shares
	if inc["deleted"] {
		deleted, err := s.fs.ListDeletedShares(c.r.Context())
		if err != nil {
			return err
		}
		shares = mergeDeleted(shares, deleted, req, res.NextMarker)
	}
	for _, base := range shares {
		all := []fs.Attr{base}
		if base.Deleted != nil {
			out.Shares = append(out.Shares, s.shareEntry(base, inc["metadata"]))
			continue
		}
		if inc["snapshots"] {
			snaps, err := s.fs.ShareSnapshots(c.r.Context(), base.Name)
			if err != nil && !errors.Is(err, fs.ErrShareNotFound) {
				return err
			}
			all = append(snaps, base)
		}
		for _, a := range all {
			out.Shares = append(out.Shares, s.shareEntry(a, inc["metadata"]))
		}
	}
	return storagehttp.WriteXML(w, http.StatusOK, out)
}

// shareEntry is one share (or share snapshot) of List Shares.
func (s *Server) shareEntry(a fs.Attr, withMetadata bool) shareXML {
	sx := shareXML{Snapshot: a.Snapshot, Name: a.Name, Properties: sharePropsXML{
		LastModified: a.Modified.UTC().Format(http.TimeFormat), Etag: a.ETag, Quota: a.QuotaGiB,
		AccessTier: accessTier(a), EnabledProtocols: "SMB",
	}}
	if d := a.Deleted; d != nil {
		sx.Deleted, sx.Version = true, d.Version
		sx.Properties.DeletedTime = d.Deleted.UTC().Format(http.TimeFormat)
		days := int((d.Expires.Sub(s.now()) + 24*time.Hour - 1) / (24 * time.Hour))
		sx.Properties.RemainingRetentionDays = &days
	}
	lh := http.Header{}
	setShareLease(lh, a.ShareLease)
	sx.Properties.LeaseStatus, sx.Properties.LeaseState = lh.Get("x-ms-lease-status"), lh.Get("x-ms-lease-state")
	sx.Properties.LeaseDuration = lh.Get("x-ms-lease-duration")
	sx.Properties.Extra = sharePropElems(a.ShareProps)
	if withMetadata {
		sx.Metadata = storagehttp.NewMetadataXML(nonNil(a.Metadata))
	}
	return sx
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// quotaHeader reads x-ms-share-quota: 1..102400 GiB. A negative value
// is no valid quota at all: 400 InvalidHeaderValue.
func quotaHeader(h http.Header) (int, bool, error) {
	if v := h.Get("x-ms-share-quota"); strings.HasPrefix(v, "-") {
		return 0, false, storagehttp.InvalidHeader("x-ms-share-quota", v)
	}
	n, ok, err := parseSizeHeader(h, "x-ms-share-quota", maxShareQuotaGiB)
	if err != nil {
		return 0, false, err
	}
	if ok && n == 0 {
		return 0, false, storagehttp.OutOfRange("x-ms-share-quota", "0")
	}
	return int(n), ok, nil
}

func (s *Server) createShare(w http.ResponseWriter, c *call) error {
	md, err := storagehttp.ParseMetadata(c.r.Header)
	if err != nil {
		return err
	}
	quota, _, err := quotaHeader(c.r.Header)
	if err != nil {
		return err
	}
	if err := smbOnly(c.r.Header); err != nil {
		return err
	}
	tier, _, err := accessTierHeader(c.r.Header)
	if err != nil {
		return err
	}
	props, err := parseShareProps(c.r.Header)
	if err != nil {
		return err
	}
	a, err := s.fs.CreateShare(c.r.Context(), fs.ShareRequest{Name: c.path.Share, QuotaGiB: quota, AccessTier: tier, Metadata: md, Props: props})
	if err != nil {
		return err
	}
	setCommon(w.Header(), a)
	w.WriteHeader(http.StatusCreated)
	return nil
}

func (s *Server) getShareProperties(w http.ResponseWriter, c *call) error {
	lease, err := leaseHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	var a fs.Attr
	if snap := c.q.Get("sharesnapshot"); snap != "" {
		a, err = s.fs.SnapshotStat(c.r.Context(), snap, c.path.Share)
	} else {
		a, err = s.fs.GetShareLeased(c.r.Context(), c.path.Share, lease)
	}
	if err != nil {
		return err
	}
	h := w.Header()
	setCommon(h, a)
	storagehttp.SetMetadataHeaders(h, a.Metadata)
	if c.route.comp == "" {
		h.Set("x-ms-share-quota", strconv.Itoa(a.QuotaGiB))
		h.Set("x-ms-access-tier", accessTier(a))
		h.Set("x-ms-enabled-protocols", "SMB")
		setShareLease(h, a.ShareLease)
		setShareProps(h, a.ShareProps)
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) setShareProperties(w http.ResponseWriter, c *call) error {
	quota, ok, err := quotaHeader(c.r.Header)
	if err != nil {
		return err
	}
	if v := c.r.Header.Get("x-ms-root-squash"); v != "" {
		return smbOnly(c.r.Header)
	}
	var p fs.ShareProperties
	if p.LeaseID, err = leaseHeader(c.r.Header, "x-ms-lease-id"); err != nil {
		return err
	}
	if ok {
		p.QuotaGiB = &quota
	}
	tier, ok, err := accessTierHeader(c.r.Header)
	if err != nil {
		return err
	}
	if ok {
		p.AccessTier = &tier
	}
	if p.Props, err = parseShareProps(c.r.Header); err != nil {
		return err
	}
	a, err := s.fs.SetShareProperties(c.r.Context(), c.path.Share, p)
	if err != nil {
		return err
	}
	setCommon(w.Header(), a)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) setShareMetadata(w http.ResponseWriter, c *call) error {
	md, err := storagehttp.ParseMetadata(c.r.Header)
	if err != nil {
		return err
	}
	lease, err := leaseHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	a, err := s.fs.SetShareMetadata(c.r.Context(), c.path.Share, lease, md)
	if err != nil {
		return err
	}
	setCommon(w.Header(), a)
	w.WriteHeader(http.StatusOK)
	return nil
}

// shareStatsXML is the body of Get Share Stats.
type shareStatsXML struct {
	XMLName    xml.Name `xml:"ShareStats"`
	UsageBytes int64    `xml:"ShareUsageBytes"`
}

func (s *Server) getShareStats(w http.ResponseWriter, c *call) error {
	st, err := s.fs.ShareStats(c.r.Context(), c.path.Share)
	if err != nil {
		return err
	}
	a, err := s.fs.GetShare(c.r.Context(), c.path.Share)
	if err != nil {
		return err
	}
	setCommon(w.Header(), a)
	return storagehttp.WriteXML(w, http.StatusOK, shareStatsXML{UsageBytes: st.UsageBytes})
}

// accessTiers are the x-ms-access-tier values of a share.
var accessTiers = []string{"TransactionOptimized", "Hot", "Cool", "Premium"}

// accessTierHeader reads x-ms-access-tier, canonicalised; an unknown tier
// is 400 InvalidHeaderValue.
func accessTierHeader(h http.Header) (string, bool, error) {
	v := h.Get("x-ms-access-tier")
	if v == "" {
		return "", false, nil
	}
	for _, t := range accessTiers {
		if strings.EqualFold(v, t) {
			return t, true, nil
		}
	}
	return "", false, storagehttp.InvalidHeader("x-ms-access-tier", v)
}

// accessTier is a share's tier as reported.
func accessTier(a fs.Attr) string {
	if a.AccessTier == "" {
		return accessTiers[0]
	}
	return a.AccessTier
}

func (s *Server) deleteShare(w http.ResponseWriter, c *call) error {
	v := c.r.Header.Get("x-ms-delete-snapshots")
	if v != "" && !strings.EqualFold(v, "include") && !strings.EqualFold(v, "include-leased") {
		return storagehttp.InvalidHeader("x-ms-delete-snapshots", v)
	}
	lease, err := leaseHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	if snap := c.q.Get("sharesnapshot"); snap != "" {
		if v != "" { // deleting one snapshot deletes no others
			return storagehttp.InvalidHeader("x-ms-delete-snapshots", v)
		}
		if err := s.fs.DeleteShareSnapshot(c.r.Context(), c.path.Share, snap, lease); err != nil {
			return err
		}
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	err = s.fs.RemoveShare(c.r.Context(), fs.DeleteShareRequest{Name: c.path.Share, LeaseID: lease,
		IncludeSnapshots: v != "", IncludeLeased: strings.EqualFold(v, "include-leased"), Retain: s.retain})
	switch {
	case errors.Is(err, fs.ErrShareNotFound) && s.deleted.beingDeleted(c.path.Share, s.now()):
		// Deleted moments ago: Azure still accepts the delete.
	case err != nil:
		return err
	default:
		s.deleted.mark(c.path.Share, s.now())
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// createShareSnapshot answers Snapshot Share (PUT ?restype=share&comp=snapshot):
// 201 with x-ms-snapshot; x-ms-meta-* replace the share's metadata in the
// snapshot.
func (s *Server) createShareSnapshot(w http.ResponseWriter, c *call) error {
	md, err := storagehttp.ParseMetadata(c.r.Header)
	if err != nil {
		return err
	}
	if len(md) == 0 {
		md = nil
	}
	name, a, err := s.fs.CreateShareSnapshot(c.r.Context(), c.path.Share, md)
	if err != nil {
		return err
	}
	setCommon(w.Header(), a)
	w.Header().Set("x-ms-snapshot", name)
	w.WriteHeader(http.StatusCreated)
	return nil
}

// smbOnly refuses NFS shares, the one answer for them: blobshare serves
// SMB-semantics shares only (x-ms-enabled-protocols other than SMB, or
// the NFS-only x-ms-root-squash) → 400 InvalidHeaderValue naming the
// header, with the reason.
func smbOnly(h http.Header) error {
	for _, name := range []string{"x-ms-enabled-protocols", "x-ms-root-squash"} {
		v := h.Get(name)
		if v == "" || name == "x-ms-enabled-protocols" && strings.EqualFold(v, "SMB") {
			continue
		}
		return storagehttp.NewError(http.StatusBadRequest, CodeInvalidHeaderValue,
			"The value for one of the HTTP headers is not in the correct format.",
			Detail{Name: "HeaderName", Value: name}, Detail{Name: "HeaderValue", Value: v},
			Detail{Name: "Reason", Value: "NFS shares are not supported: blobshare serves SMB shares only."})
	}
	return nil
}

// mergeDeleted adds to a page of live shares the soft-deleted ones of its
// name range (prefix, from the marker up to the next marker), each after
// the live share of its name.
func mergeDeleted(live, deleted []fs.Attr, req fs.ListRequest, next string) []fs.Attr {
	var in []fs.Attr
	for _, d := range deleted {
		if strings.HasPrefix(d.Name, req.Prefix) && d.Name >= req.Marker && (next == "" || d.Name < next) {
			in = append(in, d)
		}
	}
	out := append(append([]fs.Attr(nil), live...), in...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// restoreShare answers Restore Share (PUT ?restype=share&comp=undelete):
// the soft-deleted share x-ms-deleted-share-name of x-ms-deleted-share-version
// comes back under the URL's name.
func (s *Server) restoreShare(w http.ResponseWriter, c *call) error {
	name := c.r.Header.Get("x-ms-deleted-share-name")
	if name == "" {
		return storagehttp.MissingHeader("x-ms-deleted-share-name")
	}
	version := c.r.Header.Get("x-ms-deleted-share-version")
	if version == "" {
		return storagehttp.MissingHeader("x-ms-deleted-share-version")
	}
	a, err := s.fs.RestoreShare(c.r.Context(), c.path.Share, name, version)
	if err != nil {
		return err
	}
	setCommon(w.Header(), a)
	w.WriteHeader(http.StatusCreated)
	return nil
}
