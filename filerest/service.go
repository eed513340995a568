package filerest

import (
	"encoding/xml"
	"fmt"
	"net/http"

	"github.com/blobshare/blobshare/storagehttp"
)

// serviceProps is the File service's StorageServiceProperties document.
// It configures nothing in blobshare (metrics and CORS are not
// implemented), but it is kept as Azure keeps it: stored with the shares
// (fs.FileSystem.UpdateServiceProperties), so every process on the data
// directory and a restarted serve answer what was last set, as the Blob
// and Queue services do.
type serviceProps struct {
	XMLName          xml.Name     `xml:"StorageServiceProperties"`
	HourMetrics      *metricsXML  `xml:"HourMetrics,omitempty"`
	MinuteMetrics    *metricsXML  `xml:"MinuteMetrics,omitempty"`
	Cors             *corsXML     `xml:"Cors,omitempty"`
	ProtocolSettings *protocolXML `xml:"ProtocolSettings,omitempty"`
}

type metricsXML struct {
	Version         string     `xml:"Version"`
	Enabled         bool       `xml:"Enabled"`
	IncludeAPIs     *bool      `xml:"IncludeAPIs,omitempty"`
	RetentionPolicy *retention `xml:"RetentionPolicy"`
}

type retention struct {
	Enabled bool `xml:"Enabled"`
	Days    *int `xml:"Days,omitempty"`
}

type corsXML struct {
	Rules []corsRule `xml:"CorsRule"`
}

type corsRule struct {
	AllowedOrigins  string `xml:"AllowedOrigins"`
	AllowedMethods  string `xml:"AllowedMethods"`
	AllowedHeaders  string `xml:"AllowedHeaders"`
	ExposedHeaders  string `xml:"ExposedHeaders"`
	MaxAgeInSeconds int    `xml:"MaxAgeInSeconds"`
}

type protocolXML struct {
	SMB *struct {
		Multichannel *struct {
			Enabled bool `xml:"Enabled"`
		} `xml:"Multichannel"`
	} `xml:"SMB"`
}

func defaultServiceProps() serviceProps {
	off := func() *metricsXML {
		return &metricsXML{Version: "1.0", RetentionPolicy: &retention{}}
	}
	return serviceProps{HourMetrics: off(), MinuteMetrics: off(), Cors: &corsXML{}}
}

// storedServiceProps decodes the stored document (the defaults when none
// was ever set).
func storedServiceProps(doc []byte) (serviceProps, error) {
	if doc == nil {
		return defaultServiceProps(), nil
	}
	var p serviceProps
	if err := xml.Unmarshal(doc, &p); err != nil {
		return p, fmt.Errorf("stored service properties: %w", err)
	}
	return p, nil
}

func (s *Server) getServiceProperties(w http.ResponseWriter, c *call) error {
	doc, err := s.fs.ServiceProperties(c.r.Context())
	if err != nil {
		return err
	}
	p, err := storedServiceProps(doc)
	if err != nil {
		return err
	}
	return storagehttp.WriteXML(w, http.StatusOK, p)
}

func (s *Server) setServiceProperties(w http.ResponseWriter, c *call) error {
	var p serviceProps
	if err := storagehttp.DecodeXMLBody(c.r, &p, maxSmallBody); err != nil {
		return err
	}
	err := s.fs.UpdateServiceProperties(c.r.Context(), func(old []byte) ([]byte, error) {
		cur, err := storedServiceProps(old)
		if err != nil {
			return nil, err
		}
		// Elements left out keep their values, as the service does.
		if p.HourMetrics != nil {
			cur.HourMetrics = p.HourMetrics
		}
		if p.MinuteMetrics != nil {
			cur.MinuteMetrics = p.MinuteMetrics
		}
		if p.Cors != nil {
			cur.Cors = p.Cors
		}
		if p.ProtocolSettings != nil {
			cur.ProtocolSettings = p.ProtocolSettings
		}
		return xml.Marshal(cur)
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// getUserDelegationKey answers Get User Delegation Key on the File
// endpoint (azfile's service.Client.GetUserDelegationCredential posts it
// there, with sks "f"): a bearer token only, the key derived from the
// account key as the Blob service's is (storagehttp.ServeUserDelegationKey).
// FileREST does not take user delegation SAS yet: the SDKs sign different
// strings for them (azfile v1.7 and @azure/storage-file-share 12.30 disagree
// on saoid/suoid/scid and sr), and Azure's table for Files is not
// published; such a SAS is refused with 403 AuthenticationFailed.
func (s *Server) getUserDelegationKey(w http.ResponseWriter, c *call) error {
	return s.signer.ServeUserDelegationKey(w, c.r, 'f', storagehttp.InfoFrom(c.r.Context()).Start)
}
