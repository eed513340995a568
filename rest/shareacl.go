package rest

import (
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/storagehttp"
)

// sharePolicyLetters are the permissions a share's stored access policy
// may grant, in the order Azure writes them.
const sharePolicyLetters = "rcwdl"

func (s *Server) getShareACL(w http.ResponseWriter, c *call) error {
	lease, err := leaseHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	ids, a, err := s.fs.ShareACL(c.r.Context(), c.path.Share, lease)
	if err != nil {
		return err
	}
	out := storagehttp.SignedIdentifiersXML{Identifiers: []storagehttp.SignedIdentifierXML{}}
	for _, id := range ids {
		p := &storagehttp.AccessPolicyXML{Permission: id.Permission}
		if !id.Start.IsZero() {
			p.Start = storagehttp.FormatTime7(id.Start)
		}
		if !id.Expiry.IsZero() {
			p.Expiry = storagehttp.FormatTime7(id.Expiry)
		}
		out.Identifiers = append(out.Identifiers, storagehttp.SignedIdentifierXML{ID: id.ID, AccessPolicy: p})
	}
	setCommon(w.Header(), a)
	return storagehttp.WriteXML(w, http.StatusOK, out)
}

func (s *Server) setShareACL(w http.ResponseWriter, c *call) error {
	lease, err := leaseHeader(c.r.Header, "x-ms-lease-id")
	if err != nil {
		return err
	}
	var body storagehttp.SignedIdentifiersXML
	if c.r.ContentLength != 0 {
		if err := storagehttp.DecodeXMLBody(c.r, &body, maxSmallBody); err != nil {
			return err
		}
	}
	if len(body.Identifiers) > fs.MaxSignedIdentifiers {
		return storagehttp.NewError(http.StatusBadRequest, CodeInvalidXMLDocument,
			"XML specified is not syntactically valid.", Detail{Name: "Reason", Value: "more than 5 signed identifiers"})
	}
	var ids []fs.SignedIdentifier
	seen := map[string]bool{}
	for _, it := range body.Identifiers {
		// "The signed identifier ... can be up to 64 characters in
		// length"; Azure answers a longer one as a document it cannot
		// read (the azfile live test TestShareSetPermissionsNegative).
		if utf8.RuneCountInString(it.ID) > 64 {
			return storagehttp.NewError(http.StatusBadRequest, CodeInvalidXMLDocument,
				"XML specified is not syntactically valid.", Detail{Name: "Reason", Value: "a signed identifier longer than 64 characters"})
		}
		if it.ID == "" || seen[it.ID] {
			return invalidXMLValue("Id", it.ID)
		}
		seen[it.ID] = true
		id := fs.SignedIdentifier{ID: it.ID}
		if p := it.AccessPolicy; p != nil {
			var err error
			if id.Start, err = policyTime("Start", p.Start); err != nil {
				return err
			}
			if id.Expiry, err = policyTime("Expiry", p.Expiry); err != nil {
				return err
			}
			if id.Permission, err = policyPermission(p.Permission); err != nil {
				return err
			}
		}
		ids = append(ids, id)
	}
	a, err := s.fs.SetShareACL(c.r.Context(), c.path.Share, lease, ids)
	if err != nil {
		return err
	}
	setCommon(w.Header(), a)
	w.WriteHeader(http.StatusOK)
	return nil
}

// invalidXMLValue is 400 InvalidXmlNodeValue naming the element.
func invalidXMLValue(node, value string) error {
	return storagehttp.NewError(http.StatusBadRequest, "InvalidXmlNodeValue",
		"The value for one of the XML nodes is not in the correct format.",
		Detail{Name: "XmlNodeName", Value: node}, Detail{Name: "XmlNodeValue", Value: value})
}

// policyTime parses an ISO 8601 policy time ("" is none).
func policyTime(node, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, invalidXMLValue(node, v)
}

// policyPermission canonicalises a policy's permission letters to
// Azure's order; an unknown or repeated letter is 400.
func policyPermission(v string) (string, error) {
	var have [len(sharePolicyLetters)]bool
	for _, r := range v {
		i := strings.IndexRune(sharePolicyLetters, r)
		if i < 0 || have[i] {
			return "", invalidXMLValue("Permission", v)
		}
		have[i] = true
	}
	var b strings.Builder
	for i, ok := range have {
		if ok {
			b.WriteByte(sharePolicyLetters[i])
		}
	}
	return b.String(), nil
}
