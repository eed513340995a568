// Package smb is blobshare's SMB2/3 front end: a server that real SMB
// clients (smbclient, Windows, Linux cifs, go-smb2) connect to, over the
// same fs and lock table as FileREST and the FUSE mount. It is a thin
// protocol layer: every sharing, delete-pending and byte-range decision is
// made by package locks through fs, and every outcome becomes an NT status
// through package ntstatus.
//
// # Connection
//
// Messages arrive in NetBIOS session framing (a zero byte and a 24-bit
// length); a frame over maxFrame closes the connection before it is read.
// A connection serves its requests in order on one goroutine: one frame in,
// one frame out (compound chains answered as chains), but for the
// asynchronous replies below. Credits follow
// MS-SMB2 3.3.5.2.3: a request whose message ids lie outside the granted
// window, or reuse one, closes the connection; the window is bounded by
// maxCredits. A blocking LOCK (one element, no FAIL_IMMEDIATELY) that
// conflicts, and a CHANGE_NOTIFY with no change buffered, go async: an
// interim STATUS_PENDING response (signed when the request was), then a
// goroutine of the connection waits (a lock retries until granted) and
// sends the final
// response: granted, STATUS_CANCELLED when CANCEL names it, or, when its
// open, tree or session closes, STATUS_RANGE_NOT_LOCKED for a lock and
// STATUS_NOTIFY_CLEANUP for a notify. Those goroutines are waited for
// before the connection's opens close.
//
// An interim response always travels alone in its frame, after a frame
// with the responses of its compound before it (smbd does so, and the
// Linux kernel client reads no further in a frame once it meets an
// interim response). A CREATE that goes async (a break to wait for) in the
// middle of a compound holds the rest of the chain: it is served once the
// CREATE completes, related requests with its file id, or failing with
// its status (MS-SMB2 3.3.5.2.7.2), and the CREATE's final response goes
// in one frame with theirs (the Linux client's unlink, rename and setattr
// are such chains). The rest runs under the connection's loopMu, as the
// connection's own goroutine would run it. Any other request that would go
// async in the middle of a chain is answered STATUS_INTERNAL_ERROR at its
// place and the chain goes on, as Windows does (MS-SMB2 3.3.5.2.7:
// "except for the last request in the chain and CREATE requests that
// cause oplock breaks"; smbtorture smb2.compound.interim2). A related
// request inherits the file id of the request before it, whether a CREATE
// made it or the request named it; after a request with no valid session,
// related requests are STATUS_INVALID_PARAMETER (MS-SMB2 3.3.5.2.7.2),
// signed with the key of the chain's last session, as smbd signs them.
//
// A READ alone in its frame is served on a goroutine of the connection
// (at most maxReadsInFlight at once, each reading into a pooled buffer
// that becomes its response, sent with one writev), so the disk read and
// the network send of one overlap the next requests, as smbd's
// asynchronous reads do; responses to later requests may overtake its
// response, which SMB2 allows. The READs of one open still read in the
// order they came and their responses leave in that order, so a
// sequential reader stays sequential for fs and a pipelining client gets
// its data in the order it consumes it. Reads inside a compound are
// served in order. MaxReadSize is 1 MiB (MaxWriteSize 8 MiB): smbclient
// keeps a window of bytes in flight, so smaller READs mean more of them
// in flight.
//
// # Conformance
//
// TestSmbtorture runs Samba's smbtorture against the server: every smb2
// test of the in-scope suites that Samba's smbd passes on the machine
// (testdata/smbtorture-smbd-pass.txt, rebuilt by TestSmbtortureSmbdOracle).
// TestSmbtortureCaching runs the tests of smb2.oplock and smb2.lease that
// smbd (with leases) and blobshare both pass
// (testdata/smbtorture-caching-pass.txt; its survey mode lists them
// again), TestSmbtortureDurable those of smb2.durable-open,
// smb2.durable-v2-open and smb2.replay that smbd (configured as Samba's
// selftest runs them: durable handles, no kernel share modes, oplocks or
// POSIX locks) and blobshare both pass (testdata/smbtorture-durable-pass.txt:
// all 65 of smbd's), and two smbd fails (Samba's selftest knownfails
// durable-v2-open.app-instance and durable-open.delete_on_close2).
// TestSmbtortureCompound runs the compound tests (smb2.compound,
// smb2.compound_async, smb2.compound_find) of
// testdata/smbtorture-compound-pass.txt, which says why the others are
// not on it.
//
// TestLinuxCIFSClient (package integration) runs the Linux kernel's SMB
// client, Debian's cifs.ko in a QEMU guest, against `blobshare serve`:
// mounts on the client's default dialect, 3.1.1 sealed, 3.0 and 2.1, and
// system calls on them against FileREST through the lock table. The
// kernel asks for a lease on every open; its Leases check has FileREST
// break them (Get File waiting for the client's flush, Put Range, Delete
// File of a handle kept by the kernel's deferred close, and
// ClientCacheFlushDelay while the guest is stopped).
//
// # Negotiation and authentication
//
// Dialects 2.0.2, 2.1, 3.0, 3.0.2 and 3.1.1 (with the SHA-512 preauth
// integrity hash); the SMB1 multi-protocol NEGOTIATE is answered with SMB2.
// SESSION_SETUP runs NTLMv2 (package smb/ntlm), inside SPNEGO or raw: the
// user is the account name in any domain, the password the account key as
// typed; anonymous and guest logons fail with STATUS_LOGON_FAILURE.
// Signing is required by default: HMAC-SHA256 for 2.x, AES-CMAC for 3.x
// with keys derived per MS-SMB2 3.1.4.2, and on 3.1.1 the algorithm the
// signing capabilities context picks (the client's first of AES-GMAC,
// AES-CMAC, HMAC-SHA256). When the client sent a SPNEGO mechListMIC the
// last SESSION_SETUP answers with the server's. A SESSION_SETUP on a
// logged-on session re-authenticates it (MS-SMB2 3.3.5.5.2): the session
// keeps its keys; a wrong password is STATUS_LOGON_FAILURE and ends the
// session (3.3.5.5.3), as smbd answers; one neither encrypted with the
// session's key nor signed with it when signed is STATUS_ACCESS_DENIED.
//
// # Multichannel
//
// On 3.x the server announces SMB2_GLOBAL_CAP_MULTI_CHANNEL (channel.go):
// a SESSION_SETUP with SMB2_SESSION_FLAG_BINDING binds an existing session
// to another connection of the same client (same ClientGuid, dialect,
// cipher and signing algorithm), signed with the session's key and
// authenticated again as the session's user (MS-SMB2 3.3.5.5.2; a binding
// that is not is refused with the status that section names). Each
// channel signs with a key of its own, derived from its authentication's
// session key (and on 3.1.1 its preauth hash); trees and opens are the
// session's, reachable on every channel, and a session's requests are
// served one at a time whichever channel they come on. A LOGOFF on any
// channel ends the session; its opens close when the last channel's
// connection closes; a session has at most 32 channels (then
// STATUS_INSUFFICIENT_RESOURCES, as Windows). FSCTL_QUERY_NETWORK_INTERFACE_INFO
// lists one interface, the address the connection reached, without RSS, so
// clients open no further channels on their own. On 3.x LOCK does the lock-sequence replay check of MS-SMB2
// 3.3.5.14 (buckets 1 to 64 per open): a request whose sequence number its
// bucket holds already succeeds without being done again.
//
// # Encryption
//
// SMB2 TRANSFORM messages with AES-128-CCM (3.0 and 3.0.2, announced by
// the encryption capability; ccm.go, as the standard library has no CCM)
// and AES-128-GCM or CCM on 3.1.1 (the encryption context: GCM preferred),
// keys derived per MS-SMB2 3.3.5.5.3. A request that comes encrypted is
// answered encrypted and unsigned; a frame that does not decrypt drops the
// connection. With Config.EncryptData (serve --smb-encrypt) the session
// setup sets SMB2_SESSION_FLAG_ENCRYPT_DATA (tree connects
// SMB2_SHAREFLAG_ENCRYPT_DATA), clients without a common cipher are refused
// STATUS_ACCESS_DENIED, and requests in the clear get STATUS_ACCESS_DENIED.
//
// # Shares, opens and paths
//
// Every file share is an SMB share of the same name; IPC$ connects (for
// clients that probe it) but has no pipes. CREATE maps DesiredAccess
// (GENERIC_* and MAXIMUM_ALLOWED through locks.Mask) and ShareAccess onto
// fs.OpenEntry, which opens files and directories alike. Names are checked
// before they reach fs: a ".." component takes back the one before it by
// name, as Windows and smbd canonicalise paths ("d\.." is the share root),
// and one that would climb above the share is
// STATUS_OBJECT_PATH_SYNTAX_BAD; a leading separator, "." components,
// stream names (':') and wildcards are refused, so no request can name
// anything outside its share. The one exception is Windows' fake quota
// file, `$Extend\$Quota:$Q:$INDEX_ALLOCATION` at the share root (any
// case), which clients open to manage quotas: it opens, as on Windows and
// smbd, as a hidden system directory without times, outside fs, and
// serves only QUERY_INFO (no security descriptor, no quota entries:
// STATUS_NOT_SUPPORTED) and CLOSE; it cannot be created, replaced or
// deleted. Opens belong to a session and a tree; a file
// id of another session or tree is STATUS_FILE_CLOSED.
//
// # Oplocks and leases
//
// With Config.Caching (the lock table) the server grants oplocks (level
// II, exclusive, batch) and leases (v1 on 2.1, v2 with epochs and parent
// keys on 3.x; R, RH, RW, RWH) and announces SMB2_GLOBAL_CAP_LEASING from
// 2.1 on, as smbd does; without it every CREATE answers oplock level none.
// `blobshare serve` passes the data directory's lock table, the one
// FileREST breaks leases in, so its SMB endpoint grants them.
// The state and every decision are package locks' (Tx.DecideCache, the
// rule DecideCaching): lease.go only maps the protocol. A CREATE of an
// existing file first asks the lock table what its open breaks (MS-FSA
// 2.1.4.12 runs before the sharing check, so a handle the client only
// caches under Handle caching is given up before a sharing violation
// would be answered); when a break needs an acknowledgment the CREATE
// goes async (interim STATUS_PENDING) and opens once the holder
// acknowledged, closed its opens or the break timed out
// (Config.BreakTimeout, 35 s by default: the break then completes to
// none). The open is then granted what the holders left (a second
// decision, which also breaks any open that raced in between). Break
// notifications come from the lock table's outbox: a goroutine of the
// Server takes the rows addressed to this process whenever a caching
// change commits here (and every 250 ms for changes of other processes)
// and sends each to the connection of the open (oplock) or lease it
// breaks, MessageId all ones, unsigned, encrypted when the session
// encrypts. OPLOCK_BREAK acknowledgments (oplock and lease) complete the
// break (MS-SMB2 3.3.5.22). A client never breaks its own lease. A WRITE,
// an end-of-file or allocation change, or a byte-range LOCK breaks every
// other cache's Read caching at once (no acknowledgment to wait for: Write
// caching cannot exist beside another writer), a level II oplock of the
// writing or locking open included, as smbd does; a LOCK's break of
// another open's exclusive or batch oplock is sent but not waited for. The grant rules follow the tables smbtorture
// checks (Windows' results): an existing lease grows only to exactly the
// superset of its state it asks, when that can be granted whole beside
// the other caches and opens (never in part), a stat open may take a
// lease but no oplock, a lease gets no Handle caching beside an oplock and
// an oplock none beside Handle caching; an open that meets a sharing
// violation breaks only Handle caching, then sees the violation again.
// An overwriting open breaks every cache to none but waits only for
// Write caching (smb2.lease.breaking4), and an open waits for a break
// already outstanding only when it needs more than that break takes.
// A stat open is decided on the whole access mask: at most
// FILE_READ_ATTRIBUTES, FILE_WRITE_ATTRIBUTES and SYNCHRONIZE, and
// READ_CONTROL too towards a lease (smb2.oplock.statopen1,
// smb2.lease.statopen4). An open of a delete-pending file breaks nothing
// (it fails first). A lease break goes to the client's oldest open
// connection (clientconns.go), as smbd sends it. A SET_INFO rename breaks
// the other caches' Handle caching and waits for the acknowledgment:
// async (STATUS_PENDING) when it is alone or last in its compound, in
// place in the middle of one (renamebreak.go). Not yet: breaks by SET_INFO
// delete disposition and by READ of another open, waiting in LOCK,
// Windows' break in steps when an open arrives while a
// lease is breaking (smb2.lease.breaking3, v2_breaking3: the table would
// need the state the waiters require apart from the state the
// notification named).
//
// Directory leases (dirlease.go) on SMB 3.x only: NEGOTIATE announces
// SMB2_GLOBAL_CAP_DIRECTORY_LEASING from 3.0 (with caching on) to a
// client whose NEGOTIATE includes it, as smbd 4.21 does (python3-impacket
// 0.10, which does not, fails every CREATE against a server that
// announces it anyway: its create leaves the parent unset); a
// directory asked RWH in a v2 context is granted RH, never Write (package
// locks); on 2.1, or in a v1 context, a directory's lease request is
// ignored (oplock level none), as before: directory leases are
// SMB2_CREATE_RESPONSE_LEASE_V2's ("a lease for a file or a directory").
// A change of a directory's entries from any protocol or process (a
// child created, removed, renamed in or out, its attributes, times or
// size changed) breaks its leases RH → none (acknowledgment required,
// epoch one more) without making the change wait (MS-SMB2 3.3.1.4) —
// except a change made through an open whose v2 lease named the
// directory's lease key as its ParentLeaseKey: CREATE, CLOSE, SET_INFO,
// WRITE and FLUSH put that parent lease in their context for the
// namespace's transaction. Handle caching on a directory breaks as on a
// file: a conflicting open waits for it, and REST Delete Directory breaks
// it and waits (filerest/dirlease.go). smbtorture's directory lease tests
// (smb2.lease.v2_request, v2_request_parent) are skipped by smbd 4.17,
// which offers no directory leases; their expectations are Windows', and
// blobshare passes them (testdata/smbtorture-dirlease-pass.txt).
//
// # Durable handles and replay
//
// durable.go, with the state in the lock table (locks/durable.go). A
// DHnQ (v1) or DH2Q (v2) request is granted, as MS-SMB2 3.3.5.9.6 and
// 3.3.5.9.10 allow and smbd does, when the open got a batch oplock or a
// lease with Handle caching and is not a directory: a v1 handle lasts 16
// minutes, a v2 handle its requested timeout capped at 300 s (60 s when
// it asks 0), as smbd; a persistent request is answered as a durable one
// (no continuously available shares). Persistent file ids are the
// server's, volatile ids the session's. When the connection drops (its
// last channel), or the session logs off (as smbd; a TREE_DISCONNECT
// closes), or a new session of the same user names it as
// PreviousSessionId (3.3.5.5.3: the old session ends, its connection then
// answers STATUS_USER_SESSION_DELETED), a durable open is not closed: the
// lock table marks it disconnected with its deadline, and it keeps its
// handle, share mode, byte-range locks and caching, so it goes on
// blocking REST (409 SharingViolation), the mount and other SMB clients.
// A reconnect (DHnC, DH2C) by the same user on the same share (v2: the
// same CreateGuid; an open of a lease: the same ClientGuid and lease key,
// and the same name, else STATUS_INVALID_PARAMETER) gets the same open on
// its session, with its locks, file position and current caching; a
// reconnect that names nothing, or an open still connected elsewhere
// (after waiting at most 2 s for that connection's end to be read: a
// client reconnects the moment its connection fails), is
// STATUS_OBJECT_NAME_NOT_FOUND, never an open of the request's name;
// mixed or malformed durable contexts are STATUS_INVALID_PARAMETER, as
// smbd answers (TestDurableReconnectAgainstSmbd). A disconnected open ends
// at its deadline (the Server's scavenger goroutine), by Force Close
// Handles (REST or `blobshare` handle commands: the lock table's
// ForceClose), when a break that needs an acknowledgment would have to
// reach it (any process's decision closes it in the deciding transaction
// and proceeds, MS-SMB2 3.3.4.6/3.3.4.7: its client cannot acknowledge),
// and with the server (Close, or the process's death: the lock table
// reaps its owner) — durable, not persistent. TestDurableHandleAcrossDisconnect
// shows each.
//
// Replay (SMB 3.x): a DH2Q CREATE records its CreateGuid for the client
// (ClientGuid) while its open lasts, durable or not, as smbd. Another
// CREATE naming it answers the same open again when it carries
// SMB2_FLAGS_REPLAY_OPERATION (the open's action and current caching, the
// oplock level asked) and STATUS_DUPLICATE_OBJECTID when it does not;
// while the first CREATE is still in progress (waiting for a break) any
// other gets STATUS_FILE_NOT_AVAILABLE; a pending CREATE of a session with
// other channels outlives its connection so that its replay on another
// channel finds it. Any other request on the open ends its replay
// eligibility. Channel sequence numbers are checked on 3.x (3.3.5.2.10): an
// older one fails WRITE, SET_INFO and IOCTL with STATUS_FILE_NOT_AVAILABLE.
// An SMB2_CREATE_APP_INSTANCE_ID with DH2Q closes another client's durable
// open of the same application instance and path (3.3.5.9.13).
//
// An answered WRITE is in the share at once for every reader, as on Azure
// Files and smbd (what a client with a write-caching lease keeps in its own
// cache is not answered yet, and a break makes it flush): opens are made with
// fs.OpenOptions.VisibleWrites, so fs keeps the writes staged (committing
// at every WRITE cost 2000 appends of 100 bytes 25 s instead of 0.2 s) and
// commits them before anything in this process reads the file — another
// open's READ or QUERY_INFO, QUERY_DIRECTORY, FileREST's Get File, Get File
// Properties, List, List Ranges and Copy File. TestLinuxCIFSClient checks
// it with the kernel client on every dialect. A reader in another process
// (a `blobshare mount` or `session` over the same data directory) asks
// this process to commit through the database and waits for it (polled
// every 2 ms, at most 2 s: fs/visible.go).
//
// Extended attributes: the ExtA create context sets a created (or, with
// one, an overwritten) file's EAs, SET_INFO FileFullEaInformation
// (FILE_WRITE_EA) sets and removes them, QUERY_INFO FileFullEaInformation
// (FILE_READ_EA) lists them as MS-FSA 2.1.5.12.12 says (enumeration per
// open, single entries, queries by name; STATUS_NO_EAS_ON_FILE without
// any), and FileEaInformation and the directory classes report their
// size. fs keeps them (fs.EA); the volume announces
// FILE_SUPPORTS_EXTENDED_ATTRIBUTES.
//
// 8.3 names: FileAlternateNameInformation and the ShortName of the
// *BothDirectoryInformation classes give a name computed from the long
// name (shortname.go: Windows' hashed form, as smbd's mangling, nothing
// stored); an 8.3 name is its own alternate name and has no ShortName.
// Short names are never resolved: a CREATE naming one finds nothing.
//
// FSCTL_CREATE_OR_GET_OBJECT_ID gives a file or directory a random 16-byte
// object id once, kept by fs with its EAs (it survives restarts and is the
// same from every process), and answers FILE_OBJECTID_BUFFER: the id, the
// volume's object id as birth volume, the id as birth object id, no
// domain. An output buffer under 64 bytes is STATUS_INVALID_PARAMETER, as
// MS-FSA 2.1.5.10.1 says; smbd answers the first bytes instead.
//
// CHANGE_NOTIFY (notify.go) reports the changes of every protocol: fs
// records them, in the transaction that makes each change, for the
// directories watched (fs/notify.go; nothing is recorded for a directory
// nobody watches), so a FileREST Create File, a mount's mv, `blobshare
// session` and another serve process on the same data directory are
// reported like an SMB client's own changes. The first CHANGE_NOTIFY on a
// directory open registers its watch (WATCH_TREE: descendants too, named
// by their path from the directory) with its CompletionFilter and output
// buffer size, all three kept until the open closes, as smbd keeps them;
// from then on the server collects the open's changes between requests
// (MS-FSA 2.1.5.11) and a request finds them at once. A change that
// meets a pending request completes it alone (as smbd); buffered changes
// that outgrow the first request's buffer, or 1000 changes, overflow:
// the next request answers STATUS_NOTIFY_ENUM_DIR, as does one whose
// OutputBufferLength cannot hold the changes; an OutputBufferLength over
// MaxTransactSize is STATUS_INVALID_PARAMETER. Actions and filters are
// MS-FSA's: added and removed with FILE_NAME or DIR_NAME, a rename within
// a directory as RENAMED_OLD_NAME then RENAMED_NEW_NAME and a move between
// directories as removed there and added here (as NTFS), a setattr as
// modified with the bits it changed (attributes, last write, creation,
// size, EA; the change time alone reports nothing), a content commit as
// modified with size and last write. A goroutine of the Server takes this
// process's notices when a commit here may have recorded some and every
// 250 ms (while it has watches) for other processes' changes, as it takes
// breaks. CANCEL ends a request with STATUS_CANCELLED; closing the open
// (or its tree or session) with STATUS_NOTIFY_CLEANUP. Not reported:
// security descriptor changes (setting one is ignored), last access
// times (not kept), stream names (no streams).
//
// A file's security
// descriptor is its FileREST permission (fs.PermissionOf, the parts the
// query's SECURITY_INFORMATION asks for); setting one is accepted and
// ignored.
package smb
