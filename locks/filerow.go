package locks

import (
	"database/sql"
	"fmt"
)

// A read of a file's properties (REST Get File Properties and Get File
// Metadata, OpGetProperties) is refused by nothing but the file's
// delete-pending mark and a wrong lease id: it needs no share access
// (restNeeds is 0, so no open handle refuses it, whatever its share mode)
// and checks no byte-range lock. Its whole decision is the file's lk_files
// row. A caller that reads the file's other columns in a statement of its
// own may read that row in the same statement (FileRowJoin) and decide
// from it (CheckRESTRow): one statement, one snapshot, for the lookup, the
// attributes and the check, where Tx.CheckRESTLease is a statement of its
// own that also reads every handle of the file.

// FileRowJoin returns a LEFT JOIN of the lock table's row of the file whose
// id is the SQL expression file, and the columns it adds to the select
// list, to be scanned into FileRow.Dest() in that order. The join's alias
// is lk_row.
func FileRowJoin(file string) (join, cols string) {
	return " LEFT JOIN lk_files lk_row ON lk_row.file = " + file,
		"lk_row.delete_pending, lk_row.lease_state, lk_row.lease_id"
}

// FileRow is a file's lk_files row as FileRowJoin reads it (all NULL when
// the file has none: no lease, not delete-pending).
type FileRow struct {
	pending sql.NullBool
	state   sql.NullInt64
	id      sql.NullString
}

// Dest is the scan destinations of FileRowJoin's columns.
func (r *FileRow) Dest() []any { return []any{&r.pending, &r.state, &r.id} }

// RowDecides reports whether the file's lk_files row alone decides op
// (CheckRESTRow): no handle and no byte-range lock can refuse it.
func RowDecides(op Op) bool {
	return validOp(op) && restNeeds(op) == 0 && op != OpDelete && op != OpGetFile && op != OpPutRange
}

// CheckRESTRow is Tx.CheckRESTLease for an op the file's row alone decides
// (RowDecides), from that row as read with FileRowJoin: the same rules
// (decideREST) on the same state, without the handles that cannot change
// the answer. Other ops: ErrInvalidParameter.
func CheckRESTRow(req RESTRequest, r FileRow) (LeaseInfo, error) {
	if !RowDecides(req.Op) {
		return LeaseInfo{}, fmt.Errorf("locks: rest file %d: op %v is decided with the file's handles: %w", req.File, req.Op, ErrInvalidParameter)
	}
	st := fileState{file: req.File, stored: r.pending.Valid, pending: r.pending.Valid && r.pending.Bool,
		lease: LeaseInfo{State: LeaseState(r.state.Int64), ID: r.id.String}}
	if err := decideREST(&st, req); err != nil {
		return LeaseInfo{}, err
	}
	return st.lease, nil
}
