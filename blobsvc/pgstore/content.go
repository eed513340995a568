package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"

	"github.com/jackc/pgx/v5"

	"github.com/blobshare/blobshare/internal/pgdb"
)

// ErrContentMismatch: a node names another content store than the one the
// database's Blob metadata was set up with.
var ErrContentMismatch = errors.New("another content store than the database's")

// The content store. The Blob service's rows name content by key in one
// content store, so every node on a database must use the same one. The
// first node records its --blob-backend URL in bs_service (k 'content',
// without a key= credential); later nodes use the recorded one when they
// name none and are refused when they name another (ContentStore).

// ContentStore records proposed (a --blob-backend URL, storeurl syntax)
// as the Blob content store of the database connString names, if none is
// recorded yet, and returns the URL to open: the recorded one when
// proposed is "" (fallback, the node's default, is then recorded if
// nothing is), proposed itself when it names the recorded store (it may
// carry a key= the record leaves out), and ErrContentMismatch otherwise.
func ContentStore(ctx context.Context, connString, proposed, fallback string) (string, error) {
	want := proposed
	if want == "" {
		want = fallback
	}
	norm, err := normalizeContentURL(want)
	if err != nil {
		return "", err
	}
	pool, schema, err := pgdb.Open(ctx, connString, pgdb.Options{MaxConns: 1})
	if err != nil {
		return "", fmt.Errorf("blob pgstore: %w", err)
	}
	defer pool.Close()
	if err := pgdb.Migrate(ctx, pool, schema, Part, migrations); err != nil {
		return "", fmt.Errorf("blob pgstore: %w", err)
	}
	// The insert or, on conflict, the row there. A record committed by
	// another node after this statement's snapshot makes the insert do
	// nothing and the read see nothing: read again.
	var recorded []byte
	for range 3 {
		err = pool.QueryRow(ctx, `WITH ins AS (INSERT INTO bs_service(k, v) VALUES('content', $1) ON CONFLICT(k) DO NOTHING RETURNING v)
			SELECT v FROM ins UNION ALL SELECT v FROM bs_service WHERE k = 'content'`, []byte(norm)).Scan(&recorded)
		if !errors.Is(err, pgx.ErrNoRows) {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("blob pgstore: record the content store in %s: %w", schema, pgdb.Classify(err))
	}
	switch {
	case proposed == "":
		return string(recorded), nil
	case string(recorded) == norm:
		return proposed, nil
	}
	return "", fmt.Errorf("%s is %w (%s, recorded by the first node: every node must use it)", redactKey(proposed), ErrContentMismatch, recorded)
}

// normalizeContentURL is the comparable form of a content store URL:
// file:// paths cleaned (file://localhost/ as file:///), azure:// without
// its key= parameter and with the rest of its query sorted.
func normalizeContentURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("content store %s: %w", redactKey(raw), err)
	}
	switch u.Scheme {
	case "file":
		if u.Host == "localhost" {
			u.Host = ""
		}
		u.Path = path.Clean(u.Path)
	case "azure":
		q := u.Query()
		q.Del("key")
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

// redactKey hides a key= parameter's value for messages.
func redactKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !u.Query().Has("key") {
		return raw
	}
	q := u.Query()
	q.Set("key", "xxxxx")
	u.RawQuery = q.Encode()
	return u.String()
}
