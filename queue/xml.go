package queue

import (
	"encoding/xml"
	"net/http"
	"time"

	"github.com/blobshare/blobshare/msgqueue"
	"github.com/blobshare/blobshare/storagehttp"
)

// httpTime renders message times as Azure does (RFC 1123, GMT).
func httpTime(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

type messagesListXML struct {
	XMLName  xml.Name     `xml:"QueueMessagesList"`
	Messages []messageOut `xml:"QueueMessage"`
}

// messageOut is one message in a reply; fields left empty are omitted
// (Put answers no text or count, Peek no receipt or next-visible time).
type messageOut struct {
	MessageID       string  `xml:"MessageId"`
	InsertionTime   string  `xml:"InsertionTime"`
	ExpirationTime  string  `xml:"ExpirationTime"`
	PopReceipt      string  `xml:"PopReceipt,omitempty"`
	TimeNextVisible string  `xml:"TimeNextVisible,omitempty"`
	DequeueCount    *int64  `xml:"DequeueCount,omitempty"`
	MessageText     *string `xml:"MessageText,omitempty"`
}

// messageKind selects the fields of messageOut.
type messageKind int

const (
	putReply messageKind = iota
	getReply
	peekReply
)

func renderMessages(ms []msgqueue.Message, kind messageKind) messagesListXML {
	out := messagesListXML{Messages: make([]messageOut, 0, len(ms))}
	for _, m := range ms {
		o := messageOut{MessageID: m.ID, InsertionTime: httpTime(m.Inserted), ExpirationTime: httpTime(m.Expires)}
		if kind != peekReply {
			o.PopReceipt, o.TimeNextVisible = m.PopReceipt, httpTime(m.NextVisible)
		}
		if kind != putReply {
			dc, text := m.DequeueCount, m.Text
			o.DequeueCount, o.MessageText = &dc, &text
		}
		out.Messages = append(out.Messages, o)
	}
	return out
}

type listQueuesXML struct {
	XMLName         xml.Name   `xml:"EnumerationResults"`
	ServiceEndpoint string     `xml:"ServiceEndpoint,attr"`
	Prefix          string     `xml:"Prefix,omitempty"`
	Marker          string     `xml:"Marker,omitempty"`
	MaxResults      int        `xml:"MaxResults,omitempty"`
	Queues          []queueXML `xml:"Queues>Queue"`
	NextMarker      string     `xml:"NextMarker"`
}

type queueXML struct {
	Name     string                   `xml:"Name"`
	Metadata *storagehttp.MetadataXML `xml:"Metadata,omitempty"`
}
