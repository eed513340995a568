package blob

import (
	"context"
	"fmt"
	"net/http"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/storagehttp"
)

// incrementalCopy is Incremental Copy Blob (comp=incrementalcopy):
// x-ms-copy-source names a page blob snapshot, which "must either be
// public or must be authorized via a shared access signature" (its own
// SAS, or a public container: authorizeSource, whatever the request's
// credentials). The answer, 202 with x-ms-copy-status: pending, goes out
// once the copy is recorded; the request's handler then runs the copy
// (blobsvc.FinishIncrementalCopy) — Azure "performs [it] asynchronously
// ... and [it] must be polled for completion" — so a client polling Get
// Blob Properties sees pending, then success with
// x-ms-copy-destination-snapshot, or failed with
// x-ms-copy-status-description. The copy is the request's own work: no
// goroutine outlives the handler, and a server shutting down waits for
// it as for any request in flight.
func (s *Server) incrementalCopy(w http.ResponseWriter, c *call) error {
	src, err := s.copySource(c.r.Header)
	if err != nil {
		return err
	}
	if err := s.authorizeSource(c.r, src); err != nil {
		return err
	}
	var o blobsvc.WriteOptions
	if o.LeaseID, o.Cond, err = guards(c.r.Header); err != nil {
		return err
	}
	b, err := s.svc.StartIncrementalCopy(c.r.Context(), src, c.path.container, c.path.blob, o)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("x-ms-copy-id", b.Copy.ID)
	h.Set("x-ms-copy-status", b.Copy.StatusName())
	written(w, http.StatusAccepted, b.ETag, b.LastModified)
	// The answer first (a batch sub-response cannot be flushed: it then
	// goes with the batch, after the copy).
	_ = http.NewResponseController(w).Flush()
	// The client may be gone once answered: the copy does not depend
	// on its connection.
	ctx := context.WithoutCancel(c.r.Context())
	if err := s.svc.FinishIncrementalCopy(ctx, b); err != nil {
		s.log.Warn("blob: incremental copy failed", "request_id", storagehttp.InfoFrom(c.r.Context()).ID,
			"blob", c.path.container+"/"+c.path.blob, "copy_id", b.Copy.ID, "error", err)
	}
	return nil
}

// setCopyStateHeaders answers the state of a copy into the blob beyond
// its id, source and status: the progress and completion time of a
// finished copy, the reason a copy failed, and for an incremental copy
// blob or snapshot x-ms-incremental-copy and the
// x-ms-copy-destination-snapshot of its last successful copy ("Included
// if the blob is incremental copy blob or incremental copy snapshot, if
// x-ms-copy-status is success").
func setCopyStateHeaders(h http.Header, cp *blobsvc.CopyInfo) {
	if cp.Status != blobsvc.CopyPending {
		h.Set("x-ms-copy-progress", fmt.Sprintf("%d/%d", cp.Size, cp.Size))
		h.Set("x-ms-copy-completion-time", httpTime(cp.Completed))
	}
	if cp.StatusDescription != "" {
		h.Set("x-ms-copy-status-description", cp.StatusDescription)
	}
	if cp.Incremental {
		h.Set("x-ms-incremental-copy", "true")
		if cp.Status == "" && cp.DestinationSnapshot != "" {
			h.Set("x-ms-copy-destination-snapshot", cp.DestinationSnapshot)
		}
	}
}

// listCopyState is setCopyStateHeaders for List Blobs with include=copy.
func listCopyState(x *blobPropsXML, cp *blobsvc.CopyInfo) {
	if cp.Status != blobsvc.CopyPending {
		x.CopyProgress = fmt.Sprintf("%d/%d", cp.Size, cp.Size)
		x.CopyCompletionTime = httpTime(cp.Completed)
	}
	x.CopyStatusDescription = cp.StatusDescription
	if cp.Incremental && cp.Status == "" {
		x.DestinationSnapshot = cp.DestinationSnapshot
	}
}
