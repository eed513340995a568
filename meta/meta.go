package meta

import (
	"context"
	"time"
)

// Liveness judges owner sessions (an owner is a process instance holding
// handles, intents or a claim): a consumer that must not take over what a
// live owner holds — a commit intent, the Blob service's writer claim —
// asks it. A probe that fails counts as alive: never take over on doubt.
type Liveness interface {
	Alive(ctx context.Context, owner string) (bool, error)
}

// Clock is the database's clock: session deadlines and expiries are
// judged on it, never on a caller's. On SQLite it is the system clock,
// read inside the transaction that decides (injectable in tests).
type Clock func() time.Time
