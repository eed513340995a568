package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "list every open handle and lease on --data: who holds which file, how, and whether they are alive",
		Description: "Reads the lock table of --data without joining it, so a killed process's handles show\n" +
			"(as killed) until the next blobshare process that opens the directory cleans them up.\n" +
			"Lists the handles of the mount, of sessions and of SMB clients, their byte-range locks,\n" +
			"delete-pending state and the file's lease, and the files leased over REST.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "data", Value: "./blobshare-data", Usage: "directory of the SQLite database"},
			metaFlag(),
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document instead of tables"},
		},
		Action: runStatus,
	}
}

func runStatus(c *cli.Context) error {
	m, err := parseMeta(c)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if c.Args().Present() {
		return fmt.Errorf("status: unexpected arguments %q (flags come first)", c.Args().Slice())
	}
	if m.postgres != "" {
		return runStatusPostgres(c, m)
	}
	dir, err := dataDirPath(c.String("data"), false)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	st, err := fs.ReadStatus(c.Context, filepath.Join(dir, dbName))
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	host, _ := os.Hostname()
	report := newStatusReport(st, host, processCommand)
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	}
	return report.writeText(c.App.Writer)
}

// statusReport is what status prints; its JSON form is the --json output.
type statusReport struct {
	// Nodes are the serve processes registered on a shared --meta
	// (status_pg.go); absent for the SQLite files of --data.
	Nodes   []nodeReport   `json:"nodes,omitempty"`
	Handles []handleReport `json:"handles"`
	Leases  []leaseReport  `json:"leases"`
	// BlobClaims are the Blob claims held on a shared --meta
	// (status_pg.go); absent for the SQLite files of --data.
	BlobClaims []claimReport `json:"blob_claims,omitempty"`
}

type ownerReport struct {
	ID      string `json:"id"`
	PID     int    `json:"pid,omitempty"`
	Host    string `json:"host,omitempty"`    // the machine it runs on
	Program string `json:"program,omitempty"` // what it runs, from its session: "blobshare serve"
	Command string `json:"command,omitempty"` // the owner process's command line, while it runs on this host
	Alive   bool   `json:"alive"`
	// Dead says why it is not alive: "flock free" (killed, on this host),
	// "heartbeat expired" (frozen or cut off, any host), "not registered".
	Dead string `json:"dead,omitempty"`
}

type lockReport struct {
	Offset uint64 `json:"offset"`
	Length uint64 `json:"length"`
	Kind   string `json:"kind"`           // shared or exclusive
	POSIX  bool   `json:"posix"`          // an fcntl lock through the mount
	Flock  bool   `json:"flock"`          // a flock through the mount: whole file, to REST and SMB
	Owner  uint64 `json:"owner,omitzero"` // the POSIX lock owner
}

type handleReport struct {
	ID        uint64 `json:"id"`
	Share     string `json:"share"`
	Path      string `json:"path"`
	Unlinked  bool   `json:"unlinked,omitempty"`
	Access    string `json:"access"`
	ShareMode string `json:"share_mode"`
	Protocol  string `json:"protocol"` // fuse, session, smb ("" when unknown)
	Client    string `json:"client"`   // host (mount, session) or SMB workstation name
	ClientIP  string `json:"client_ip,omitempty"`
	// Program is the program that opened the file through the mount (its
	// /proc/PID/comm) and ProgramPID its process id: the owner is the
	// blobshare process serving the mount, this is who asked.
	Program       string       `json:"program,omitempty"`
	ProgramPID    int          `json:"program_pid,omitempty"`
	Owner         ownerReport  `json:"owner"`
	OpenTime      time.Time    `json:"open_time"`
	DeleteOnClose bool         `json:"delete_on_close"`
	DeletePending bool         `json:"delete_pending"`
	LeaseState    string       `json:"lease_state"`
	LeaseID       string       `json:"lease_id,omitempty"`
	Locks         []lockReport `json:"locks"`
	// Durable is set for a durable SMB open (it outlives its client's
	// connection for its timeout).
	Durable *durableReport `json:"durable,omitempty"`
}

type durableReport struct {
	Version   int   `json:"version"`    // 1 (DHnQ) or 2 (DH2Q)
	TimeoutMS int64 `json:"timeout_ms"` // how long it is kept once disconnected
	// Disconnected and Expires are set while its client is away: when the
	// connection dropped, and when it is closed unless reclaimed.
	Disconnected *time.Time `json:"disconnected,omitempty"`
	Expires      *time.Time `json:"expires,omitempty"`
}

type leaseReport struct {
	File          uint64 `json:"file"`
	Share         string `json:"share"`
	Path          string `json:"path"`
	State         string `json:"state"`
	ID            string `json:"id"`
	DeletePending bool   `json:"delete_pending"`
}

// newStatusReport turns the file system's status into the report; command
// finds the command line of a live process of this host (processCommand;
// tests pass their own).
func newStatusReport(st fs.Status, host string, command func(pid int) string) statusReport {
	r := statusReport{Handles: []handleReport{}, Leases: []leaseReport{}}
	for _, h := range st.Handles {
		proto, _ := h.Protocol()
		program, programPID := h.Program()
		hr := handleReport{
			ID: uint64(h.ID), Share: h.ShareName, Path: h.Path, Unlinked: h.Unlinked,
			Access: h.Access.String(), ShareMode: h.Share.String(),
			Protocol: string(proto), Client: h.Host(), ClientIP: h.ClientIP,
			Program: program, ProgramPID: programPID,
			Owner: ownerReport{ID: string(h.OwnerState.ID), PID: h.OwnerState.PID, Host: h.OwnerState.Host,
				Program: h.OwnerState.Program, Alive: h.OwnerState.Alive, Dead: string(h.OwnerState.Cause)},
			OpenTime:      h.OpenTime.UTC(),
			DeleteOnClose: h.DeleteOnClose, DeletePending: h.DeletePending,
			LeaseState: h.Lease.State.String(), LeaseID: h.Lease.ID,
			Locks: []lockReport{},
		}
		if d := h.Durable; d != nil {
			hr.Durable = &durableReport{Version: int(d.Version), TimeoutMS: d.Timeout.Milliseconds()}
			if !d.Disconnected.IsZero() {
				disc, exp := d.Disconnected.UTC(), d.Expires.UTC()
				hr.Durable.Disconnected, hr.Durable.Expires = &disc, &exp
			}
		}
		if hr.Owner.Alive && hr.Owner.PID > 0 && (hr.Owner.Host == "" || hr.Owner.Host == host) {
			hr.Owner.Command = command(hr.Owner.PID)
		}
		for _, l := range h.Locks {
			lr := lockReport{Offset: l.Range.Offset, Length: l.Range.Length, Kind: l.Kind.String(), POSIX: l.POSIX, Flock: l.Flock}
			if l.POSIX {
				lr.Owner = l.Key
			}
			hr.Locks = append(hr.Locks, lr)
		}
		r.Handles = append(r.Handles, hr)
	}
	for _, l := range st.Leases {
		r.Leases = append(r.Leases, leaseReport{File: uint64(l.File), Share: l.ShareName, Path: l.Path,
			State: l.Lease.State.String(), ID: l.Lease.ID, DeletePending: l.DeletePending})
	}
	return r
}

// processCommand is the command line of a running process, "" if it
// cannot be read.
func processCommand(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

// writeText prints the report as two tables, handles then leases.
func (r statusReport) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(r.Handles) == 0 {
		fmt.Fprintln(tw, "No open handles.")
	} else {
		fmt.Fprintln(tw, "HANDLE\tSHARE\tPATH\tACCESS\tSHARE MODE\tPROTOCOL\tCLIENT\tOWNER\tLOCKS\tLEASE\tDELETE PENDING")
		for _, h := range r.Handles {
			path := h.Path
			if path == "" {
				path = "/"
			}
			if h.Unlinked {
				path += " (unlinked)"
			}
			client := strings.TrimSpace(h.Client + " " + h.ClientIP)
			proto := cmp.Or(h.Protocol, "-")
			if d := h.Durable; d != nil {
				// A durable SMB open, and whether its client is away.
				proto += " durable"
				if d.Expires != nil {
					proto += ", disconnected until " + d.Expires.Format(time.RFC3339)
				}
			}
			mode := h.ShareMode
			lease := h.LeaseState
			if h.LeaseID != "" {
				lease += " " + h.LeaseID
			}
			pending := "no"
			switch {
			case h.DeletePending:
				pending = "yes"
			case h.DeleteOnClose:
				pending = "on close"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.ID, h.Share, path,
				cmp.Or(h.Access, "-"), mode, proto, cmp.Or(client, "-"), h.ownerText(), locksText(h.Locks), lease, pending)
		}
	}
	if len(r.Leases) > 0 {
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "LEASED FILE\tSHARE\tPATH\tSTATE\tLEASE ID\tDELETE PENDING")
		for _, l := range r.Leases {
			pending := "no"
			if l.DeletePending {
				pending = "yes"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", l.File, l.Share, cmp.Or(l.Path, "/"), l.State, l.ID, pending)
		}
	}
	return tw.Flush()
}

// text is "pid 1234 on host1 (blobshare session --data d)" while alive;
// "pid 1234 KILLED on host1 (flock free: ...)" for a killed process,
// "pid 1234 EXPIRED on host2 (heartbeat expired: ...)" for a frozen or cut
// off one: a dead owner's handles stay until a process reaps them.
func (o ownerReport) text() string {
	pid := "pid ?"
	if o.PID > 0 {
		pid = "pid " + strconv.Itoa(o.PID)
	}
	on := ""
	if o.Host != "" {
		on = " on " + o.Host
	}
	if !o.Alive {
		state := "KILLED"
		switch o.Dead {
		case string(locks.CauseHeartbeatExpired):
			state = "EXPIRED"
		case string(locks.CauseUnregistered):
			state = "GONE"
		}
		return pid + " " + state + on + " (" + cmp.Or(o.Dead, "dead") +
			": its handles go when a blobshare process next opens the data directory or meets them)"
	}
	if what := cmp.Or(o.Command, o.Program); what != "" {
		return pid + on + " (" + what + ")"
	}
	return pid + on
}

// ownerText is the owner's text, after the program that opened the file
// through a mount: "cat (pid 4711) through pid 4700 (blobshare serve ...)".
func (h handleReport) ownerText() string {
	if h.ProgramPID == 0 {
		return h.Owner.text()
	}
	return cmp.Or(h.Program, "?") + " (pid " + strconv.Itoa(h.ProgramPID) + ") through " + h.Owner.text()
}

func locksText(ls []lockReport) string {
	if len(ls) == 0 {
		return "-"
	}
	parts := make([]string, len(ls))
	for i, l := range ls {
		if l.Flock {
			// A flock locks the whole file whatever its size; its
			// stored range (every byte) says nothing more.
			parts[i] = l.Kind + " (flock)"
			continue
		}
		// Bytes first-last, inclusive: the last byte of a lock to the
		// end of the largest file is 2^64-1, and first+length overflows.
		r := locks.Range{Offset: l.Offset, Length: l.Length}
		span := fmt.Sprintf("%d-%d", r.Offset, r.Last())
		if r.Length == 0 {
			span = fmt.Sprintf("%d+0", r.Offset)
		}
		parts[i] = l.Kind + " " + span
		if l.POSIX {
			parts[i] += " (fcntl)"
		}
	}
	return strings.Join(parts, " ")
}
