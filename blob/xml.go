package blob

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/storagehttp"
)

// maxBlockListBody bounds a Put Block List body: 50,000 entries of a
// 64-byte id in base64 inside the longest element name, with room to spare.
const maxBlockListBody = 8 << 20

// parseBlockList decodes a Put Block List body:
// <BlockList><Latest|Committed|Uncommitted>id</…>…</BlockList>, in order.
// Anything else — another root, another child element, nested elements,
// a malformed document, more than MaxCommittedBlocks entries — is 400
// InvalidXmlDocument (a block id that is not valid base64 is
// InvalidBlockList, from blobsvc, when resolved).
func parseBlockList(r io.Reader) ([]blobsvc.BlockRef, error) {
	d := xml.NewDecoder(io.LimitReader(r, maxBlockListBody+1))
	var refs []blobsvc.BlockRef
	depth := 0
	var cur *blobsvc.BlockRef
	var text strings.Builder
	sawRoot := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, invalidXML(err.Error())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch depth {
			case 1:
				if t.Name.Local != "BlockList" || sawRoot {
					return nil, invalidXML("the root element must be BlockList")
				}
				sawRoot = true
			case 2:
				where := blobsvc.BlockListType(t.Name.Local)
				if where != blobsvc.BlockLatest && where != blobsvc.BlockCommitted && where != blobsvc.BlockUncommitted {
					return nil, invalidXML("unknown element " + t.Name.Local)
				}
				if len(refs) >= blobsvc.MaxCommittedBlocks {
					return nil, invalidXML("more than 50000 blocks")
				}
				cur = &blobsvc.BlockRef{Where: where}
				text.Reset()
			default:
				return nil, invalidXML("unexpected element " + t.Name.Local)
			}
		case xml.CharData:
			if depth == 2 {
				if text.Len()+len(t) > 1024 {
					return nil, invalidXML("block id too long")
				}
				text.Write(t)
			}
		case xml.EndElement:
			if depth == 2 && cur != nil {
				cur.ID = strings.TrimSpace(text.String())
				refs = append(refs, *cur)
				cur = nil
			}
			depth--
		}
	}
	if !sawRoot {
		return nil, invalidXML("no BlockList element")
	}
	return refs, nil
}

func invalidXML(reason string) *storagehttp.Error {
	return storagehttp.NewError(http.StatusBadRequest, storagehttp.CodeInvalidXMLDocument, "XML specified is not syntactically valid.",
		storagehttp.Detail{Name: "Reason", Value: reason})
}

// blockListXML is Get Block List's body.
type blockListXML struct {
	XMLName     xml.Name   `xml:"BlockList"`
	Committed   *blocksXML `xml:"CommittedBlocks"`
	Uncommitted *blocksXML `xml:"UncommittedBlocks"`
}

type blocksXML struct {
	Blocks []blockXML `xml:"Block"`
}

type blockXML struct {
	Name string `xml:"Name"`
	Size int64  `xml:"Size"`
}

func toBlocksXML(bs []blobsvc.Block) *blocksXML {
	out := &blocksXML{Blocks: []blockXML{}}
	for _, b := range bs {
		out.Blocks = append(out.Blocks, blockXML{Name: b.ID, Size: b.Size})
	}
	return out
}

// containerListXML is List Containers' body.
type containerListXML struct {
	XMLName         xml.Name       `xml:"EnumerationResults"`
	ServiceEndpoint string         `xml:"ServiceEndpoint,attr"`
	Prefix          string         `xml:"Prefix,omitempty"`
	Marker          string         `xml:"Marker,omitempty"`
	MaxResults      int            `xml:"MaxResults,omitempty"`
	Containers      []containerXML `xml:"Containers>Container"`
	NextMarker      string         `xml:"NextMarker"`
}

type containerXML struct {
	Name       string                   `xml:"Name"`
	Deleted    bool                     `xml:"Deleted,omitempty"`
	Version    string                   `xml:"Version,omitempty"`
	Properties containerPropsXML        `xml:"Properties"`
	Metadata   *storagehttp.MetadataXML `xml:"Metadata,omitempty"`
}

type containerPropsXML struct {
	LastModified          string `xml:"Last-Modified"`
	ETag                  string `xml:"Etag"`
	LeaseStatus           string `xml:"LeaseStatus,omitempty"`
	LeaseState            string `xml:"LeaseState,omitempty"`
	LeaseDuration         string `xml:"LeaseDuration,omitempty"`
	PublicAccess          string `xml:"PublicAccess,omitempty"`
	HasImmutabilityPolicy bool   `xml:"HasImmutabilityPolicy"`
	HasLegalHold          bool   `xml:"HasLegalHold"`
	// Soft-deleted containers (include=deleted).
	DeletedTime            string `xml:"DeletedTime,omitempty"`
	RemainingRetentionDays int    `xml:"RemainingRetentionDays,omitempty"`
}

// blobListXML is List Blobs' body; Items mixes Blob and BlobPrefix
// elements in name order.
type blobListXML struct {
	XMLName         xml.Name `xml:"EnumerationResults"`
	ServiceEndpoint string   `xml:"ServiceEndpoint,attr"`
	ContainerName   string   `xml:"ContainerName,attr"`
	Prefix          string   `xml:"Prefix,omitempty"`
	Marker          string   `xml:"Marker,omitempty"`
	MaxResults      int      `xml:"MaxResults,omitempty"`
	Delimiter       string   `xml:"Delimiter,omitempty"`
	Blobs           blobsXML `xml:"Blobs"`
	NextMarker      string   `xml:"NextMarker"`
}

// blobsXML holds Blob and BlobPrefix items; each element takes its
// name from its XMLName.
type blobsXML struct {
	Items []any
}

type blobPrefixXML struct {
	XMLName xml.Name    `xml:"BlobPrefix"`
	Name    blobNameXML `xml:"Name"`
}

// blobNameXML is a listed blob name. A name holding a character XML 1.0
// cannot carry (U+FFFE, U+FFFF: blob names may hold them, azblob's
// TestContainerListBlobsInvalidBlobName) is sent URL-encoded with
// Encoded="true", as Azure does and the SDKs decode
// (url.QueryUnescape in azblob).
type blobNameXML struct {
	Encoded bool   `xml:"Encoded,attr,omitempty"`
	Value   string `xml:",chardata"`
}

func listedName(name string) blobNameXML {
	if !xmlSafe(name) {
		return blobNameXML{Encoded: true, Value: url.QueryEscape(name)}
	}
	return blobNameXML{Value: name}
}

// xmlSafe reports whether s holds only characters XML 1.0 allows.
func xmlSafe(s string) bool {
	for _, r := range s {
		if r == 0xfffe || r == 0xffff || (r < 0x20 && r != '\t' && r != '\n' && r != '\r') {
			return false
		}
	}
	return true
}

type blobItemXML struct {
	XMLName    xml.Name                 `xml:"Blob"`
	Name       blobNameXML              `xml:"Name"`
	Snapshot   string                   `xml:"Snapshot,omitempty"`
	Deleted    bool                     `xml:"Deleted,omitempty"`
	Properties blobPropsXML             `xml:"Properties"`
	Metadata   *storagehttp.MetadataXML `xml:"Metadata,omitempty"`
	Tags       *tagsXML                 `xml:"Tags,omitempty"`
}

type blobPropsXML struct {
	CreationTime         string `xml:"Creation-Time"`
	LastModified         string `xml:"Last-Modified"`
	ETag                 string `xml:"Etag"`
	ContentLength        int64  `xml:"Content-Length"`
	ContentType          string `xml:"Content-Type"`
	ContentEncoding      string `xml:"Content-Encoding"`
	ContentLanguage      string `xml:"Content-Language"`
	ContentMD5           string `xml:"Content-MD5"`
	ContentDisposition   string `xml:"Content-Disposition"`
	CacheControl         string `xml:"Cache-Control"`
	BlobType             string `xml:"BlobType"`
	AccessTier           string `xml:"AccessTier,omitempty"`
	AccessTierInferred   bool   `xml:"AccessTierInferred,omitempty"`
	AccessTierChangeTime string `xml:"AccessTierChangeTime,omitempty"`
	ArchiveStatus        string `xml:"ArchiveStatus,omitempty"`
	RehydratePriority    string `xml:"RehydratePriority,omitempty"`
	LeaseStatus          string `xml:"LeaseStatus,omitempty"`
	LeaseState           string `xml:"LeaseState,omitempty"`
	LeaseDuration        string `xml:"LeaseDuration,omitempty"`
	ServerEncrypted      bool   `xml:"ServerEncrypted"`
	// The SHA-256 of a customer-provided key the blob is written with.
	CustomerProvidedKeySha256 string `xml:"CustomerProvidedKeySha256,omitempty"`
	TagCount                  int    `xml:"TagCount,omitempty"`
	// Sealed: append blobs (Seal Append Blob).
	Sealed bool `xml:"Sealed,omitempty"`
	// Soft-deleted blobs (include=deleted).
	DeletedTime            string `xml:"DeletedTime,omitempty"`
	RemainingRetentionDays int    `xml:"RemainingRetentionDays,omitempty"`
	// include=copy
	CopyID             string `xml:"CopyId,omitempty"`
	CopyStatus         string `xml:"CopyStatus,omitempty"`
	CopySource         string `xml:"CopySource,omitempty"`
	CopyProgress       string `xml:"CopyProgress,omitempty"`
	CopyCompletionTime string `xml:"CopyCompletionTime,omitempty"`
	// Incremental copies (incremental.go).
	CopyStatusDescription string `xml:"CopyStatusDescription,omitempty"`
	IncrementalCopy       bool   `xml:"IncrementalCopy,omitempty"`
	DestinationSnapshot   string `xml:"DestinationSnapshot,omitempty"`
}

func b64(b []byte) string {
	if b == nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(b)
}

// tagsXML is Get/Set Blob Tags' document (and a listing's Tags element).
type tagsXML struct {
	XMLName xml.Name `xml:"Tags"`
	TagSet  []tagXML `xml:"TagSet>Tag"`
}

type tagXML struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

func toTagsXML(tags map[string]string) *tagsXML {
	out := &tagsXML{TagSet: []tagXML{}}
	for _, k := range blobsvc.SortedTagKeys(tags) {
		out.TagSet = append(out.TagSet, tagXML{Key: k, Value: tags[k]})
	}
	return out
}

// findBlobsXML is Find Blobs by Tags' body.
type findBlobsXML struct {
	XMLName         xml.Name       `xml:"EnumerationResults"`
	ServiceEndpoint string         `xml:"ServiceEndpoint,attr"`
	Where           string         `xml:"Where"`
	Blobs           []foundBlobXML `xml:"Blobs>Blob"`
	NextMarker      string         `xml:"NextMarker"`
}

type foundBlobXML struct {
	Name          string   `xml:"Name"`
	ContainerName string   `xml:"ContainerName"`
	Tags          *tagsXML `xml:"Tags"`
}

// markerTag starts a List Blobs marker that names its blob in base64: a
// name XML cannot carry (see blobNameXML), or one that starts so itself.
const markerTag = "!b64!"

// encodeMarker is the NextMarker of a listing that resumes at name.
func encodeMarker(name string) string {
	if xmlSafe(name) && !strings.HasPrefix(name, markerTag) {
		return name
	}
	return markerTag + base64.RawURLEncoding.EncodeToString([]byte(name))
}

// decodeMarker reads a marker encodeMarker made.
func decodeMarker(m string) (string, error) {
	rest, ok := strings.CutPrefix(m, markerTag)
	if !ok {
		return m, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return "", storagehttp.InvalidQuery("marker", m, "not a marker this service made")
	}
	return string(b), nil
}
