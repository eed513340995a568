package smb

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// open is one SMB open: an fs handle on a file or directory of a tree.
type open struct {
	id     fileID
	tree   *tree
	h      *fs.Handle
	path   string // share-relative, '/'-separated ("" for the share root)
	isDir  bool
	access locks.Mask // granted access, generic bits mapped
	// Directory enumeration state (QUERY_DIRECTORY).
	listing  []fs.Attr
	listPos  int
	pattern  string
	listDone bool
	// position is FilePositionInformation: kept for the client, which
	// sets and reads it (and READs, on goroutines, move it); READ and
	// WRITE name their offsets.
	position atomic.Int64
	// quota marks an open of Windows' fake quota file (quotaFakeFile): it
	// has no fs handle (h is nil) and serves only CLOSE and QUERY_INFO.
	quota bool
	// lockSeq holds the LOCK sequence numbers done (channel.go).
	lockSeq lockSequences
	// eaNext is the enumeration position of FileFullEaInformation
	// queries (MS-FSA Open.NextEaEntry).
	eaNext int
	// share is the open's share access; sess its session.
	share locks.ShareMode
	sess  *session
	// oplock is the oplock level the open holds (locks.OplockLease for an
	// open of a lease, whose state lease holds); leaseBreaking that its
	// lease was breaking when it was granted (lease.go).
	oplock        locks.OplockLevel
	lease         *locks.LeaseInfoSMB
	leaseBreaking bool
	// lastRead is the turn of the open's latest READ served on a
	// goroutine (fileio.go); only the connection's loop uses it.
	lastRead *readTurn
	// dur is the open's durability and replay record; chanSeq its
	// Open.ChannelSequence (durable.go).
	dur     *durableState
	chanSeq uint16
}

// quotaFakeFile is the name Windows clients open to query and set quotas
// (NTFS's $Extend\$Quota index; smbcquotas and Explorer's quota tab). It
// is the one stream name CREATE accepts: it opens a fake directory outside
// fs, as smbd's fake_file does, and reaches nothing of the share.
const quotaFakeFile = `$Extend\$Quota:$Q:$INDEX_ALLOCATION`

// quotaAttr is what the fake quota file reports: the attributes Windows
// gives it and no times (smbtorture's quota-fake-file checks both).
var quotaAttr = fs.Attr{Kind: fs.KindDirectory, Name: "$Quota:$Q:$INDEX_ALLOCATION",
	Attributes: fs.AttrHidden | fs.AttrSystem | fs.AttrArchive}

// CreateOptions bits (MS-SMB2 2.2.13).
const (
	optDirectoryFile    uint32 = 0x00000001
	optNonDirectoryFile uint32 = 0x00000040
	optDeleteOnClose    uint32 = 0x00001000
	optOpenByFileID     uint32 = 0x00002000
	optReserveOpfilter  uint32 = 0x00100000
)

// Create actions.
const (
	actionSuperseded  uint32 = 0
	actionOpened      uint32 = 1
	actionCreated     uint32 = 2
	actionOverwritten uint32 = 3
)

// invalidAccessBits are DesiredAccess bits no request may set (MS-SMB2
// 3.3.5.9).
const invalidAccessBits = 0x0CE0FE00

var dispositions = [...]fs.Disposition{
	0: fs.DispositionSupersede,
	1: fs.DispositionOpen,
	2: fs.DispositionCreate,
	3: fs.DispositionOpenIf,
	4: fs.DispositionOverwrite,
	5: fs.DispositionOverwriteIf,
}

// sharePath turns a CREATE name ("dir\file", relative to the share) into
// the share-relative path fs takes ("dir/file"). A ".." component takes
// back the component before it, by name alone, as Windows' and smbd's
// path canonicalisation do ("d\.." is the share root, "d\x\..\f" is
// "d/f", whether or not d\x exists); one that would climb above the
// share is STATUS_OBJECT_PATH_SYNTAX_BAD, so no name can leave its share.
// Every component, even one a ".." takes back, must be a valid name:
// empty components, ".", ':' (streams) and wildcards are refused, as is a
// leading separator.
func sharePath(name string) (string, ntstatus.Status) {
	if name == "" {
		return "", ntstatus.Success
	}
	if strings.HasPrefix(name, `\`) || strings.HasPrefix(name, "/") {
		return "", ntstatus.InvalidParameter
	}
	name = strings.TrimSuffix(name, `\`)
	parts := strings.Split(name, `\`)
	out := parts[:0:0]
	for _, p := range parts {
		switch {
		case p == "..":
			if len(out) == 0 {
				// Windows answers a ".." above the share this way
				// (smbtorture mkdir), and so does smbd.
				return "", ntstatus.ObjectPathSyntaxBad
			}
			out = out[:len(out)-1]
			continue
		case p == "" || p == ".":
			return "", ntstatus.ObjectNameInvalid
		case strings.ContainsAny(p, ":"):
			return "", ntstatus.ObjectNameInvalid
		case strings.ContainsAny(p, "*?<>\"|/\x00"):
			return "", ntstatus.ObjectNameInvalid
		}
		out = append(out, p)
	}
	return strings.Join(out, "/"), ntstatus.Success
}

// create serves CREATE (MS-SMB2 3.3.5.9): a locks open with the mapped
// access mask and share access, through fs.OpenEntry.
func (c *conn) create(ctx context.Context, req *request) (st ntstatus.Status, out []byte, err error) {
	b, err := body(req.msg, 57)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	impersonation := le.Uint32(b[4:])
	desired := locks.Mask(le.Uint32(b[24:]))
	attrs := fs.Attributes(le.Uint32(b[28:]))
	shareAccess := le.Uint32(b[32:])
	disposition := le.Uint32(b[36:])
	options := le.Uint32(b[40:])
	rawName, err := buffer(req.msg, uint32(le.Uint16(b[44:])), uint32(le.Uint16(b[46:])))
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	contexts, err := buffer(req.msg, le.Uint32(b[48:]), le.Uint32(b[52:]))
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	ctxs, err := parseCreateContexts(contexts)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	dask, st := parseDurable(ctxs)
	if st != ntstatus.Success {
		return st, nil, nil
	}
	if dask.reconnect {
		name, err := fromUTF16(rawName)
		if err != nil {
			return ntstatus.ObjectNameInvalid, nil, nil
		}
		// A reconnect's lease context counts whatever oplock level
		// the request names (smbd reads it so).
		lease, st := c.parseLease(ctxs, oplockLease)
		if st != ntstatus.Success {
			return st, nil, nil
		}
		st, out := c.reconnectDurable(ctx, req, dask, lease, name)
		return st, out, nil
	}
	var eas []fs.EA
	if ext, ok := ctxs["ExtA"]; ok {
		var st ntstatus.Status
		if eas, st = parseEAs(ext); st != ntstatus.Success {
			return st, nil, nil
		}
	}
	var allocSize int64
	if al, ok := ctxs["AlSi"]; ok {
		// SMB2_CREATE_ALLOCATION_SIZE (MS-SMB2 2.2.13.2.2): the
		// allocation of the file the CREATE creates or overwrites.
		if len(al) < 8 || le.Uint64(al) > 1<<62 {
			return ntstatus.InvalidParameter, nil, nil
		}
		allocSize = int64(le.Uint64(al))
	}
	name, err := fromUTF16(rawName)
	if err != nil {
		return ntstatus.ObjectNameInvalid, nil, nil
	}
	switch {
	case impersonation > 3:
		return ntstatus.BadImpersonationLevel, nil, nil
	case disposition >= uint32(len(dispositions)):
		return ntstatus.InvalidParameter, nil, nil
	case shareAccess&^7 != 0:
		return ntstatus.InvalidParameter, nil, nil
	case options&optDirectoryFile != 0 && options&optNonDirectoryFile != 0:
		return ntstatus.InvalidParameter, nil, nil
	case options&optReserveOpfilter != 0:
		return ntstatus.NotSupported, nil, nil
	case options&optOpenByFileID != 0:
		return ntstatus.NotSupported, nil, nil
	case uint32(desired)&invalidAccessBits != 0:
		return ntstatus.AccessDenied, nil, nil
	case desired&locks.MaskSystemSecurity != 0:
		return ntstatus.PrivilegeNotHeld, nil, nil
	}
	if req.tree.ipc {
		return ntstatus.ObjectNameNotFound, nil, nil // no named pipes
	}
	if strings.EqualFold(name, quotaFakeFile) {
		return c.createQuota(req, desired, disposition, options)
	}
	rel, st := sharePath(name)
	if st != ntstatus.Success {
		return st, nil, nil
	}
	kind := fs.OpenAnyKind
	switch {
	case options&optDirectoryFile != 0:
		kind = fs.OpenDirectoryKind
	case options&optNonDirectoryFile != 0:
		kind = fs.OpenFileKind
	}
	if kind == fs.OpenDirectoryKind && (disposition == 0 || disposition == 4 || disposition == 5) {
		return ntstatus.InvalidParameter, nil, nil
	}
	granted := desired.MapGeneric(false)
	if options&optDeleteOnClose != 0 && granted&locks.MaskDelete == 0 {
		return ntstatus.InvalidParameter, nil, nil
	}
	if options&optDeleteOnClose != 0 && attrs&fs.AttrReadOnly != 0 && disposition != 1 {
		// A file created (or overwritten) ReadOnly cannot be deleted on
		// close (MS-FSA 2.1.5.1.2.1).
		return ntstatus.CannotDelete, nil, nil
	}
	var share locks.ShareMode
	if shareAccess&1 != 0 {
		share |= locks.ShareRead
	}
	if shareAccess&2 != 0 {
		share |= locks.ShareWrite
	}
	if shareAccess&4 != 0 {
		share |= locks.ShareDelete
	}
	full := req.tree.share
	if rel != "" {
		full += "/" + rel
	}
	args := &createArgs{rel: rel, desired: desired, granted: granted, disposition: disposition,
		oreq: fs.OpenEntryRequest{
			OpenPathRequest: fs.OpenPathRequest{
				Path:        full,
				Disposition: dispositions[disposition],
				Attributes:  createAttrs(attrs),
				Open: fs.OpenOptions{
					Access: granted.Access(), Share: share, DeleteOnClose: options&optDeleteOnClose != 0,
					// No SMB client may cache writes without a
					// write-caching lease: an answered WRITE is seen by
					// every reader.
					VisibleWrites: true,
					SessionID:     req.sess.id, ClientName: locks.ClientName(locks.ProtocolSMB, req.sess.workstation), ClientIP: c.remote,
				},
			},
			Kind:           kind,
			EAs:            eas,
			AllocationSize: allocSize,
		}}
	args.ask.mask = granted
	switch b[3] {
	case byte(locks.OplockLevelII), byte(locks.OplockExclusive), byte(locks.OplockBatch):
		if c.srv.cfg.Caching != nil {
			args.ask.oplock = locks.OplockLevel(b[3])
		}
	}
	if args.ask.lease, st = c.parseLease(ctxs, b[3]); st != ntstatus.Success {
		return st, nil, nil
	}
	if st, out, done := c.checkReplay(req, &dask, args.ask.lease, b[3]); done {
		return st, out, nil
	}
	args.durable = dask
	if dask.reserved {
		defer func() { c.srv.durables.settle(dask, st) }()
	}
	c.closeAppInstance(ctx, req, dask, rel)
	args.overwrite = disposition == 0 || disposition == 4 || disposition == 5
	if disposition != 2 { // FILE_CREATE meets no existing file to break
		cc, wait := c.preBreak(ctx, req.tree.share, rel, args.ask, granted.Access(), share, args.overwrite)
		if wait {
			// A break that needs an acknowledgment is out: the CREATE
			// goes async and opens once it is acknowledged, the opens
			// closed, or the break timed out (MS-SMB2 3.3.4.6, 3.3.5.9).
			areq := *req
			areq.rel = &related{}
			req.asyncID = c.goPendingBody(req, nil, ntstatus.Cancelled, c.settleReplay(args, func(pctx context.Context) (ntstatus.Status, []byte) {
				if _, err := c.srv.cfg.Caching.WaitCache(pctx, cc, 0); err != nil {
					return ntstatus.Cancelled, nil
				}
				if !lockSession(pctx, areq.sess) {
					return ntstatus.Cancelled, nil
				}
				held := true
				defer func() {
					if held {
						areq.sess.mu.Unlock()
					}
				}()
				if !areq.sess.valid.Load() || areq.sess.trees[areq.hdr.TreeID] != areq.tree {
					return ntstatus.NetworkNameDeleted, nil
				}
				return c.openEntry(pctx, &areq, args, &held)
			}))
			return ntstatus.Pending, nil, nil
		}
	}
	st, out = c.openEntry(ctx, req, args, nil)
	return st, out, nil
}

// createAttrs are the attributes a CREATE gives the file it creates: the
// settable ones it asks, and Archive whenever it asks any (MS-FSA
// 2.1.5.1.1: a new file's attributes are the requested ones with
// FILE_ATTRIBUTE_ARCHIVE; none asked gives Archive alone already).
func createAttrs(attrs fs.Attributes) fs.Attributes {
	attrs &= fs.AttrReadOnly | fs.AttrHidden | fs.AttrSystem | fs.AttrArchive | fs.AttrTemporary | fs.AttrNotContentIndexed | fs.AttrOffline
	if attrs != 0 {
		attrs |= fs.AttrArchive
	}
	return attrs
}

// createArgs is a parsed CREATE: what openEntry needs, copied out of the
// request's buffer (an async CREATE opens after the buffer is reused).
type createArgs struct {
	rel         string
	desired     locks.Mask
	granted     locks.Mask
	disposition uint32
	oreq        fs.OpenEntryRequest
	ask         cacheAsk
	overwrite   bool
	durable     durableAsk
}

// lockSession takes s.mu for a pending request's goroutine, giving up
// when ctx ends: the connection's loop may hold s.mu while it ends the
// pending requests and waits for them.
func lockSession(ctx context.Context, s *session) bool {
	for !s.mu.TryLock() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Millisecond):
		}
	}
	return true
}

// openEntry opens the file of a CREATE and grants its caching. held is
// nil on the connection's loop; on a pending request's goroutine it
// reports that the goroutine holds the session's lock: a wait for breaks
// then happens here, after releasing the lock (held false), instead of
// going async.
func (c *conn) openEntry(ctx context.Context, req *request, args *createArgs, held *bool) (ntstatus.Status, []byte) {
	granted, oreq := args.granted, args.oreq
	h, a, action, err := c.srv.cfg.FS.OpenEntry(args.ask.lease.parentCtx(ctx), oreq)
	if err != nil && args.desired&locks.MaskMaximumAllowed != 0 && errors.Is(err, locks.ErrReadOnly) {
		// MAXIMUM_ALLOWED on a ReadOnly file grants everything but
		// writing data (MS-FSA 2.1.5.1.2.1).
		granted = args.desired.MapGeneric(true)
		oreq.Open.Access = granted.Access()
		h, a, action, err = c.srv.cfg.FS.OpenEntry(ctx, oreq)
	}
	if err != nil {
		if args.disposition == 2 && (errors.Is(err, fs.ErrNotDir) || errors.Is(err, fs.ErrIsDir)) && !errors.Is(err, locks.ErrSharingViolation) {
			// FILE_CREATE of a name that exists as the other kind: the
			// name collides before its kind matters (mkdir over a file).
			return ntstatus.ObjectNameCollision, nil
		}
		return createStatus(err, args.rel), nil
	}
	o := &open{tree: req.tree, h: h, path: args.rel, isDir: a.Kind.IsDir(), access: granted, share: oreq.Open.Share, sess: req.sess}
	if !c.addOpen(req, o) {
		_ = h.Close(ctx)
		return ntstatus.TooManyOpenedFiles, nil
	}
	var act uint32
	switch action {
	case fs.ActionCreated:
		act = actionCreated
	case fs.ActionOverwritten:
		act = actionOverwritten
	case fs.ActionSuperseded:
		act = actionSuperseded
	default:
		act = actionOpened
	}
	overwrite := args.overwrite && action != fs.ActionCreated
	created := action == fs.ActionCreated
	wait, st := c.grantCache(ctx, o, args.ask, overwrite, created)
	if st != ntstatus.Success {
		delete(req.sess.opens, o.id.Volatile)
		_ = c.srv.closeOpen(ctx, o)
		return st, nil
	}
	if !wait {
		c.grantDurable(ctx, o, args.durable, act)
		return ntstatus.Success, createBody(o, act, a)
	}
	// An open that raced in before the grant holds caching that must be
	// broken first: wait for it (outside the session's lock), then grant.
	cc := c.cacheCall(h.File(), args.ask, h.Access(), o.share, overwrite, o.isDir, h.ID())
	cc.Req.Created = created
	finish := func(pctx context.Context) (ntstatus.Status, []byte) {
		r, err := c.srv.cfg.Caching.WaitCache(pctx, cc, 0)
		if err != nil {
			return ntstatus.Cancelled, nil
		}
		o.setCache(r, args.ask)
		if o.oplock != locks.OplockNone || o.lease != nil {
			c.srv.caches.add(o, c, o.sess)
		}
		c.grantDurable(pctx, o, args.durable, act)
		return ntstatus.Success, createBody(o, act, a)
	}
	if held != nil {
		req.sess.mu.Unlock()
		*held = false
		return finish(ctx)
	}
	areq := *req
	req.asyncID = c.goPendingBody(&areq, nil, ntstatus.Cancelled, c.settleReplay(args, finish))
	return ntstatus.Pending, nil
}

// addOpen gives o its file id in the request's session, unless the
// session holds too many opens already.
func (c *conn) addOpen(req *request, o *open) bool {
	s := req.sess
	if len(s.opens) >= 16384 {
		return false
	}
	s.nextFile++
	// Persistent ids are the server's (a durable open keeps its own
	// across sessions, durable.go); volatile ids the session's.
	o.id = fileID{Persistent: c.srv.nextPersistent.Add(1), Volatile: s.nextFile ^ uint64(s.id)<<20}
	if c.dialect >= dialect300 {
		o.chanSeq = uint16(req.hdr.Status) // Open.ChannelSequence (MS-SMB2 3.3.5.9)
	}
	s.opens[o.id.Volatile] = o
	req.rel.file = o.id
	return true
}

// createQuota opens the fake quota file (quotaFakeFile). It exists and is
// a directory: it can be opened, not created, replaced or deleted.
func (c *conn) createQuota(req *request, desired locks.Mask, disposition, options uint32) (ntstatus.Status, []byte, error) {
	switch {
	case disposition == 2: // FILE_CREATE
		return ntstatus.ObjectNameCollision, nil, nil
	case disposition != 1 && disposition != 3: // only FILE_OPEN and FILE_OPEN_IF open
		return ntstatus.AccessDenied, nil, nil
	case options&optNonDirectoryFile != 0:
		return ntstatus.FileIsADirectory, nil, nil
	case options&optDeleteOnClose != 0:
		return ntstatus.CannotDelete, nil, nil
	}
	o := &open{tree: req.tree, path: strings.ReplaceAll(quotaFakeFile, `\`, "/"), isDir: true,
		access: desired.MapGeneric(false), quota: true}
	if !c.addOpen(req, o) {
		return ntstatus.TooManyOpenedFiles, nil, nil
	}
	return ntstatus.Success, createBody(o, actionOpened, quotaAttr), nil
}

// createBody is a CREATE response body for o, opened by act, with a's
// times, sizes and attributes.
func createBody(o *open, act uint32, a fs.Attr) []byte {
	out := make([]byte, 88, 96)
	le.PutUint16(out, 89)
	le.PutUint32(out[4:], act)
	putTimes(out[8:], a)
	le.PutUint64(out[40:], allocation(a))
	le.PutUint64(out[48:], uint64(a.Size))
	le.PutUint32(out[56:], wireAttrs(a))
	o.id.put(out[64:])
	out[2] = byte(o.oplock)
	var lease []byte
	if o.lease != nil {
		out[2] = oplockLease
		lease = leaseContext(o)
	}
	if ctxs := chainContexts(lease, durableContext(o)); len(ctxs) > 0 {
		le.PutUint32(out[80:], headerSize+88) // CreateContextsOffset
		le.PutUint32(out[84:], uint32(len(ctxs)))
		return append(out, ctxs...)
	}
	return append(out, 0, 0, 0, 0, 0, 0, 0, 0)
}

// parseCreateContexts reads a CREATE request's create contexts (MS-SMB2
// 2.2.13.2) into their data by name. Offsets count from each context's
// start; a context outside the buffer is an error.
func parseCreateContexts(b []byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	for off := 0; len(b) > 0; {
		e := b[off:]
		if len(e) < 16 {
			return nil, errMalformed
		}
		next := int(le.Uint32(e))
		nameOff, nameLen := int(le.Uint16(e[4:])), int(le.Uint16(e[6:]))
		dataOff, dataLen := int(le.Uint16(e[10:])), int(le.Uint32(e[12:]))
		end := len(e)
		if next != 0 {
			if next < 16 || next > len(e) || next%8 != 0 {
				return nil, errMalformed
			}
			end = next
		}
		if nameLen == 0 || nameOff+nameLen > end || (dataLen > 0 && (dataOff < nameOff+nameLen || dataOff+dataLen > end)) {
			return nil, errMalformed
		}
		var data []byte
		if dataLen > 0 {
			data = e[dataOff : dataOff+dataLen]
		}
		out[string(e[nameOff:nameOff+nameLen])] = data
		if next == 0 {
			return out, nil
		}
		off += next
	}
	return out, nil
}

// createStatus maps an OpenEntry error, naming a missing directory on the
// way as a path (not a name) that is not found.
func createStatus(err error, rel string) ntstatus.Status {
	if errors.Is(err, fs.ErrShareNotFound) {
		return ntstatus.NetworkNameDeleted
	}
	if errors.Is(err, fs.ErrNotDir) && !errors.Is(err, locks.ErrSharingViolation) {
		return ntstatus.NotADirectory
	}
	return ntstatus.FromError(err)
}

// putTimes writes creation, last access, last write and change times.
func putTimes(b []byte, a fs.Attr) {
	le.PutUint64(b, filetime(a.Created))
	le.PutUint64(b[8:], filetime(a.LastWrite)) // no access times are kept
	le.PutUint64(b[16:], filetime(a.LastWrite))
	le.PutUint64(b[24:], filetime(a.Change))
}

// allocation is the allocation size reported for a (fs.Attr.Allocated):
// the size rounded up to 4 KiB clusters, or the allocation a client set
// apart from it when larger.
func allocation(a fs.Attr) uint64 {
	return uint64(a.Allocated())
}

// wireAttrs are a's attributes as FILE_ATTRIBUTE_* on the wire:
// FILE_ATTRIBUTE_NORMAL when there are none.
func wireAttrs(a fs.Attr) uint32 {
	v := uint32(a.Attributes)
	if a.Kind.IsDir() {
		v |= uint32(fs.AttrDirectory)
	}
	if v == 0 {
		v = 0x80
	}
	return v
}

// lookupOpen finds the open a request names, resolving a compound's
// related file id.
func (c *conn) lookupOpen(req *request, b []byte) (*open, ntstatus.Status) {
	id := getFileID(b)
	if id == relatedFileID && req.hdr.Flags&flagRelated != 0 {
		id = req.rel.file
	}
	o := req.sess.opens[id.Volatile]
	if o == nil || o.id != id || o.tree != req.tree {
		return nil, ntstatus.FileClosed
	}
	// A related request after this one uses the file this one used
	// (MS-SMB2 3.3.5.2.7.2), not only one a CREATE made.
	req.rel.file = id
	if o.quota && req.hdr.Command != cmdClose && req.hdr.Command != cmdQueryInfo {
		// The fake quota file has no data, no entries and no fs entry.
		return nil, ntstatus.InvalidDeviceRequest
	}
	if st := c.openUsed(req, o); st != ntstatus.Success {
		return nil, st
	}
	return o, ntstatus.Success
}

// closeFile serves CLOSE, with post-query attributes on request.
func (c *conn) closeFile(ctx context.Context, req *request) (ntstatus.Status, []byte, error) {
	b, err := body(req.msg, 24)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	o, st := c.lookupOpen(req, b[8:])
	if o == nil {
		return st, nil, nil
	}
	flags := le.Uint16(b[2:])
	out := make([]byte, 60)
	le.PutUint16(out, 60)
	var a fs.Attr
	if flags&1 != 0 && !o.quota {
		if err := o.h.Flush(ctx); err != nil && !o.isDir {
			return ntstatus.FromError(err), nil, nil
		}
		a, _ = o.h.Attr(ctx)
	}
	delete(req.sess.opens, o.id.Volatile)
	req.sess.endPending(func(p *pendingOp) bool { return p.open == o })
	if err := c.srv.closeOpen(ctx, o); err != nil {
		return ntstatus.FromError(err), nil, nil
	}
	if flags&1 != 0 && a.ID != 0 {
		le.PutUint16(out[2:], 1)
		putTimes(out[8:], a)
		le.PutUint64(out[40:], allocation(a))
		le.PutUint64(out[48:], uint64(a.Size))
		le.PutUint32(out[56:], wireAttrs(a))
	}
	return ntstatus.Success, out, nil
}
