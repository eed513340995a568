package filerest

import (
	"errors"
	"net/http"

	"github.com/blobshare/blobshare/acl"
	"github.com/blobshare/blobshare/storagehttp"
)

func (s *Server) getShareACL(w http.ResponseWriter, c *call) error {
	lease, err := leaseHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	ids, a, err := s.fs.ShareACL(c.r.Context(), c.path.Share, lease)
	if err != nil {
		return err
	}
	setCommon(w.Header(), a)
	return storagehttp.WriteXML(w, http.StatusOK, storagehttp.SignedIdentifiersDoc(ids))
}

// setShareACL answers Set Share ACL; fs checks the policies
// (acl.ShareRules) and this maps its refusal (shareACLError).
func (s *Server) setShareACL(w http.ResponseWriter, c *call) error {
	lease, err := leaseHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	ids, err := storagehttp.DecodeSignedIdentifiers(c.r, maxSmallBody)
	if err != nil {
		return err
	}
	a, err := s.fs.SetShareACL(c.r.Context(), c.path.Share, lease, ids)
	var ae *acl.Error
	if errors.As(err, &ae) {
		return shareACLError(ae)
	}
	if err != nil {
		return err
	}
	setCommon(w.Header(), a)
	w.WriteHeader(http.StatusOK)
	return nil
}

// shareACLError is Azure Files' answer to a Set Share ACL document it
// refuses: more than five policies, or an Id longer than 64 characters,
// is a document it cannot read (the azfile live test
// TestShareSetPermissionsNegative); a bad value names its element.
func shareACLError(e *acl.Error) error {
	switch e.Problem {
	case acl.TooMany:
		return storagehttp.NewError(http.StatusBadRequest, CodeInvalidXMLDocument,
			"XML specified is not syntactically valid.", Detail{Name: "Reason", Value: "more than 5 signed identifiers"})
	case acl.IDTooLong:
		return storagehttp.NewError(http.StatusBadRequest, CodeInvalidXMLDocument,
			"XML specified is not syntactically valid.", Detail{Name: "Reason", Value: "a signed identifier longer than 64 characters"})
	case acl.BadStart:
		return invalidXMLValue("Start", e.Value)
	case acl.BadExpiry:
		return invalidXMLValue("Expiry", e.Value)
	case acl.BadPermission:
		return invalidXMLValue("Permission", e.Value)
	}
	return invalidXMLValue("Id", e.Value)
}

// invalidXMLValue is 400 InvalidXmlNodeValue naming the element.
func invalidXMLValue(node, value string) error {
	return storagehttp.NewError(http.StatusBadRequest, "InvalidXmlNodeValue",
		"The value for one of the XML nodes is not in the correct format.",
		Detail{Name: "XmlNodeName", Value: node}, Detail{Name: "XmlNodeValue", Value: value})
}
