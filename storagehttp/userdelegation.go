package storagehttp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// User delegation keys and the SAS they sign ("Get User Delegation Key",
// "Create a user delegation SAS").
//
// The key's Value is not stored anywhere: it is
// HMAC-SHA256(account key, "blobshare user delegation key" and the key's
// signed fields), and a SAS signed with it carries those fields (skoid,
// sktid, skt, ske, sks, skv, skdutid), so any process serving the account
// recomputes the Value from the SAS alone and checks the signature. No
// table of issued keys is needed between serve, session and mount
// processes on one data directory, nothing has to be cleaned up when a key
// expires, and a key cannot be forged without the account key (the fields
// are bound by the HMAC). Changing the account key (--key) revokes every
// key issued, as Azure's key rotation does. Azurite derives its Value the
// same way but from a constant known to everyone, which lets anyone mint
// keys; this derivation does not.

// DelegationKey is a user delegation key's signed fields, times in the
// form they are signed (DelegationTimeLayout).
type DelegationKey struct {
	Oid, Tid      string // skoid, sktid: the token's object and tenant ids
	Start, Expiry string // skt, ske
	Service       string // sks: "b" or "f"
	Version       string // skv: the version that issued the key
	DelegatedTid  string // skdutid: the delegated user's tenant, or ""
}

// DelegationTimeLayout is the form of a key's start and expiry in the
// answer and in a SAS (seconds, UTC): the SDKs reformat the answer's times
// to it before signing, so the Value is derived from it too.
const DelegationTimeLayout = "2006-01-02T15:04:05Z"

// maxDelegationKeyLife: "the expiry must be within seven days of the
// current time".
const maxDelegationKeyLife = 7 * 24 * time.Hour

// DelegationKeyValue is the key's Value (base64), derived from the account
// key and the key's fields.
func (s Signer) DelegationKeyValue(k DelegationKey) string {
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte(strings.Join([]string{"blobshare user delegation key", s.Account, k.Oid, k.Tid, k.Start, k.Expiry,
		k.Service, k.Version, k.DelegatedTid}, "\n")))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// TokenIdentity is who a bearer token names (its oid and tid claims).
type TokenIdentity struct {
	Oid, Tid string
}

// keyInfo is Get User Delegation Key's request body.
type keyInfo struct {
	XMLName          xml.Name `xml:"KeyInfo"`
	Start            string   `xml:"Start"`
	Expiry           string   `xml:"Expiry"`
	DelegatedUserTid string   `xml:"DelegatedUserTid"`
}

// userDelegationKeyXML is its answer.
type userDelegationKeyXML struct {
	XMLName            xml.Name `xml:"UserDelegationKey"`
	SignedOid          string   `xml:"SignedOid"`
	SignedTid          string   `xml:"SignedTid"`
	SignedStart        string   `xml:"SignedStart"`
	SignedExpiry       string   `xml:"SignedExpiry"`
	SignedService      string   `xml:"SignedService"`
	SignedVersion      string   `xml:"SignedVersion"`
	SignedDelegatedTid string   `xml:"SignedDelegatedUserTid,omitempty"`
	Value              string   `xml:"Value"`
}

// CodeInvalidXMLNodeValue is Azure's answer to a well-formed body with a
// value it cannot take.
const CodeInvalidXMLNodeValue = "InvalidXmlNodeValue"

// ServeUserDelegationKey answers Get User Delegation Key (POST
// ?restype=service&comp=userdelegationkey) for service ('b' or 'f') at
// now. "Only authorization with Microsoft Entra ID is supported": the
// request must have passed as a bearer token (Info.Grant.Token), anything
// else is 403 AuthenticationFailed. The body's Start (optional: now) and
// Expiry must be times, Expiry after Start and after now and at most seven
// days from now (400 InvalidXmlNodeValue). DelegatedUserTid names the
// tenant of the user the key delegates to; blobshare has no directory in
// which to look another tenant up, so it accepts only the token's own
// tenant (any other, such as the nil GUID azblob's and azfile's
// TestGetUserDelegationCredentialError send, is 403 AuthenticationFailed,
// as Azure answers that test).
func (s Signer) ServeUserDelegationKey(w http.ResponseWriter, r *http.Request, service byte, now time.Time) error {
	tok := InfoFrom(r.Context()).Grant.Token
	if tok == nil {
		return AuthFailed("Only authentication scheme Bearer is supported for Get User Delegation Key.")
	}
	var ki keyInfo
	if err := DecodeXMLBody(r, &ki, 64<<10); err != nil {
		return err
	}
	bad := func(node, value string) error {
		return NewError(http.StatusBadRequest, CodeInvalidXMLNodeValue,
			"The value for one of the XML nodes is not in the correct format.",
			Detail{Name: "XmlNodeName", Value: node}, Detail{Name: "XmlNodeValue", Value: value})
	}
	start := now
	if ki.Start != "" {
		t, err := parseSASTime(ki.Start)
		if err != nil {
			return bad("Start", ki.Start)
		}
		start = t
	}
	expiry, err := parseSASTime(ki.Expiry)
	if err != nil {
		return bad("Expiry", ki.Expiry)
	}
	if !expiry.After(start) || !expiry.After(now) || expiry.Sub(now) > maxDelegationKeyLife {
		return bad("Expiry", ki.Expiry)
	}
	if ki.DelegatedUserTid != "" && !strings.EqualFold(ki.DelegatedUserTid, tok.Tid) {
		return AuthFailed("The delegated user tenant " + ki.DelegatedUserTid + " is not the token's tenant; blobshare cannot look other tenants up.")
	}
	k := DelegationKey{
		Oid: tok.Oid, Tid: tok.Tid,
		Start: start.UTC().Format(DelegationTimeLayout), Expiry: expiry.UTC().Format(DelegationTimeLayout),
		Service: string(service), Version: requestVersion(r), DelegatedTid: ki.DelegatedUserTid,
	}
	if k.Version == "" {
		k.Version = "2018-11-09"
	}
	return WriteXML(w, http.StatusOK, userDelegationKeyXML{
		SignedOid: k.Oid, SignedTid: k.Tid, SignedStart: k.Start, SignedExpiry: k.Expiry,
		SignedService: k.Service, SignedVersion: k.Version, SignedDelegatedTid: k.DelegatedTid,
		Value: s.DelegationKeyValue(k),
	})
}

// userDelegationSAS checks the key part of a user delegation SAS (skoid
// and the other sk fields) and returns the signer its signature is made
// with: the key's Value as an HMAC key. The key must be for this service
// (sks) and valid now (skt ≤ now ≤ ske: the key's expiry bounds every SAS
// it signed); a stored access policy (si) is refused, as Azure does for
// user delegation SAS.
func (a SAS) userDelegationKey(q url.Values, now time.Time) (Signer, error) {
	if q.Get("si") != "" {
		return Signer{}, AuthFailed("A user delegation SAS cannot name a stored access policy (si).")
	}
	if q.Get("sks") != string(a.Service) {
		return Signer{}, AuthFailed("The user delegation key is for another service (sks).")
	}
	skt, err1 := parseSASTime(q.Get("skt"))
	ske, err2 := parseSASTime(q.Get("ske"))
	if err1 != nil || err2 != nil || q.Get("skoid") == "" || q.Get("sktid") == "" || !ValidVersion(q.Get("skv")) {
		return Signer{}, AuthFailed("The user delegation key fields (skoid, sktid, skt, ske, sks, skv) are missing or invalid.")
	}
	if now.Before(skt.Add(-5*time.Minute)) || now.After(ske) {
		return Signer{}, AuthFailed("The user delegation key is not valid now (skt, ske).")
	}
	value := a.Signer.DelegationKeyValue(DelegationKey{
		Oid: q.Get("skoid"), Tid: q.Get("sktid"),
		Start: skt.UTC().Format(DelegationTimeLayout), Expiry: ske.UTC().Format(DelegationTimeLayout),
		Service: q.Get("sks"), Version: q.Get("skv"), DelegatedTid: q.Get("skdutid"),
	})
	raw, _ := base64.StdEncoding.DecodeString(value)
	return Signer{Account: a.Signer.Account, Key: raw}, nil
}

// checkDelegatedUser enforces sduoid ("the resulting SAS URL must be used
// in conjunction with an Entra ID token that has been issued to the user
// specified in this value"): the request must carry a bearer token that
// the SAS's Token authenticator accepts and whose oid is sduoid.
func (a SAS) checkDelegatedUser(r *http.Request, q url.Values, now time.Time) error {
	oid := q.Get("sduoid")
	if oid == "" {
		return nil
	}
	if a.SourceToken == nil || !strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), "bearer ") {
		return AuthFailed("The SAS names a delegated user (sduoid): the request must carry that user's bearer token.")
	}
	v, g, err := a.SourceToken.Authenticate(r, now)
	if v != Pass || err != nil || g.Token == nil {
		return AuthFailed("The bearer token the SAS's delegated user (sduoid) must present does not verify.")
	}
	if !strings.EqualFold(g.Token.Oid, oid) {
		return AuthFailed("The bearer token is not the SAS's delegated user's (sduoid).")
	}
	return nil
}

// UserDelegationFields are the user delegation SAS fields between the
// canonicalized resource and the IP range, by signed version: skoid,
// sktid, skt, ske, sks, skv (2018-11-09); saoid, suoid, scid
// (2020-02-10); skdutid, sduoid (2025-07-05).
func UserDelegationFields(q url.Values) []string {
	sv := q.Get("sv")
	f := []string{q.Get("skoid"), q.Get("sktid"), q.Get("skt"), q.Get("ske"), q.Get("sks"), q.Get("skv")}
	if sv >= "2020-02-10" {
		f = append(f, q.Get("saoid"), q.Get("suoid"), q.Get("scid"))
	}
	if sv >= "2025-07-05" {
		f = append(f, q.Get("skdutid"), q.Get("sduoid"))
	}
	return f
}

// SignedRequestFields are the canonicalized signed request headers (srh)
// and query parameters (srq) of a user delegation SAS, from the request's
// own values in the order the SAS names them: "name:value\n" per header,
// "\nname:value" per parameter. A request that lacks one, or sends another
// value, yields another string-to-sign and so fails the signature check
// (AuthenticationFailed), which is how Azure enforces them.
func SignedRequestFields(r *http.Request, q url.Values) (headers, params string) {
	var h, p strings.Builder
	for _, name := range splitNames(q.Get("srh")) {
		h.WriteString(name + ":" + r.Header.Get(name) + "\n")
	}
	for _, name := range splitNames(q.Get("srq")) {
		p.WriteString("\n" + name + ":" + q.Get(name))
	}
	return h.String(), p.String()
}

func splitNames(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// SASWithBearer claims the requests that carry both a SAS (sig) and a
// bearer token, and lets the SAS decide: a user delegation SAS naming a
// delegated user (sduoid) is used "in conjunction with an Entra ID token",
// and the token alone must not make the SAS's limits moot. It goes before
// OAuth in a chain; other requests are NotMine.
type SASWithBearer struct {
	SAS SAS
}

// Authenticate implements Authenticator.
func (a SASWithBearer) Authenticate(r *http.Request, now time.Time) (Verdict, Grant, error) {
	scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if r.URL.Query().Get("sig") == "" || !strings.EqualFold(scheme, "Bearer") {
		return NotMine, Grant{}, nil
	}
	return a.SAS.Authenticate(r, now)
}
