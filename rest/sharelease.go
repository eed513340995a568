package rest

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/storagehttp"
)

// leaseShare answers Lease Share (PUT ?restype=share&comp=lease): acquire
// (x-ms-lease-duration 15..60 or -1), renew, change, release and break
// (x-ms-lease-break-period 0..60). The rules are locks.DecideTimedLease's,
// at fs's clock.
func (s *Server) leaseShare(w http.ResponseWriter, c *call) error {
	h := c.r.Header
	req := locks.TimedLeaseRequest{BreakSeconds: -1}
	var err error
	if req.LeaseID, err = leaseHeader(h, "x-ms-lease-id"); err != nil {
		return err
	}
	if req.ProposedID, err = leaseHeader(h, "x-ms-proposed-lease-id"); err != nil {
		return err
	}
	status := http.StatusOK
	action := strings.ToLower(h.Get("x-ms-lease-action"))
	switch action {
	case "acquire":
		req.Action, status = locks.TimedAcquire, http.StatusCreated
		d := h.Get("x-ms-lease-duration")
		if d == "" {
			return storagehttp.MissingHeader("x-ms-lease-duration")
		}
		n, err := strconv.Atoi(d)
		if err != nil || n != locks.InfiniteLease && (n < locks.MinLeaseSeconds || n > locks.MaxLeaseSeconds) {
			return storagehttp.InvalidHeader("x-ms-lease-duration", d)
		}
		req.Seconds = n
	case "renew":
		req.Action = locks.TimedRenew
	case "change":
		req.Action = locks.TimedChange
		if req.ProposedID == "" {
			return storagehttp.MissingHeader("x-ms-proposed-lease-id")
		}
	case "release":
		req.Action = locks.TimedRelease
	case "break":
		req.Action, status = locks.TimedBreak, http.StatusAccepted
		if v := h.Get("x-ms-lease-break-period"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > locks.MaxBreakPeriodSecs {
				return storagehttp.InvalidHeader("x-ms-lease-break-period", v)
			}
			req.BreakSeconds = n
		}
	}
	if req.Action != locks.TimedAcquire {
		if d := h.Get("x-ms-lease-duration"); d != "" {
			return storagehttp.InvalidHeader("x-ms-lease-duration", d)
		}
	}
	if req.LeaseID == "" && (req.Action == locks.TimedRenew || req.Action == locks.TimedChange || req.Action == locks.TimedRelease) {
		return storagehttp.MissingHeader("x-ms-lease-id")
	}
	res, a, err := s.fs.LeaseShare(c.r.Context(), c.path.Share, c.q.Get("sharesnapshot"), req)
	if err != nil {
		return err
	}
	out := w.Header()
	setCommon(out, a)
	switch req.Action {
	case locks.TimedBreak:
		out.Set("x-ms-lease-time", strconv.Itoa(int((res.Left+999_999_999)/1_000_000_000)))
	case locks.TimedRelease:
	default:
		out.Set("x-ms-lease-id", res.ID)
	}
	w.WriteHeader(status)
	return nil
}

// setShareLease writes a share's lease status headers.
func setShareLease(h http.Header, a fs.ShareLeaseInfo) {
	st := a.State
	h.Set("x-ms-lease-state", st.String())
	if st == locks.TimedLeased || st == locks.TimedBreaking {
		h.Set("x-ms-lease-status", "locked")
	} else {
		h.Set("x-ms-lease-status", "unlocked")
	}
	if st == locks.TimedLeased {
		if a.Infinite {
			h.Set("x-ms-lease-duration", "infinite")
		} else {
			h.Set("x-ms-lease-duration", "fixed")
		}
	}
}
