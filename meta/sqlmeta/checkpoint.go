package sqlmeta

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Checkpoints run off the request path.
//
// In WAL mode a commit appends its pages to the -wal file; a checkpoint
// copies them back into the database file and, with synchronous=NORMAL,
// fsyncs both files. SQLite's default runs that checkpoint inside the
// COMMIT that takes the log past 1,000 pages, so every few dozen writes
// one of them (a FUSE CREATE, a REST Put Range) waits for two fsyncs and a
// page copy. Here each connection's automatic checkpoint is raised to
// walSafetyNetPages, a bound that is only reached when this goroutine
// falls behind (or a process of another build writes), and a checkpointer
// goroutine of each DB runs PASSIVE checkpoints — they never block
// readers or writers — after checkpointEvery commits of this process, or
// checkpointIdle after its last commit.
const (
	walSafetyNetPages = 8000 // ~32 MiB of log before a commit checkpoints inline
	checkpointEvery   = 64   // commits of this process between checkpoints
	checkpointIdle    = 250 * time.Millisecond
)

// checkpointer runs PASSIVE checkpoints on a connection of its own.
type checkpointer struct {
	db   *sql.DB
	path string
	log  *slog.Logger

	pending atomic.Int64  // commits since the last checkpoint began
	kick    chan struct{} // buffered (1): a checkpoint is due
	idle    *time.Timer   // kicks checkpointIdle after the first pending commit
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once

	runs atomic.Int64 // checkpoints completed, for tests
}

func newCheckpointer(db *sql.DB, path string, log *slog.Logger) *checkpointer {
	c := &checkpointer{
		db:   db,
		path: path,
		log:  log,
		kick: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	c.idle = time.AfterFunc(time.Hour, c.wake)
	c.idle.Stop()
	go c.loop()
	return c
}

// committed counts one commit of this process and wakes the checkpointer
// when enough have piled up (or arms the idle timer for the first one).
func (c *checkpointer) committed() {
	switch n := c.pending.Add(1); {
	case n == 1:
		c.idle.Reset(checkpointIdle)
	case n >= checkpointEvery:
		c.wake()
	}
}

func (c *checkpointer) wake() {
	select {
	case c.kick <- struct{}{}:
	default: // one is due already
	}
}

func (c *checkpointer) loop() {
	defer close(c.done)
	var conn *sql.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		c.idle.Stop()
		if c.pending.Swap(0) == 0 {
			continue // an idle kick after a count kick: nothing new
		}
		if conn == nil {
			var err error
			if conn, err = c.db.Conn(context.Background()); err != nil {
				c.log.Warn("checkpoint: no connection", "db", c.path, "err", err)
				continue
			}
		}
		if err := c.checkpoint(conn); err != nil {
			c.log.Warn("checkpoint", "db", c.path, "err", err)
			conn.Close()
			conn = nil
			continue
		}
		c.runs.Add(1)
	}
}

// checkpoint runs one PASSIVE checkpoint. A busy answer (another process
// is checkpointing, or a reader still needs the frames) is no error: the
// next one picks up where it stopped.
func (c *checkpointer) checkpoint(conn *sql.Conn) error {
	var busy, logPages, copied int
	return conn.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logPages, &copied)
}

// close stops the goroutine and waits for a checkpoint in progress.
func (c *checkpointer) close() {
	c.once.Do(func() {
		c.idle.Stop()
		close(c.stop)
		<-c.done
	})
}
