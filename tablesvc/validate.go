package tablesvc

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/blobshare/blobshare/acl"
)

// The data model's limits (DM, table.md §2).
const (
	MaxKeyBytes       = 1024 // PartitionKey, RowKey: 1 KiB of UTF-16
	MaxProperties     = 255  // including PartitionKey, RowKey, Timestamp
	MaxUserProperties = MaxProperties - 3
	MaxNameLength     = 255       // property names, in characters
	MaxStringUnits    = 32 * 1024 // 64 KiB of UTF-16
	MaxBinaryBytes    = 64 * 1024
	MaxEntityBytes    = 1 << 20 // by DM's estimation formula (EntitySize)
	MaxBatchOps       = 100
	MaxPageSize       = 1000
	MaxSignedIDs      = acl.MaxIdentifiers
)

// Error messages that the front end and tests share; Azure's wording
// where it is known (ERR, CS, Azurite).
const (
	msgNameLength     = "The specified resource name length is not within the permissible limits."
	msgNameChars      = "The specified resource name contains invalid characters."
	msgNeedValue      = "The values are not specified for all properties in the entity."
	msgValueTooLarge  = "The property value exceeds the maximum allowed size (64KB). If the property value is a string, it is UTF-16 encoded and the maximum number of characters should be 32K or less."
	msgTooMany        = "The entity contains more properties than allowed. Each entity can include up to 252 properties to store data. Each entity also has 3 system properties."
	msgEntityTooLarge = "The entity is larger than the maximum size permitted."
	msgNameTooLong    = "The property name exceeds the maximum allowed length (255)."
	msgNameInvalid    = "The property name is invalid."
	msgDuplicateProp  = "A property is specified more than one time."
	msgBadETag        = "The etag value '%s' specified in one of the request headers is not valid. Please make sure only one etag value is specified and is valid."
	msgBadFilter      = "The query condition specified in the request is invalid."
)

// ValidTableName checks a table name (DM: 3 to 63 alphanumeric characters,
// not starting with a digit; "tables" is reserved): *InputError
// OutOfRangeInput (length), InvalidResourceName (characters) or
// InvalidInput (reserved).
func ValidTableName(name string) error {
	if len(name) < 3 || len(name) > 63 {
		return inputErr("OutOfRangeInput", msgNameLength)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return inputErr("InvalidResourceName", msgNameChars)
		}
	}
	if strings.EqualFold(name, "tables") {
		return inputErr("InvalidInput", "The table name %q is reserved.", name)
	}
	return nil
}

// utf16Len is the length of s in UTF-16 code units (s is valid UTF-8).
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// ValidKey checks a PartitionKey or RowKey value (which names it):
// characters (DM: no /, \, #, ?, U+0000–U+001F, U+007F–U+009F) give
// OutOfRangeInput, more than 1 KiB of UTF-16 PropertyValueTooLarge (Azure
// per CS; Azurite answers InvalidInput for both).
func ValidKey(which, v string) error {
	if !utf8.ValidString(v) {
		return inputErr("InvalidInput", "The '%s' parameter is not valid UTF-8.", which)
	}
	for _, r := range v {
		if r == '/' || r == '\\' || r == '#' || r == '?' || r <= 0x1f || r >= 0x7f && r <= 0x9f {
			return inputErr("OutOfRangeInput", "The '%s' parameter of value '%s' is out of range.", which, v)
		}
	}
	if 2*utf16Len(v) > MaxKeyBytes {
		return inputErr("PropertyValueTooLarge", "The '%s' value exceeds the maximum allowed size of 1 KiB.", which)
	}
	return nil
}

// ValidPropertyName checks a user property name: C# identifier rules, at
// most 255 characters, not a system property.
func ValidPropertyName(name string) error {
	if !utf8.ValidString(name) || name == "" {
		return inputErr("PropertyNameInvalid", msgNameInvalid)
	}
	if utf8.RuneCountInString(name) > MaxNameLength {
		return inputErr("PropertyNameTooLong", msgNameTooLong)
	}
	for i, r := range name {
		letter := unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Lm, unicode.Lo, unicode.Nl) || r == '_'
		if i == 0 && !letter || i > 0 && !letter && !unicode.In(r, unicode.Nd, unicode.Pc, unicode.Mn, unicode.Mc, unicode.Cf) {
			return inputErr("PropertyNameInvalid", msgNameInvalid)
		}
	}
	switch name {
	case "PartitionKey", "RowKey", "Timestamp":
		return inputErr("InvalidInput", "The system property '%s' cannot be set as a user property.", name)
	}
	return nil
}

// ValidateValue checks one value against its type's range and size.
func ValidateValue(name string, v Value) error {
	switch v.Type {
	case String:
		if !utf8.ValidString(v.Str) {
			return inputErr("InvalidInput", "The value of property '%s' is not valid UTF-8.", name)
		}
		if len(v.Str) > MaxStringUnits && utf16Len(v.Str) > MaxStringUnits {
			return inputErr("PropertyValueTooLarge", msgValueTooLarge)
		}
	case Int32:
		if v.Int < math.MinInt32 || v.Int > math.MaxInt32 {
			return inputErr("InvalidInput", "The value of property '%s' is out of the Edm.Int32 range.", name)
		}
	case Int64, Double, Boolean:
	case DateTime:
		if v.Time.Before(MinTime) || v.Time.After(MaxTime) {
			return inputErr("OutOfRangeInput", "The value of property '%s' is out of the Edm.DateTime range.", name)
		}
	case Guid:
		if !validGUID(v.Str) {
			return inputErr("InvalidInput", "The value of property '%s' is not a valid Edm.Guid.", name)
		}
	case Binary:
		if len(v.Bin) > MaxBinaryBytes {
			return inputErr("PropertyValueTooLarge", msgValueTooLarge)
		}
	default:
		return inputErr("InvalidInput", "The type of property '%s' is not supported.", name)
	}
	return nil
}

// validGUID accepts the 8-4-4-4-12 hexadecimal form (either case).
func validGUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// EntitySize is DM's estimate of an entity's size: 4 bytes + len(PK+RK)×2
// + per property (8 + len(name)×2 + the value's size: String len×2 + 4,
// DateTime 8, Guid 16, Double 8, Int32 4, Int64 8, Boolean 1, Binary
// len + 4), lengths in UTF-16 units.
func EntitySize(e Entity) int {
	n := 4 + 2*(utf16Len(e.PartitionKey)+utf16Len(e.RowKey))
	for _, p := range e.Props {
		n += 8 + 2*utf16Len(p.Name)
		switch p.Value.Type {
		case String:
			n += 2*utf16Len(p.Value.Str) + 4
		case DateTime, Double, Int64:
			n += 8
		case Guid:
			n += 16
		case Int32:
			n += 4
		case Boolean:
			n++
		case Binary:
			n += len(p.Value.Bin) + 4
		}
	}
	return n
}

// validateKeys checks both keys of e.
func validateKeys(pk, rk string) error {
	if err := ValidKey("PartitionKey", pk); err != nil {
		return err
	}
	return ValidKey("RowKey", rk)
}

// ValidateEntity checks an entity as sent: keys, property names (unique),
// values, the property count and the size. The count and the size are
// checked again on a merge's result.
func ValidateEntity(e Entity) error {
	if err := validateKeys(e.PartitionKey, e.RowKey); err != nil {
		return err
	}
	seen := make(map[string]struct{}, len(e.Props))
	for _, p := range e.Props {
		if err := ValidPropertyName(p.Name); err != nil {
			return err
		}
		if _, dup := seen[p.Name]; dup {
			return inputErr("DuplicatePropertiesSpecified", msgDuplicateProp)
		}
		seen[p.Name] = struct{}{}
		if err := ValidateValue(p.Name, p.Value); err != nil {
			return err
		}
	}
	return checkTotals(e)
}

// checkTotals checks the property count and the size of a whole entity.
func checkTotals(e Entity) error {
	if len(e.Props) > MaxUserProperties {
		return inputErr("TooManyProperties", msgTooMany)
	}
	if EntitySize(e) > MaxEntityBytes {
		return inputErr("EntityTooLarge", msgEntityTooLarge)
	}
	return nil
}

// ifMatch is a parsed If-Match value: any ("*") or one ETag, normalised.
type ifMatch struct {
	any  bool
	etag string
}

// parseIfMatch accepts "*" or one entity tag (W/"…" or "…", no inner
// quote); anything else is InvalidInput with Azure's message.
func parseIfMatch(s string) (ifMatch, error) {
	if s == "*" {
		return ifMatch{any: true}, nil
	}
	t := strings.TrimPrefix(s, "W/")
	if len(t) < 2 || t[0] != '"' || t[len(t)-1] != '"' || strings.Contains(t[1:len(t)-1], `"`) {
		return ifMatch{}, inputErr("InvalidInput", msgBadETag, s)
	}
	return ifMatch{etag: normalizeETag(s)}, nil
}

// normalizeETag treats %3A (either case) and ':' alike, as Azure's
// clients may send either (Azurite does the same).
func normalizeETag(s string) string {
	if !strings.Contains(s, "%3") {
		return s
	}
	// Two passes equal one strings.Replacer (a pass never makes a "%3"
	// sequence: it writes only ':'), without building one per request.
	return strings.ReplaceAll(strings.ReplaceAll(s, "%3A", ":"), "%3a", ":")
}

// matches says whether the condition holds for an existing entity: the
// normalised form of its ETag (colons, no %3A) is built directly, as it
// is compared on every conditional write.
func (m ifMatch) matches(e Entity) bool {
	if m.any {
		return true
	}
	const pre, post = `W/"datetime'`, `'"`
	t := FormatTime(e.Timestamp)
	return len(m.etag) == len(pre)+len(t)+len(post) && strings.HasPrefix(m.etag, pre) &&
		m.etag[len(pre):len(pre)+len(t)] == t && strings.HasSuffix(m.etag, post)
}
