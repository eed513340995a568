// Package storetest is the conformance suite every blobstore backend
// passes. A backend's test is a few lines:
//
//	func TestConformance(t *testing.T) {
//		storetest.Test(t, func(t *testing.T) blobstore.Store { return newStore(t) })
//	}
//
// TestOpt tunes the suite (size of the streaming test, heap slack).
//
// Each subtest checks sentences of the blobstore.Store contract: missing
// keys (ErrNotFound matching fs.ErrNotExist; Delete of a missing blob is
// fine, unless If-Match); invalid keys and block ids (ErrInvalidKey from
// every method), and 1024-byte and odd keys working; empty blobs; round
// trips of odd block sizes; ranged reads at odd offsets, across block
// edges, at and past the end, negative (ErrInvalidRange); a range in a
// 300-block blob; staged blocks invisible until committed, and restaging
// an id replacing its data; commits reusing committed blocks (reordered,
// repeated, dropped) with a new ETag each time; unknown block ids
// (ErrNotFound, nothing committed); a Put whose source fails half way
// (the reader's error, the old version intact); a staged id shadowing a
// committed one; If-Match / If-None-Match on commits; concurrent commits
// conditioned on one ETag, and concurrent creates with If-None-Match "*",
// where exactly one wins and the others get ErrPreconditionFailed;
// unconditional concurrent commits of blocks all staged before the first
// of them, which all succeed;
// conditional delete; an unconditional delete leaving the staged blocks
// of a key without a committed blob; List order, prefixes, markers and paging at several
// limits, and a callback error returned as is; a cancelled context failing
// every method and an open reader; snapshot isolation (a reader opened
// before two overwriting commits and a garbage collection reads the old
// version whole); readers running while versions are committed each read
// exactly one whole version; on stores with blobstore.Cloner, clones
// (content and block list as the source's, kept through overwrites,
// deletion and garbage collection of the source, refused onto an existing
// key, for a missing source or a failed condition without leaving
// anything, gone once deleted); and streaming a big blob (1 GiB by default,
// 64 MiB under -short) through Put and ReadRange while sampling
// runtime.MemStats.HeapInuse, which must stay within 64 MiB of its
// baseline, with the bytes verified by SHA-256.
//
// Data and DataAt generate the deterministic test content (byte i depends
// only on the seed and i), so expected ranges can be regenerated without
// keeping whole blobs in memory.
package storetest
