package filerest

import (
	"encoding/xml"
	"github.com/blobshare/blobshare/locks"
	"net/url"
	"unicode/utf8"

	"github.com/blobshare/blobshare/storagehttp"
)

// XML response models (filerest.md §6, locking.md §5.1), with the element
// names the SDK models decode. Optional elements are pointers or
// omitempty strings so that an absent value is absent, not empty (the Go
// SDK fails to parse an empty time element).

// encodedText is a name element that switches to percent-encoding with
// Encoded="true" when the text is not valid XML character data.
type encodedText struct {
	Encoded string `xml:"Encoded,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// nameText renders s, percent-encoding it when XML cannot carry it.
func nameText(s string) encodedText {
	if xmlSafe(s) {
		return encodedText{Text: s}
	}
	return encodedText{Encoded: "true", Text: url.QueryEscape(s)}
}

// xmlSafe reports whether every rune of s is an XML 1.0 Char.
func xmlSafe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		ok := r == 0x09 || r == 0x0A || r == 0x0D ||
			r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
		if !ok {
			return false
		}
	}
	return true
}

type listSharesXML struct {
	XMLName         xml.Name   `xml:"EnumerationResults"`
	ServiceEndpoint string     `xml:"ServiceEndpoint,attr"`
	Prefix          *string    `xml:"Prefix"`
	Marker          *string    `xml:"Marker"`
	MaxResults      *int       `xml:"MaxResults"`
	Shares          []shareXML `xml:"Shares>Share"`
	NextMarker      string     `xml:"NextMarker"`
}

type shareXML struct {
	Name       string                   `xml:"Name"`
	Snapshot   string                   `xml:"Snapshot,omitempty"`
	Deleted    bool                     `xml:"Deleted,omitempty"`
	Version    string                   `xml:"Version,omitempty"`
	Properties sharePropsXML            `xml:"Properties"`
	Metadata   *storagehttp.MetadataXML `xml:"Metadata"`
}

type sharePropsXML struct {
	LastModified     string `xml:"Last-Modified"`
	Etag             string `xml:"Etag"`
	Quota            int    `xml:"Quota"`
	AccessTier       string `xml:"AccessTier"`
	EnabledProtocols string `xml:"EnabledProtocols"`
	LeaseStatus      string `xml:"LeaseStatus"`
	LeaseState       string `xml:"LeaseState"`
	LeaseDuration    string `xml:"LeaseDuration,omitempty"`
	DeletedTime      string `xml:"DeletedTime,omitempty"`
	// RemainingRetentionDays of a soft-deleted share.
	RemainingRetentionDays *int `xml:"RemainingRetentionDays,omitempty"`
	// Stored provisioned-share and SMB properties (shareprops.go).
	Extra []xmlElem `xml:",any"`
}

type listFilesXML struct {
	XMLName         xml.Name    `xml:"EnumerationResults"`
	ServiceEndpoint string      `xml:"ServiceEndpoint,attr"`
	ShareName       string      `xml:"ShareName,attr"`
	DirectoryPath   string      `xml:"DirectoryPath,attr"`
	Marker          *string     `xml:"Marker"`
	Prefix          encodedText `xml:"Prefix"`
	MaxResults      *int        `xml:"MaxResults"`
	DirectoryID     string      `xml:"DirectoryId"`
	Entries         []entryXML  `xml:"Entries>X"`
	NextMarker      string      `xml:"NextMarker"`
}

// entryXML is a <File> or <Directory> (XMLName decides).
type entryXML struct {
	XMLName       xml.Name
	FileID        string        `xml:"FileId"`
	Name          encodedText   `xml:"Name"`
	Properties    entryPropsXML `xml:"Properties"`
	Attributes    string        `xml:"Attributes,omitempty"`
	PermissionKey string        `xml:"PermissionKey,omitempty"`
}

type entryPropsXML struct {
	ContentLength  *int64 `xml:"Content-Length"`
	CreationTime   string `xml:"CreationTime,omitempty"`
	LastAccessTime string `xml:"LastAccessTime,omitempty"`
	LastWriteTime  string `xml:"LastWriteTime,omitempty"`
	ChangeTime     string `xml:"ChangeTime,omitempty"`
	LastModified   string `xml:"Last-Modified,omitempty"`
	Etag           string `xml:"Etag,omitempty"`
}

type rangeXML struct {
	XMLName xml.Name
	Start   int64 `xml:"Start"`
	End     int64 `xml:"End"`
}

type rangesXML struct {
	XMLName xml.Name   `xml:"Ranges"`
	Ranges  []rangeXML `xml:"Range"`
	Clear   []rangeXML `xml:"ClearRange"` // range diffs only
}

type listHandlesXML struct {
	XMLName    xml.Name    `xml:"EnumerationResults"`
	Marker     *string     `xml:"Marker"`
	MaxResults *int        `xml:"MaxResults"`
	Handles    []handleXML `xml:"Entries>Handle"`
	NextMarker string      `xml:"NextMarker"`

	lastID locks.HandleID // paging bookkeeping, not rendered
}

type handleXML struct {
	HandleID     string      `xml:"HandleId"`
	Path         encodedText `xml:"Path"`
	FileID       string      `xml:"FileId"`
	ParentID     string      `xml:"ParentId"`
	SessionID    string      `xml:"SessionId"`
	ClientIP     string      `xml:"ClientIp"`
	ClientName   string      `xml:"ClientName"`
	OpenTime     string      `xml:"OpenTime"`
	AccessRights []string    `xml:"AccessRightList>AccessRight"`
}
