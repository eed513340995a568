package rest

import (
	"encoding/xml"
	"net/http"
	"sync"

	"github.com/blobshare/blobshare/storagehttp"
)

// serviceProps is the File service's StorageServiceProperties document.
// blobshare keeps it in memory for the life of the Server (it configures
// nothing: metrics and CORS are not implemented); it exists so that SDK
// calls that read or write it work and so that malformed XML bodies get
// the service's answer.
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

// serviceState holds the in-memory service properties.
type serviceState struct {
	mu    sync.Mutex
	props serviceProps
}

func defaultServiceProps() serviceProps {
	off := func() *metricsXML {
		return &metricsXML{Version: "1.0", RetentionPolicy: &retention{}}
	}
	return serviceProps{HourMetrics: off(), MinuteMetrics: off(), Cors: &corsXML{}}
}

func (s *Server) getServiceProperties(w http.ResponseWriter, c *call) error {
	s.svc.mu.Lock()
	p := s.svc.props
	s.svc.mu.Unlock()
	return storagehttp.WriteXML(w, http.StatusOK, p)
}

func (s *Server) setServiceProperties(w http.ResponseWriter, c *call) error {
	var p serviceProps
	if err := storagehttp.DecodeXMLBody(c.r, &p, maxSmallBody); err != nil {
		return err
	}
	s.svc.mu.Lock()
	defer s.svc.mu.Unlock()
	// Elements left out keep their values, as the service does.
	if p.HourMetrics != nil {
		s.svc.props.HourMetrics = p.HourMetrics
	}
	if p.MinuteMetrics != nil {
		s.svc.props.MinuteMetrics = p.MinuteMetrics
	}
	if p.Cors != nil {
		s.svc.props.Cors = p.Cors
	}
	if p.ProtocolSettings != nil {
		s.svc.props.ProtocolSettings = p.ProtocolSettings
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
