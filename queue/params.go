package queue

import (
	"encoding/xml"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/blobshare/blobshare/msgqueue"
	"github.com/blobshare/blobshare/storagehttp"
)

// intParam reads an optional 32-bit integer query parameter; absent → ok
// false; not an integer → 400 InvalidQueryParameterValue. Bounds are
// msgqueue's to check.
func intParam(q url.Values, name string) (v int64, ok bool, err error) {
	return intParamBits(q, name, 32)
}

func intParamBits(q url.Values, name string, bits int) (v int64, ok bool, err error) {
	s, present := q[name]
	if !present {
		return 0, false, nil
	}
	raw := ""
	if len(s) > 0 {
		raw = s[0]
	}
	v, perr := strconv.ParseInt(raw, 10, bits)
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
	XMLName     xml.Name  `xml:"QueueMessage"`
	MessageText *textOnly `xml:"MessageText"`
}

// textOnly is an element holding only character data: MessageText is a
// string, so an element inside it makes the document invalid rather than
// being dropped silently.
type textOnly string

func (t *textOnly) UnmarshalXML(d *xml.Decoder, _ xml.StartElement) error {
	var b strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.CharData:
			b.Write(tok)
		case xml.StartElement:
			return fmt.Errorf("element <%s> inside MessageText", tok.Name.Local)
		case xml.EndElement:
			*t = textOnly(b.String())
			return nil
		}
	}
}

// parseMessageBody decodes <QueueMessage><MessageText>…</MessageText>
// </QueueMessage>. The text is kept as sent: Azure does not require
// base64 (that is a client convention). A body that is not one
// well-formed QueueMessage document is 400 InvalidXmlDocument, and so
// is one without MessageText when required (Put Message). Update Message
// (required false) takes an empty body or a QueueMessage without
// MessageText as "keep the text" (nil), as Azurite does: its body is
// optional.
func parseMessageBody(r *http.Request, required bool) (*string, error) {
	if !required && r.ContentLength == 0 {
		return nil, nil
	}
	var m messageXML
	if err := storagehttp.DecodeXMLBody(r, &m, maxMessageBody); err != nil {
		return nil, err
	}
	if m.MessageText == nil && required {
		return nil, storagehttp.NewError(http.StatusBadRequest, storagehttp.CodeInvalidXMLDocument,
			"XML specified is not syntactically valid.", storagehttp.Detail{Name: "Reason", Value: "no MessageText element"})
	}
	if m.MessageText == nil {
		return nil, nil
	}
	text := string(*m.MessageText)
	return &text, nil
}

// putOptions reads Put Message's visibilitytimeout and messagettl.
func putOptions(q url.Values) (msgqueue.PutOptions, error) {
	var o msgqueue.PutOptions
	var err error
	if o.VisibilityTimeout, _, err = secondsParam(q, "visibilitytimeout", 0); err != nil {
		return o, err
	}
	// messagettl "can be any positive number" (Put Message, version
	// 2017-07-29 and later), so it is read as 64 bits; a TTL beyond what a
	// time.Duration holds (about 292 years) is kept at that maximum.
	ttl, ok, err := intParamBits(q, "messagettl", 64)
	if err != nil || !ok {
		return o, err
	}
	o.TTLSet = true
	if ttl > int64(math.MaxInt64/time.Second) {
		o.TTL = math.MaxInt64
	} else {
		o.TTL = time.Duration(ttl) * time.Second
	}
	return o, nil
}
