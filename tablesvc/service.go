package tablesvc

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/blobshare/blobshare/acl"
)

// Table is a table as created (Name keeps the case it was created with).
type Table struct{ Name string }

// SignedIdentifier is one stored access policy of a table's ACL, kept as
// sent: acl's one type (fields ID, Start, Expiry, Permission, as stored).
type SignedIdentifier = acl.SignedIdentifier

// OpKind is an entity write.
type OpKind uint8

// The entity writes.
const (
	Insert          OpKind = iota // POST: 409 if present
	Update                        // PUT with If-Match: replace; 404 if absent; 412 if stale
	Merge                         // MERGE with If-Match: merge props; 404 if absent; 412 if stale
	Delete                        // DELETE with If-Match ("*" or an ETag); 404 / 412
	InsertOrReplace               // PUT without If-Match: no condition
	InsertOrMerge                 // MERGE without If-Match: no condition
)

// Op is one entity write. IfMatch is "*" or an ETag for Update, Merge and
// Delete, "" for the others.
type Op struct {
	Kind    OpKind
	Entity  Entity // keys always; Props for every kind but Delete
	IfMatch string
}

// Query is Query Entities.
type Query struct {
	Filter string // raw OData $filter; "" none; a bad filter is *InputError InvalidInput
	Top    int    // 0 means 1000; 1..1000
	// Continuation: the first entity to return is the first with (PK, RK)
	// >= (NextPK, NextRK).
	NextPK, NextRK string
	HasNext        bool
}

// Page is one page of a query; More says NextPK/NextRK continue it.
type Page struct {
	Entities       []Entity
	NextPK, NextRK string
	More           bool
}

// Service is the Table semantics over a Store; safe for concurrent use;
// knows nothing of HTTP.
type Service struct {
	store Store
	now   func() time.Time
	// scanBudget bounds the rows one Query or QueryTables page reads
	// (DefaultScanBudget), scanBytes the entity bytes (by EntitySize) one
	// Query page reads (DefaultScanBytes); tests lower them.
	scanBudget, scanBytes int
}

// New returns a Service over store; now is the clock (nil: time.Now).
func New(store Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, now: now, scanBudget: DefaultScanBudget, scanBytes: DefaultScanBytes}
}

// DefaultScanBudget is how many rows one page of a query reads at most
// before it answers what it has (maybe nothing) with a continuation —
// Azure's equivalent is its five-second limit ("It is possible for a
// query to return no results but to still return a continuation header").
const DefaultScanBudget = 20000

// DefaultScanBytes bounds the entity data (by EntitySize) one page of a
// query reads, and so the memory of its result: 1,000 entities of up to
// 1 MiB each would otherwise make a page of a gigabyte. Pages of ordinary
// entities (a few KiB) end by Top or DefaultScanBudget long before.
const DefaultScanBytes = 32 << 20

// CreateTable creates a table (its name checked first).
func (s *Service) CreateTable(ctx context.Context, name string) (Table, error) {
	if err := ValidTableName(name); err != nil {
		return Table{}, err
	}
	if err := s.store.CreateTable(ctx, name); err != nil {
		return Table{}, err
	}
	return Table{Name: name}, nil
}

// DeleteTable deletes a table, its entities and its ACL.
func (s *Service) DeleteTable(ctx context.Context, name string) error {
	if err := ValidTableName(name); err != nil {
		return err
	}
	return s.store.DeleteTable(ctx, name)
}

// Table looks a table up case-insensitively.
func (s *Service) Table(ctx context.Context, name string) (Table, error) {
	if err := ValidTableName(name); err != nil {
		return Table{}, err
	}
	return s.store.Table(ctx, name)
}

// pageSize applies $top's rules: 0 means 1000, larger values are clamped
// to 1000 (as Azurite does), negative ones are InvalidInput.
func pageSize(top int) (int, error) {
	switch {
	case top < 0:
		return 0, inputErr("InvalidInput", "The value of $top (%d) is out of range.", top)
	case top == 0 || top > MaxPageSize:
		return MaxPageSize, nil
	}
	return top, nil
}

// QueryTables lists tables in lower-cased name order, up to top (0: 1000)
// starting at the table whose lower-cased name is next, filtered by an
// OData $filter over TableName; nextName is "" at the end.
func (s *Service) QueryTables(ctx context.Context, filter string, top int, next string) ([]Table, string, error) {
	f, err := ParseFilter(filter)
	if err != nil {
		return nil, "", err
	}
	n, err := pageSize(top)
	if err != nil {
		return nil, "", err
	}
	// The continuation names the next table the filter matches, so a
	// page that ends with the last match has none (Azure: a listing of
	// four tables with $top 2 is two pages, as aztables' TestQueryTable
	// expects); only a scan that hits its budget first answers a
	// continuation that may lead to an empty page.
	var out []Table
	nextName, scanned := "", 0
	err = s.store.ScanTables(ctx, next, func(t Table) bool {
		if scanned == s.scanBudget {
			nextName = lowerASCII(t.Name)
			return false
		}
		scanned++
		if !f.Match(func(p string) (Value, bool) {
			if p == "TableName" {
				return Value{Type: String, Str: t.Name}, true
			}
			return Value{}, false
		}) {
			return true
		}
		if len(out) == n {
			nextName = lowerASCII(t.Name)
			return false
		}
		out = append(out, t)
		return true
	})
	if err != nil {
		return nil, "", err
	}
	return out, nextName, nil
}

// lowerASCII lower-cases a table name (names are ASCII by ValidTableName).
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// ACL returns a table's stored access policies.
func (s *Service) ACL(ctx context.Context, table string) ([]SignedIdentifier, error) {
	if err := ValidTableName(table); err != nil {
		return nil, err
	}
	return s.store.ACL(ctx, table)
}

// SetACL replaces a table's stored access policies: at most 5, ids of 1
// to 64 characters, permissions from "raud", Start and Expiry ISO 8601
// (acl.Validate with acl.TableRules; else InvalidXmlDocument).
func (s *Service) SetACL(ctx context.Context, table string, ids []SignedIdentifier) error {
	if err := ValidTableName(table); err != nil {
		return err
	}
	ids, err := acl.Validate(ids, acl.TableRules)
	var ae *acl.Error
	if errors.As(err, &ae) {
		why := map[acl.Problem]string{
			acl.TooMany:       "more than 5 signed identifiers",
			acl.IDTooLong:     "a signed identifier's Id must have 1 to 64 characters",
			acl.BadID:         "a signed identifier's Id must have 1 to 64 characters",
			acl.BadPermission: "permissions must be from r, a, u, d",
			acl.BadStart:      "Start and Expiry must be ISO 8601 times",
			acl.BadExpiry:     "Start and Expiry must be ISO 8601 times",
		}[ae.Problem]
		return inputErr("InvalidXmlDocument", "XML specified is not syntactically valid: %s.", why)
	}
	if err != nil {
		return err
	}
	return s.store.SetACL(ctx, table, ids)
}

// ServiceProperties returns the stored service properties (nil if never set).
func (s *Service) ServiceProperties(ctx context.Context) ([]byte, error) {
	return s.store.ServiceProperties(ctx)
}

// SetServiceProperties replaces the service properties document.
func (s *Service) SetServiceProperties(ctx context.Context, doc []byte) error {
	return s.store.SetServiceProperties(ctx, doc)
}

// Get is a point query.
func (s *Service) Get(ctx context.Context, table, pk, rk string) (Entity, error) {
	if err := ValidTableName(table); err != nil {
		return Entity{}, err
	}
	return s.store.Get(ctx, table, pk, rk)
}

// WithScanBudget returns a copy of s whose query pages read at most n
// rows each (at least 1) — for tests of the continuation, and for tuning.
func (s *Service) WithScanBudget(n int) *Service {
	c := *s
	c.scanBudget = max(n, 1)
	return &c
}

// WithScanBytes returns a copy of s whose query pages stop reading once
// they have read n bytes of entities (by EntitySize; a page always takes
// at least one row).
func (s *Service) WithScanBytes(n int) *Service {
	c := *s
	c.scanBytes = max(n, 1)
	return &c
}

var opNames = [...]string{Insert: "Insert", Update: "Update", Merge: "Merge", Delete: "Delete", InsertOrReplace: "InsertOrReplace", InsertOrMerge: "InsertOrMerge"}

func (k OpKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return "OpKind(" + strconv.Itoa(int(k)) + ")"
}
