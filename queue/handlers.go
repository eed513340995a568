package queue

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"

	"github.com/blobshare/blobshare/msgqueue"
	"github.com/blobshare/blobshare/storagehttp"
)

// Handlers: parse and validate → one msgqueue.Service call → render.

// noContent answers 204 if the operation succeeded, else returns its
// error for the dispatcher to render.
func noContent(w http.ResponseWriter, err error) error {
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listQueues(w http.ResponseWriter, c *call) error {
	o := msgqueue.ListOptions{Prefix: c.q.Get("prefix"), Marker: c.q.Get("marker")}
	max, ok, err := intParam(c.q, "maxresults")
	if err != nil {
		return err
	}
	if ok {
		if max < 1 {
			return storagehttp.OutOfRangeQuery("maxresults", strconv.FormatInt(max, 10), 1, msgqueue.DefaultListMaxResults)
		}
		o.Max = int(max)
	}
	withMetadata := false
	for _, inc := range strings.Split(c.q.Get("include"), ",") {
		switch strings.TrimSpace(inc) {
		case "metadata":
			withMetadata = true
		case "":
		default:
			return storagehttp.InvalidQuery("include", c.q.Get("include"), "unknown value")
		}
	}
	qs, next, err := s.svc.ListQueues(c.r.Context(), o)
	if err != nil {
		return err
	}
	out := listQueuesXML{ServiceEndpoint: storagehttp.ServiceEndpoint(c.r, "queue", s.account), Prefix: o.Prefix, Marker: o.Marker,
		MaxResults: o.Max, NextMarker: next, Queues: make([]queueXML, 0, len(qs))}
	for _, q := range qs {
		qx := queueXML{Name: q.Name}
		if withMetadata {
			md := q.Metadata
			if md == nil {
				md = map[string]string{}
			}
			qx.Metadata = storagehttp.NewMetadataXML(md)
		}
		out.Queues = append(out.Queues, qx)
	}
	return storagehttp.WriteXML(w, http.StatusOK, out)
}

func (s *Server) getServiceProperties(w http.ResponseWriter, c *call) error {
	doc, err := s.svc.ServiceProperties(c.r.Context())
	if err != nil {
		return err
	}
	props, err := storagehttp.StoredServiceProperties(doc)
	if err != nil {
		return err
	}
	return storagehttp.WriteXML(w, http.StatusOK, props)
}

// setServiceProperties stores the document; parts left out keep their
// values, as the service does.
func (s *Server) setServiceProperties(w http.ResponseWriter, c *call) error {
	var in storagehttp.ServicePropertiesXML
	if err := storagehttp.DecodeXMLBody(c.r, &in, maxSmallBody); err != nil {
		return err
	}
	doc, err := s.svc.ServiceProperties(c.r.Context())
	if err != nil {
		return err
	}
	props, err := storagehttp.StoredServiceProperties(doc)
	if err != nil {
		return err
	}
	props.Merge(in)
	out, err := xml.Marshal(props)
	if err != nil {
		return err
	}
	if err := s.svc.SetServiceProperties(c.r.Context(), out); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func (s *Server) createQueue(w http.ResponseWriter, c *call) error {
	md, err := storagehttp.ParseMetadata(c.r.Header)
	if err != nil {
		return err
	}
	created, err := s.svc.CreateQueue(c.r.Context(), c.path.queue, md)
	if err != nil {
		return err
	}
	if created {
		w.WriteHeader(http.StatusCreated)
	} else {
		w.WriteHeader(http.StatusNoContent)
	}
	return nil
}

func (s *Server) deleteQueue(w http.ResponseWriter, c *call) error {
	return noContent(w, s.svc.DeleteQueue(c.r.Context(), c.path.queue))
}

func (s *Server) getMetadata(w http.ResponseWriter, c *call) error {
	q, err := s.svc.Queue(c.r.Context(), c.path.queue)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("x-ms-approximate-messages-count", strconv.FormatInt(q.ApproximateMessages, 10))
	storagehttp.SetMetadataHeaders(h, q.Metadata)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) setMetadata(w http.ResponseWriter, c *call) error {
	md, err := storagehttp.ParseMetadata(c.r.Header)
	if err != nil {
		return err
	}
	return noContent(w, s.svc.SetMetadata(c.r.Context(), c.path.queue, md))
}

func (s *Server) getACL(w http.ResponseWriter, c *call) error {
	ids, err := s.svc.ACL(c.r.Context(), c.path.queue)
	if err != nil {
		return err
	}
	out := storagehttp.SignedIdentifiersDoc(ids)
	if c.r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return nil
	}
	return storagehttp.WriteXML(w, http.StatusOK, out)
}

func (s *Server) setACL(w http.ResponseWriter, c *call) error {
	ids, err := storagehttp.DecodeSignedIdentifiers(c.r, maxSmallBody)
	if err != nil {
		return err
	}
	return noContent(w, s.svc.SetACL(c.r.Context(), c.path.queue, ids))
}

func (s *Server) putMessage(w http.ResponseWriter, c *call) error {
	o, err := putOptions(c.q)
	if err != nil {
		return err
	}
	text, err := parseMessageBody(c.r, true)
	if err != nil {
		return err
	}
	m, err := s.svc.Put(c.r.Context(), c.path.queue, *text, o)
	if err != nil {
		return err
	}
	return storagehttp.WriteXML(w, http.StatusCreated, renderMessages([]msgqueue.Message{m}, putReply))
}

// numOfMessages reads numofmessages (default 1).
func numOfMessages(c *call) (int, error) {
	n, ok, err := intParam(c.q, "numofmessages")
	if err != nil || !ok {
		return 1, err
	}
	return int(n), nil
}

func (s *Server) getMessages(w http.ResponseWriter, c *call) error {
	n, err := numOfMessages(c)
	if err != nil {
		return err
	}
	vis, _, err := secondsParam(c.q, "visibilitytimeout", msgqueue.DefaultGetVisibility)
	if err != nil {
		return err
	}
	ms, err := s.svc.Get(c.r.Context(), c.path.queue, n, vis)
	if err != nil {
		return err
	}
	return storagehttp.WriteXML(w, http.StatusOK, renderMessages(ms, getReply))
}

func (s *Server) peekMessages(w http.ResponseWriter, c *call) error {
	n, err := numOfMessages(c)
	if err != nil {
		return err
	}
	ms, err := s.svc.Peek(c.r.Context(), c.path.queue, n)
	if err != nil {
		return err
	}
	return storagehttp.WriteXML(w, http.StatusOK, renderMessages(ms, peekReply))
}

func (s *Server) clearMessages(w http.ResponseWriter, c *call) error {
	return noContent(w, s.svc.Clear(c.r.Context(), c.path.queue))
}

// popReceipt reads the required popreceipt parameter.
func popReceipt(c *call) (string, error) {
	v := c.q.Get("popreceipt")
	if v == "" {
		return "", storagehttp.MissingQuery("popreceipt")
	}
	return v, nil
}

func (s *Server) deleteMessage(w http.ResponseWriter, c *call) error {
	receipt, err := popReceipt(c)
	if err != nil {
		return err
	}
	return noContent(w, s.svc.Delete(c.r.Context(), c.path.queue, c.path.messageID, receipt))
}

// updateMessage needs popreceipt and visibilitytimeout; the body (new
// text) is optional.
func (s *Server) updateMessage(w http.ResponseWriter, c *call) error {
	receipt, err := popReceipt(c)
	if err != nil {
		return err
	}
	vis, ok, err := secondsParam(c.q, "visibilitytimeout", 0)
	if err != nil {
		return err
	}
	if !ok {
		return storagehttp.MissingQuery("visibilitytimeout")
	}
	text, err := parseMessageBody(c.r, false)
	if err != nil {
		return err
	}
	m, err := s.svc.Update(c.r.Context(), c.path.queue, c.path.messageID, receipt, vis, text)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("x-ms-popreceipt", m.PopReceipt)
	h.Set("x-ms-time-next-visible", httpTime(m.NextVisible))
	w.WriteHeader(http.StatusNoContent)
	return nil
}
