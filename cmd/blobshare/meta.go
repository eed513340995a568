package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/internal/pgdb"
)

// metaFlag is --meta (cli-contract.md): where metadata lives. Empty is
// the SQLite files in --data.
func metaFlag() cli.Flag {
	return &cli.StringFlag{Name: "meta", Usage: "where metadata lives: postgres://USER@HOST:PORT/DB?search_path=SCHEMA for a PostgreSQL database several nodes share (default: the SQLite files in --data)"}
}

// meta is a parsed --meta.
type meta struct {
	postgres string // the connection URL, "" for the SQLite files in --data
}

// parseMeta reads --meta: nothing, or a postgres:// (postgresql://) URL.
func parseMeta(c *cli.Context) (meta, error) {
	v := c.String("meta")
	switch {
	case v == "":
		return meta{}, nil
	case strings.HasPrefix(v, "postgres://"), strings.HasPrefix(v, "postgresql://"):
		return meta{postgres: v}, nil
	}
	return meta{}, fmt.Errorf("--meta %s: want postgres://USER@HOST:PORT/DB?search_path=SCHEMA, or no --meta for the SQLite files in --data", redactURL(v))
}

// redactURL hides a password in a URL-like string for messages.
func redactURL(v string) string {
	scheme, rest, ok := strings.Cut(v, "://")
	if !ok {
		return v
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok {
		return v
	}
	if user, _, hasPass := strings.Cut(userinfo, ":"); hasPass {
		return scheme + "://" + user + ":xxxxx@" + host
	}
	return v
}

// errMetaNotShared is the one line for what does not run on a shared
// --meta yet: the namespace and the lock table (FileREST, SMB, the
// mount) are still in the SQLite files of --data, so a second node would
// see other shares and other handles.
func errMetaNotShared(what string) error {
	return fmt.Errorf("--meta postgres: only the Queue, Table and Blob services keep their metadata in PostgreSQL so far; %s still keep theirs in --data, which another node would not see", what)
}

// checkServeMeta refuses the endpoints whose metadata cannot be on m yet.
func checkServeMeta(c *cli.Context, m meta) error {
	if m.postgres == "" {
		return nil
	}
	var on []string
	for _, f := range []struct{ flag, name string }{{"addr", "FileREST (--addr)"}, {"smb", "SMB (--smb)"}} {
		if c.String(f.flag) != "off" {
			on = append(on, f.name)
		}
	}
	if c.String("mount") != "" {
		on = append(on, "the mount (--mount)")
	}
	if len(on) == 0 {
		return nil
	}
	return fmt.Errorf("%w: turn them off (--addr off --smb off, no --mount) or run without --meta", errMetaNotShared(strings.Join(on, ", ")))
}

// refuseSharedMeta answers a postgres --meta on the commands that work on
// the namespace and the lock table (mount, session, status): those are not
// on PostgreSQL yet.
func refuseSharedMeta(c *cli.Context, cmd string) error {
	m, err := parseMeta(c)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	if m.postgres != "" {
		return fmt.Errorf("%s: %w", cmd, errMetaNotShared("the namespace and the lock table"))
	}
	return nil
}

// openStore opens a service's store (Queue, Table, Blob): on the PostgreSQL
// database of m, or, by default, the service's SQLite file in --data.
func openStore[S io.Closer](m meta, postgres func(url string) (S, error), sqlite func() (S, error)) (S, error) {
	if m.postgres == "" {
		return sqlite()
	}
	s, err := postgres(m.postgres)
	if err != nil {
		return s, fmt.Errorf("--meta %s: %w", redactURL(m.postgres), err)
	}
	return s, nil
}

// registerNode adds this serve process to the node registry of m's
// database (internal/pgdb: heartbeats on the database's clock), which
// `status --meta` lists and whose id owns the process's blob claims and
// commit intents; it registers before the endpoints start, which then
// record where they serve (nodeEndpoints, Node.SetEndpoints). The
// returned function stops the heartbeats and removes the row.
func registerNode(ctx context.Context, m meta, logger *slog.Logger) (*pgdb.Node, func(), error) {
	pool, schema, err := pgdb.Open(ctx, m.postgres, pgdb.Options{MaxConns: 2})
	if err != nil {
		return nil, nil, fmt.Errorf("--meta %s: %w", redactURL(m.postgres), err)
	}
	host, _ := os.Hostname()
	node, err := pgdb.RegisterNode(ctx, pool, schema, pgdb.NodeInfo{Host: host, PID: os.Getpid(), Program: "blobshare serve"},
		pgdb.NodeOptions{Logger: logger})
	if err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("--meta %s: %w", redactURL(m.postgres), err)
	}
	logger.Info("node registered", "node", node.ID())
	return node, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := node.Close(ctx); err != nil {
			logger.Warn("leaving the node registry (the row expires by itself)", "err", err)
		}
		pool.Close()
	}, nil
}

// nodeEndpoints is the registry's line of the endpoints a node serves
// (urls by name; "off" ones left out).
func nodeEndpoints(urls map[string]string) string {
	var eps []string
	for _, name := range slices.Sorted(maps.Keys(urls)) {
		if urls[name] != "off" {
			eps = append(eps, name+"="+urls[name])
		}
	}
	return strings.Join(eps, " ")
}
