package table

import (
	"errors"
	"net/http"
	"strings"

	"github.com/blobshare/blobshare/acl"
	"github.com/blobshare/blobshare/storagehttp"
	"github.com/blobshare/blobshare/tablesvc"
)

// authenticators is the Table service's chain: SharedKey and SharedKey
// Lite with the Table strings-to-sign, account SAS with 't' in ss, and
// table service SAS (tn, key ranges) with stored access policies from the
// table's ACL.
func (s *Server) authenticators(sg storagehttp.Signer) []storagehttp.Authenticator {
	return []storagehttp.Authenticator{
		storagehttp.SharedKey{Signer: sg, StringToSign: storagehttp.TableStringToSign, LiteStringToSign: storagehttp.TableLiteStringToSign},
		storagehttp.SAS{Signer: sg, Service: 't', ServiceStringToSign: storagehttp.TableServiceSAS, StoredPolicy: s.storedPolicy},
	}
}

// storedPolicy resolves si in the ACL of the SAS's table (tn).
func (s *Server) storedPolicy(r *http.Request, si string) (storagehttp.AccessPolicy, bool, error) {
	ids, err := s.svc.ACL(r.Context(), r.URL.Query().Get("tn"))
	if errors.Is(err, tablesvc.ErrTableNotFound) {
		return storagehttp.AccessPolicy{}, false, nil
	}
	var ie *tablesvc.InputError
	if errors.As(err, &ie) {
		return storagehttp.AccessPolicy{}, false, nil // tn is no table name: no policy
	}
	if err != nil {
		return storagehttp.AccessPolicy{}, false, err
	}
	id, ok := acl.Find(ids, si)
	if !ok {
		return storagehttp.AccessPolicy{}, false, nil
	}
	p, err := storagehttp.StoredAccessPolicy(id, "invalid")
	return p, err == nil, err
}

// sasScope is what a SAS grant allows a request: nil grant means SharedKey
// (or no auth), which allows everything.
type sasScope struct {
	g    *storagehttp.SASGrant
	keys storagehttp.TableKeyRange // a table SAS's key range
}

func scopeOf(r *http.Request) sasScope {
	g := storagehttp.InfoFrom(r.Context()).Grant.SAS
	if g == nil {
		return sasScope{}
	}
	sc := sasScope{g: g}
	if !g.Account {
		sc.keys = storagehttp.TableKeyRangeOf(r.URL.Query())
	}
	return sc
}

// checkTable: a table SAS addresses its own table only (tn, case-
// insensitively); another table is 403 AuthorizationFailure.
func (sc sasScope) checkTable(table string) error {
	if sc.g == nil || sc.g.Account {
		return nil
	}
	if !strings.EqualFold(sc.g.Resource, table) {
		return errAuthorizationFailure()
	}
	return nil
}

// checkAny: the grant has one of the permission letters any (an account
// SAS also the resource type rtype). A table SAS with tableSAS false
// cannot do the operation at all.
func (sc sasScope) checkAny(any string, rtype byte, tableSAS bool) error {
	if sc.g == nil {
		return nil
	}
	if sc.g.Account && !strings.ContainsRune(sc.g.ResourceTypes, rune(rtype)) {
		return storagehttp.NewError(http.StatusForbidden, storagehttp.CodeAuthorizationResourceType,
			"This request is not authorized to perform this operation using this resource type.")
	}
	if !sc.g.Account && !tableSAS {
		return errPermission()
	}
	if !strings.ContainsAny(sc.g.Permissions, any) {
		return errPermission()
	}
	return nil
}

// checkEntity checks an entity operation on (pk, rk) of table: the table,
// every permission letter of all (an account SAS: resource type 'o'), and
// a table SAS's key range.
func (sc sasScope) checkEntity(table, all, pk, rk string) error {
	if sc.g == nil {
		return nil
	}
	if err := sc.checkTable(table); err != nil {
		return err
	}
	for _, p := range all {
		if err := sc.checkAny(string(p), 'o', true); err != nil {
			return err
		}
	}
	if !sc.keys.Contains(pk, rk) {
		return errAuthorizationFailure()
	}
	return nil
}

// permsOf is the SAS permission an entity write needs (create-service-sas:
// "Add and Update permissions are required for upsert operations").
func permsOf(k tablesvc.OpKind) string {
	switch k {
	case tablesvc.Insert:
		return "a"
	case tablesvc.Update, tablesvc.Merge:
		return "u"
	case tablesvc.Delete:
		return "d"
	}
	return "au"
}
