package filerest

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/lease"
	"github.com/blobshare/blobshare/storagehttp"
)

// leaseShare answers Lease Share (PUT ?restype=share&comp=lease): acquire
// (x-ms-lease-duration 15..60 or -1), renew, change, release and break
// (x-ms-lease-break-period 0..60). The rules are lease.Decide's, at fs's
// clock.
func (s *Server) leaseShare(w http.ResponseWriter, c *call) error {
	h := c.r.Header
	var req lease.Request
	var err error
	if req.ID, err = leaseHeader(h, "x-ms-lease-id"); err != nil {
		return err
	}
	if req.ProposedID, err = leaseHeader(h, "x-ms-proposed-lease-id"); err != nil {
		return err
	}
	status := http.StatusOK
	req.Action = lease.Action(strings.ToLower(h.Get("x-ms-lease-action")))
	switch req.Action {
	case lease.Acquire:
		status = http.StatusCreated
		d := h.Get("x-ms-lease-duration")
		if d == "" {
			return storagehttp.MissingHeader("x-ms-lease-duration")
		}
		n, err := strconv.Atoi(d)
		if err != nil || n != lease.Infinite && (n < lease.MinSeconds || n > lease.MaxSeconds) {
			return storagehttp.InvalidHeader("x-ms-lease-duration", d)
		}
		req.Duration = n
	case lease.Renew, lease.Release:
	case lease.Change:
		if req.ProposedID == "" {
			return storagehttp.MissingHeader("x-ms-proposed-lease-id")
		}
	case lease.Break:
		status = http.StatusAccepted
		if v := h.Get("x-ms-lease-break-period"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > lease.MaxBreakPeriod {
				return storagehttp.InvalidHeader("x-ms-lease-break-period", v)
			}
			req.BreakPeriod = &n
		}
	}
	if req.Action != lease.Acquire {
		if d := h.Get("x-ms-lease-duration"); d != "" {
			return storagehttp.InvalidHeader("x-ms-lease-duration", d)
		}
	}
	if req.ID == "" && (req.Action == lease.Renew || req.Action == lease.Change || req.Action == lease.Release) {
		return storagehttp.MissingHeader("x-ms-lease-id")
	}
	res, a, err := s.fs.LeaseShare(c.r.Context(), c.path.Share, c.q.Get("sharesnapshot"), req)
	if err != nil {
		return err
	}
	out := w.Header()
	setCommon(out, a)
	switch req.Action {
	case lease.Break:
		out.Set("x-ms-lease-time", strconv.Itoa(res.Time))
	case lease.Release:
	default:
		out.Set("x-ms-lease-id", res.ID)
	}
	w.WriteHeader(status)
	return nil
}

// setShareLease writes a share's lease status headers.
func setShareLease(h http.Header, a fs.ShareLeaseInfo) {
	st := a.State
	h.Set("x-ms-lease-state", string(st))
	if st == lease.Leased || st == lease.Breaking {
		h.Set("x-ms-lease-status", "locked")
	} else {
		h.Set("x-ms-lease-status", "unlocked")
	}
	if st == lease.Leased {
		if a.Infinite {
			h.Set("x-ms-lease-duration", "infinite")
		} else {
			h.Set("x-ms-lease-duration", "fixed")
		}
	}
}
