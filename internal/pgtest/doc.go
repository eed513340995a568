// Package pgtest starts a throwaway PostgreSQL cluster for a test binary
// and gives each test a schema of its own in it.
//
// A test package declares one Cluster and stops it from TestMain:
//
//	var pg = pgtest.New()
//
//	func TestMain(m *testing.M) { pgtest.Main(m, pg) }
//
// and each test asks for a schema: pg.Schema(t) returns a libpq
// key=value connection string whose search_path names a fresh schema,
// dropped when the test ends. The cluster starts on the first call (so a
// binary that runs none of its PostgreSQL tests pays nothing) and serves
// every test of the binary, including several connection pools on one
// schema (the stores' "two gateways on one database" tests).
//
// How it starts: the server binaries are found with `pg_config --bindir`,
// else under /usr/lib/postgresql/<version>/bin (Debian's layout; the
// newest version wins) — never through PATH, where a machine may have
// stray symlinks. initdb refuses to run as root, so as root the cluster
// is created and run as the `postgres` user (Debian's package creates
// it), else `nobody`, through SysProcAttr.Credential; the temporary
// directory is handed to that user. The first binary on a machine caches
// its fresh data directory as a template in the temporary directory (named
// for the server version and user, about 39 MB); later binaries copy it
// instead of running initdb (template.go). The server listens only on a Unix
// socket in that directory (listen_addresses is empty: no TCP port to
// race for, nothing reachable from the network), with fsync,
// synchronous_commit and full_page_writes off: a throwaway cluster needs
// no durability. The server runs under a watchdog shell whose stdin is a
// pipe from the test binary: Stop closes it, and so does the binary's
// death by a panic, a -timeout or SIGKILL; the watchdog then shuts the
// server down (SIGQUIT: an immediate shutdown, the data is discarded) and
// removes the directory, so no server outlives its tests.
//
// A test that stops the server (a database restart under load) takes a
// cluster of its own, pgtest.Private(t), stopped when t ends: Halt runs
// `pg_ctl stop -m fast|immediate` and waits for the server to exit,
// Resume starts it again on the same data directory (its watchdog starts
// postgres once more for each line on the lifeline). A private cluster
// runs with synchronous_commit on, so an immediate stop loses no
// acknowledged commit (fsync stays off: the machine does not crash).
//
// Without PostgreSQL a test is skipped, or fails when
// BLOBSHARE_REQUIRE_ALL=1 (`make debs` installs Debian's postgresql).
package pgtest
