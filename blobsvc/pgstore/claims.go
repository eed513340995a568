package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/blobshare/blobshare/blobsvc"
)

// Per-blob claims (blobsvc.Store.ClaimBlob; blobsvc/doc.go, "Several
// processes on one metadata database"): a row of bs_blob_claims keyed
// (container, name), exactly as on SQLite; see the package doc for what
// makes each step atomic across nodes.

// claimKey names a claim.
type claimKey struct{ container, name string }

// heldClaims are the tokens of the claims this store holds.
type heldClaims struct {
	mu     sync.Mutex
	tokens map[claimKey]string
}

func (h *heldClaims) get(k claimKey) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.tokens[k]
	return t, ok
}

func (h *heldClaims) set(k claimKey, token string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tokens == nil {
		h.tokens = map[claimKey]string{}
	}
	h.tokens[k] = token
}

func (h *heldClaims) drop(k claimKey, token string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tokens[k] == token {
		delete(h.tokens, k)
	}
}

// nowMicros is the database's clock in microseconds since 1970.
const nowMicros = `(extract(epoch FROM clock_timestamp()) * 1000000)::bigint`

// ClaimBlob implements blobsvc.Store: an INSERT that does nothing when
// the key is present (two claimers never both insert: the second waits
// for the first's commit on the unique index, then finds the row), else
// a takeover UPDATE naming the dead holder's token (of two nodes taking
// over one dead claim, the second's UPDATE waits for the first's row
// lock, then finds another token and changes nothing).
func (s *Store) ClaimBlob(ctx context.Context, container, name string) (blobsvc.Claim, error) {
	what := container + "/" + name
	if err := s.owners.Deciding(); err != nil {
		return blobsvc.Claim{}, wrap("claim", what, err)
	}
	me := s.owners.Owner()
	k := claimKey{container, name}
	c, n := key(container), key(name)
	s.flushReleases(ctx)
	// A release between the INSERT and the read of the holder leaves no
	// row to read: try again, a bounded number of times (each round is a
	// change by another process).
	for range 8 {
		token := uuid.NewString()
		tag, err := s.pool.Exec(ctx, `INSERT INTO bs_blob_claims(container, name, owner, token, claimed)
			VALUES($1, $2, $3, $4, `+nowMicros+`) ON CONFLICT(container, name) DO NOTHING`, c, n, me, token)
		if err != nil {
			s.pending.add(k, token) // it may have committed: see release.go
			return blobsvc.Claim{}, wrap("claim", what, err)
		}
		if tag.RowsAffected() == 1 {
			s.held.set(k, token)
			return blobsvc.Claim{Container: container, Name: name, Token: token}, nil
		}
		var holder, held string
		err = s.pool.QueryRow(ctx, `SELECT owner, token FROM bs_blob_claims WHERE container = $1 AND name = $2`, c, n).Scan(&holder, &held)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return blobsvc.Claim{}, wrap("read the claim of", what, err)
		}
		alive, err := s.owners.Alive(ctx, holder)
		if err != nil {
			return blobsvc.Claim{}, fmt.Errorf("blob pgstore: claim %s: is owner %s alive: %w", what, holder, classify(err))
		}
		if alive {
			return blobsvc.Claim{}, &blobsvc.ClaimHeldError{Container: container, Name: name, Owner: holder}
		}
		tag, err = s.pool.Exec(ctx, `UPDATE bs_blob_claims SET owner = $1, token = $2, claimed = `+nowMicros+`
			WHERE container = $3 AND name = $4 AND token = $5`, me, token, c, n, held)
		if err != nil {
			s.pending.add(k, token)
			return blobsvc.Claim{}, wrap("take over the claim of", what, err)
		}
		if tag.RowsAffected() == 1 {
			s.held.set(k, token)
			s.log.Info("blob claim taken over from a dead owner", "blob", what, "from", holder, "node", me)
			return blobsvc.Claim{Container: container, Name: name, Token: token, From: holder}, nil
		}
	}
	return blobsvc.Claim{}, fmt.Errorf("blob pgstore: claim %s: it changed hands 8 times meanwhile: %w", what, blobsvc.ErrServerBusy)
}

// ReleaseClaim implements blobsvc.Store: it deletes the row only if it
// still carries the claim's token.
// A release that fails is retried by the store until it succeeds
// (release.go).
func (s *Store) ReleaseClaim(ctx context.Context, c blobsvc.Claim) error {
	k := claimKey{c.Container, c.Name}
	s.held.drop(k, c.Token)
	if _, err := s.pool.Exec(ctx, `DELETE FROM bs_blob_claims WHERE container = $1 AND name = $2 AND token = $3`,
		key(c.Container), key(c.Name), c.Token); err != nil {
		s.pending.add(k, c.Token)
		return wrap("release the claim of", c.Container+"/"+c.Name, err)
	}
	s.pending.drop(c.Token)
	return nil
}

// fenceBlob fails a write transaction of a blob (name "" for a
// container) this store holds the claim of when the claim is no longer
// its own (blobsvc.ErrClaimLost). It reads the claim's row FOR SHARE: a
// takeover's UPDATE then waits for this transaction, so no takeover
// commits between the check and the write. While the node is fenced
// (Owners.Deciding) such a write fails as meta.ErrUnavailable (503
// ServerBusy) whether or not the claim is still its own. A write of a
// blob it holds no claim of passes: one transaction is atomic by itself.
func (s *Store) fenceBlob(ctx context.Context, tx pgx.Tx, container, name string) error {
	token, ok := s.held.get(claimKey{container, name})
	if !ok {
		return nil
	}
	if err := s.owners.Deciding(); err != nil {
		return fmt.Errorf("blob %s/%s: %w", container, name, err) // result classifies it
	}
	var cur string
	err := tx.QueryRow(ctx, `SELECT token FROM bs_blob_claims WHERE container = $1 AND name = $2 FOR SHARE`,
		key(container), key(name)).Scan(&cur)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && cur != token {
		return fmt.Errorf("blob %s/%s: %w", container, name, blobsvc.ErrClaimLost)
	}
	return err
}

// PutIntent implements blobsvc.Store: the intent names this store's
// owner session; under a claim taken over since it records none
// (blobsvc.ErrClaimLost), as it writes nothing else.
func (s *Store) PutIntent(ctx context.Context, b blobsvc.Blob, dropUncommitted bool) error {
	doc, err := encode(b)
	if err != nil {
		return err
	}
	me := s.owners.Owner()
	err = s.tx(ctx, func(tx pgx.Tx) error {
		if err := s.fenceBlob(ctx, tx, b.Container, b.Name); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO bs_intents(container, name, drop_uncommitted, doc, owner) VALUES($1, $2, $3, $4, $5)
			ON CONFLICT(container, name) DO UPDATE SET drop_uncommitted = excluded.drop_uncommitted, doc = excluded.doc, owner = excluded.owner`,
			key(b.Container), key(b.Name), dropUncommitted, doc, me)
		return err
	})
	return s.result("record the commit intent of", b.Container+"/"+b.Name, err)
}

// DeleteIntent implements blobsvc.Store.
func (s *Store) DeleteIntent(ctx context.Context, container, name string) error {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if err := s.fenceBlob(ctx, tx, container, name); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM bs_intents WHERE container = $1 AND name = $2`, key(container), key(name))
		return err
	})
	return s.result("drop the commit intent of", container+"/"+name, err)
}

// Intent implements blobsvc.Store.
func (s *Store) Intent(ctx context.Context, container, name string) (blobsvc.Intent, bool, error) {
	var in blobsvc.Intent
	var doc string
	err := s.pool.QueryRow(ctx, `SELECT drop_uncommitted, doc FROM bs_intents WHERE container = $1 AND name = $2`,
		key(container), key(name)).Scan(&in.DropUncommitted, &doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return in, false, nil
	}
	if err != nil {
		return in, false, wrap("read the commit intent of", container+"/"+name, err)
	}
	if err := json.Unmarshal([]byte(doc), &in.Blob); err != nil {
		return in, false, wrap("decode the commit intent of", container+"/"+name, err)
	}
	return in, true, nil
}

// Intents implements blobsvc.Store: the intents of dead owners (a crash
// left them), judged after the query (a dead owner never comes back). A
// live owner's intent is a commit in progress and is never listed.
func (s *Store) Intents(ctx context.Context) ([]blobsvc.Intent, error) {
	type row struct {
		in    blobsvc.Intent
		owner string
	}
	rows, err := s.pool.Query(ctx, `SELECT drop_uncommitted, doc, owner FROM bs_intents ORDER BY container, name`)
	if err != nil {
		return nil, wrap("list", "commit intents", err)
	}
	rs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		var doc string
		if err := r.Scan(&x.in.DropUncommitted, &doc, &x.owner); err != nil {
			return x, err
		}
		return x, json.Unmarshal([]byte(doc), &x.in.Blob)
	})
	if err != nil {
		return nil, wrap("list", "commit intents", err)
	}
	alive := map[string]bool{}
	var out []blobsvc.Intent
	for _, r := range rs {
		a, ok := alive[r.owner]
		if !ok {
			if a, err = s.owners.Alive(ctx, r.owner); err != nil {
				return nil, fmt.Errorf("blob pgstore: intent of %s/%s: is owner %s alive: %w", r.in.Blob.Container, r.in.Blob.Name, r.owner, classify(err))
			}
			alive[r.owner] = a
		}
		if !a {
			out = append(out, r.in)
		}
	}
	return out, nil
}

// ModifyBlob implements blobsvc.Store: one transaction that first takes
// the blob's claim key itself (modify).
func (s *Store) ModifyBlob(ctx context.Context, container, name string, fn func(*blobsvc.Blob) error) (blobsvc.Blob, error) {
	what := container + "/" + name
	var b blobsvc.Blob
	err := s.modify(ctx, container, name, `SELECT doc FROM bs_blobs WHERE container = $1 AND name = $2 AND snapshot = '' FOR NO KEY UPDATE`,
		[]any{key(container), key(name)}, fmt.Errorf("blob %s: %w", what, blobsvc.ErrBlobNotFound),
		func(doc string) (string, error) {
			b = blobsvc.Blob{}
			if err := json.Unmarshal([]byte(doc), &b); err != nil {
				return "", fmt.Errorf("decode blob %s: %w", what, err)
			}
			if err := fn(&b); err != nil {
				return "", err
			}
			return encode(b)
		},
		`UPDATE bs_blobs SET doc = $1 WHERE container = $2 AND name = $3 AND snapshot = ''`)
	if err != nil {
		return blobsvc.Blob{}, err
	}
	return b, nil
}

// ModifyContainer implements blobsvc.Store as ModifyBlob.
func (s *Store) ModifyContainer(ctx context.Context, name string, fn func(*blobsvc.Container) error) (blobsvc.Container, error) {
	var c blobsvc.Container
	err := s.modify(ctx, name, "", `SELECT doc FROM bs_containers WHERE name = $1 FOR NO KEY UPDATE`,
		[]any{key(name)}, fmt.Errorf("container %s: %w", name, blobsvc.ErrContainerNotFound),
		func(doc string) (string, error) {
			c = blobsvc.Container{}
			if err := json.Unmarshal([]byte(doc), &c); err != nil {
				return "", fmt.Errorf("decode container %s: %w", name, err)
			}
			if err := fn(&c); err != nil {
				return "", err
			}
			return encode(c)
		},
		`UPDATE bs_containers SET doc = $1 WHERE name = $2`)
	if err != nil {
		return blobsvc.Container{}, err
	}
	return c, nil
}

// errFnFailed carries fn's error out of the transaction untouched.
type errFnFailed struct{ err error }

func (e errFnFailed) Error() string { return e.err.Error() }

// modify is ModifyBlob and ModifyContainer, in one transaction:
//
//  1. The claim's key: an INSERT of the claim row that does nothing if
//     one is there (claimed: ErrClaimHeld). Inserted, the uncommitted row
//     makes every ClaimBlob and modify of the blob on any node wait on
//     the unique index until this transaction ends; the row is deleted
//     again before the commit, so none of them ever sees it, and a
//     claimer that waited reads the row as this transaction wrote it.
//  2. No commit intent (one left by a writer that died or whose request
//     ended: ErrClaimHeld, for the caller to resolve under the claim).
//  3. The row read FOR NO KEY UPDATE (missing: notFound: the lock an
//     UPDATE of non-key columns takes anyway, so a container's change
//     does not wait for the Put Blobs holding its row FOR KEY SHARE),
//     changed by change, written back with update (its arguments: the
//     new doc, then read's).
func (s *Store) modify(ctx context.Context, container, name, read string, args []any, notFound error, change func(doc string) (string, error), update string) error {
	what := container + "/" + name
	c, n := key(container), key(name)
	s.flushReleases(ctx)
	token := uuid.NewString()
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO bs_blob_claims(container, name, owner, token, claimed)
			VALUES($1, $2, $3, $4, `+nowMicros+`) ON CONFLICT(container, name) DO NOTHING`, c, n, s.owners.Owner(), token)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("blob %s: claimed: %w", what, blobsvc.ErrClaimHeld)
		}
		var intent bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM bs_intents WHERE container = $1 AND name = $2)`, c, n).Scan(&intent); err != nil {
			return err
		}
		if intent {
			return fmt.Errorf("blob %s: committing: %w", what, blobsvc.ErrClaimHeld)
		}
		var doc string
		err = tx.QueryRow(ctx, read, args...).Scan(&doc)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound
		}
		if err != nil {
			return err
		}
		if doc, err = change(doc); err != nil {
			return errFnFailed{err}
		}
		if _, err := tx.Exec(ctx, update, append([]any{doc}, args...)...); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM bs_blob_claims WHERE container = $1 AND name = $2 AND token = $3`, c, n, token)
		return err
	})
	var fnErr errFnFailed
	if errors.As(err, &fnErr) {
		return fnErr.err
	}
	return s.result("update", what, err)
}
