package storagehttp

import (
	"net/http"

	"github.com/blobshare/blobshare/acl"
)

// DecodeSignedIdentifiers reads the body of Set Share, Container, Queue
// or Table ACL (at most max bytes; an empty body is no policy): each
// policy as sent, in document order. Validation is the service's
// (acl.Validate).
func DecodeSignedIdentifiers(r *http.Request, max int64) ([]acl.SignedIdentifier, error) {
	var in SignedIdentifiersXML
	if r.ContentLength != 0 {
		if err := DecodeXMLBody(r, &in, max); err != nil {
			return nil, err
		}
	}
	ids := make([]acl.SignedIdentifier, 0, len(in.Identifiers))
	for _, x := range in.Identifiers {
		id := acl.SignedIdentifier{ID: x.ID}
		if p := x.AccessPolicy; p != nil {
			id.Start, id.Expiry, id.Permission = p.Start, p.Expiry, p.Permission
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// SignedIdentifiersDoc is the document of Get Share, Container, Queue or
// Table ACL: every policy with its AccessPolicy element, empty fields
// left out.
func SignedIdentifiersDoc(ids []acl.SignedIdentifier) SignedIdentifiersXML {
	out := SignedIdentifiersXML{Identifiers: make([]SignedIdentifierXML, 0, len(ids))}
	for _, id := range ids {
		out.Identifiers = append(out.Identifiers, SignedIdentifierXML{ID: id.ID,
			AccessPolicy: &AccessPolicyXML{Start: id.Start, Expiry: id.Expiry, Permission: id.Permission}})
	}
	return out
}

// StoredAccessPolicy is the AccessPolicy a SAS naming id gets, or the
// refusal of a policy whose stored time does not parse (403, naming the
// field; word is "unreadable" or "invalid", the service's).
func StoredAccessPolicy(id acl.SignedIdentifier, word string) (AccessPolicy, error) {
	p, err := id.Policy()
	if err != nil {
		field := "start"
		if ae, ok := err.(*acl.Error); ok && ae.Problem == acl.BadExpiry {
			field = "expiry"
		}
		return AccessPolicy{}, AuthFailed("The stored access policy " + id.ID + " has an " + word + " " + field + " time.")
	}
	return AccessPolicy{Start: p.Start, Expiry: p.Expiry, Permission: p.Permission}, nil
}
