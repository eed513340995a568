package queue

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/blobshare/blobshare/msgqueue"
	"github.com/blobshare/blobshare/storagehttp"
)

// intParam reads an optional integer query parameter; absent → ok
// false; not an integer → 400 InvalidQueryParameterValue. Bounds are
// msgqueue's to check.
func intParam(q url.Values, name string) (v int64, ok bool, err error) {
	s, present := q[name]
	if !present {
		return 0, false, nil
	}
	raw := ""
	if len(s) > 0 {
		raw = s[0]
	}
	v, perr := strconv.ParseInt(raw, 10, 32)
	if perr != nil {
		return 0, false, storagehttp.InvalidQuery(name, raw, "not an integer")
	}
	return v, true, nil
}

// secondsParam reads an optional whole number of seconds, def if absent.
func secondsParam(q url.Values, name string, def time.Duration) (time.Duration, bool, error) {
	v, ok, err := intParam(q, name)
	if err != nil || !ok {
		return def, false, err
	}
	return time.Duration(v) * time.Second, true, nil
}

// messageXML is the body of Put Message and Update Message.
type messageXML struct {
	XMLName     xml.Name `xml:"QueueMessage"`
	MessageText *string  `xml:"MessageText"`
}

// parseMessageBody decodes <QueueMessage><MessageText>…</MessageText>
// </QueueMessage>. The text is kept as sent: Azure does not require
// base64 (that is a client convention). A body that is not one
// well-formed QueueMessage document, or has no MessageText, is 400
// InvalidXmlDocument; required false accepts an empty body (nil text:
// Update Message without new content).
func parseMessageBody(r *http.Request, required bool) (*string, error) {
	if !required && r.ContentLength == 0 {
		return nil, nil
	}
	var m messageXML
	if err := storagehttp.DecodeXMLBody(r, &m, maxMessageBody); err != nil {
		return nil, err
	}
	if m.MessageText == nil {
		return nil, storagehttp.NewError(http.StatusBadRequest, storagehttp.CodeInvalidXMLDocument,
			"XML specified is not syntactically valid.", storagehttp.Detail{Name: "Reason", Value: "no MessageText element"})
	}
	return m.MessageText, nil
}

// putOptions reads Put Message's visibilitytimeout and messagettl.
func putOptions(q url.Values) (msgqueue.PutOptions, error) {
	var o msgqueue.PutOptions
	var err error
	if o.VisibilityTimeout, _, err = secondsParam(q, "visibilitytimeout", 0); err != nil {
		return o, err
	}
	if o.TTL, o.TTLSet, err = secondsParam(q, "messagettl", 0); err != nil {
		return o, err
	}
	return o, nil
}
