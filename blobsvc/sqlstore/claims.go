package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/blobshare/blobshare/blobsvc"
)

// Per-blob claims (blobsvc.Store.ClaimBlob; blobsvc/doc.go, "Several
// processes on one metadata database").
//
// A claim is a row of bs_blob_claims keyed (container, name): taking one
// is an INSERT that does nothing when the key is present, so two
// processes (or, on a server engine, two nodes) never both take it. A
// held claim whose owner is dead is taken over with an UPDATE naming the
// token it replaces, so of two processes taking over one dead claim one
// wins. Nothing is held in the database between statements: the row is
// the claim, and a killed holder's row simply has a dead owner.
//
// Fencing: the store remembers the token of each claim it holds, and
// each write of a claimed blob checks, in its own transaction, that the
// row still carries it (fenceBlob). A process that was judged dead
// (SIGSTOP past its session's expiry) and whose claim was taken over
// therefore writes nothing when it wakes (blobsvc.ErrClaimLost).

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

// ClaimBlob implements blobsvc.Store.
func (s *Store) ClaimBlob(ctx context.Context, container, name string) (blobsvc.Claim, error) {
	what := container + "/" + name
	o := s.owners()
	me := o.Owner()
	k := claimKey{container, name}
	// A release between the INSERT and the read of the holder leaves no
	// row to read: try again, a bounded number of times (each round is a
	// change by another process).
	for range 8 {
		token := uuid.NewString()
		res, err := s.exec(ctx, `INSERT INTO bs_blob_claims(container, name, owner, token, claimed) VALUES(?, ?, ?, ?, ?)
			ON CONFLICT(container, name) DO NOTHING`, container, name, me, token, time.Now().UnixNano())
		if err != nil {
			return blobsvc.Claim{}, wrap("claim", what, err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			s.held.set(k, token)
			return blobsvc.Claim{Container: container, Name: name, Token: token}, nil
		}
		var holder, held string
		err = s.reader.QueryRowContext(ctx, `SELECT owner, token FROM bs_blob_claims WHERE container = ? AND name = ?`,
			container, name).Scan(&holder, &held)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return blobsvc.Claim{}, wrap("read the claim of", what, err)
		}
		alive, err := o.Alive(ctx, holder)
		if err != nil {
			return blobsvc.Claim{}, fmt.Errorf("blob sqlstore: claim %s: is owner %s alive: %w", what, holder, err)
		}
		if alive {
			return blobsvc.Claim{}, &blobsvc.ClaimHeldError{Container: container, Name: name, Owner: holder}
		}
		res, err = s.exec(ctx, `UPDATE bs_blob_claims SET owner = ?, token = ?, claimed = ? WHERE container = ? AND name = ? AND token = ?`,
			me, token, time.Now().UnixNano(), container, name, held)
		if err != nil {
			return blobsvc.Claim{}, wrap("take over the claim of", what, err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			s.held.set(k, token)
			return blobsvc.Claim{Container: container, Name: name, Token: token, From: holder}, nil
		}
	}
	return blobsvc.Claim{}, fmt.Errorf("blob sqlstore: claim %s: it changed hands 8 times meanwhile: %w", what, blobsvc.ErrServerBusy)
}

// ReleaseClaim implements blobsvc.Store.
func (s *Store) ReleaseClaim(ctx context.Context, c blobsvc.Claim) error {
	s.held.drop(claimKey{c.Container, c.Name}, c.Token)
	if _, err := s.exec(ctx, `DELETE FROM bs_blob_claims WHERE container = ? AND name = ? AND token = ?`,
		c.Container, c.Name, c.Token); err != nil {
		return wrap("release the claim of", c.Container+"/"+c.Name, err)
	}
	return nil
}

// fenceBlob fails a write transaction of a blob (name "" for a
// container) this store holds the claim of when the claim is no longer
// its own (blobsvc.ErrClaimLost). A write of a blob it holds no claim of
// passes: one statement or transaction is atomic by itself.
func (s *Store) fenceBlob(ctx context.Context, tx *sql.Tx, container, name string) error {
	token, ok := s.held.get(claimKey{container, name})
	if !ok {
		return nil
	}
	var cur string
	err := tx.QueryRowContext(ctx, `SELECT token FROM bs_blob_claims WHERE container = ? AND name = ?`, container, name).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) || err == nil && cur != token {
		return fmt.Errorf("blob %s/%s: %w", container, name, blobsvc.ErrClaimLost)
	}
	if err != nil {
		return wrap("check the claim of", container+"/"+name, err)
	}
	return nil
}

// execFor runs one write statement of the blob container/name, fenced
// (fenceBlob) when this store holds its claim.
func (s *Store) execFor(ctx context.Context, container, name, q string, args ...any) (sql.Result, error) {
	if _, ok := s.held.get(claimKey{container, name}); !ok {
		return s.exec(ctx, q, args...)
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if err := s.fenceBlob(ctx, tx, container, name); err != nil {
		return nil, err
	}
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return res, nil
}

// Intent implements blobsvc.Store.
func (s *Store) Intent(ctx context.Context, container, name string) (blobsvc.Intent, bool, error) {
	var in blobsvc.Intent
	var doc string
	err := s.reader.QueryRowContext(ctx, `SELECT drop_uncommitted, doc FROM bs_intents WHERE container = ? AND name = ?`,
		container, name).Scan(&in.DropUncommitted, &doc)
	if errors.Is(err, sql.ErrNoRows) {
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

// ModifyBlob implements blobsvc.Store: one immediate transaction (it
// holds SQLite's write lock from its first statement, so no other
// process's write comes between its read and its write).
func (s *Store) ModifyBlob(ctx context.Context, container, name string, fn func(*blobsvc.Blob) error) (blobsvc.Blob, error) {
	what := container + "/" + name
	var b blobsvc.Blob
	err := s.modify(ctx, container, name, `SELECT doc FROM bs_blobs WHERE container = ? AND name = ? AND snapshot = ''`,
		[]any{container, name}, fmt.Errorf("blob %s: %w", what, blobsvc.ErrBlobNotFound),
		func(doc string) (string, error) {
			if err := json.Unmarshal([]byte(doc), &b); err != nil {
				return "", wrap("decode blob", what, err)
			}
			if err := fn(&b); err != nil {
				return "", err
			}
			return encode(b)
		},
		`UPDATE bs_blobs SET doc = ? WHERE container = ? AND name = ? AND snapshot = ''`)
	if err != nil {
		return blobsvc.Blob{}, err
	}
	return b, nil
}

// ModifyContainer implements blobsvc.Store as ModifyBlob.
func (s *Store) ModifyContainer(ctx context.Context, name string, fn func(*blobsvc.Container) error) (blobsvc.Container, error) {
	var c blobsvc.Container
	err := s.modify(ctx, name, "", `SELECT doc FROM bs_containers WHERE name = ?`,
		[]any{name}, fmt.Errorf("container %s: %w", name, blobsvc.ErrContainerNotFound),
		func(doc string) (string, error) {
			if err := json.Unmarshal([]byte(doc), &c); err != nil {
				return "", wrap("decode container", name, err)
			}
			if err := fn(&c); err != nil {
				return "", err
			}
			return encode(c)
		},
		`UPDATE bs_containers SET doc = ? WHERE name = ?`)
	if err != nil {
		return blobsvc.Container{}, err
	}
	return c, nil
}

// modify is ModifyBlob and ModifyContainer: in one transaction, no claim
// of container/name and no commit intent of it (blobsvc.ErrClaimHeld), the
// row read (missing: notFound), changed by change, written back with
// update (its arguments: the new doc, then read's arguments).
func (s *Store) modify(ctx context.Context, container, name, read string, args []any, notFound error, change func(doc string) (string, error), update string) error {
	what := container + "/" + name
	tx, err := s.begin(ctx)
	if err != nil {
		return wrap("update", what, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	var busy int
	err = tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM bs_blob_claims WHERE container = ? AND name = ?)
		+ (SELECT count(*) FROM bs_intents WHERE container = ? AND name = ?)`, container, name, container, name).Scan(&busy)
	if err != nil {
		return wrap("check the claim of", what, err)
	}
	if busy > 0 {
		return fmt.Errorf("blob %s: claimed or committing: %w", what, blobsvc.ErrClaimHeld)
	}
	var doc string
	err = tx.QueryRowContext(ctx, read, args...).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound
	}
	if err != nil {
		return wrap("read", what, err)
	}
	doc, err = change(doc)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, update, append([]any{doc}, args...)...); err != nil {
		return wrap("update", what, err)
	}
	if err := tx.Commit(); err != nil {
		return wrap("update", what, err)
	}
	return nil
}
