package smb

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
	"github.com/blobshare/blobshare/secdesc"
)

// Info types of QUERY_INFO and SET_INFO.
const (
	infoFile       = 1
	infoFileSystem = 2
	infoSecurity   = 3
	infoQuota      = 4
)

// File information classes (MS-FSCC 2.4).
const (
	fileBasicInformation                 = 4
	fileStandardInformation              = 5
	fileInternalInformation              = 6
	fileEaInformation                    = 7
	fileFullEaInformation                = 15
	fileAccessInformation                = 8
	fileRenameInformation                = 10
	fileDispositionInformation           = 13
	filePositionInformation              = 14
	fileModeInformation                  = 16
	fileAlignmentInformation             = 17
	fileAllInformation                   = 18
	fileAllocationInformation            = 19
	fileEndOfFileInformation             = 20
	fileAlternateNameInformation         = 21
	fileStreamInformation                = 22
	fileNetworkOpenInformation           = 34
	fileAttributeTagInformation          = 35
	fileDispositionInformationEx         = 64
	fileCompressionInformation           = 28
	fsControlInformation                 = 6
	fsObjectIDInformation                = 8
	fileNormalizedNameInformation        = 48
	fsVolumeInformation                  = 1
	fsSizeInformation                    = 3
	fsDeviceInformation                  = 4
	fsAttributeInformation               = 5
	fsFullSizeInformation                = 7
	fsSectorSizeInformation              = 11
	bytesPerSector                       = 512
	sectorsPerUnit                       = 8
	unitSize                             = bytesPerSector * sectorsPerUnit
	volumeBytes                   uint64 = 1 << 42 // 4 TiB reported when no quota says otherwise
)

// queryInfo serves QUERY_INFO.
func (c *conn) queryInfo(ctx context.Context, req *request) (ntstatus.Status, []byte, error) {
	b, err := body(req.msg, 41)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	typ, class := b[2], b[3]
	outMax := le.Uint32(b[4:])
	in, err := buffer(req.msg, uint32(le.Uint16(b[8:])), le.Uint32(b[12:]))
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	o, st := c.lookupOpen(req, b[24:])
	if o == nil {
		return st, nil, nil
	}
	if outMax > maxIO {
		outMax = maxIO
	}
	var data []byte
	variable := false
	switch typ {
	case infoFile:
		// Only these classes need FILE_READ_ATTRIBUTES; the others any
		// open may query (MS-SMB2 3.3.5.20.1, as smbtorture's
		// getinfo_access finds Windows and smbd doing).
		switch class {
		case fileBasicInformation, fileAllInformation, fileNetworkOpenInformation, fileAttributeTagInformation:
			if o.access&locks.MaskReadAttributes == 0 {
				return ntstatus.AccessDenied, nil, nil
			}
		}
		a := quotaAttr
		if !o.quota {
			if a, err = o.h.Attr(ctx); err != nil {
				return ntstatus.FromError(err), nil, nil
			}
		}
		if class == fileFullEaInformation {
			st, data := queryEAs(o, a.EAs, in, le.Uint32(b[20:]), le.Uint32(b[16:]), outMax)
			if st != ntstatus.Success && st != ntstatus.BufferOverflow {
				return st, nil, nil
			}
			return st, queryInfoBody(data), nil
		}
		data, variable, st = c.fileInfo(o, a, class)
	case infoFileSystem:
		data, variable, st = c.fsInfo(ctx, o, class)
	case infoSecurity:
		if o.quota {
			return ntstatus.InvalidDeviceRequest, nil, nil // no fs entry, no descriptor
		}
		if o.access&locks.MaskReadControl == 0 {
			return ntstatus.AccessDenied, nil, nil
		}
		data, st = c.securityDescriptor(ctx, o, le.Uint32(b[16:]))
		variable = true
	case infoQuota:
		return ntstatus.NotSupported, nil, nil
	default:
		return ntstatus.InvalidParameter, nil, nil
	}
	if st != ntstatus.Success {
		return st, nil, nil
	}
	status := ntstatus.Success
	if uint32(len(data)) > outMax {
		if !variable || outMax < minInfoSize(typ, class) {
			return ntstatus.InfoLengthMismatch, nil, nil
		}
		if typ == infoSecurity {
			// An error response whose data is the size needed.
			out := []byte{9, 0, 0, 0, 4, 0, 0, 0}
			out = le.AppendUint32(out, uint32(len(data)))
			return ntstatus.BufferTooSmall, out, nil
		}
		data, status = data[:outMax], ntstatus.BufferOverflow
	}
	return status, queryInfoBody(data), nil
}

// queryInfoBody is a QUERY_INFO response body carrying data.
func queryInfoBody(data []byte) []byte {
	out := make([]byte, 8, 8+len(data))
	le.PutUint16(out, 9)
	le.PutUint16(out[2:], headerSize+8)
	le.PutUint32(out[4:], uint32(len(data)))
	return append(out, data...)
}

// minInfoSize is the fixed part of a variable-size info class: a buffer
// smaller than it fails STATUS_INFO_LENGTH_MISMATCH, one at least as large
// gets what fits and STATUS_BUFFER_OVERFLOW (the sizes Windows checks, as
// smbtorture's qfile_buffercheck and qfs_buffercheck list them).
func minInfoSize(typ, class byte) uint32 {
	switch {
	case typ == infoFile && class == fileAllInformation:
		return 104
	case typ == infoFile && class == fileStreamInformation:
		return 32
	case typ == infoFile && (class == fileNormalizedNameInformation || class == fileAlternateNameInformation):
		return 8
	case typ == infoFileSystem && class == fsVolumeInformation:
		return 24
	case typ == infoFileSystem && class == fsAttributeInformation:
		return 16
	}
	return 0
}

func basicInfo(a fs.Attr) []byte {
	b := make([]byte, 40)
	putTimes(b, a)
	le.PutUint32(b[32:], wireAttrs(a))
	return b
}

func standardInfo(a fs.Attr) []byte {
	b := make([]byte, 24)
	le.PutUint64(b, allocation(a))
	le.PutUint64(b[8:], uint64(a.Size))
	le.PutUint32(b[16:], 1)
	if a.DeletePending {
		b[20] = 1
	}
	if a.Kind.IsDir() {
		b[21] = 1
	}
	return b
}

// wireName is the open's path as SMB shows it: "\dir\file", "\" for the
// share root.
func (o *open) wireName() string { return `\` + strings.ReplaceAll(o.path, "/", `\`) }

func (c *conn) fileInfo(o *open, a fs.Attr, class byte) ([]byte, bool, ntstatus.Status) {
	u64 := func(v uint64) []byte { return le.AppendUint64(nil, v) }
	u32 := func(v uint32) []byte { return le.AppendUint32(nil, v) }
	switch class {
	case fileBasicInformation:
		return basicInfo(a), false, ntstatus.Success
	case fileStandardInformation:
		return standardInfo(a), false, ntstatus.Success
	case fileInternalInformation:
		return u64(uint64(a.ID)), false, ntstatus.Success
	case fileEaInformation:
		return u32(eaListSize(a.EAs)), false, ntstatus.Success
	case fileAccessInformation:
		return u32(uint32(o.access)), false, ntstatus.Success
	case fileModeInformation:
		return u32(0), false, ntstatus.Success
	case fileAlignmentInformation:
		return u32(0), false, ntstatus.Success
	case fileAllInformation:
		b := basicInfo(a)
		b = append(b, standardInfo(a)...)
		b = le.AppendUint64(b, uint64(a.ID))
		b = le.AppendUint32(b, eaListSize(a.EAs))
		b = le.AppendUint32(b, uint32(o.access)) // access
		b = le.AppendUint64(b, uint64(o.position.Load()))
		b = le.AppendUint32(b, 0) // mode
		b = le.AppendUint32(b, 0) // alignment
		name := utf16le(o.wireName())
		b = le.AppendUint32(b, uint32(len(name)))
		return append(b, name...), true, ntstatus.Success
	case fileNormalizedNameInformation:
		name := utf16le(strings.ReplaceAll(o.path, "/", `\`))
		return append(le.AppendUint32(nil, uint32(len(name))), name...), true, ntstatus.Success
	case fileNetworkOpenInformation:
		b := make([]byte, 56)
		putTimes(b, a)
		le.PutUint64(b[32:], allocation(a))
		le.PutUint64(b[40:], uint64(a.Size))
		le.PutUint32(b[48:], wireAttrs(a))
		return b, false, ntstatus.Success
	case fileAttributeTagInformation:
		b := make([]byte, 8)
		le.PutUint32(b, wireAttrs(a))
		return b, false, ntstatus.Success
	case fileAlternateNameInformation:
		// The 8.3 name (shortname.go); a name that is 8.3 already is its
		// own, as smbd answers. The share root and the fake quota file
		// have none.
		if o.path == "" || o.quota {
			return nil, false, ntstatus.ObjectNameNotFound
		}
		short, _ := shortName(o.path[strings.LastIndexByte(o.path, '/')+1:])
		name := utf16le(short)
		return append(le.AppendUint32(nil, uint32(len(name))), name...), true, ntstatus.Success
	case fileCompressionInformation:
		b := make([]byte, 16)
		le.PutUint64(b, uint64(a.Size)) // CompressedFileSize: not compressed
		return b, false, ntstatus.Success
	case filePositionInformation:
		return u64(uint64(o.position.Load())), false, ntstatus.Success
	case fileStreamInformation:
		if a.Kind.IsDir() {
			return []byte{}, true, ntstatus.Success
		}
		name := utf16le("::$DATA")
		b := make([]byte, 24, 24+len(name))
		le.PutUint32(b[4:], uint32(len(name)))
		le.PutUint64(b[8:], uint64(a.Size))
		le.PutUint64(b[16:], allocation(a))
		return append(b, name...), true, ntstatus.Success
	}
	return nil, false, ntstatus.InvalidInfoClass
}

func (c *conn) fsInfo(ctx context.Context, o *open, class byte) ([]byte, bool, ntstatus.Status) {
	total := volumeBytes
	var used uint64
	if st, err := c.srv.cfg.FS.StatFS(ctx); err == nil {
		used = st.UsedBytes
		if st.QuotaBytes > 0 {
			total = st.QuotaBytes
		}
	}
	free := uint64(0)
	if total > used {
		free = total - used
	}
	switch class {
	case fsVolumeInformation:
		label := utf16le(o.tree.share)
		b := make([]byte, 18, 18+len(label))
		le.PutUint64(b, filetime(c.srv.started))
		le.PutUint32(b[8:], uint32(o.tree.shareID))
		le.PutUint32(b[12:], uint32(len(label)))
		return append(b, label...), true, ntstatus.Success
	case fsSizeInformation:
		b := make([]byte, 24)
		le.PutUint64(b, total/unitSize)
		le.PutUint64(b[8:], free/unitSize)
		le.PutUint32(b[16:], sectorsPerUnit)
		le.PutUint32(b[20:], bytesPerSector)
		return b, false, ntstatus.Success
	case fsFullSizeInformation:
		b := make([]byte, 32)
		le.PutUint64(b, total/unitSize)
		le.PutUint64(b[8:], free/unitSize)
		le.PutUint64(b[16:], free/unitSize)
		le.PutUint32(b[24:], sectorsPerUnit)
		le.PutUint32(b[28:], bytesPerSector)
		return b, false, ntstatus.Success
	case fsDeviceInformation:
		b := make([]byte, 8)
		le.PutUint32(b, 7) // FILE_DEVICE_DISK
		le.PutUint32(b[4:], 0x10)
		return b, false, ntstatus.Success
	case fsAttributeInformation:
		name := utf16le("NTFS")
		b := make([]byte, 12, 12+len(name))
		// FILE_CASE_PRESERVED_NAMES | FILE_UNICODE_ON_DISK | FILE_SUPPORTS_SPARSE_FILES |
		// FILE_SUPPORTS_OBJECT_IDS (FSCTL_CREATE_OR_GET_OBJECT_ID; smbd
		// announces it too) | FILE_SUPPORTS_EXTENDED_ATTRIBUTES
		le.PutUint32(b, 0x00000002|0x00000004|0x00000040|0x00010000|0x00800000)
		le.PutUint32(b[4:], 255)
		le.PutUint32(b[8:], uint32(len(name)))
		return append(b, name...), true, ntstatus.Success
	case fsControlInformation:
		// Quotas are not enforced through SMB: no thresholds, default
		// threshold and limit "none" (-1), no control flags.
		b := make([]byte, 48)
		le.PutUint64(b[24:], ^uint64(0))
		le.PutUint64(b[32:], ^uint64(0))
		return b, false, ntstatus.Success
	case fsObjectIDInformation:
		// The volume's object id: the share's file id; no extended info.
		b := make([]byte, 64)
		le.PutUint64(b, uint64(o.tree.shareID))
		return b, false, ntstatus.Success
	case fsSectorSizeInformation:
		b := make([]byte, 28)
		for i := 0; i < 4; i++ {
			le.PutUint32(b[4*i:], bytesPerSector)
		}
		le.PutUint32(b[16:], 0x3) // aligned device and partition
		return b, false, ntstatus.Success
	}
	return nil, false, ntstatus.InvalidInfoClass
}

// securityDescriptor is the file's permission as a self-relative
// descriptor, the parts addInfo (SECURITY_INFORMATION) asks for: the
// permission FileREST sets and reads (x-ms-file-permission, Create
// Permission), fs's default one for an entry that has none. One
// descriptor per file, whichever protocol asks.
func (c *conn) securityDescriptor(ctx context.Context, o *open, addInfo uint32) ([]byte, ntstatus.Status) {
	sddl, err := c.srv.cfg.FS.PermissionOf(ctx, o.h.File())
	if err != nil {
		return nil, ntstatus.FromError(err)
	}
	sd, err := secdesc.ParseSDDL(sddl)
	if err != nil {
		// Stored permissions were checked when set: this is a bug, not
		// the client's fault.
		c.srv.log.Error("smb: stored permission does not parse", "file", o.h.File(), "sddl", sddl, "err", err)
		return nil, ntstatus.Unsuccessful
	}
	return sd.Select(addInfo).Binary(), ntstatus.Success
}

// setInfo serves SET_INFO.
func (c *conn) setInfo(ctx context.Context, req *request) (ntstatus.Status, []byte, error) {
	b, err := body(req.msg, 33)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	typ, class := b[2], b[3]
	data, err := buffer(req.msg, uint32(le.Uint16(b[8:])), le.Uint32(b[4:]))
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	o, st := c.lookupOpen(req, b[16:])
	if o == nil {
		return st, nil, nil
	}
	ctx = o.parentCtx(ctx) // dirlease.go
	ok := []byte{2, 0}
	switch typ {
	case infoFile:
	case infoSecurity:
		// The descriptor is fixed; a client copying one is not refused.
		return ntstatus.Success, ok, nil
	case infoFileSystem, infoQuota:
		return ntstatus.NotSupported, nil, nil
	default:
		return ntstatus.InvalidParameter, nil, nil
	}
	need := func(n int, access locks.Mask) ntstatus.Status {
		if len(data) < n {
			return ntstatus.InfoLengthMismatch
		}
		if access != 0 && o.access&access == 0 {
			return ntstatus.AccessDenied
		}
		return ntstatus.Success
	}
	fsys := c.srv.cfg.FS
	switch class {
	case fileBasicInformation:
		if st := need(36, locks.MaskWriteAttributes); st != ntstatus.Success {
			return st, nil, nil
		}
		var sr fs.SetattrRequest
		times := []*(*time.Time){&sr.Created, nil, &sr.LastWrite, &sr.Change}
		for i, dst := range times {
			v := le.Uint64(data[8*i:])
			if dst == nil || v == 0 || v == ^uint64(0) || v == ^uint64(0)-1 {
				continue // 0: leave; -1, -2: stop or resume automatic updates
			}
			t := fromFiletime(v)
			*dst = &t
		}
		if attrs := le.Uint32(data[32:]); attrs != 0 {
			// DIRECTORY only on a directory, TEMPORARY only on a file
			// (MS-FSA 2.1.5.14.2).
			if attrs&0x10 != 0 && !o.isDir || attrs&0x100 != 0 && o.isDir || attrs&^0x000231B7 != 0 {
				return ntstatus.InvalidParameter, nil, nil
			}
			a := fs.Attributes(attrs &^ 0x80 &^ 0x10)
			sr.Attributes = &a
		}
		if _, err := fsys.Setattr(ctx, o.h.File(), sr); err != nil {
			return ntstatus.FromError(err), nil, nil
		}
	case fileEndOfFileInformation, fileAllocationInformation:
		if st := need(8, locks.MaskWriteData); st != ntstatus.Success {
			return st, nil, nil
		}
		if o.isDir {
			return ntstatus.InvalidParameter, nil, nil
		}
		size := le.Uint64(data)
		if size > 1<<62 {
			return ntstatus.InvalidParameter, nil, nil
		}
		c.breakCaches(ctx, o, locks.CacheOpWrite)
		n := int64(size)
		sr := fs.SetattrRequest{Size: &n, Handle: o.h}
		if class == fileAllocationInformation {
			// The allocation is kept apart from the size; one below the
			// size cuts it (MS-FSA 2.1.5.15.1, fs.SetattrRequest).
			sr = fs.SetattrRequest{AllocationSize: &n, Handle: o.h}
		}
		if _, err := fsys.Setattr(ctx, o.h.File(), sr); err != nil {
			return ntstatus.FromError(err), nil, nil
		}
	case fileDispositionInformation, fileDispositionInformationEx:
		if st := need(1, 0); st != ntstatus.Success {
			return st, nil, nil
		}
		del := data[0]&1 != 0
		if class == fileDispositionInformationEx {
			if st := need(4, 0); st != ntstatus.Success {
				return st, nil, nil
			}
			flags := le.Uint32(data)
			if flags&^0x1 != 0 {
				// POSIX semantics, ignore ReadOnly, on-close: not offered.
				return ntstatus.NotSupported, nil, nil
			}
			del = flags&1 != 0
		}
		if err := o.h.Dispose(ctx, del); err != nil {
			return ntstatus.FromError(err), nil, nil
		}
	case fileRenameInformation:
		if st := need(20, locks.MaskDelete); st != ntstatus.Success {
			return st, nil, nil
		}
		replace := data[0] != 0
		n := le.Uint32(data[16:])
		if uint64(n) > uint64(len(data)-20) {
			return ntstatus.InvalidParameter, nil, nil
		}
		name, err := fromUTF16(data[20 : 20+n])
		if err != nil || name == "" {
			return ntstatus.InvalidParameter, nil, nil
		}
		name = strings.TrimPrefix(name, `\`)
		rel, st := sharePath(name)
		if st != ntstatus.Success {
			return st, nil, nil
		}
		if rel == "" {
			return ntstatus.ObjectNameInvalid, nil, nil
		}
		rename := func(ctx context.Context) ntstatus.Status {
			if _, err := o.h.Rename(ctx, o.tree.share+"/"+rel, replace); err != nil {
				if errors.Is(err, fs.ErrExist) {
					return ntstatus.ObjectNameCollision
				}
				return ntstatus.FromError(err)
			}
			o.path = rel
			return ntstatus.Success
		}
		if cc, wait := c.renameBreak(ctx, o); wait {
			if req.hdr.NextCommand == 0 {
				c.renameAsync(req, o, cc, rename)
				return ntstatus.Pending, nil, nil
			}
			// In the middle of a compound (the Linux client's
			// create-rename-close) a SET_INFO may not go async: it
			// waits in place, unless a cache it waits for is held on
			// this connection (cachedHere).
			if !c.cachedHere(o.h.File(), o) {
				if _, err := c.srv.cfg.Caching.WaitCache(ctx, cc, 0); err != nil {
					return ntstatus.Cancelled, nil, nil
				}
			}
		}
		if st := rename(ctx); st != ntstatus.Success {
			return st, nil, nil
		}
	case filePositionInformation:
		if st := need(8, 0); st != ntstatus.Success {
			return st, nil, nil
		}
		pos := le.Uint64(data)
		if pos > 1<<62 {
			return ntstatus.InvalidParameter, nil, nil
		}
		o.position.Store(int64(pos))
	case fileFullEaInformation:
		if st := need(8, locks.MaskWriteEA); st != ntstatus.Success {
			return st, nil, nil
		}
		eas, st := parseEAs(data)
		if st != ntstatus.Success {
			return st, nil, nil
		}
		if _, err := fsys.Setattr(ctx, o.h.File(), fs.SetattrRequest{EAs: eas}); err != nil {
			return ntstatus.FromError(err), nil, nil
		}
	case fileModeInformation:
	default:
		return ntstatus.InvalidInfoClass, nil, nil
	}
	return ntstatus.Success, ok, nil
}
