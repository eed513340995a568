package table

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/blobshare/blobshare/storagehttp"
	"github.com/blobshare/blobshare/tablesvc"
)

// The OData JSON codec of entities (payload-format-for-table-service-
// operations): the decoder turns a request body into a tablesvc.Entity
// with typed values, the encoder renders one at a metadata level.

// maxJSONDepth: an entity is one flat object; anything nested is refused
// at the first nested delimiter, so the decoder never recurses.
const (
	annotationSuffix = "@odata.type"
	propPK           = "PartitionKey"
	propRK           = "RowKey"
	propTimestamp    = "Timestamp"
)

// inputErr is a 400 with a Table error code.
func inputErr(code, msg string) *storagehttp.Error {
	return storagehttp.NewError(http.StatusBadRequest, code, msg)
}

func invalidInput(msg string) *storagehttp.Error { return inputErr(storagehttp.CodeInvalidInput, msg) }

// rawValue is one JSON scalar as read.
type rawValue struct {
	tok any // string, json.Number, bool or nil
}

// decodedEntity is a request body: the keys (hasPK/hasRK: present as
// strings) and the user properties in body order.
type decodedEntity struct {
	pk, rk       string
	hasPK, hasRK bool
	props        []tablesvc.Property
}

var guidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// decodeEntity reads one flat JSON object: "Name": value pairs, type
// annotations "Name@odata.type", odata.* control information (ignored),
// Timestamp (ignored: the service sets it), null values (dropped: Azure
// stores no nulls). Nested objects or arrays, malformed JSON, a value
// that does not parse as its annotated type and a property given twice
// are 400.
func decodeEntity(body []byte) (decodedEntity, error) {
	var d decodedEntity
	if !utf8.Valid(body) {
		return d, invalidInput("The request body is not valid UTF-8.")
	}
	values := map[string]rawValue{}
	var order []string
	var types map[string]string
	// member takes one member of the object, in order.
	member := func(key string, vt any) error {
		if _, nested := vt.(json.Delim); nested {
			return invalidInput("A property value must be a JSON string, number, boolean or null; " + key + " is an object or array.")
		}
		switch {
		case strings.HasPrefix(key, "odata."):
			return nil
		case strings.HasSuffix(key, annotationSuffix):
			name := strings.TrimSuffix(key, annotationSuffix)
			s, ok := vt.(string)
			if !ok {
				return invalidInput("The type annotation of " + name + " must be a string.")
			}
			if _, dup := types[name]; dup {
				return inputErr("DuplicatePropertiesSpecified", "A property is specified more than one time.")
			}
			if types == nil {
				types = map[string]string{}
			}
			types[name] = s
			return nil
		case strings.Contains(key, "@"):
			return nil // other instance annotations carry nothing we store
		}
		if _, dup := values[key]; dup {
			return inputErr("DuplicatePropertiesSpecified", "A property is specified more than one time.")
		}
		values[key] = rawValue{vt}
		order = append(order, key)
		return nil
	}
	if pairs, ok := flatPairs(body); ok {
		for _, p := range pairs {
			if err := member(p.key, p.tok); err != nil {
				return d, err
			}
		}
	} else if err := tokenPairs(body, member); err != nil {
		return d, err
	}
	for _, name := range order {
		raw := values[name]
		switch name {
		case propPK, propRK:
			s, ok := raw.tok.(string)
			if t, annotated := types[name]; !ok || annotated && t != "Edm.String" {
				if raw.tok == nil {
					continue // a null key is a missing key
				}
				return d, invalidInput("The " + name + " must be an Edm.String.")
			}
			if name == propPK {
				d.pk, d.hasPK = s, true
			} else {
				d.rk, d.hasRK = s, true
			}
			continue
		case propTimestamp:
			continue
		}
		if raw.tok == nil {
			continue
		}
		v, err := typedValue(name, raw, types[name])
		if err != nil {
			return d, err
		}
		d.props = append(d.props, tablesvc.Property{Name: name, Value: v})
	}
	return d, nil
}

// typedValue converts one scalar by its annotation (edm; "" none).
func typedValue(name string, raw rawValue, edm string) (tablesvc.Value, error) {
	bad := func(t string) error {
		return invalidInput("The value of property '" + name + "' is not a valid " + t + ".")
	}
	if edm == "" {
		switch v := raw.tok.(type) {
		case string:
			return tablesvc.Value{Type: tablesvc.String, Str: v}, nil
		case bool:
			return tablesvc.Value{Type: tablesvc.Boolean, Bool: v}, nil
		case json.Number:
			// An integral number that fits Int32 is an Int32; any other
			// number is a Double (Int64 needs its annotation).
			if !strings.ContainsAny(string(v), ".eE") {
				if i, err := strconv.ParseInt(string(v), 10, 32); err == nil {
					return tablesvc.Value{Type: tablesvc.Int32, Int: i}, nil
				}
			}
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				return tablesvc.Value{}, bad("Edm.Double")
			}
			return tablesvc.Value{Type: tablesvc.Double, Num: f}, nil
		}
		return tablesvc.Value{}, bad("value")
	}
	t, ok := tablesvc.ParseType(edm)
	if !ok {
		return tablesvc.Value{}, invalidInput("The type annotation '" + edm + "' of property '" + name + "' is not a known EDM type.")
	}
	str, isStr := raw.tok.(string)
	num, isNum := raw.tok.(json.Number)
	switch t {
	case tablesvc.String:
		if !isStr {
			return tablesvc.Value{}, bad(edm)
		}
		return tablesvc.Value{Type: t, Str: str}, nil
	case tablesvc.Boolean:
		b, ok := raw.tok.(bool)
		if !ok {
			return tablesvc.Value{}, bad(edm)
		}
		return tablesvc.Value{Type: t, Bool: b}, nil
	case tablesvc.Int32, tablesvc.Int64:
		lit := str
		if isNum {
			lit = string(num)
		} else if !isStr {
			return tablesvc.Value{}, bad(edm)
		}
		bits := 64
		if t == tablesvc.Int32 {
			bits = 32
		}
		i, err := strconv.ParseInt(lit, 10, bits)
		if err != nil {
			return tablesvc.Value{}, bad(edm)
		}
		return tablesvc.Value{Type: t, Int: i}, nil
	case tablesvc.Double:
		var f float64
		switch {
		case isNum:
			var err error
			if f, err = strconv.ParseFloat(string(num), 64); err != nil {
				return tablesvc.Value{}, bad(edm)
			}
		case isStr && str == "NaN":
			f = math.NaN()
		case isStr && str == "Infinity":
			f = math.Inf(1)
		case isStr && str == "-Infinity":
			f = math.Inf(-1)
		case isStr:
			var err error
			if f, err = strconv.ParseFloat(str, 64); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return tablesvc.Value{}, bad(edm)
			}
		default:
			return tablesvc.Value{}, bad(edm)
		}
		return tablesvc.Value{Type: t, Num: f}, nil
	case tablesvc.DateTime:
		if !isStr {
			return tablesvc.Value{}, bad(edm)
		}
		tm, err := tablesvc.ParseTime(str)
		if err != nil {
			return tablesvc.Value{}, bad(edm)
		}
		return tablesvc.Value{Type: t, Time: tm}, nil
	case tablesvc.Guid:
		if !isStr || !guidRE.MatchString(str) {
			return tablesvc.Value{}, bad(edm)
		}
		return tablesvc.Value{Type: t, Str: str}, nil
	case tablesvc.Binary:
		if !isStr {
			return tablesvc.Value{}, bad(edm)
		}
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			return tablesvc.Value{}, bad(edm)
		}
		return tablesvc.Value{Type: t, Bin: b}, nil
	}
	return tablesvc.Value{}, bad(edm)
}

// entityOut says how to render one entity.
type entityOut struct {
	level  level
	base   string          // http://host/account
	table  string          // the table's name as created
	fields map[string]bool // $select (nil: everything)
}

// appendEntity renders e as one JSON object.
func (o *entityOut) appendEntity(b []byte, e tablesvc.Entity, metadata string) []byte {
	b = append(b, '{')
	first := true
	field := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, name)
		b = append(b, ':')
	}
	if o.level != noMeta && metadata != "" {
		field("odata.metadata")
		b = appendString(b, metadata)
	}
	if o.level == fullMeta {
		field("odata.type")
		b = appendString(b, o.base[strings.LastIndexByte(o.base, '/')+1:]+"."+o.table)
		field("odata.id")
		b = appendString(b, o.base+"/"+entityPath(o.table, e.PartitionKey, e.RowKey))
	}
	if o.level != noMeta {
		field("odata.etag")
		b = appendString(b, e.ETag())
	}
	if o.level == fullMeta {
		field("odata.editLink")
		b = appendString(b, entityPath(o.table, e.PartitionKey, e.RowKey))
	}
	if o.selected(propPK) {
		field(propPK)
		b = appendString(b, e.PartitionKey)
	}
	if o.selected(propRK) {
		field(propRK)
		b = appendString(b, e.RowKey)
	}
	if o.selected(propTimestamp) {
		if o.level == fullMeta {
			field(propTimestamp + annotationSuffix)
			b = appendString(b, "Edm.DateTime")
		}
		field(propTimestamp)
		// The form has nothing JSON escapes: appended in place.
		b = append(tablesvc.AppendTime(append(b, '"'), e.Timestamp), '"')
	}
	for _, p := range e.Props {
		if !o.selected(p.Name) {
			continue
		}
		if o.level != noMeta && needsAnnotation(p.Value, o.level) {
			field(p.Name + annotationSuffix)
			b = appendString(b, p.Value.Type.EdmName())
		}
		field(p.Name)
		b = appendValue(b, p.Value)
	}
	return append(b, '}')
}

func (o *entityOut) selected(name string) bool { return o.fields == nil || o.fields[name] }

// needsAnnotation: minimal metadata annotates the types JSON cannot carry
// (Int64, DateTime, Guid, Binary, and Doubles that read as integers or are
// not finite); full metadata annotates every type but String and Boolean.
func needsAnnotation(v tablesvc.Value, l level) bool {
	switch v.Type {
	case tablesvc.String, tablesvc.Boolean:
		return false
	case tablesvc.Int32:
		return l == fullMeta
	case tablesvc.Double:
		return l == fullMeta || math.IsNaN(v.Num) || math.IsInf(v.Num, 0) || v.Num == math.Trunc(v.Num)
	}
	return true
}

// appendValue renders a typed value: Int64 as a string, Double as a
// number or "NaN"/"Infinity"/"-Infinity", DateTime with 7 digits, Binary
// as base64.
func appendValue(b []byte, v tablesvc.Value) []byte {
	switch v.Type {
	case tablesvc.String, tablesvc.Guid:
		return appendString(b, v.Str)
	case tablesvc.Int32:
		return strconv.AppendInt(b, v.Int, 10)
	case tablesvc.Int64:
		return appendString(b, strconv.FormatInt(v.Int, 10))
	case tablesvc.Double:
		switch {
		case math.IsNaN(v.Num):
			return appendString(b, "NaN")
		case math.IsInf(v.Num, 1):
			return appendString(b, "Infinity")
		case math.IsInf(v.Num, -1):
			return appendString(b, "-Infinity")
		}
		return strconv.AppendFloat(b, v.Num, 'g', -1, 64)
	case tablesvc.Boolean:
		return strconv.AppendBool(b, v.Bool)
	case tablesvc.DateTime:
		return append(tablesvc.AppendTime(append(b, '"'), v.Time), '"')
	case tablesvc.Binary:
		return appendString(b, base64.StdEncoding.EncodeToString(v.Bin))
	}
	return append(b, "null"...)
}

// appendString appends s as a JSON string (s is valid UTF-8: it came from
// a decoded JSON body or a validated URL).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			switch c {
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// parseSelect reads $select ("A,B"; "" or "*": everything).
func parseSelect(v string) map[string]bool {
	v = strings.TrimSpace(v)
	if v == "" || v == "*" {
		return nil
	}
	m := map[string]bool{}
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			m[f] = true
		}
	}
	return m
}
