package fs

import (
	"context"
	"crypto/rand"

	"github.com/blobshare/blobshare/locks"
)

// ObjectIDSize is the size of an object id (MS-FSCC 2.1.3
// FILE_OBJECTID_BUFFER.ObjectId): a GUID.
const ObjectIDSize = 16

// ObjectID returns the file's object id, giving it one first when it has
// none (MS-FSA 2.1.5.10.1 FSCTL_CREATE_OR_GET_OBJECT_ID): 16 random bytes,
// stored with the entry's other SMB state (its EAs, in the props column),
// so it is the same through every handle, in every process and after a
// restart. Creating it is a change of the entry (its version, so its
// ETag, moves on), as NTFS posts a USN change; its times stay.
func (h *Handle) ObjectID(ctx context.Context) ([ObjectIDSize]byte, error) {
	h.h.mu.Lock()
	closed := h.h.closed
	h.h.mu.Unlock()
	if closed {
		return [ObjectIDSize]byte{}, h.op("object id", locks.ErrHandleClosed)
	}
	id := h.h.file
	var oid [ObjectIDSize]byte
	var fresh [ObjectIDSize]byte
	rand.Read(fresh[:]) // never fails (crypto/rand, Go 1.24+)
	err := h.h.fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		if err := tx.HandleOpen(h.h.id); err != nil {
			return nil, err
		}
		e, err := q.getLocked("object id", id)
		if err != nil {
			return nil, err
		}
		if len(e.objectID) == ObjectIDSize {
			oid = [ObjectIDSize]byte(e.objectID)
			return nil, nil
		}
		e.objectID, oid = fresh[:], fresh
		if err := q.save(&e); err != nil {
			return nil, err
		}
		// An object id is no attribute, time, EA or security: no
		// completion filter bit names it.
		return []Change{{Kind: ChangeAttr, File: id, Parent: e.parent, Name: e.name, Version: e.version, Filter: notifyNothing}}, nil
	})
	if err != nil {
		return [ObjectIDSize]byte{}, h.op("object id", err)
	}
	return oid, nil
}
