package acl

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// SignedIdentifier is one stored access policy (Set Share, Container,
// Queue or Table ACL), as the client sent it: ISO 8601 times, permission
// letters. Empty fields are left to the SAS that names the policy.
type SignedIdentifier struct {
	ID         string
	Start      string
	Expiry     string
	Permission string
}

// Azure's bounds: "Up to five access policies can be set" and "The
// signed identifier … can be up to 64 characters in length".
const (
	MaxIdentifiers = 5
	MaxIDLength    = 64
)

// Rules are what a service checks of its stored access policies beyond
// the bounds every service shares.
type Rules struct {
	// Letters are the permissions the service's policies may grant, in
	// the order Azure writes them.
	Letters string
	// Canonical: a letter may appear once, and the permission is kept in
	// Letters' order (shares, which store the policy parsed).
	Canonical bool
	// CheckTimes: Start and Expiry must parse (ParseTime) when set;
	// otherwise they are kept as sent and read when a SAS names the
	// policy.
	CheckTimes bool
	// UniqueIDs: two policies may not share an Id (shares).
	UniqueIDs bool
	// EmptyID: a policy may have an empty Id (queues, as before this
	// package; no Azure evidence either way).
	EmptyID bool
}

// The rules of each service, as each front end checked them before this
// package (acl/doc.go).
var (
	ShareRules     = Rules{Letters: "rcwdl", Canonical: true, CheckTimes: true, UniqueIDs: true}
	ContainerRules = Rules{Letters: "racwdxltmeopi"}
	QueueRules     = Rules{Letters: "raup", EmptyID: true}
	TableRules     = Rules{Letters: "raud", CheckTimes: true}
)

// Problem names what is wrong with a set of policies.
type Problem int

const (
	TooMany       Problem = iota + 1 // more than MaxIdentifiers
	IDTooLong                        // an Id of more than MaxIDLength characters
	BadID                            // an empty Id (where refused) or one given twice
	BadPermission                    // a letter the service cannot grant (or repeated, Canonical)
	BadStart                         // a Start that does not parse (CheckTimes)
	BadExpiry                        // an Expiry that does not parse (CheckTimes)
)

// Error is Validate's refusal: the problem and the value concerned. Each
// front end renders it in its service's words (400).
type Error struct {
	Problem Problem
	Value   string
}

func (e *Error) Error() string {
	what := [...]string{TooMany: "more than 5 signed identifiers", IDTooLong: "signed identifier longer than 64 characters",
		BadID: "signed identifier id", BadPermission: "permission", BadStart: "start time", BadExpiry: "expiry time"}
	if e.Problem < TooMany || e.Problem > BadExpiry {
		return "acl: invalid"
	}
	return fmt.Sprintf("acl: %s %q", what[e.Problem], e.Value)
}

// Validate checks ids by r: at most MaxIdentifiers, Ids of 1 to
// MaxIDLength characters, permission letters from r.Letters, and what r
// adds. It returns the policies to store (the permission in Letters'
// order under r.Canonical). Errors: *Error.
func Validate(ids []SignedIdentifier, r Rules) ([]SignedIdentifier, error) {
	if len(ids) > MaxIdentifiers {
		return nil, &Error{Problem: TooMany, Value: fmt.Sprint(len(ids))}
	}
	out := make([]SignedIdentifier, 0, len(ids))
	seen := map[string]bool{}
	for _, id := range ids {
		if utf8.RuneCountInString(id.ID) > MaxIDLength {
			return nil, &Error{Problem: IDTooLong, Value: id.ID}
		}
		if id.ID == "" && !r.EmptyID || r.UniqueIDs && seen[id.ID] {
			return nil, &Error{Problem: BadID, Value: id.ID}
		}
		seen[id.ID] = true
		if r.CheckTimes {
			if _, err := ParseTime(id.Start); err != nil {
				return nil, &Error{Problem: BadStart, Value: id.Start}
			}
			if _, err := ParseTime(id.Expiry); err != nil {
				return nil, &Error{Problem: BadExpiry, Value: id.Expiry}
			}
		}
		perm, ok := permission(id.Permission, r)
		if !ok {
			return nil, &Error{Problem: BadPermission, Value: id.Permission}
		}
		id.Permission = perm
		out = append(out, id)
	}
	return out, nil
}

// permission checks v's letters against r and returns the permission
// to store.
func permission(v string, r Rules) (string, bool) {
	if !r.Canonical {
		return v, strings.Trim(v, r.Letters) == ""
	}
	have := make([]bool, len(r.Letters))
	for _, c := range v {
		i := strings.IndexRune(r.Letters, c)
		if i < 0 || have[i] {
			return "", false
		}
		have[i] = true
	}
	var b strings.Builder
	for i, ok := range have {
		if ok {
			b.WriteByte(r.Letters[i])
		}
	}
	return b.String(), true
}

// ParseTime reads a policy's Start or Expiry: the ISO 8601 forms SAS
// tokens carry (RFC 3339 with or without fractions, minutes without
// seconds, or a date), in UTC; "" is the zero time (the SAS gives the
// field).
func ParseTime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range TimeLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("policy time %q: not ISO 8601", v)
}

// TimeLayouts are the ISO 8601 forms a policy time and a SAS token's
// times (st, se, skt, ske) may take.
var TimeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02"}

// FormatTime is a parsed policy time as Get Share ACL answers it (seven
// fractional digits, UTC); the zero time is "".
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.0000000Z")
}

// Policy is a stored access policy read for a SAS that names it.
type Policy struct {
	Start, Expiry time.Time // zero: the SAS gives it
	Permission    string
}

// Policy parses id's times (ParseTime). Errors: *Error (BadStart,
// BadExpiry) for a policy stored without CheckTimes.
func (id SignedIdentifier) Policy() (Policy, error) {
	start, err := ParseTime(id.Start)
	if err != nil {
		return Policy{}, &Error{Problem: BadStart, Value: id.Start}
	}
	expiry, err := ParseTime(id.Expiry)
	if err != nil {
		return Policy{}, &Error{Problem: BadExpiry, Value: id.Expiry}
	}
	return Policy{Start: start, Expiry: expiry, Permission: id.Permission}, nil
}

// Find returns the policy named si in ids.
func Find(ids []SignedIdentifier, si string) (SignedIdentifier, bool) {
	for _, id := range ids {
		if id.ID == si {
			return id, true
		}
	}
	return SignedIdentifier{}, false
}
