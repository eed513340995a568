package locks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/blobshare/blobshare/meta/sqlmeta"
)

// Protocol is the front end a handle was opened through. It is recorded
// as the first word of the handle's ClientName, before a colon
// ("fuse:myhost", "session:myhost", "smb:WORKSTATION"), so List Handles
// and `blobshare status` can tell who holds a file without a column of
// its own. Build ClientNames with ClientName.
type Protocol string

const (
	ProtocolMount   Protocol = "fuse"    // the FUSE mount (serve --mount, blobshare mount)
	ProtocolSession Protocol = "session" // blobshare session
	ProtocolSMB     Protocol = "smb"     // the SMB2/3 endpoint
)

// ClientName is the ClientName of an open through protocol p by client
// (a host or workstation name).
func ClientName(p Protocol, client string) string { return string(p) + ":" + client }

// WithProgram adds to a ClientName the program that opened the file and
// its process id, for a front end that serves local programs (the mount
// knows each request's caller): "fuse:myhost cat[4711]". program may be
// "" when it could not be read; Handle.Program gives both back.
func WithProgram(clientName, program string, pid int) string {
	return clientName + " " + program + "[" + strconv.Itoa(pid) + "]"
}

// Program is the program and process id WithProgram recorded in h's
// ClientName, or "", 0. The client part (a host name) has no space, so the
// program is everything after the first space up to the trailing "[pid]";
// a program name may itself hold spaces and brackets.
func (h Handle) Program() (string, int) {
	_, rest, ok := strings.Cut(h.ClientName, " ")
	if !ok || !strings.HasSuffix(rest, "]") {
		return "", 0
	}
	i := strings.LastIndexByte(rest, '[')
	if i < 0 {
		return "", 0
	}
	pid, err := strconv.Atoi(rest[i+1 : len(rest)-1])
	if err != nil || pid <= 0 {
		return "", 0
	}
	return rest[:i], pid
}

// Host is h's client without the program WithProgram added.
func (h Handle) Host() string {
	_, client := h.Protocol()
	if _, pid := h.Program(); pid > 0 {
		client, _, _ = strings.Cut(client, " ")
	}
	return client
}

// Protocol splits h's ClientName into the protocol and the client. A
// ClientName without a known protocol word gives "" and the whole name.
func (h Handle) Protocol() (Protocol, string) {
	p, client, ok := strings.Cut(h.ClientName, ":")
	switch Protocol(p) {
	case ProtocolMount, ProtocolSession, ProtocolSMB:
		if ok {
			return Protocol(p), client
		}
	}
	return "", h.ClientName
}

// OwnerState is one owner (a process with the database open) as the
// snapshot found it.
type OwnerState struct {
	ID         OwnerID
	PID        int       // 0 when the owner is known only from its handles
	Started    time.Time // zero when unknown
	Registered bool      // it has a session row in the owner table
	Host       string    // the machine it runs on ("" for a row from before sessions)
	Program    string    // what runs it: "blobshare serve", "blobshare session" ...
	// Expires is its heartbeat deadline on the database's clock (zero for
	// a row from before sessions).
	Expires time.Time
	// Alive is the reaper's judgement (doc.go, "Sessions"); Cause says why
	// not: not registered, flock free (killed, on this host) or heartbeat
	// expired (frozen or cut off, any host). A dead owner's handles stay
	// in the table until the next process that opens it (or meets them in
	// a conflict) reaps them; until then they show here as dead.
	Alive bool
	Cause DeathCause
}

// FileState is the per-file state beside the handles: delete-pending and
// the lease.
type FileState struct {
	DeletePending bool
	Lease         LeaseInfo
}

// Snapshot is the whole lock table at one moment, as it is stored: the
// handles of live and of dead owners alike (nothing is reaped), their
// byte-range locks, and the files with a pending delete or a lease.
type Snapshot struct {
	Owners  map[OwnerID]OwnerState
	Handles []Handle // in id order
	Locks   map[HandleID][]ByteLock
	Files   map[FileID]FileState // only files with a pending delete or a lease (active or broken)
	// Durable are the handles that are durable SMB opens (connected or
	// disconnected, with when they expire).
	Durable map[HandleID]DurableOpen
}

// Inspect runs fn in one read transaction on the database at path without
// joining it: no owner is registered and no dead owner is reaped, so a
// crashed process's handles can be seen before anything cleans them up.
// The connection is query-only; fn may read the namespace's tables on it
// too (one consistent snapshot). A path with no database is an error
// wrapping os.ErrNotExist.
func Inspect(ctx context.Context, path string, fn func(ctx context.Context, c *Conn) error) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("locks: inspect %s: %w", path, err)
	}
	if err := sqlmeta.Inspect(ctx, path, fn); err != nil {
		return fmt.Errorf("locks: %w", err)
	}
	return nil
}

// ReadSnapshot reads the lock table of the database at path on c, a
// connection Inspect gave. Owners are judged alive or dead the way the
// reaper judges them (session rows, and on this host their lock files
// beside the database); a probe that fails counts as alive.
func ReadSnapshot(ctx context.Context, c *Conn, path string) (Snapshot, error) {
	snap := Snapshot{
		Owners: map[OwnerID]OwnerState{},
		Locks:  map[HandleID][]ByteLock{},
		Files:  map[FileID]FileState{},
	}
	fail := func(what string, err error) (Snapshot, error) {
		return Snapshot{}, fmt.Errorf("locks: snapshot of %s: %s: %w", path, what, classify(err))
	}
	var version int64
	err := c.QueryRowContext(ctx, `SELECT value FROM lk_meta WHERE name = 'schema'`).Scan(&version)
	if errors.Is(classify(err), ErrNoTable) || errors.Is(err, sql.ErrNoRows) {
		version = 0
	} else if err != nil {
		return fail("schema", err)
	}
	if version != SchemaVersion {
		return Snapshot{}, &SchemaError{Dir: filepath.Dir(path), DB: path, Part: "lock table", Found: version, Want: SchemaVersion}
	}

	rows, err := c.QueryContext(ctx, `SELECT owner, pid, started, host, program, expires FROM lk_owners`)
	if err != nil {
		return fail("owners", err)
	}
	for rows.Next() {
		var o, host, program string
		var pid, started, expires int64
		if err := rows.Scan(&o, &pid, &started, &host, &program, &expires); err != nil {
			rows.Close()
			return fail("owners", err)
		}
		st := OwnerState{ID: OwnerID(o), PID: int(pid), Started: time.Unix(0, started), Registered: true, Host: host, Program: program}
		if expires != 0 {
			st.Expires = time.Unix(0, expires)
		}
		snap.Owners[OwnerID(o)] = st
	}
	if err := rows.Close(); err != nil {
		return fail("owners", err)
	}

	snap.Handles, err = scanHandles(c.QueryContext(ctx, `SELECT `+handleCols+` FROM lk_handles ORDER BY id`))
	if err != nil {
		return fail("handles", err)
	}
	for _, h := range snap.Handles {
		if _, ok := snap.Owners[h.Owner]; !ok {
			snap.Owners[h.Owner] = OwnerState{ID: h.Owner}
		}
	}
	// Judged as a reaper would (judgeOwner), on SQLite's clock: this
	// host's, now.
	dir, host, now := ownersDir(path), thisHost(), time.Now()
	for id, o := range snap.Owners {
		row := ownerRow{host: o.Host}
		if !o.Expires.IsZero() {
			row.expires = o.Expires.UnixNano()
		}
		cause, _ := judgeOwner(row, o.Registered, now, host, func() (bool, error) { return ownerAlive(dir, id) })
		o.Alive, o.Cause = cause == CauseNone, cause
		snap.Owners[id] = o
	}

	rows, err = c.QueryContext(ctx, `SELECT handle, lkey, off, len, kind, posix FROM lk_locks ORDER BY id`)
	if err != nil {
		return fail("byte-range locks", err)
	}
	for rows.Next() {
		var handle, key, off, ln, kind, style int64
		if err := rows.Scan(&handle, &key, &off, &ln, &kind, &style); err != nil {
			rows.Close()
			return fail("byte-range locks", err)
		}
		l := ByteLock{Handle: HandleID(handle), Key: uint64(key), Range: Range{Offset: uint64(off), Length: uint64(ln)}, Kind: LockKind(kind),
			POSIX: style == stylePOSIX, Flock: style == styleFlock}
		snap.Locks[l.Handle] = append(snap.Locks[l.Handle], l)
	}
	if err := rows.Close(); err != nil {
		return fail("byte-range locks", err)
	}

	rows, err = c.QueryContext(ctx, `SELECT file, delete_pending, lease_state, lease_id FROM lk_files
		WHERE delete_pending != 0 OR lease_state != 0`)
	if err != nil {
		return fail("files", err)
	}
	for rows.Next() {
		var file, state int64
		var st FileState
		if err := rows.Scan(&file, &st.DeletePending, &state, &st.Lease.ID); err != nil {
			rows.Close()
			return fail("files", err)
		}
		st.Lease.State = LeaseState(state)
		snap.Files[FileID(file)] = st
	}
	if err := rows.Close(); err != nil {
		return fail("files", err)
	}
	if snap.Durable, err = readDurables(ctx, c); err != nil {
		return fail("durable opens", err)
	}
	return snap, nil
}
