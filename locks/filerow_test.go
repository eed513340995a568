package locks

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"
)

// TestCheckRESTRow: for the ops the file's row alone decides (RowDecides:
// Get Properties and List), CheckRESTRow answers every state exactly as
// the rules do with the file's handles and byte-range locks loaded
// (decideREST, what Tx.CheckRESTLease runs): every lease state and lease
// id, delete-pending or not, with no handle, handles of every data access
// and share mode, and exclusive locks. Every other op is refused with
// ErrInvalidParameter, and each of them is one a handle or a lock can
// refuse, so RowDecides leaves out none it could take.
func TestCheckRESTRow(t *testing.T) {
	const L, other = "aaaaaaaa-1111-2222-3333-444444444444", "bbbbbbbb-1111-2222-3333-444444444444"
	var handleSets [][]Handle
	handleSets = append(handleSets, nil)
	for _, acc := range []Access{AccessRead, AccessWrite, AccessDelete, AccessRead | AccessWrite | AccessDelete, AccessReadAttributes} {
		for sh := ShareNone; sh <= ShareAll; sh++ {
			handleSets = append(handleSets, []Handle{{ID: 7, File: 1, Owner: "o", Access: acc, Share: sh}})
		}
	}
	exclusive := []lockRec{{ByteLock: ByteLock{Handle: 7, Range: Range{Offset: 0, Length: 100}, Kind: LockExclusive}}}
	for op := OpGetProperties; op <= OpRenameReplace; op++ {
		if !RowDecides(op) {
			_, err := CheckRESTRow(RESTRequest{File: 1, Op: op}, FileRow{})
			if !errors.Is(err, ErrInvalidParameter) {
				t.Errorf("%v: CheckRESTRow %v, want ErrInvalidParameter", op, err)
			}
			continue
		}
		n := 0
		for _, stored := range []bool{false, true} {
			for _, pending := range []bool{false, true} {
				for _, state := range []LeaseState{LeaseAvailable, LeaseLeased, LeaseBroken} {
					if !stored && (pending || state != LeaseAvailable) {
						continue // no row: neither pending nor leased
					}
					leaseID := ""
					if state != LeaseAvailable {
						leaseID = L
					}
					row := FileRow{}
					if stored {
						row = FileRow{pending: sql.NullBool{Bool: pending, Valid: true}, state: sql.NullInt64{Int64: int64(state), Valid: true},
							id: sql.NullString{String: leaseID, Valid: true}}
					}
					for _, give := range []string{"", L, other} {
						for _, hs := range handleSets {
							for _, ls := range [][]lockRec{nil, exclusive} {
								if ls != nil && hs == nil {
									continue
								}
								req := RESTRequest{File: 1, Op: op, LeaseID: give, Range: Range{Offset: 0, Length: 10}}
								st := &fileState{file: 1, stored: stored, pending: pending, lease: LeaseInfo{State: state, ID: leaseID}, handles: hs, locks: ls}
								werr := decideREST(st, req)
								var want LeaseInfo
								if werr == nil {
									want = st.lease
								}
								got, err := CheckRESTRow(req, row)
								if fmt.Sprint(err) != fmt.Sprint(werr) || got != want {
									t.Fatalf("%v pending=%v lease=%v id %q handles %+v locks %v: CheckRESTRow %+v, %v; the rules %+v, %v",
										op, pending, state, give, hs, ls != nil, got, err, want, werr)
								}
								n++
							}
						}
					}
				}
			}
		}
		t.Logf("%v: %d states alike", op, n)
	}
	// The ops RowDecides leaves out: each is refused by some handle or lock
	// that the row does not show.
	for op := OpGetProperties; op <= OpRenameReplace; op++ {
		if RowDecides(op) {
			continue
		}
		refused := false
		for _, hs := range handleSets {
			st := &fileState{file: 1, handles: hs}
			if len(hs) > 0 {
				st.locks = exclusive
			}
			if decideREST(st, RESTRequest{File: 1, Op: op, Range: Range{Offset: 0, Length: 10}}) != nil {
				refused = true
				break
			}
		}
		if !refused {
			t.Errorf("%v: no handle or lock refuses it, yet RowDecides leaves it out", op)
		}
	}
}
