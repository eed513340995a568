package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ClaimStatus is a Blob claim held now, as `blobshare status --meta`
// shows it: which blob (Name "" for a container's claim), which owner
// session (a node id) and for how long, on the database's clock.
type ClaimStatus struct {
	Container string        `json:"container"`
	Name      string        `json:"name"`
	Owner     string        `json:"node"`
	Age       time.Duration `json:"-"`
}

// Claims lists the Blob claims of the pool's schema, by container and
// name (none when the Blob store was never opened there).
func Claims(ctx context.Context, pool *pgxpool.Pool) ([]ClaimStatus, error) {
	rows, err := pool.Query(ctx, `SELECT container, name, owner, `+nowMicros+` - claimed FROM bs_blob_claims ORDER BY container, name`)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table: no Blob store here yet
			return nil, nil
		}
		return nil, fmt.Errorf("blob pgstore: list claims: %w", classify(err))
	}
	claims, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ClaimStatus, error) {
		var c ClaimStatus
		var micros int64
		err := r.Scan(&c.Container, &c.Name, &c.Owner, &micros)
		c.Container, c.Name, c.Age = unkey(c.Container), unkey(c.Name), time.Duration(max(micros, 0))*time.Microsecond
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("blob pgstore: list claims: %w", classify(err))
	}
	return claims, nil
}
