package storagehttp

import "encoding/xml"

// ServicePropertiesXML is the StorageServiceProperties document of the
// Queue and Table services, each part kept as sent: blobshare configures
// nothing with it (no analytics logs, metrics or CORS), but keeps and
// answers it, and a Set replaces only the parts it names ("Elements left
// out keep their values").
type ServicePropertiesXML struct {
	XMLName       xml.Name `xml:"StorageServiceProperties"`
	Logging       *RawXML  `xml:"Logging"`
	HourMetrics   *RawXML  `xml:"HourMetrics"`
	MinuteMetrics *RawXML  `xml:"MinuteMetrics"`
	Cors          *RawXML  `xml:"Cors"`
}

// RawXML is an element's content as sent.
type RawXML struct {
	Inner string `xml:",innerxml"`
}

// StoredServiceProperties is the stored document doc over what a fresh
// service answers (logging and metrics off, no CORS rules); nil doc is
// the defaults.
func StoredServiceProperties(doc []byte) (ServicePropertiesXML, error) {
	off := `<Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>`
	p := ServicePropertiesXML{
		Logging:       &RawXML{`<Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>`},
		HourMetrics:   &RawXML{off},
		MinuteMetrics: &RawXML{off},
		Cors:          &RawXML{},
	}
	if doc == nil {
		return p, nil
	}
	return p, xml.Unmarshal(doc, &p)
}

// Merge replaces the parts that in names.
func (p *ServicePropertiesXML) Merge(in ServicePropertiesXML) {
	for _, f := range []struct{ dst, src **RawXML }{
		{&p.Logging, &in.Logging}, {&p.HourMetrics, &in.HourMetrics},
		{&p.MinuteMetrics, &in.MinuteMetrics}, {&p.Cors, &in.Cors},
	} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
}
