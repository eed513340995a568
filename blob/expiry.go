package blob

import (
	"net/http"

	"github.com/blobshare/blobshare/storagehttp"
)

// setBlobExpiry answers Set Blob Expiry (PUT ?comp=expiry), which Azure
// has only on accounts with a hierarchical namespace ("This API is
// supported only on hierarchical namespace enabled accounts"); the
// account blobshare emulates has a flat namespace, so the answer is what
// Azure gives such an account: HierarchicalNamespaceNotEnabled (azblob's
// TestBlockBlobSetExpiryOnHnsDisabledAccount, recorded against Azure,
// checks the code; the status, 400, is the one Azure's Data Lake
// operations answer with that code on a flat account).
func (s *Server) setBlobExpiry(w http.ResponseWriter, c *call) error {
	return storagehttp.NewError(http.StatusBadRequest, "HierarchicalNamespaceNotEnabled",
		"This operation is only supported on a hierarchical namespace account.")
}
