package storagehttp

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// ErrorRenderer writes an *Error in a service's format.
type ErrorRenderer func(w http.ResponseWriter, r *http.Request, e *Error)

// ErrorFormat makes WriteError use the renderer choose returns for the
// request (nil: the XML default) for everything after it in the chain,
// middleware included. It must follow RequestID (the choice lives in the
// request's Info). The Table service answers OData requests with OData
// JSON errors and its XML operations (ACL, service properties) with XML.
func ErrorFormat(choose func(*http.Request) ErrorRenderer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info, ok := r.Context().Value(infoKey{}).(*Info); ok {
			info.render = choose(r)
		}
		next.ServeHTTP(w, r)
	})
}

// ODataJSONContentType is the Content-Type of OData JSON answers (minimal
// metadata, as the Table service sends errors).
const ODataJSONContentType = "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"

type odataErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message struct {
			Lang  string `json:"lang"`
			Value string `json:"value"`
		} `json:"message"`
	} `json:"odata.error"`
}

// WriteODataError renders e as the Table service does:
// {"odata.error":{"code":…,"message":{"lang":"en-US","value":"<message>\nRequestId:…\nTime:…"}}}
// with x-ms-error-code equal to the code. Details have no place in that
// body and are left out. HEAD gets the status and header only.
func WriteODataError(w http.ResponseWriter, r *http.Request, e *Error) {
	WriteODataErrorPrefixed(w, r, e, "")
}

// WriteODataErrorPrefixed is WriteODataError with prefix before the
// message (an entity group transaction names the failing operation's
// index, "2:").
func WriteODataErrorPrefixed(w http.ResponseWriter, r *http.Request, e *Error, prefix string) {
	info := InfoFrom(r.Context())
	h := w.Header()
	for _, k := range []string{"ETag", "Preference-Applied", "Location", "DataServiceId"} {
		h.Del(k)
	}
	h.Set(ErrorCodeHeader, e.Code)
	if r.Method == http.MethodHead {
		h.Del("Content-Type")
		h.Set("Content-Length", "0")
		w.WriteHeader(e.Status)
		return
	}
	var body odataErrorBody
	body.Error.Code = e.Code
	body.Error.Message.Lang = "en-US"
	body.Error.Message.Value = prefix + e.Message + "\nRequestId:" + info.ID + "\nTime:" + FormatTime7(info.Start)
	out, _ := json.Marshal(body) // plain strings: cannot fail
	h.Set("Content-Type", ODataJSONContentType)
	h.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(out)
}

// WriteXMLError is the XML renderer, for a service whose ErrorFormat
// chooser wants it explicitly.
func WriteXMLError(w http.ResponseWriter, r *http.Request, e *Error) {
	writeXMLError(w, r, e)
}
