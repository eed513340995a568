package blobsvc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/blobshare/blobshare/blobstore"
)

// ClaimWait bounds how long a write waits for the claim of its blob while
// another live owner holds it (its request's context may end the wait
// sooner); then it is ErrServerBusy (503 ServerBusy: clients retry). A
// claim is held only from the checks to the metadata write, around the
// content store's commit (uploads stream before), so a live holder gives
// it up within milliseconds unless it is stopped.
const ClaimWait = 30 * time.Second

// claimPoll bounds the pause between two tries at a held claim: no
// wake-up crosses processes on SQLite, so a waiter polls, starting at a
// millisecond and doubling up to this.
const claimPoll = 50 * time.Millisecond

// CommitStage names a point of a content commit a CommitHook sees.
type CommitStage string

const (
	// StageIntent: the intent is recorded, the content not committed.
	StageIntent CommitStage = "intent"
	// StageContent: the content is committed, the row not written.
	StageContent CommitStage = "content"
)

// CommitHook is called at each stage of a content commit with the row
// being committed, under the blob's claim (SetCommitHook). It is for crash
// tests: one that blocks holds the commit at that stage.
type CommitHook func(ctx context.Context, stage CommitStage, b Blob)

// SetCommitHook installs h (nil: none). Call it before serving.
func (s *Service) SetCommitHook(h CommitHook) { s.commitHook = h }

func (s *Service) hook(ctx context.Context, stage CommitStage, b Blob) {
	if s.commitHook != nil {
		s.commitHook(ctx, stage, b)
	}
}

// lockBlob makes the caller the blob's one writer, in this process (the
// blob's stripe) and across processes (the store's claim, waited for
// while another live owner holds it), and resolves a commit intent the
// blob was left with (resolveIntent); name "" locks the container. The
// returned func gives both up.
func (s *Service) lockBlob(ctx context.Context, container, name string) (func(), error) {
	release, _, err := s.claimBlob(ctx, container, name, s.stripe(container, name), true)
	return release, err
}

// lockBlobIn is lockBlob for a blob of a container whose lock the caller
// holds: the stripes may be one (then it is held already).
func (s *Service) lockBlobIn(ctx context.Context, container, name string) (func(), error) {
	mu := s.stripe(container, name)
	if mu == s.stripe(container, "") {
		mu = nil
	}
	release, _, err := s.claimBlob(ctx, container, name, mu, true)
	return release, err
}

// claimBlob takes the blob's stripe mu (nil: the caller holds it) and the
// store's claim on the blob, trying again while a live owner holds the
// claim (with wait; else ErrClaimHeld at once) until the claim is free or
// dead, ctx ends (its error) or ClaimWait passes (ErrServerBusy). Between
// tries it holds neither: a writer waiting for another process blocks no
// reader or writer of this one. Then it resolves the commit intent the
// blob has, if any: the claim is held by nobody else, so the intent is no
// commit in progress but one its writer never finished (killed, or its
// request ended between intent and row); finished says whether that
// intent's commit was completed. release gives the claim and mu up.
func (s *Service) claimBlob(ctx context.Context, container, name string, mu *sync.RWMutex, wait bool) (release func(), finished bool, err error) {
	lock, unlock := func() {}, func() {}
	if mu != nil {
		lock, unlock = mu.Lock, mu.Unlock
	}
	deadline := time.Now().Add(ClaimWait)
	backoff := time.Millisecond
	var c Claim
	for {
		lock()
		// Not cut short by the request's end: a claim taken but not
		// known to be would block the blob's writers.
		c, err = s.meta.ClaimBlob(context.WithoutCancel(ctx), container, name)
		if err == nil {
			break
		}
		unlock()
		if !wait || !errors.Is(err, ErrClaimHeld) {
			return nil, false, err
		}
		if time.Now().After(deadline) {
			return nil, false, fmt.Errorf("%w: waited %v: %w", ErrServerBusy, ClaimWait, err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false, fmt.Errorf("blob %s/%s: waiting for its claim: %w", container, name, context.Cause(ctx))
		case <-t.C:
		}
		backoff = min(2*backoff, claimPoll)
	}
	release = func() {
		// Given up even when the request's context has ended: a claim
		// left behind blocks the blob's writers until this process
		// exits.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		for try := 1; s.meta.ReleaseClaim(rctx, c) != nil && try < 4; try++ {
			if pause(rctx, time.Duration(try)*10*time.Millisecond) != nil {
				break
			}
		}
		unlock()
	}
	if name == "" || s.content == nil {
		// A container has no intents; a Service without a content store
		// (the garbage collection's, with the endpoint off) cannot tell
		// whether a commit happened and leaves intents to one that can.
		return release, false, nil
	}
	in, ok, err := s.meta.Intent(ctx, container, name)
	if err == nil && ok {
		finished, err = s.resolveIntent(ctx, in)
	}
	if err != nil {
		release()
		return nil, false, err
	}
	return release, finished, nil
}

// resolveIntent finishes or drops an unfinished commit (see
// commitContent), under the blob's claim: an intent whose content commit
// happened (the content store's ETag is no longer the row's) becomes the
// blob's row; the others are dropped. It reports whether it finished one.
func (s *Service) resolveIntent(ctx context.Context, in Intent) (bool, error) {
	b := in.Blob
	info, err := s.content.Stat(ctx, b.ContentKey)
	if errors.Is(err, blobstore.ErrNotFound) {
		return false, s.meta.DeleteIntent(ctx, b.Container, b.Name)
	}
	if err != nil {
		return false, fmt.Errorf("recover blob %s/%s: %w", b.Container, b.Name, err)
	}
	cur, curErr := s.meta.Blob(ctx, b.Container, b.Name)
	if curErr == nil && cur.ContentETag == info.ETag {
		// The commit never happened: the row still names the content.
		return false, s.meta.DeleteIntent(ctx, b.Container, b.Name)
	}
	b.ContentETag = info.ETag
	if err := s.meta.PutBlob(ctx, b, in.DropUncommitted); err != nil {
		return false, fmt.Errorf("recover blob %s/%s: %w", b.Container, b.Name, err)
	}
	return true, s.syncMeta(ctx)
}

// Recover finishes or drops the commits dead owners left (crashed
// processes: see commitContent and resolveIntent), each under its blob's
// claim, so a process serving beside this one loses nothing and a live
// owner's commit in progress is never touched. Run it before serving
// (any process may: the next writer of a blob resolves what is left of
// it anyway). It returns how many commits it finished.
func (s *Service) Recover(ctx context.Context) (int, error) {
	intents, err := s.meta.Intents(ctx)
	if err != nil {
		return 0, err
	}
	done := 0
	for _, in := range intents {
		release, finished, err := s.claimBlob(ctx, in.Blob.Container, in.Blob.Name, s.stripe(in.Blob.Container, in.Blob.Name), true)
		if err == nil {
			release()
		}
		if err != nil {
			return done, err
		}
		if finished {
			done++
		}
	}
	return done, nil
}

// repair resolves the commit intent a reader found the blob's row and
// content apart for (OpenBlob), if no live owner holds the blob's claim:
// a writer that died between its content commit and its row leaves the
// content newer than the row until somebody resolves its intent, and a
// reader need not wait for the blob's next writer. With a live holder it
// does nothing (the commit is in progress: its writer finishes it).
func (s *Service) repair(ctx context.Context, container, name string) error {
	if _, ok, err := s.meta.Intent(ctx, container, name); err != nil || !ok {
		return err
	}
	release, _, err := s.claimBlob(ctx, container, name, s.stripe(container, name), false)
	if errors.Is(err, ErrClaimHeld) {
		return nil
	}
	if err != nil {
		return err
	}
	release()
	return nil
}
