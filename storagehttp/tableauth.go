package storagehttp

import (
	"net/http"
	"net/url"
	"strings"
)

// The Table service signs differently from Blob, Queue and File
// (authorize-with-shared-key, "Shared Key format for the Table service"
// and "Shared Key Lite and Table service format"): no Content-Length,
// Content-Encoding, Content-Language, If-* or Range lines, no
// canonicalized x-ms-* headers, the date line is x-ms-date when the
// request has one (else Date), and the resource keeps only comp.

// TableStringToSign is the Table service's SharedKey string-to-sign:
// verb, Content-MD5, Content-Type, date and the canonicalized resource
// (LiteCanonicalizedResource).
func TableStringToSign(account string, r *http.Request) string {
	h := r.Header
	return strings.Join([]string{
		r.Method,
		h.Get("Content-MD5"),
		h.Get("Content-Type"),
		tableDate(h),
		LiteCanonicalizedResource(account, r.URL),
	}, "\n")
}

// TableLiteStringToSign is the Table service's SharedKey Lite
// string-to-sign: the date and the canonicalized resource (what the Go
// aztables SDK sends).
func TableLiteStringToSign(account string, r *http.Request) string {
	return tableDate(r.Header) + "\n" + LiteCanonicalizedResource(account, r.URL)
}

// tableDate is x-ms-date if sent, else Date: unlike Blob's, the Table
// string-to-sign carries the x-ms-date value itself in the date line.
func tableDate(h http.Header) string {
	if d := h.Get("x-ms-date"); d != "" {
		return d
	}
	return h.Get("Date")
}

// TableServiceSAS is the table service-SAS string-to-sign (version
// 2018-11-09 and later, create-service-sas): sp, st, se,
// "/table/<account>/<lower-cased tn>", si, sip, spr, sv, spk, srk, epk,
// erk. The grant's Resource is the lower-cased table name tn, which the
// signature covers; a token without tn is refused (403
// AuthenticationFailed). The key range is the service's to enforce (see
// TableKeyRange).
func TableServiceSAS(account string, _ *http.Request, q url.Values) (sts, resource string, err error) {
	tn := strings.ToLower(q.Get("tn"))
	if tn == "" {
		return "", "", AuthFailed("A table SAS must name its table (tn).")
	}
	sts = strings.Join([]string{q.Get("sp"), q.Get("st"), q.Get("se"), "/table/" + account + "/" + tn,
		q.Get("si"), q.Get("sip"), q.Get("spr"), q.Get("sv"),
		q.Get("spk"), q.Get("srk"), q.Get("epk"), q.Get("erk")}, "\n")
	return sts, tn, nil
}

// TableKeyRange is the inclusive entity key range of a table SAS
// (spk/srk to epk/erk); an empty bound is open. "Table access is
// restricted to the range" (create-service-sas).
type TableKeyRange struct {
	StartPK, StartRK, EndPK, EndRK string
}

// TableKeyRangeOf reads the key range a SAS's query carries (all empty:
// the whole table).
func TableKeyRangeOf(q url.Values) TableKeyRange {
	return TableKeyRange{StartPK: q.Get("spk"), StartRK: q.Get("srk"), EndPK: q.Get("epk"), EndRK: q.Get("erk")}
}

// Unbounded reports whether the range is the whole table.
func (k TableKeyRange) Unbounded() bool { return k == TableKeyRange{} }

// Contains reports whether the entity (pk, rk) lies in the range: at or
// after (spk, srk) and at or before (epk, erk), keys compared ordinally,
// the row bound applying within the bounding partition only.
func (k TableKeyRange) Contains(pk, rk string) bool {
	if k.StartPK != "" {
		if pk < k.StartPK || pk == k.StartPK && k.StartRK != "" && rk < k.StartRK {
			return false
		}
	}
	if k.EndPK != "" {
		if pk > k.EndPK || pk == k.EndPK && k.EndRK != "" && rk > k.EndRK {
			return false
		}
	}
	return true
}
