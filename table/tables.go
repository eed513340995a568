package table

import (
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/blobshare/blobshare/storagehttp"
	"github.com/blobshare/blobshare/tablesvc"
)

// baseURL is the account's URL as the client addressed it, without the
// final slash (odata.metadata and odata.id are built on it):
// https://<account>.table.core.windows.net on a production-style host,
// http://<host>/<account> on a path-style one.
func baseURL(r *http.Request, account string) string {
	return strings.TrimSuffix(storagehttp.ServiceEndpoint(r, "table", account), "/")
}

// topParam reads $top: absent is 0 (the service's 1,000); a number
// below 1 or not a number is 400 InvalidInput; above 1,000 it is taken as
// 1,000 ("a maximum of 1,000 items at one time"; Azurite clamps too, the
// documentation gives no error for it).
func topParam(c *call) (int, error) {
	v, ok := c.q["$top"]
	if !ok {
		return 0, nil
	}
	raw := ""
	if len(v) > 0 {
		raw = v[0]
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		return 0, invalidInput("The value of the query option $top must be a positive integer.")
	}
	return min(n, 1000), nil
}

// writeJSON answers status with a JSON body at level l.
func writeJSON(w http.ResponseWriter, status int, l level, body []byte) {
	setJSONHeaders(w, l)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// setJSONHeaders sets the headers of an OData JSON answer at level l.
func setJSONHeaders(w http.ResponseWriter, l level) {
	h := w.Header()
	h.Set("Content-Type", l.contentType())
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	h.Set("DataServiceVersion", "3.0;")
}

// appendTable renders one table of Query Tables or Create Table.
func appendTable(b []byte, l level, base, name, metadata string) []byte {
	b = append(b, '{')
	if l != noMeta && metadata != "" {
		b = appendString(b, "odata.metadata")
		b = append(b, ':')
		b = appendString(b, metadata)
		b = append(b, ',')
	}
	if l == fullMeta {
		acct := base[strings.LastIndexByte(base, '/')+1:]
		for _, kv := range [][2]string{{"odata.type", acct + ".Tables"}, {"odata.id", base + "/Tables(" + keyLiteral(name) + ")"},
			{"odata.editLink", "Tables(" + keyLiteral(name) + ")"}} {
			b = appendString(b, kv[0])
			b = append(b, ':')
			b = appendString(b, kv[1])
			b = append(b, ',')
		}
	}
	b = appendString(b, "TableName")
	b = append(b, ':')
	b = appendString(b, name)
	return append(b, '}')
}

func (s *Server) queryTables(w http.ResponseWriter, c *call) error {
	l, err := negotiate(c.r, c.q)
	if err != nil {
		return err
	}
	top, err := topParam(c)
	if err != nil {
		return err
	}
	tables, next, err := s.svc.QueryTables(c.r.Context(), c.q.Get("$filter"), top, c.q.Get("NextTableName"))
	if err != nil {
		return err
	}
	base := baseURL(c.r, s.account)
	b := []byte{'{'}
	if l != noMeta {
		b = appendString(b, "odata.metadata")
		b = append(b, ':')
		b = appendString(b, base+"/$metadata#Tables")
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i, t := range tables {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTable(b, l, base, t.Name, "")
	}
	b = append(b, "]}"...)
	if next != "" {
		w.Header().Set("x-ms-continuation-NextTableName", next)
	}
	writeJSON(w, http.StatusOK, l, b)
	return nil
}

// preference reads Prefer (Create Table, Insert Entity): "" when absent
// or neither return-content nor return-no-content.
func preference(r *http.Request) string {
	switch p := r.Header.Get("Prefer"); p {
	case "return-content", "return-no-content":
		return p
	}
	return ""
}

// readBody reads a JSON request body (bounded by Limits).
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	return io.ReadAll(r.Body)
}

func (s *Server) createTable(w http.ResponseWriter, c *call) error {
	l, err := negotiate(c.r, c.q)
	if err != nil {
		return err
	}
	body, err := readBody(c.r)
	if err != nil {
		return err
	}
	d, err := decodeEntity(body)
	if err != nil {
		return err
	}
	name := ""
	for _, p := range d.props {
		if p.Name == "TableName" && p.Value.Type == tablesvc.String {
			name = p.Value.Str
		}
	}
	if name == "" {
		return inputErr("PropertiesNeedValue", "The values are not specified for all properties in the entity.")
	}
	t, err := s.svc.CreateTable(c.r.Context(), name)
	if err != nil {
		return err
	}
	base := baseURL(c.r, s.account)
	h := w.Header()
	h.Set("Location", base+"/Tables("+keyLiteral(t.Name)+")")
	pref := preference(c.r)
	if pref != "" {
		h.Set("Preference-Applied", pref)
	}
	if pref == "return-no-content" {
		h.Set("DataServiceId", base+"/Tables("+keyLiteral(t.Name)+")")
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	writeJSON(w, http.StatusCreated, l, appendTable(nil, l, base, t.Name, base+"/$metadata#Tables/@Element"))
	return nil
}

func (s *Server) deleteTable(w http.ResponseWriter, c *call) error {
	err := s.svc.DeleteTable(c.r.Context(), c.path.table)
	if errors.Is(err, tablesvc.ErrTableNotFound) {
		return errResourceNotFound(err)
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) getACL(w http.ResponseWriter, c *call) error {
	ids, err := s.svc.ACL(c.r.Context(), c.path.table)
	if err != nil {
		return err
	}
	return storagehttp.WriteXML(w, http.StatusOK, storagehttp.SignedIdentifiersDoc(ids))
}

// setACL answers Set Table ACL; tablesvc.SetACL checks the policies
// (acl.TableRules).
func (s *Server) setACL(w http.ResponseWriter, c *call) error {
	ids, err := storagehttp.DecodeSignedIdentifiers(c.r, maxSmallBody)
	if err != nil {
		return err
	}
	if err := s.svc.SetACL(c.r.Context(), c.path.table, ids); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// serviceProps is the stored document over the defaults.
func (s *Server) serviceProps(c *call) (storagehttp.ServicePropertiesXML, error) {
	doc, err := s.svc.ServiceProperties(c.r.Context())
	if err != nil {
		return storagehttp.ServicePropertiesXML{}, err
	}
	return storagehttp.StoredServiceProperties(doc)
}

func (s *Server) getServiceProperties(w http.ResponseWriter, c *call) error {
	props, err := s.serviceProps(c)
	if err != nil {
		return err
	}
	return storagehttp.WriteXML(w, http.StatusOK, props)
}

// setServiceProperties stores the document; parts left out keep their
// values (Azurite; Azure documents the same for its elements). 202.
func (s *Server) setServiceProperties(w http.ResponseWriter, c *call) error {
	var in storagehttp.ServicePropertiesXML
	if err := storagehttp.DecodeXMLBody(c.r, &in, maxSmallBody); err != nil {
		return err
	}
	if err := checkServiceProps(in); err != nil {
		return err
	}
	props, err := s.serviceProps(c)
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

// maxCorsRules: "Up to five CorsRule elements can be included in the
// request. If more than five CorsRule elements are included in the
// request body, the service will return status code 400 (Bad Request)"
// (Set Table Service Properties).
const maxCorsRules = 5

// checkServiceProps refuses what Set Table Service Properties does not
// take, with 400 InvalidXmlDocument: more than five CORS rules, and a
// retention policy of Logging, HourMetrics or MinuteMetrics whose Days
// is outside "the minimum value you can specify is 1; the largest value
// is 365 (one year)" (aztables' TestSetTooManyCors, TestRetentionTooLong).
func checkServiceProps(in storagehttp.ServicePropertiesXML) error {
	if in.Cors != nil {
		var cors struct {
			Rules []struct{} `xml:"CorsRule"`
		}
		if err := xml.Unmarshal([]byte("<Cors>"+in.Cors.Inner+"</Cors>"), &cors); err != nil {
			return errServiceProps("Cors: " + err.Error())
		}
		if len(cors.Rules) > maxCorsRules {
			return errServiceProps("Cors: at most 5 CorsRule elements")
		}
	}
	for _, sec := range []struct {
		name string
		x    *storagehttp.RawXML
	}{{"Logging", in.Logging}, {"HourMetrics", in.HourMetrics}, {"MinuteMetrics", in.MinuteMetrics}} {
		if sec.x == nil {
			continue
		}
		var v struct {
			Days *string `xml:"RetentionPolicy>Days"`
		}
		if err := xml.Unmarshal([]byte("<x>"+sec.x.Inner+"</x>"), &v); err != nil {
			return errServiceProps(sec.name + ": " + err.Error())
		}
		if v.Days == nil {
			continue
		}
		if d, err := strconv.Atoi(strings.TrimSpace(*v.Days)); err != nil || d < 1 || d > 365 {
			return errServiceProps(sec.name + ": RetentionPolicy Days must be 1 to 365")
		}
	}
	return nil
}

func errServiceProps(reason string) error {
	return storagehttp.NewError(http.StatusBadRequest, storagehttp.CodeInvalidXMLDocument,
		"XML specified is not syntactically valid.", storagehttp.Detail{Name: "Reason", Value: reason})
}
