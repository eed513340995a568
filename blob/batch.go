package blob

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/blobshare/blobshare/storagehttp"
)

// submitBatch is Blob Batch (POST ?comp=batch on the account, or
// ?restype=container&comp=batch on a container): up to 256 sub-requests,
// all Delete Blob or all Set Blob Tier, each authorized on its own (its
// Shared Key signature or SAS) and run through the whole service as if it
// had come alone; the answer is 202 with their responses in order
// (storagehttp.WriteBatch). A container's batch may only address blobs
// of that container. A mix of kinds, or any other operation, refuses the
// whole batch with 400 InvalidInput.
func (s *Server) submitBatch(w http.ResponseWriter, c *call) error {
	subs, err := storagehttp.ReadBatch(c.r)
	if err != nil {
		return err
	}
	var kind string
	for i, part := range subs {
		sub := part.Request
		k := batchKind(sub)
		if k == "" || kind != "" && k != kind {
			return storagehttp.NewError(http.StatusBadRequest, storagehttp.CodeInvalidInput,
				"A batch holds only Delete Blob or only Set Blob Tier sub-requests.",
				storagehttp.Detail{Name: "SubrequestIndex", Value: strconv.Itoa(i)})
		}
		kind = k
		p, err := parsePath(storagehttp.RequestHost(sub), sub.URL.EscapedPath())
		if err != nil || p.scope != scopeBlob || p.account != s.account ||
			c.path.scope == scopeContainer && p.container != c.path.container {
			return storagehttp.NewError(http.StatusBadRequest, storagehttp.CodeInvalidURI,
				"A batch sub-request must address a blob of this account (of the batch's container, for a container batch).",
				storagehttp.Detail{Name: "SubrequestIndex", Value: strconv.Itoa(i)})
		}
	}
	return storagehttp.WriteBatch(w, s.handler, subs)
}

// batchKind names the operation a sub-request is, among those a batch
// may hold ("" for any other).
func batchKind(r *http.Request) string {
	comp := r.URL.Query().Get("comp")
	switch {
	case r.Method == http.MethodDelete && comp == "":
		return "delete"
	case r.Method == http.MethodPut && strings.EqualFold(comp, "tier"):
		return "tier"
	}
	return ""
}
