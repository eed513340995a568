package table

import (
	"encoding/base64"
	"net/http"
	"strconv"

	"github.com/blobshare/blobshare/storagehttp"
	"github.com/blobshare/blobshare/tablesvc"
)

// Continuation headers and parameters of Query Entities.
const (
	hdrNextPK = "x-ms-continuation-NextPartitionKey"
	hdrNextRK = "x-ms-continuation-NextRowKey"
)

// encodeToken and decodeToken make continuation values opaque (base64 of
// the key, as Azurite does; clients send them back unread).
func encodeToken(k string) string { return base64.StdEncoding.EncodeToString([]byte(k)) }

func decodeToken(name, v string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return "", invalidInput("The continuation token " + name + " is not valid.")
	}
	return string(b), nil
}

// buildOp turns one entity write (a request or a batch part) into a
// tablesvc.Op: the verb and If-Match choose the kind (PUT/MERGE without
// If-Match are the upserts), keys come from the URL (from the body for
// Insert), the body gives the properties.
func buildOp(method string, p resourcePath, h http.Header, body []byte) (tablesvc.Op, error) {
	var op tablesvc.Op
	ifMatch := h.Get("If-Match")
	if h.Get("If-None-Match") != "" && method != http.MethodPost {
		if ifMatch != "" {
			return op, invalidInput("Both If-Match and If-None-Match HTTP headers cannot be specified at the same time.")
		}
		return op, invalidInput("If-None-Match HTTP header cannot be specified for " + method + " operations.")
	}
	switch {
	case method == http.MethodPost && p.scope == scopeEntities:
		op.Kind = tablesvc.Insert
	case method == http.MethodPut && p.scope == scopeEntity:
		op.Kind, op.IfMatch = tablesvc.InsertOrReplace, ""
		if ifMatch != "" {
			op.Kind, op.IfMatch = tablesvc.Update, ifMatch
		}
	case (method == "MERGE" || method == http.MethodPatch) && p.scope == scopeEntity:
		op.Kind = tablesvc.InsertOrMerge
		if ifMatch != "" {
			op.Kind, op.IfMatch = tablesvc.Merge, ifMatch
		}
	case method == http.MethodDelete && p.scope == scopeEntity:
		if ifMatch == "" {
			return op, storagehttp.MissingHeader("If-Match")
		}
		op.Kind, op.IfMatch = tablesvc.Delete, ifMatch
		op.Entity.PartitionKey, op.Entity.RowKey = p.pk, p.rk
		return op, nil
	default:
		return op, storagehttp.UnsupportedVerb()
	}
	if ct := h.Get("Content-Type"); ct != "" && isAtom(ct) {
		return op, errAtom()
	}
	d, err := decodeEntity(body)
	if err != nil {
		return op, err
	}
	op.Entity.Props = d.props
	if op.Kind == tablesvc.Insert {
		if !d.hasPK || !d.hasRK {
			return op, inputErr("PropertiesNeedValue", "The values are not specified for all properties in the entity.")
		}
		op.Entity.PartitionKey, op.Entity.RowKey = d.pk, d.rk
	} else {
		op.Entity.PartitionKey, op.Entity.RowKey = p.pk, p.rk
	}
	return op, nil
}

func (s *Server) queryEntities(w http.ResponseWriter, c *call) error {
	if err := c.sas.checkTable(c.path.table); err != nil {
		return err
	}
	if err := c.sas.checkAny("r", 'o', true); err != nil {
		return err
	}
	l, err := negotiate(c.r, c.q)
	if err != nil {
		return err
	}
	top, err := topParam(c)
	if err != nil {
		return err
	}
	q := tablesvc.Query{Filter: c.q.Get("$filter"), Top: top}
	if v, ok := c.q["NextPartitionKey"]; ok && len(v) > 0 {
		if q.NextPK, err = decodeToken("NextPartitionKey", v[0]); err != nil {
			return err
		}
		if q.NextRK, err = decodeToken("NextRowKey", c.q.Get("NextRowKey")); err != nil {
			return err
		}
		q.HasNext = true
	}
	// A table SAS's key range bounds the query: its partition bounds join
	// the filter (the service uses them as index bounds), the row bounds
	// within the edge partitions are applied to the page.
	if k := c.sas.keys; !k.Unbounded() {
		q.Filter = rangeFilter(q.Filter, k)
	}
	page, err := s.svc.Query(c.r.Context(), c.path.table, q)
	if err != nil {
		return err
	}
	out := entityOut{level: l, base: baseURL(c.r, s.account), table: c.path.table, fields: parseSelect(c.q.Get("$select"))}
	if page.More {
		w.Header().Set(hdrNextPK, encodeToken(page.NextPK))
		w.Header().Set(hdrNextRK, encodeToken(page.NextRK))
	}
	// The page is streamed out entity by entity (a page may hold 1,000
	// entities of up to 1 MiB): one buffer of a few entities, not a second
	// copy of the page.
	setJSONHeaders(w, l)
	w.WriteHeader(http.StatusOK)
	b := make([]byte, 0, 64<<10)
	b = append(b, '{')
	if l != noMeta {
		b = appendString(b, "odata.metadata")
		b = append(b, ':')
		b = appendString(b, out.base+"/$metadata#"+c.path.table)
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	n := 0
	for _, e := range page.Entities {
		if !c.sas.keys.Contains(e.PartitionKey, e.RowKey) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = out.appendEntity(b, e, "")
		if len(b) >= 64<<10 {
			if _, err := w.Write(b); err != nil {
				return nil // the client went away; nothing to answer
			}
			b = b[:0]
		}
	}
	b = append(b, "]}"...)
	_, _ = w.Write(b)
	return nil
}

// rangeFilter adds a table SAS's partition bounds to filter.
func rangeFilter(filter string, k storagehttp.TableKeyRange) string {
	var conds []string
	if k.StartPK != "" {
		conds = append(conds, "PartitionKey ge "+keyLiteral(k.StartPK))
	}
	if k.EndPK != "" {
		conds = append(conds, "PartitionKey le "+keyLiteral(k.EndPK))
	}
	out := ""
	for _, c := range conds {
		if out != "" {
			out += " and "
		}
		out += c
	}
	if filter != "" {
		out = "(" + filter + ") and " + out
	}
	return out
}

func (s *Server) getEntity(w http.ResponseWriter, c *call) error {
	if err := c.sas.checkEntity(c.path.table, "r", c.path.pk, c.path.rk); err != nil {
		return err
	}
	l, err := negotiate(c.r, c.q)
	if err != nil {
		return err
	}
	e, err := s.svc.Get(c.r.Context(), c.path.table, c.path.pk, c.path.rk)
	if err != nil {
		return err
	}
	out := entityOut{level: l, base: baseURL(c.r, s.account), table: c.path.table, fields: parseSelect(c.q.Get("$select"))}
	w.Header().Set("ETag", e.ETag())
	writeJSON(w, http.StatusOK, l, out.appendEntity(nil, e, out.base+"/$metadata#"+c.path.table+"/@Element"))
	return nil
}

// write runs one entity write of a request and answers it.
func (s *Server) write(w http.ResponseWriter, c *call) error {
	l, err := negotiate(c.r, c.q)
	if err != nil {
		return err
	}
	body, err := readBody(c.r)
	if err != nil {
		return err
	}
	op, err := buildOp(c.method, c.path, c.r.Header, body)
	if err != nil {
		return err
	}
	if err := c.sas.checkEntity(c.path.table, permsOf(op.Kind), op.Entity.PartitionKey, op.Entity.RowKey); err != nil {
		return err
	}
	e, err := s.svc.Apply(c.r.Context(), c.path.table, op)
	if err != nil {
		return err
	}
	base := baseURL(c.r, s.account)
	h := w.Header()
	if op.Kind == tablesvc.Delete {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	h.Set("ETag", e.ETag())
	if op.Kind != tablesvc.Insert {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	loc := base + "/" + entityPath(c.path.table, e.PartitionKey, e.RowKey)
	h.Set("Location", loc)
	pref := preference(c.r)
	if pref != "" {
		h.Set("Preference-Applied", pref)
	}
	if pref == "return-no-content" {
		h.Set("DataServiceId", loc)
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	out := entityOut{level: l, base: base, table: c.path.table}
	writeJSON(w, http.StatusCreated, l, out.appendEntity(nil, e, base+"/$metadata#"+c.path.table+"/@Element"))
	return nil
}

func (s *Server) insertEntity(w http.ResponseWriter, c *call) error { return s.write(w, c) }
func (s *Server) updateEntity(w http.ResponseWriter, c *call) error { return s.write(w, c) }
func (s *Server) mergeEntity(w http.ResponseWriter, c *call) error  { return s.write(w, c) }
func (s *Server) deleteEntity(w http.ResponseWriter, c *call) error { return s.write(w, c) }

// statusText is "201 Created" for the batch answer's status lines.
func statusLine(code int) string { return strconv.Itoa(code) + " " + http.StatusText(code) }
