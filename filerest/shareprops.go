package filerest

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"

	"github.com/blobshare/blobshare/storagehttp"
)

// storedShareProps are share properties of provisioned (premium) shares
// and SMB options that blobshare stores as given and reports back (Get
// Share Properties headers, List Shares elements); they configure
// nothing. kind: 'b' a boolean, 'n' a non-negative integer.
var storedShareProps = []struct {
	header, element string
	kind            byte
}{
	{"x-ms-share-provisioned-iops", "ProvisionedIops", 'n'},
	{"x-ms-share-provisioned-bandwidth-mibps", "ProvisionedBandwidthMiBps", 'n'},
	{"x-ms-share-paid-bursting-enabled", "PaidBurstingEnabled", 'b'},
	{"x-ms-share-paid-bursting-max-iops", "PaidBurstingMaxIops", 'n'},
	{"x-ms-share-paid-bursting-max-bandwidth-mibps", "PaidBurstingMaxBandwidthMibps", 'n'},
	{"x-ms-enable-snapshot-virtual-directory-access", "EnableSnapshotVirtualDirectoryAccess", 'b'},
	{"x-ms-enable-smb-directory-lease", "EnableSMBDirectoryLease", 'b'},
}

// parseShareProps reads the stored share properties a request sets
// (canonical values: "true"/"false", decimal integers); a malformed
// value is 400 InvalidHeaderValue.
func parseShareProps(h http.Header) (map[string]string, error) {
	var out map[string]string
	for _, p := range storedShareProps {
		v := strings.TrimSpace(h.Get(p.header))
		if v == "" {
			continue
		}
		switch p.kind {
		case 'b':
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, storagehttp.InvalidHeader(p.header, v)
			}
			v = strconv.FormatBool(b)
		default:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return nil, storagehttp.InvalidHeader(p.header, v)
			}
			v = strconv.FormatInt(n, 10)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[p.header] = v
	}
	return out, nil
}

// setShareProps writes the stored share properties as headers.
func setShareProps(h http.Header, props map[string]string) {
	for _, p := range storedShareProps {
		if v, ok := props[p.header]; ok {
			h.Set(p.header, v)
		}
	}
}

// xmlElem is one element named at run time.
type xmlElem struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

// sharePropElems are the stored share properties as List Shares elements.
func sharePropElems(props map[string]string) []xmlElem {
	var out []xmlElem
	for _, p := range storedShareProps {
		if v, ok := props[p.header]; ok {
			out = append(out, xmlElem{XMLName: xml.Name{Local: p.element}, Value: v})
		}
	}
	return out
}
