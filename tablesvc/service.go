package tablesvc

import (
	"context"
	"errors"
	"time"
)

// Table is a table as created (Name keeps the case it was created with).
type Table struct{ Name string }

// SignedIdentifier is one stored access policy of a table's ACL, kept as
// sent.
type SignedIdentifier struct{ ID, Start, Expiry, Permission string }

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
}

// New returns a Service over store; now is the clock (nil: time.Now).
func New(store Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, now: now}
}

var errNotImplemented = errors.New("tablesvc: not implemented yet")

// CreateTable creates a table.
func (s *Service) CreateTable(ctx context.Context, name string) (Table, error) {
	return Table{}, errNotImplemented
}

// DeleteTable deletes a table, its entities and its ACL.
func (s *Service) DeleteTable(ctx context.Context, name string) error { return errNotImplemented }

// Table looks a table up case-insensitively.
func (s *Service) Table(ctx context.Context, name string) (Table, error) {
	return Table{}, errNotImplemented
}

// QueryTables lists tables.
func (s *Service) QueryTables(ctx context.Context, filter string, top int, next string) ([]Table, string, error) {
	return nil, "", errNotImplemented
}

// ACL returns a table's stored access policies.
func (s *Service) ACL(ctx context.Context, table string) ([]SignedIdentifier, error) {
	return nil, errNotImplemented
}

// SetACL replaces a table's stored access policies.
func (s *Service) SetACL(ctx context.Context, table string, ids []SignedIdentifier) error {
	return errNotImplemented
}

// ServiceProperties returns the stored service properties (nil if never set).
func (s *Service) ServiceProperties(ctx context.Context) ([]byte, error) {
	return nil, errNotImplemented
}

// SetServiceProperties replaces the service properties document.
func (s *Service) SetServiceProperties(ctx context.Context, doc []byte) error {
	return errNotImplemented
}

// Get is a point query.
func (s *Service) Get(ctx context.Context, table, pk, rk string) (Entity, error) {
	return Entity{}, errNotImplemented
}

// Apply runs one write.
func (s *Service) Apply(ctx context.Context, table string, op Op) (Entity, error) {
	return Entity{}, errNotImplemented
}

// Batch runs an entity group transaction.
func (s *Service) Batch(ctx context.Context, table string, ops []Op) ([]Entity, error) {
	return nil, errNotImplemented
}

// Query is Query Entities.
func (s *Service) Query(ctx context.Context, table string, q Query) (Page, error) {
	return Page{}, errNotImplemented
}

// ValidTableName checks a table name: *InputError OutOfRangeInput (length)
// or InvalidResourceName.
func ValidTableName(name string) error { return errNotImplemented }
