package smb

import (
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// Extended attributes on the wire: FILE_FULL_EA_INFORMATION lists (MS-FSCC
// 2.4.15) in the ExtA create context, QUERY_INFO and SET_INFO of
// FileFullEaInformation; fs keeps them (fs.EA).

// eaNeedEA is FILE_NEED_EA, the one flag an EA may carry.
const eaNeedEA = 0x80

// parseEAs reads a FILE_FULL_EA_INFORMATION list. A list whose entries do
// not chain inside it is STATUS_EA_LIST_INCONSISTENT; a bad name or flag
// STATUS_INVALID_EA_NAME (MS-FSA 2.1.5.15.5).
func parseEAs(b []byte) ([]fs.EA, ntstatus.Status) {
	if len(b) == 0 {
		return nil, ntstatus.EAListInconsistent
	}
	if len(b) > maxEAList {
		return nil, ntstatus.EATooLarge
	}
	var eas []fs.EA
	for off := 0; ; {
		e := b[off:]
		if len(e) < 8 {
			return nil, ntstatus.EAListInconsistent
		}
		next := int(le.Uint32(e))
		nameLen, valueLen := int(e[5]), int(le.Uint16(e[6:]))
		size := 8 + nameLen + 1 + valueLen
		if !eaEntryOK(e, next, size, 8+nameLen) {
			return nil, ntstatus.EAListInconsistent
		}
		name := string(e[8 : 8+nameLen])
		if e[4]&^eaNeedEA != 0 || !fs.ValidEAName(name) {
			return nil, ntstatus.InvalidEAName
		}
		eas = append(eas, fs.EA{Name: name, Flags: e[4], Value: e[9+nameLen : size]})
		if next == 0 {
			return eas, ntstatus.Success
		}
		off += next
	}
}

// eaEntryOK checks the entry of an EA list at the start of e: size bytes
// at least, its name ended by a NUL at nul, and a NextEntryOffset that is
// 0 (the last) or 4-aligned, past the entry and within the list.
func eaEntryOK(e []byte, next, size, nul int) bool {
	return len(e) >= size && e[nul] == 0 && (next == 0 || next >= size && next%4 == 0 && next <= len(e))
}

// maxEAList bounds a FILE_FULL_EA_INFORMATION or FILE_GET_EA_INFORMATION
// list a request may carry: every EA a file can hold (fs.MaxEASize) with
// each entry's padding to 4 bytes. A longer one is refused before it is
// parsed, so no request makes a long walk of it.
const maxEAList = 2 * fs.MaxEASize

// eaListSize is the size of all of eas as a FILE_FULL_EA_INFORMATION
// list, each entry 4-byte aligned: FileEaInformation's EaSize, as smbd
// reports it to SMB2 clients (0 without EAs).
func eaListSize(eas []fs.EA) uint32 {
	n := 0
	for _, ea := range eas {
		n += align4(ea.Size())
	}
	return uint32(n)
}

// appendEA appends one entry to a list being built, chaining the entry
// before it (at prev, -1 for none) to this one.
func appendEA(b []byte, prev int, ea fs.EA) ([]byte, int) {
	b = append(b, make([]byte, align4(len(b))-len(b))...)
	if prev >= 0 {
		le.PutUint32(b[prev:], uint32(len(b)-prev))
	}
	at := len(b)
	b = append(b, 0, 0, 0, 0, ea.Flags, byte(len(ea.Name)))
	b = le.AppendUint16(b, uint16(len(ea.Value)))
	b = append(b, ea.Name...)
	b = append(b, 0)
	return append(b, ea.Value...), at
}

// parseGetEAs reads a FILE_GET_EA_INFORMATION list (MS-FSCC 2.4.15.1):
// the names a query asks for.
func parseGetEAs(b []byte) ([]string, ntstatus.Status) {
	if len(b) > maxEAList {
		return nil, ntstatus.InvalidParameter
	}
	var names []string
	for off := 0; ; {
		e := b[off:]
		if len(e) < 6 {
			return nil, ntstatus.EAListInconsistent
		}
		next, nameLen := int(le.Uint32(e)), int(e[4])
		size := 5 + nameLen + 1
		if !eaEntryOK(e, next, size, 5+nameLen) {
			return nil, ntstatus.EAListInconsistent
		}
		name := string(e[5 : 5+nameLen])
		if !fs.ValidEAName(name) {
			return nil, ntstatus.InvalidEAName
		}
		names = append(names, name)
		if next == 0 {
			return names, ntstatus.Success
		}
		off += next
	}
}

// QUERY_INFO flags (MS-SMB2 2.2.37).
const (
	slRestartScan       = 0x1
	slReturnSingleEntry = 0x2
	slIndexSpecified    = 0x4
)

// queryEAs answers QUERY_INFO FileFullEaInformation (MS-FSA 2.1.5.12.12):
// the EAs named in the request's FILE_GET_EA_INFORMATION list (one not
// set comes back with an empty value, as NTFS answers), or else the next
// ones of the open's enumeration (from the start with SL_RESTART_SCAN,
// from the 1-based AdditionalInformation with SL_INDEX_SPECIFIED), as many
// whole entries as fit in outMax (one with SL_RETURN_SINGLE_ENTRY).
func queryEAs(o *open, eas []fs.EA, in []byte, flags, index, outMax uint32) (ntstatus.Status, []byte) {
	if o.access&locks.MaskReadEA == 0 {
		return ntstatus.AccessDenied, nil
	}
	if len(eas) == 0 {
		return ntstatus.NoEAsOnFile, nil
	}
	var pick []fs.EA
	start := -1 // the enumeration's position; -1 for a query by names
	if len(in) > 0 {
		names, st := parseGetEAs(in)
		if st != ntstatus.Success {
			return st, nil
		}
		byName := make(map[string]fs.EA, len(eas))
		for _, have := range eas {
			byName[fs.EAKey(have.Name)] = have
		}
		for _, n := range names {
			ea, ok := byName[fs.EAKey(n)]
			if !ok {
				ea = fs.EA{Name: n}
			}
			pick = append(pick, ea)
		}
	} else {
		start = o.eaNext
		switch {
		case flags&slIndexSpecified != 0:
			if index == 0 || int(index) > len(eas) {
				return ntstatus.NonexistentEAEntry, nil
			}
			start = int(index) - 1
		case flags&slRestartScan != 0:
			start = 0
		}
		if start >= len(eas) {
			return ntstatus.NoMoreEAs, nil
		}
		pick = eas[start:]
	}
	var out []byte
	prev, n := -1, 0
	for _, ea := range pick {
		if align4(len(out))+ea.Size() > int(outMax) {
			break
		}
		out, prev = appendEA(out, prev, ea)
		n++
		if flags&slReturnSingleEntry != 0 {
			break
		}
	}
	if n == 0 {
		return ntstatus.BufferTooSmall, nil
	}
	if start >= 0 {
		o.eaNext = start + n
	}
	if n < len(pick) && flags&slReturnSingleEntry == 0 {
		return ntstatus.BufferOverflow, out
	}
	return ntstatus.Success, out
}
