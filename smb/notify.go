package smb

import (
	"context"
	"sync"
	"time"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// Notifier is what CHANGE_NOTIFY needs of the file system (package fs's
// journal, fs/notify.go): watches registered in the database, whose
// notices fs records in the transaction of every change, whichever
// process or protocol makes it. A FileSystem without it answers
// CHANGE_NOTIFY as before (it pends until cancelled or closed). Notices
// are taken per FileSystem: serve one Server per FileSystem.
type Notifier interface {
	WatchDir(ctx context.Context, dir fs.FileID, tree bool) (fs.WatchID, error)
	Unwatch(ctx context.Context, id fs.WatchID) error
	NoticesChanged() <-chan struct{}
	HasNotices(ctx context.Context) (bool, error)
	TakeNotices(ctx context.Context) (map[fs.WatchID][]fs.Notice, error)
}

// noticePoll is how often the server looks for notices recorded by other
// processes (the mount, `session`, another serve) while it has watches;
// its own process's commits wake it at once. As the break outbox's poll.
const noticePoll = 250 * time.Millisecond

// maxBufferedNotices bounds the changes buffered on an open between
// requests: more is an overflow, answered STATUS_NOTIFY_ENUM_DIR (as
// smbd's 1000).
const maxBufferedNotices = 1000

// watchTree is SMB2_WATCH_TREE (MS-SMB2 2.2.35 Flags).
const watchTree = 0x0001

// notifyOpen is the change notification state of one directory open
// (MS-FSA 2.1.5.11: the server keeps collecting changes after the
// first CHANGE_NOTIFY and answers the next request from them): its watch,
// the completion filter, the changes buffered (as encoded, in order) and
// the requests waiting, oldest first.
type notifyOpen struct {
	id fs.WatchID
	// capacity is the first request's OutputBufferLength: buffered
	// changes beyond it are an overflow (Windows and smbd size the
	// buffer by the first request).
	capacity int
	// filter is the first request's CompletionFilter, as WATCH_TREE is
	// its flag: both stay until the open closes (smbtorture's
	// smb2.notify.mask-change: "once the mask is set on a directory ...
	// it seems to be fixed until the fnum is closed").
	filter   uint32
	buf      []fs.Notice
	bytes    int
	overflow bool
	waiters  []*notifyWaiter
	// deleted: the directory became delete pending; every request
	// answers STATUS_DELETE_PENDING (as smbd).
	deleted bool
}

// notifyWaiter is a pending CHANGE_NOTIFY: done receives its final
// status and body once.
type notifyWaiter struct {
	maxOut int
	done   chan notifyResult
}

type notifyResult struct {
	st   ntstatus.Status
	body []byte
}

// notifyState is the server's change notification state: watched opens
// by open and by watch.
type notifyState struct {
	mu     sync.Mutex
	byOpen map[*open]*notifyOpen
	byID   map[fs.WatchID]*notifyOpen
	kick   chan struct{} // wakes deliverNotices when the first watch comes
	// take serialises pullNotices, so that changes reach the buffers in
	// the order they were recorded.
	take sync.Mutex
	// onDispatch, when set (tests), runs under mu after notices were
	// handed to their opens: an event to synchronise on.
	onDispatch func()
}

func (n *notifyState) init() {
	n.byOpen = map[*open]*notifyOpen{}
	n.byID = map[fs.WatchID]*notifyOpen{}
	n.kick = make(chan struct{}, 1)
}

// notifyRequest serves a CHANGE_NOTIFY on a directory open o (MS-SMB2
// 3.3.5.19): the first registers the open's watch; buffered changes (or
// an overflow) answer at once; else the request goes async and the next
// matching change, from any protocol or process, completes it.
func (c *conn) notifyRequest(ctx context.Context, req *request, o *open, n Notifier, b []byte) (ntstatus.Status, []byte, error) {
	flags := le.Uint16(b[2:])
	maxOut := le.Uint32(b[4:])
	filter := le.Uint32(b[24:])
	if maxOut > c.maxIO {
		return ntstatus.InvalidParameter, nil, nil
	}
	s := c.srv
	s.notify.mu.Lock()
	no := s.notify.byOpen[o]
	s.notify.mu.Unlock()
	if no == nil {
		id, err := n.WatchDir(ctx, o.h.File(), flags&watchTree != 0)
		if err != nil {
			return ntstatus.FromError(err), nil, nil
		}
		no = &notifyOpen{id: id, capacity: int(maxOut), filter: filter}
		s.notify.mu.Lock()
		if prev := s.notify.byOpen[o]; prev != nil {
			// Another request of the open registered first.
			s.notify.mu.Unlock()
			_ = n.Unwatch(ctx, id)
			s.notify.mu.Lock()
			no = prev
		} else {
			s.notify.byOpen[o] = no
			s.notify.byID[id] = no
			select {
			case s.notify.kick <- struct{}{}:
			default:
			}
		}
		s.notify.mu.Unlock()
	}
	// The changes this process committed before the request came are
	// the open's already, as smbd posts a change before it answers the
	// request that made it (smbtorture smb2.notify.dir: ten creates,
	// then a notify that must return all ten), not when the delivery
	// goroutine gets to them.
	if err := s.pullNotices(ctx, n); err != nil && ctx.Err() == nil {
		s.log.Warn("smb: reading change notices", "err", err)
	}
	s.notify.mu.Lock()
	if no.deleted {
		s.notify.mu.Unlock()
		return ntstatus.DeletePending, nil, nil
	}
	if len(no.waiters) == 0 && (len(no.buf) > 0 || no.overflow) {
		r := no.answer(int(maxOut))
		s.notify.mu.Unlock()
		return r.st, r.body, nil
	}
	w := &notifyWaiter{maxOut: int(maxOut), done: make(chan notifyResult, 1)}
	no.waiters = append(no.waiters, w)
	s.notify.mu.Unlock()
	req.asyncID = c.goPendingBody(req, o, ntstatus.NotifyCleanup, func(ctx context.Context) (ntstatus.Status, []byte) {
		select {
		case r := <-w.done:
			return r.st, r.body
		case <-ctx.Done():
		}
		s.notify.mu.Lock()
		defer s.notify.mu.Unlock()
		for i, x := range no.waiters {
			if x == w {
				no.waiters = append(no.waiters[:i], no.waiters[i+1:]...)
				return ntstatus.Cancelled, nil // the cause gives the status
			}
		}
		// Answered meanwhile: the changes are the client's.
		r := <-w.done
		return r.st, r.body
	})
	return ntstatus.Pending, nil, nil
}

// answer empties the buffer into a response for a request of maxOut
// bytes: the changes, or STATUS_NOTIFY_ENUM_DIR when they overflowed or
// do not fit. Call with the state's lock held.
func (no *notifyOpen) answer(maxOut int) notifyResult {
	buf, overflow, size := no.buf, no.overflow, no.bytes
	no.buf, no.overflow, no.bytes = nil, false, 0
	if overflow || size > maxOut {
		return notifyResult{st: ntstatus.NotifyEnumDir}
	}
	out := make([]byte, 8+size)
	le.PutUint16(out, 9)
	le.PutUint16(out[2:], 64+8)
	le.PutUint32(out[4:], uint32(size))
	p := out[8:]
	off := 0
	for i, nt := range buf {
		name := utf16le(nt.Name)
		n := noticeSize(nt)
		if i < len(buf)-1 {
			le.PutUint32(p[off:], uint32(n))
		}
		le.PutUint32(p[off+4:], nt.Action)
		le.PutUint32(p[off+8:], uint32(len(name)))
		copy(p[off+12:], name)
		off += n
	}
	return notifyResult{st: ntstatus.Success, body: out}
}

// noticeSize is a FILE_NOTIFY_INFORMATION's size (MS-FSCC 2.7.1),
// aligned to 4 bytes as NextEntryOffset requires.
func noticeSize(n fs.Notice) int {
	return (12 + len(utf16le(n.Name)) + 3) &^ 3
}

// add hands a change to the open, if its filter wants it: to the oldest
// waiting request when nothing is buffered (that request answers with
// this one change, as smbd does), else to the buffer. Call with the
// state's lock held.
func (no *notifyOpen) add(nt fs.Notice) {
	if nt.Action == fs.NoticeDeletePending {
		no.deleted = true
		for _, w := range no.waiters {
			w.done <- notifyResult{st: ntstatus.DeletePending}
		}
		no.waiters = nil
		return
	}
	if nt.Filter&no.filter == 0 {
		return
	}
	if len(no.waiters) > 0 && len(no.buf) == 0 && !no.overflow {
		w := no.waiters[0]
		no.waiters = no.waiters[1:]
		no.buf, no.bytes = []fs.Notice{nt}, noticeSize(nt)
		w.done <- no.answer(w.maxOut)
		return
	}
	if !no.overflow {
		no.buf = append(no.buf, nt)
		no.bytes += noticeSize(nt)
		if len(no.buf) > maxBufferedNotices || no.bytes > no.capacity {
			no.buf, no.bytes, no.overflow = nil, 0, true
		}
	}
}

// wake completes the oldest waiting request from the buffer, if there is
// something to tell. Call with the state's lock held.
func (no *notifyOpen) wake() {
	if len(no.waiters) == 0 || (len(no.buf) == 0 && !no.overflow) {
		return
	}
	w := no.waiters[0]
	no.waiters = no.waiters[1:]
	w.done <- no.answer(w.maxOut)
}

// unwatch ends o's watch when it closes (its pending requests end with
// STATUS_NOTIFY_CLEANUP through their pendingOp).
func (s *Server) unwatch(ctx context.Context, o *open) {
	n, ok := s.cfg.FS.(Notifier)
	if !ok {
		return
	}
	s.notify.mu.Lock()
	no := s.notify.byOpen[o]
	if no != nil {
		delete(s.notify.byOpen, o)
		delete(s.notify.byID, no.id)
	}
	s.notify.mu.Unlock()
	if no == nil {
		return
	}
	if err := n.Unwatch(context.WithoutCancel(ctx), no.id); err != nil {
		s.log.Warn("smb: ending a change notification watch", "err", err)
	}
}

// deliverNotices runs until the server closes: while it has watches, it
// takes this process's notices whenever a commit here may have recorded
// some (or every noticePoll, for changes of other processes) and hands
// them to their opens.
func (s *Server) deliverNotices(ctx context.Context, n Notifier) {
	tick := time.NewTicker(noticePoll)
	defer tick.Stop()
	for {
		changed := n.NoticesChanged()
		s.notify.mu.Lock()
		watching := len(s.notify.byID) > 0
		s.notify.mu.Unlock()
		if watching {
			if err := s.pullNotices(ctx, n); err != nil && ctx.Err() == nil {
				s.log.Warn("smb: reading change notices", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-s.notify.kick:
		case <-tick.C:
		}
	}
}

// pullNotices takes the notices waiting for this process's watches, if
// any (one read statement when there are none), and hands them to their
// opens.
func (s *Server) pullNotices(ctx context.Context, n Notifier) error {
	s.notify.take.Lock()
	defer s.notify.take.Unlock()
	has, err := n.HasNotices(ctx)
	if err != nil || !has {
		return err
	}
	m, err := n.TakeNotices(ctx)
	if err != nil {
		return err
	}
	s.dispatchNotices(m)
	return nil
}

func (s *Server) dispatchNotices(m map[fs.WatchID][]fs.Notice) {
	s.notify.mu.Lock()
	defer s.notify.mu.Unlock()
	for id, ns := range m {
		no := s.notify.byID[id]
		if no == nil {
			continue // closed meanwhile
		}
		for _, nt := range ns {
			no.add(nt)
		}
		no.wake()
	}
	if s.notify.onDispatch != nil {
		s.notify.onDispatch()
	}
}

// canNotify reports whether o may be watched: a directory opened with
// FILE_LIST_DIRECTORY.
func canNotify(o *open) ntstatus.Status {
	switch {
	case !o.isDir:
		return ntstatus.InvalidParameter
	case o.access&locks.MaskReadData == 0: // FILE_LIST_DIRECTORY
		return ntstatus.AccessDenied
	}
	return ntstatus.Success
}
