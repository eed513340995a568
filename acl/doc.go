// Package acl is the one stored-access-policy type (SignedIdentifier) of
// Set/Get Share, Container, Queue and Table ACL, with its validation
// written once (Validate: at most 5 policies, Ids of 1 to 64 characters,
// permission letters per service) and one parser for policy times
// (ParseTime, TimeLayouts, which SAS tokens' times use too).
//
// It sits beside package lease, not in storagehttp, because the
// semantics packages that store policies (fs, blobsvc, msgqueue,
// tablesvc) must not import net/http, which storagehttp does; storagehttp
// holds the XML side once (DecodeSignedIdentifiers, SignedIdentifiersDoc,
// StoredAccessPolicy) and every front end uses it.
//
// What each service stores is unchanged: blobsvc, msgqueue and tablesvc
// keep the policy as sent (their SignedIdentifier is this type; its fields
// are the ones their JSON always held), and fs keeps a share's policy with
// parsed times in its own JSON form (fs.storedIdentifier), answered with
// seven fractional digits (FormatTime).
//
// # Rules
//
// The services checked different things before this package, and no Azure
// evidence was found to settle the differences, so each is a named field
// of Rules, set as the service had it: shares refuse repeated Ids and
// repeated letters and store the letters in Azure's order (Canonical);
// shares and tables refuse times that do not parse (CheckTimes); queues
// accept an empty Id (EmptyID). One difference is settled by Azure's
// words: an Id's length counts characters ("The signed identifier ... can
// be up to 64 characters in length", Set Container ACL, Set Queue ACL, Set
// Share ACL), where containers and tables counted bytes.
package acl
