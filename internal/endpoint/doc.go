// Package endpoint runs the ways into one `blobshare serve` — FileREST,
// Blob, Queue, Table, SMB and the FUSE mount — under one supervisor.
//
// An Endpoint serves one listener until it is shut down. Run starts every
// endpoint's Serve on a goroutine of its own and waits until its context
// ends (a signal) or the first endpoint stops serving on its own (a
// listener that failed, a server that returned): then every endpoint is
// shut down, the last given first, each exactly once, within the grace
// period, and Run waits for every Serve to return before it returns. The
// error names the endpoint that failed (*FailedError), so `serve` exits
// non-zero with one line saying which; a signal returns nil unless a
// shutdown failed.
//
// Why one supervisor: before it, an SMB server that stopped was only
// logged and a Blob or Queue endpoint that failed left the others
// running, so a serve that no longer answered on one of its ports went on
// looking healthy to whoever watched the process. Stop is the one cleanup
// path, used by Run and by a start that fails halfway (endpoints built
// but not serving yet): it shuts each endpoint down and closes its
// listener.
//
// Adapters: HTTP (an *http.Server and the store it closes after the last
// request), Server (a server with Serve(net.Listener) and Close whose
// Serve returns a known error once closed: smb.Server; this package does
// not import smb, which reaches the database driver) and Func (an
// endpoint with no listener that serves until it is stopped: the mount).
package endpoint
