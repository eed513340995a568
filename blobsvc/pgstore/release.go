package pgstore

import (
	"context"
	"sync"
	"time"
)

// Claims left behind. A claim row whose release failed (the database was
// away), or whose INSERT or takeover may have committed though its
// answer was lost, names this store's owner, which stays alive: nobody
// would ever take it over, and the blob's writers on every node would
// wait for it until this process exits. The store remembers such tokens
// (no request of this process uses them any more: the service gave the
// claim up, or never learnt it had it) and deletes their rows as soon as
// it can: before each ClaimBlob and ModifyBlob, and every
// releaseRetryInterval in the background. A delete names the token, so
// it never frees a claim taken since.

// releaseRetryInterval is the background retry's period.
const releaseRetryInterval = time.Second

// pendingReleases are the claims to delete, by token.
type pendingReleases struct {
	mu     sync.Mutex
	tokens map[string]claimKey
}

func (p *pendingReleases) add(k claimKey, token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tokens == nil {
		p.tokens = map[string]claimKey{}
	}
	p.tokens[token] = k
}

func (p *pendingReleases) drop(token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.tokens, token)
}

func (p *pendingReleases) snapshot() map[string]claimKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.tokens) == 0 {
		return nil
	}
	out := make(map[string]claimKey, len(p.tokens))
	for t, k := range p.tokens {
		out[t] = k
	}
	return out
}

// flushReleases deletes the rows of the pending releases, stopping at the
// first failure (the database is still away: the next flush tries again).
func (s *Store) flushReleases(ctx context.Context) {
	for token, k := range s.pending.snapshot() {
		if _, err := s.pool.Exec(ctx, `DELETE FROM bs_blob_claims WHERE container = $1 AND name = $2 AND token = $3`,
			key(k.container), key(k.name), token); err != nil {
			return
		}
		s.pending.drop(token)
	}
}

// retryReleases runs flushReleases every releaseRetryInterval until stop
// is closed (Close).
func (s *Store) retryReleases(stop <-chan struct{}) {
	defer close(s.retryDone)
	t := time.NewTicker(releaseRetryInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), releaseRetryInterval)
		s.flushReleases(ctx)
		cancel()
	}
}
