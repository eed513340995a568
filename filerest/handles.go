package filerest

import (
	"net/http"
	"strconv"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"

	"github.com/blobshare/blobshare/storagehttp"
)

// accessRights maps a handle's access to List Handles' AccessRight values.
func accessRights(a locks.Access) []string {
	var out []string
	if a&(locks.AccessRead|locks.AccessExecute) != 0 {
		out = append(out, "Read")
	}
	if a&(locks.AccessWrite|locks.AccessAppend) != 0 {
		out = append(out, "Write")
	}
	if a&locks.AccessDelete != 0 {
		out = append(out, "Delete")
	}
	return out
}

// handleMarker parses the opaque paging marker: the last handle id sent.
func handleMarker(c *call) (locks.HandleID, error) {
	v := c.q.Get("marker")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, storagehttp.InvalidQuery("marker", v, "not a marker this service issued")
	}
	return locks.HandleID(n), nil
}

func (s *Server) listHandles(w http.ResponseWriter, c *call) error {
	recursive, err := parseBoolHeader(c.r.Header, "x-ms-recursive")
	if err != nil {
		return err
	}
	req, err := listParams(c)
	if err != nil {
		return err
	}
	after, err := handleMarker(c)
	if err != nil {
		return err
	}
	hs, err := s.fs.ListHandles(c.r.Context(), c.fsPath(), recursive)
	if err != nil {
		return err
	}
	out := listHandlesXML{}
	if _, ok := c.q["marker"]; ok {
		out.Marker = &req.Marker
	}
	if _, ok := c.q["maxresults"]; ok {
		out.MaxResults = &req.MaxResults
	}
	for _, h := range hs {
		if h.ID <= after {
			continue
		}
		if len(out.Handles) == req.MaxResults {
			out.NextMarker = strconv.FormatUint(uint64(out.lastID), 10)
			break
		}
		out.lastID = h.ID
		out.Handles = append(out.Handles, handleToXML(h))
	}
	return storagehttp.WriteXML(w, http.StatusOK, out)
}

func handleToXML(h fs.HandleInfo) handleXML {
	ip := h.ClientIP
	if ip == "" {
		ip = "127.0.0.1"
	}
	return handleXML{
		HandleID:     strconv.FormatUint(uint64(h.ID), 10),
		Path:         nameText(h.Path),
		FileID:       strconv.FormatUint(uint64(h.File), 10),
		ParentID:     strconv.FormatUint(uint64(h.Parent), 10),
		SessionID:    strconv.FormatUint(h.SessionID, 10),
		ClientIP:     ip,
		ClientName:   h.ClientName,
		OpenTime:     h.OpenTime.UTC().Format(http.TimeFormat),
		AccessRights: accessRights(h.Access),
	}
}

func (s *Server) forceCloseHandles(w http.ResponseWriter, c *call) error {
	h := c.r.Header
	idv := h.Get("x-ms-handle-id")
	var id locks.HandleID
	all := idv == "*"
	if !all {
		n, err := strconv.ParseUint(idv, 10, 64)
		if err != nil {
			return storagehttp.InvalidHeader("x-ms-handle-id", idv)
		}
		id = locks.HandleID(n)
	}
	recursive, err := parseBoolHeader(h, "x-ms-recursive")
	if err != nil {
		return err
	}
	if _, present := h["X-Ms-Recursive"]; present && len(c.path.Parts) > 0 {
		a, _, err := s.fs.Stat(c.r.Context(), c.fsPath(), "")
		if err != nil {
			return err
		}
		if a.Kind == fs.KindFile {
			return storagehttp.InvalidHeader("x-ms-recursive", h.Get("x-ms-recursive"))
		}
	}
	n, err := s.fs.ForceCloseHandles(c.r.Context(), c.fsPath(), id, all, recursive)
	if err != nil {
		return err
	}
	out := w.Header()
	out.Set("x-ms-number-of-handles-closed", strconv.Itoa(n))
	out.Set("x-ms-number-of-handles-failed", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}
