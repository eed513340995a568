package tablesvc

import (
	"fmt"
	"strings"
	"time"
)

// Type is an EDM property type.
type Type uint8

// The EDM types of the Table service's data model.
const (
	String   Type = iota // Edm.String
	Int32                // Edm.Int32
	Int64                // Edm.Int64
	Double               // Edm.Double (NaN and ±Inf allowed)
	Boolean              // Edm.Boolean
	DateTime             // Edm.DateTime, UTC, 100 ns precision
	Guid                 // Edm.Guid (kept as sent, validated as a GUID)
	Binary               // Edm.Binary
)

var edmNames = [...]string{
	String: "Edm.String", Int32: "Edm.Int32", Int64: "Edm.Int64", Double: "Edm.Double",
	Boolean: "Edm.Boolean", DateTime: "Edm.DateTime", Guid: "Edm.Guid", Binary: "Edm.Binary",
}

// EdmName is the type's "@odata.type" name ("Edm.String", ...).
func (t Type) EdmName() string {
	if int(t) < len(edmNames) {
		return edmNames[t]
	}
	return fmt.Sprintf("Edm.Unknown(%d)", t)
}

func (t Type) String() string { return t.EdmName() }

// ParseType parses an "@odata.type" annotation (exact, case-sensitive).
func ParseType(edm string) (Type, bool) {
	for i, n := range edmNames {
		if n == edm {
			return Type(i), true
		}
	}
	return 0, false
}

// Value is one typed value; only the field of its Type is meaningful.
type Value struct {
	Type Type
	Str  string    // String, Guid
	Int  int64     // Int32, Int64
	Num  float64   // Double
	Bool bool      // Boolean
	Time time.Time // DateTime (UTC, truncated to 100 ns)
	Bin  []byte    // Binary
}

// Property is a named value. Entity.Props never holds PartitionKey, RowKey
// or Timestamp.
type Property struct {
	Name  string
	Value Value
}

// Entity is one entity as stored or as sent.
type Entity struct {
	PartitionKey, RowKey string
	Timestamp            time.Time  // set by the service on every write (a sent Timestamp is ignored)
	Props                []Property // user properties in a stable order (as first sent, merged ones appended)
}

// Prop returns the property named name (case-sensitive).
func (e Entity) Prop(name string) (Value, bool) {
	for _, p := range e.Props {
		if p.Name == name {
			return p.Value, true
		}
	}
	return Value{}, false
}

// ETag is the entity's ETag: W/"datetime'<Timestamp, 7 fractional digits,
// colons as %3A>'".
func (e Entity) ETag() string {
	return `W/"datetime'` + strings.ReplaceAll(FormatTime(e.Timestamp), ":", "%3A") + `'"`
}

// Tick is the DateTime precision: 100 ns.
const Tick = 100 * time.Nanosecond

const timeLayout = "2006-01-02T15:04:05.0000000Z"

// FormatTime is the 7-digit form used in ETags and JSON
// ("2026-11-28T06:36:14.5983078Z"). The time is taken to UTC and
// truncated to 100 ns.
func FormatTime(t time.Time) string { return t.UTC().Truncate(Tick).Format(timeLayout) }

// AppendTime appends FormatTime(t) to b.
func AppendTime(b []byte, t time.Time) []byte {
	return t.UTC().Truncate(Tick).AppendFormat(b, timeLayout)
}

// MinTime and MaxTime bound Edm.DateTime values (DM: 1601-01-01 to
// 9999-12-31, both whole days included).
var (
	MinTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)
)

// ParseTime parses an Edm.DateTime literal (ISO 8601, up to 7 fractional
// digits, 'Z' or an offset; a time without either is taken as UTC) and
// returns it in UTC, truncated to 100 ns. It does not check the DateTime
// range (ValidateValue does).
func ParseTime(s string) (time.Time, error) {
	// Go's RFC 3339 parser takes any number of fractional digits; Azure
	// takes at most 7 (100 ns).
	if i := strings.IndexByte(s, '.'); i >= 0 {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j-i-1 > 7 || j == i+1 {
			return time.Time{}, fmt.Errorf("datetime %q: fractional seconds must have 1 to 7 digits", s)
		}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04Z07:00", "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Truncate(Tick), nil
		}
	}
	return time.Time{}, fmt.Errorf("datetime %q is not an ISO 8601 date and time", s)
}
