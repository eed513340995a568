package blob

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/blobshare/blobshare/storagehttp"
)

// serviceProps is a Blob service properties document as its root
// elements, each kept as sent: "If you omit a root element, the existing
// settings for the service for that functionality are preserved" (Set
// Blob Service Properties), so a new document replaces only the elements
// it has (azblob's TestAccountDeleteRetentionPolicyNil sets nothing and
// expects the DeleteRetentionPolicy kept).
type serviceProps struct {
	XMLName               xml.Name     `xml:"StorageServiceProperties"`
	Logging               *rawElement  `xml:"Logging"`
	HourMetrics           *rawElement  `xml:"HourMetrics"`
	MinuteMetrics         *rawElement  `xml:"MinuteMetrics"`
	Cors                  *rawElement  `xml:"Cors"`
	DefaultServiceVersion *rawElement  `xml:"DefaultServiceVersion"`
	DeleteRetentionPolicy *rawElement  `xml:"DeleteRetentionPolicy"`
	StaticWebsite         *rawElement  `xml:"StaticWebsite"`
	Other                 []rawElement `xml:",any"`
}

// rawElement is one element, its content as sent.
type rawElement struct {
	XMLName xml.Name
	Inner   []byte `xml:",innerxml"`
}

// elements are the root elements in document order, with their names.
func (p *serviceProps) elements() []struct {
	name string
	e    **rawElement
} {
	return []struct {
		name string
		e    **rawElement
	}{
		{"Logging", &p.Logging}, {"HourMetrics", &p.HourMetrics}, {"MinuteMetrics", &p.MinuteMetrics},
		{"Cors", &p.Cors}, {"DefaultServiceVersion", &p.DefaultServiceVersion},
		{"DeleteRetentionPolicy", &p.DeleteRetentionPolicy}, {"StaticWebsite", &p.StaticWebsite},
	}
}

func (p *serviceProps) encode() []byte {
	var b bytes.Buffer
	b.WriteString("<StorageServiceProperties>")
	for _, el := range p.elements() {
		if *el.e != nil {
			fmt.Fprintf(&b, "<%s>%s</%s>", el.name, (*el.e).Inner, el.name)
		}
	}
	b.WriteString("</StorageServiceProperties>")
	return b.Bytes()
}

func errServiceProps(reason string) error {
	return storagehttp.NewError(http.StatusBadRequest, storagehttp.CodeInvalidXMLDocument,
		"XML specified is not syntactically valid.", storagehttp.Detail{Name: "Reason", Value: reason})
}

// deletePolicyXML is DeleteRetentionPolicy's content.
type deletePolicyXML struct {
	Enabled              *string `xml:"Enabled"`
	Days                 *string `xml:"Days"`
	AllowPermanentDelete *string `xml:"AllowPermanentDelete"`
}

// checkDeletePolicy validates a DeleteRetentionPolicy and returns the
// content to store: Enabled is required; when true, Days is required and
// "The minimum specified value can be 1 and the maximum value can be
// 365" (azblob's TestAccountDeleteRetentionPolicyDaysTooLarge and
// ...DaysOmitted expect 400 InvalidXmlDocument, ...Empty an error); when
// false the days are dropped (Get answers none, as
// TestAccountDeleteRetentionPolicy expects).
func checkDeletePolicy(inner []byte) ([]byte, error) {
	var d deletePolicyXML
	if err := xml.Unmarshal(append(append([]byte("<p>"), inner...), "</p>"...), &d); err != nil {
		return nil, errServiceProps("DeleteRetentionPolicy: " + err.Error())
	}
	if d.Enabled == nil {
		return nil, errServiceProps("DeleteRetentionPolicy: Enabled is required")
	}
	enabled, err := strconv.ParseBool(strings.TrimSpace(*d.Enabled))
	if err != nil {
		return nil, errServiceProps("DeleteRetentionPolicy: Enabled must be true or false")
	}
	if !enabled {
		return []byte("<Enabled>false</Enabled>"), nil
	}
	if d.Days == nil {
		return nil, errServiceProps("DeleteRetentionPolicy: Days is required when Enabled is true")
	}
	days, err := strconv.Atoi(strings.TrimSpace(*d.Days))
	if err != nil || days < 1 || days > 365 {
		return nil, errServiceProps("DeleteRetentionPolicy: Days must be 1 to 365")
	}
	out := fmt.Sprintf("<Enabled>true</Enabled><Days>%d</Days>", days)
	if d.AllowPermanentDelete != nil {
		allow, err := strconv.ParseBool(strings.TrimSpace(*d.AllowPermanentDelete))
		if err != nil {
			return nil, errServiceProps("DeleteRetentionPolicy: AllowPermanentDelete must be true or false")
		}
		out += fmt.Sprintf("<AllowPermanentDelete>%t</AllowPermanentDelete>", allow)
	}
	return []byte(out), nil
}

func (s *Server) setServiceProperties(w http.ResponseWriter, c *call) error {
	var in serviceProps
	if err := storagehttp.DecodeXMLBody(c.r, &in, maxSmallBody); err != nil {
		return err
	}
	if len(in.Other) > 0 {
		return errServiceProps("unknown element " + in.Other[0].XMLName.Local)
	}
	if in.DeleteRetentionPolicy != nil {
		inner, err := checkDeletePolicy(in.DeleteRetentionPolicy.Inner)
		if err != nil {
			return err
		}
		in.DeleteRetentionPolicy.Inner = inner
	}
	cur, err := s.svc.ServiceProperties(c.r.Context())
	if err != nil {
		return err
	}
	if cur == nil {
		cur = []byte(defaultServiceProperties)
	}
	var stored serviceProps
	if err := xml.Unmarshal(cur, &stored); err != nil {
		return fmt.Errorf("blob service properties: stored document: %w", err)
	}
	merged := in.elements()
	for i, el := range stored.elements() {
		if *merged[i].e == nil {
			*merged[i].e = *el.e
		}
	}
	if err := s.svc.SetServiceProperties(c.r.Context(), in.encode()); err != nil {
		return err
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusAccepted)
	return nil
}
