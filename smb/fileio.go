package smb

import (
	"context"
	"errors"
	"io"

	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// creditsFor is the CreditCharge a payload of n bytes needs (MS-SMB2
// 3.1.5.2).
func creditsFor(n uint32) uint16 {
	if n == 0 {
		return 1
	}
	return uint16((n-1)/65536 + 1)
}

// checkCharge refuses a large request that did not pay for its size.
func (c *conn) checkCharge(req *request, n uint32) bool {
	if c.dialect == dialect202 {
		return n <= smallIO
	}
	charge := req.hdr.CreditCharge
	if charge == 0 {
		charge = 1
	}
	return charge >= creditsFor(n)
}

// read serves READ into one response buffer (at most maxRead bytes).
func (c *conn) read(ctx context.Context, req *request) (ntstatus.Status, []byte, error) {
	b, err := body(req.msg, 49)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	length := le.Uint32(b[4:])
	offset := le.Uint64(b[8:])
	minCount := le.Uint32(b[32:])
	o, st := c.lookupOpen(req, b[16:])
	if o == nil {
		return st, nil, nil
	}
	switch {
	case o.isDir:
		return ntstatus.InvalidDeviceRequest, nil, nil
	case o.access&(locks.MaskReadData|locks.MaskExecute) == 0:
		return ntstatus.AccessDenied, nil, nil
	case length > c.maxRead || !c.checkCharge(req, length):
		return ntstatus.InvalidParameter, nil, nil
	case offset > 1<<62:
		return ntstatus.InvalidParameter, nil, nil
	}
	if c.single {
		// A READ alone in its frame is read and answered on a goroutine
		// of the connection while the next requests are served (as
		// smbd's asynchronous reads overlap disk and network): at most
		// maxReadsInFlight at once, the loop waiting for a slot.
		c.readSlots <- struct{}{}
		// The READs of one open reach fs in the order they came, each
		// once the one before it has read, and their responses leave in
		// that order: a client's sequential reads stay sequential for fs
		// (which keeps its blob stream open across them), and a client
		// that pipelines reads gets them back in the order it consumes
		// them, while one READ's read overlaps the previous one's
		// signing and sending.
		prev := o.lastRead
		cur := &readTurn{read: make(chan struct{}), sent: make(chan struct{})}
		o.lastRead = cur
		if prev != nil {
			req.sendAfter = prev.sent
		}
		req.sent = cur.sent
		req.deferred = func() (ntstatus.Status, []byte, []byte) {
			frame := c.srv.getReadBuf(headerSize + 16 + int(length))
			if prev != nil {
				<-prev.read
			}
			defer close(cur.read)
			st, body := c.readInto(ctx, o, frame, offset, minCount)
			return st, body, frame
		}
		return ntstatus.Pending, nil, nil // replaced by the deferred result
	}
	frame := make([]byte, headerSize+16+int(length))
	st, out := c.readInto(ctx, o, frame, offset, minCount)
	if st == ntstatus.Success {
		req.frame = frame[:headerSize+len(out)]
	}
	return st, out, nil
}

// readInto reads into frame (room for the header, then the READ response
// body) and returns the status and the body.
func (c *conn) readInto(ctx context.Context, o *open, frame []byte, offset uint64, minCount uint32) (ntstatus.Status, []byte) {
	out := frame[headerSize:]
	n, err := o.h.ReadAt(ctx, out[16:], int64(offset))
	if err != nil && !errors.Is(err, io.EOF) {
		return ntstatus.FromError(err), nil
	}
	if (n == 0 && len(out) > 16) || uint32(n) < minCount {
		return ntstatus.EndOfFile, nil
	}
	// The position after the read, as smbd keeps it (Windows keeps it
	// for synchronous-I/O opens).
	o.position.Store(int64(offset) + int64(n))
	le.PutUint16(out, 17)
	out[2] = headerSize + 16
	out[3] = 0
	le.PutUint32(out[4:], uint32(n))
	clear(out[8:16]) // DataRemaining, Flags: the buffer may be a reused one
	return ntstatus.Success, out[:16+n]
}

// readTurn is one READ's place in the order of its open's READs
// (open.lastRead): read is closed once it has read, sent once its
// response was sent.
type readTurn struct{ read, sent chan struct{} }

// getReadBuf returns a buffer of n bytes (at most readBufSize) from the
// server's pool.
func (s *Server) getReadBuf(n int) []byte {
	if b, ok := s.readBufs.Get().(*[]byte); ok {
		return (*b)[:n]
	}
	return make([]byte, n, readBufSize)
}

// putReadBuf gives a buffer of getReadBuf back to the pool.
func (s *Server) putReadBuf(b []byte) {
	b = b[:cap(b)]
	s.readBufs.Put(&b)
}

// write serves WRITE.
func (c *conn) write(ctx context.Context, req *request) (ntstatus.Status, []byte, error) {
	b, err := body(req.msg, 49)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	length := le.Uint32(b[4:])
	offset := le.Uint64(b[8:])
	data, err := buffer(req.msg, uint32(le.Uint16(b[2:])), length)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	o, st := c.lookupOpen(req, b[16:])
	if o == nil {
		return st, nil, nil
	}
	ctx = o.parentCtx(ctx) // dirlease.go
	switch {
	case o.isDir:
		return ntstatus.InvalidDeviceRequest, nil, nil
	case o.access&(locks.MaskWriteData|locks.MaskAppendData) == 0:
		return ntstatus.AccessDenied, nil, nil
	case length > c.maxIO || !c.checkCharge(req, length):
		return ntstatus.InvalidParameter, nil, nil
	}
	if offset == ^uint64(0) && o.access&locks.MaskAppendData != 0 {
		// FILE_WRITE_TO_END_OF_FILE
		size, err := o.h.Size(ctx)
		if err != nil {
			return ntstatus.FromError(err), nil, nil
		}
		offset = uint64(size)
	}
	if offset > 1<<62 || offset+uint64(length) > 1<<62 {
		return ntstatus.InvalidParameter, nil, nil
	}
	n, err := o.h.WriteAt(ctx, data, int64(offset))
	if err != nil {
		return ntstatus.FromError(err), nil, nil
	}
	c.breakCaches(ctx, o, locks.CacheOpWrite)
	out := make([]byte, 16)
	le.PutUint16(out, 17)
	le.PutUint32(out[4:], uint32(n))
	return ntstatus.Success, out, nil
}

// flush serves FLUSH: the handle's writes are committed.
func (c *conn) flush(ctx context.Context, req *request) (ntstatus.Status, []byte, error) {
	b, err := body(req.msg, 24)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	o, st := c.lookupOpen(req, b[8:])
	if o == nil {
		return st, nil, nil
	}
	ctx = o.parentCtx(ctx) // dirlease.go
	if !o.isDir {
		if o.access&(locks.MaskWriteData|locks.MaskAppendData) == 0 {
			return ntstatus.AccessDenied, nil, nil
		}
		if err := o.h.Flush(ctx); err != nil {
			return ntstatus.FromError(err), nil, nil
		}
	}
	return ntstatus.Success, []byte{4, 0, 0, 0}, nil
}

// LOCK element flags (MS-SMB2 2.2.26.1).
const (
	lockShared          uint32 = 0x01
	lockExclusive       uint32 = 0x02
	lockUnlock          uint32 = 0x04
	lockFailImmediately uint32 = 0x10
)

// lock serves LOCK (MS-SMB2 3.3.5.14, with the choices Samba's smbd makes
// where the text leaves room): the first element says whether the request
// locks or unlocks. A lock request takes its elements in order, all or
// none (an element that fails undoes the ones before it); only a request
// of one element may block, and a blocking lock that conflicts goes async
// (STATUS_PENDING) and waits until granted, cancelled (STATUS_CANCELLED)
// or its open closes (STATUS_RANGE_NOT_LOCKED). An unlock request unlocks
// element by element and stops at the first that fails; an element that is
// not an unlock fails it with STATUS_INVALID_PARAMETER, the unlocks before
// it done.
func (c *conn) lock(ctx context.Context, req *request) (ntstatus.Status, []byte, error) {
	b, err := body(req.msg, 48)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	count := int(le.Uint16(b[2:]))
	if count == 0 || len(b) < 24+24*count {
		return ntstatus.InvalidParameter, nil, nil
	}
	o, st := c.lookupOpen(req, b[8:])
	if o == nil {
		return st, nil, nil
	}
	if o.isDir {
		return ntstatus.InvalidParameter, nil, nil
	}
	seq, bucket := le.Uint32(b[4:]), -1
	if c.dialect >= dialect300 {
		var replay bool
		if bucket, replay = o.lockSeq.check(seq); replay {
			return ntstatus.Success, []byte{4, 0, 0, 0}, nil
		}
	}
	type element struct {
		r     locks.Range
		flags uint32
	}
	els := make([]element, count)
	for i := range els {
		e := b[24+24*i:]
		els[i] = element{locks.Range{Offset: le.Uint64(e), Length: le.Uint64(e[8:])}, le.Uint32(e[16:])}
	}
	ok := []byte{4, 0, 0, 0}
	if els[0].flags == lockUnlock {
		for _, e := range els {
			if e.flags != lockUnlock {
				return ntstatus.InvalidParameter, nil, nil
			}
			if !e.r.Valid() {
				return ntstatus.InvalidLockRange, nil, nil
			}
			if err := o.h.Unlock(ctx, e.r); err != nil {
				return ntstatus.FromError(err), nil, nil
			}
		}
		o.lockSeq.done(bucket, seq)
		return ntstatus.Success, ok, nil
	}
	blocking := false
	for i, e := range els {
		switch e.flags {
		case lockShared, lockExclusive:
			if count > 1 {
				return ntstatus.InvalidParameter, nil, nil
			}
			blocking = i == 0
		case lockShared | lockFailImmediately, lockExclusive | lockFailImmediately:
		default:
			return ntstatus.InvalidParameter, nil, nil
		}
		if !e.r.Valid() {
			return ntstatus.InvalidLockRange, nil, nil
		}
	}
	kindOf := func(flags uint32) locks.LockKind {
		if flags&lockExclusive != 0 {
			return locks.LockExclusive
		}
		return locks.LockShared
	}
	// A byte-range lock breaks the other caches as a write does
	// (MS-FSA 2.1.4.12; smbtorture smb2.oplock.brl1, smb2.lease.lock1).
	c.breakCaches(ctx, o, locks.CacheOpLock)
	for i, e := range els {
		err := o.h.Lock(ctx, e.r, kindOf(e.flags))
		if err == nil {
			continue
		}
		if blocking && errors.Is(err, locks.ErrLockNotGranted) {
			wait := waitLock(o, e.r, kindOf(e.flags), c.srv.ctx)
			req.asyncID = c.goPending(req, o, ntstatus.RangeNotLocked, func(ctx context.Context) ntstatus.Status {
				st := wait(ctx)
				if st == ntstatus.Success {
					o.lockSeq.done(bucket, seq)
				}
				return st
			})
			return ntstatus.Pending, nil, nil
		}
		for _, done := range els[:i] {
			_ = o.h.Unlock(ctx, done.r)
		}
		st := ntstatus.FromError(err)
		if st == ntstatus.FileLockConflict {
			st = ntstatus.LockNotGranted
		}
		return st, nil, nil
	}
	o.lockSeq.done(bucket, seq)
	return ntstatus.Success, ok, nil
}

// changeNotify serves CHANGE_NOTIFY (MS-SMB2 3.3.5.19) on a directory
// open with FILE_LIST_DIRECTORY (notify.go): changes buffered on the open
// answer at once, else it goes async until a change completes it, CANCEL
// (STATUS_CANCELLED) or the open's close (STATUS_NOTIFY_CLEANUP).
func (c *conn) changeNotify(ctx context.Context, req *request) (ntstatus.Status, []byte, error) {
	b, err := body(req.msg, 32)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	o, st := c.lookupOpen(req, b[8:])
	if o == nil {
		return st, nil, nil
	}
	if st := canNotify(o); st != ntstatus.Success {
		return st, nil, nil
	}
	n, ok := c.srv.cfg.FS.(Notifier)
	if !ok {
		req.asyncID = c.goPending(req, o, ntstatus.NotifyCleanup, waitCancel)
		return ntstatus.Pending, nil, nil
	}
	return c.notifyRequest(ctx, req, o, n, b)
}

// FSCTL codes.
const (
	fsctlValidateNegotiateInfo uint32 = 0x00140204
	fsctlDFSGetReferrals       uint32 = 0x00060194
	fsctlDFSGetReferralsEx     uint32 = 0x000601B0
	fsctlCreateOrGetObjectID   uint32 = 0x000900C0
	ioctlIsFSCTL               uint32 = 0x00000001
)

// ioctl serves IOCTL: FSCTL_VALIDATE_NEGOTIATE_INFO,
// FSCTL_QUERY_NETWORK_INTERFACE_INFO and FSCTL_CREATE_OR_GET_OBJECT_ID;
// DFS referrals are STATUS_FS_DRIVER_REQUIRED (no DFS here, as a server
// without DFS answers); everything else STATUS_NOT_SUPPORTED.
func (c *conn) ioctl(ctx context.Context, req *request) (ntstatus.Status, []byte, error) {
	b, err := body(req.msg, 57)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	code := le.Uint32(b[4:])
	in, err := buffer(req.msg, le.Uint32(b[24:]), le.Uint32(b[28:]))
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	maxOut := le.Uint32(b[44:])
	if le.Uint32(b[48:])&ioctlIsFSCTL == 0 {
		return ntstatus.NotSupported, nil, nil
	}
	switch code {
	case fsctlDFSGetReferrals, fsctlDFSGetReferralsEx:
		return ntstatus.FSDriverRequired, nil, nil
	case fsctlQueryNetworkInterfaceInfo:
		st, out := c.networkInterfaces(maxOut)
		if st != ntstatus.Success {
			return st, nil, nil
		}
		return st, ioctlBody(code, b[8:24], out), nil
	case fsctlCreateOrGetObjectID:
		return c.objectID(ctx, req, b, maxOut)
	case fsctlValidateNegotiateInfo:
	default:
		return ntstatus.NotSupported, nil, nil
	}
	// MS-SMB2 3.3.5.15.12: any mismatch with what NEGOTIATE saw drops the
	// connection.
	if c.dialect == dialect311 {
		return 0, nil, errDisconnect
	}
	if len(in) < 24 || maxOut < 24 {
		return 0, nil, errDisconnect
	}
	n := int(le.Uint16(in[22:]))
	if len(in) < 24+2*n || n != len(c.clientDialects) {
		return 0, nil, errDisconnect
	}
	if le.Uint32(in) != c.clientCaps || [16]byte(in[4:20]) != c.clientGUID || le.Uint16(in[20:]) != c.clientSecMode {
		return 0, nil, errDisconnect
	}
	for i := 0; i < n; i++ {
		if le.Uint16(in[24+2*i:]) != c.clientDialects[i] {
			return 0, nil, errDisconnect
		}
	}
	resp := make([]byte, 24)
	le.PutUint32(resp, c.serverCaps(c.dialect))
	copy(resp[4:20], c.srv.guid[:])
	mode := secSigningEnabled
	if c.signingRequired {
		mode |= secSigningRequired
	}
	le.PutUint16(resp[20:], mode)
	le.PutUint16(resp[22:], c.dialect)
	return ntstatus.Success, ioctlBody(code, b[8:24], resp), nil
}

// objectID serves FSCTL_CREATE_OR_GET_OBJECT_ID (MS-FSA 2.1.5.10.1): the
// open's file or directory gets an object id once (fs keeps it) and every
// request answers the same FILE_OBJECTID_BUFFER (MS-FSCC 2.1.3, type 1):
// the object id, the birth volume id (the volume's object id, as
// FileFsObjectIdInformation reports it), the birth object id (the object
// id: blobshare never moves an id between volumes) and an empty domain id.
// An output buffer too small for the 64 bytes is STATUS_INVALID_PARAMETER,
// as MS-FSA says (smbd answers the first MaxOutputResponse bytes instead).
func (c *conn) objectID(ctx context.Context, req *request, b []byte, maxOut uint32) (ntstatus.Status, []byte, error) {
	o, st := c.lookupOpen(req, b[8:24])
	if o == nil {
		return st, nil, nil
	}
	if maxOut < 64 {
		return ntstatus.InvalidParameter, nil, nil
	}
	oid, err := o.h.ObjectID(ctx)
	if err != nil {
		return ntstatus.FromError(err), nil, nil
	}
	out := make([]byte, 64)
	copy(out, oid[:])
	le.PutUint64(out[16:], uint64(o.tree.shareID))
	copy(out[32:], oid[:])
	return ntstatus.Success, ioctlBody(fsctlCreateOrGetObjectID, b[8:24], out), nil
}

func ioctlBody(code uint32, rawFileID []byte, data []byte) []byte {
	out := make([]byte, 48, 48+len(data))
	le.PutUint16(out, 49)
	le.PutUint32(out[4:], code)
	copy(out[8:24], rawFileID)
	le.PutUint32(out[24:], headerSize+48)
	le.PutUint32(out[32:], headerSize+48)
	le.PutUint32(out[36:], uint32(len(data)))
	return append(out, data...)
}
