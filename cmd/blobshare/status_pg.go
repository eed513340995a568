package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/blobsvc/pgstore"
	"github.com/blobshare/blobshare/internal/pgdb"
)

// nodeReport is a serve node registered on a shared --meta, as status
// shows it: alive while its database session holds the node's lock and
// its heartbeat's expiry is ahead on the database's clock.
type nodeReport struct {
	ID        string    `json:"id"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Program   string    `json:"program"`
	Endpoints string    `json:"endpoints"`
	Started   time.Time `json:"started"`
	Heartbeat time.Time `json:"heartbeat"`
	Expires   time.Time `json:"expires"`
	Alive     bool      `json:"alive"`
	// Dead says why it is not alive: "session lock free" (its database
	// session is gone: killed, or cut off from the database) or
	// "heartbeat expired" (frozen or cut off, for longer than the expiry).
	Dead string `json:"dead,omitempty"`
	// HeartbeatAge is how long ago the last heartbeat was, on the
	// database's clock.
	HeartbeatAge string `json:"heartbeat_age"`
}

// claimReport is a Blob claim held on a shared --meta: a writer's
// exclusive right to a blob (or, Blob "", to a container) across nodes,
// its node and how long it has held it (database clock). A claim of a
// node that is not alive is taken over by the next writer of the blob.
type claimReport struct {
	Container string `json:"container"`
	Blob      string `json:"blob"`
	Node      string `json:"node"`
	Age       string `json:"age"`
}

// notSharedYet is status's line on a shared --meta about what it cannot
// list there yet.
const notSharedYet = "Handles and leases: the namespace and the lock table are not on PostgreSQL yet (only the Queue, Table and Blob services are)."

// runStatusPostgres is status on a shared --meta: the nodes registered on
// it. Handles and leases live in each node's --data for now, so there are
// none to list here.
func runStatusPostgres(c *cli.Context, m meta) error {
	pool, _, err := pgdb.Open(c.Context, m.postgres, pgdb.Options{MaxConns: 1})
	if err != nil {
		return fmt.Errorf("status: --meta %s: %w", redactURL(m.postgres), err)
	}
	defer pool.Close()
	nodes, err := pgdb.Nodes(c.Context, pool)
	if err != nil {
		return fmt.Errorf("status: --meta %s: %w", redactURL(m.postgres), err)
	}
	claims, err := pgstore.Claims(c.Context, pool)
	if err != nil {
		return fmt.Errorf("status: --meta %s: %w", redactURL(m.postgres), err)
	}
	report := statusReport{Nodes: []nodeReport{}, Handles: []handleReport{}, Leases: []leaseReport{}, BlobClaims: []claimReport{}}
	for _, cl := range claims {
		report.BlobClaims = append(report.BlobClaims, claimReport{Container: cl.Container, Blob: cl.Name, Node: cl.Owner,
			Age: cl.Age.Round(time.Millisecond).String()})
	}
	for _, n := range nodes {
		r := nodeReport{ID: n.ID, Host: n.Host, PID: n.PID, Program: n.Program,
			Endpoints: n.Endpoints, Started: n.Started.UTC(), Heartbeat: n.Heartbeat.UTC(), Expires: n.Expires.UTC(),
			Alive: n.Alive, HeartbeatAge: n.Now.Sub(n.Heartbeat).Round(time.Millisecond).String()}
		switch {
		case n.Expired:
			r.Dead = deadExpired
		case !n.LockHeld:
			r.Dead = deadLockFree
		}
		report.Nodes = append(report.Nodes, r)
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	}
	if err := writeNodes(c.App.Writer, report.Nodes); err != nil {
		return err
	}
	return writeClaims(c.App.Writer, report.BlobClaims)
}

// writeClaims prints the Blob claims after the node table: a blank line,
// then one line per claim (container/blob, or the container alone for a
// container's claim), or "No Blob claims held.".
func writeClaims(w io.Writer, claims []claimReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw)
	if len(claims) == 0 {
		fmt.Fprintln(tw, "No Blob claims held.")
		return tw.Flush()
	}
	fmt.Fprintln(tw, "BLOB CLAIM\tNODE\tAGE")
	for _, c := range claims {
		what := c.Container
		if c.Blob != "" {
			what += "/" + c.Blob
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", what, c.Node, c.Age)
	}
	return tw.Flush()
}

// Why a node is not alive (nodeReport.Dead).
const (
	deadExpired  = "heartbeat expired"
	deadLockFree = "session lock free"
)

// writeNodes prints the node table: one line per node, its state "alive",
// "KILLED" (its database session is gone: the process died, or lost the
// database, whose restart it survives by taking the lock back at its next
// heartbeat) or "EXPIRED" (no heartbeat within its expiry: frozen, cut
// off, or killed a while ago).
func writeNodes(w io.Writer, nodes []nodeReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(nodes) == 0 {
		fmt.Fprintln(tw, "No nodes registered.")
	} else {
		fmt.Fprintln(tw, "NODE\tHOST\tPID\tPROGRAM\tENDPOINTS\tSTARTED\tLAST HEARTBEAT\tSTATE")
		for _, n := range nodes {
			state := "alive"
			switch n.Dead {
			case deadExpired:
				state = "EXPIRED"
			case deadLockFree:
				state = "KILLED"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s ago\t%s\n", n.ID, n.Host, n.PID, n.Program, n.Endpoints,
				n.Started.Format(time.RFC3339), n.HeartbeatAge, state)
		}
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, notSharedYet)
	return tw.Flush()
}
