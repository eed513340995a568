package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/blobshare/blobshare/internal/pgdb"
	"github.com/blobshare/blobshare/msgqueue"
)

// Insert implements msgqueue.Store: one statement that inserts only while
// the queue exists (holding its row FOR KEY SHARE until commit). The
// message's visibility timeout and TTL start at the statement's now.
func (s *Store) Insert(ctx context.Context, queue string, m msgqueue.Message) error {
	never := m.Expires.Equal(msgqueue.NeverExpires)
	ttl := ms(m.Expires) - ms(m.Inserted)
	vis := ms(m.NextVisible) - ms(m.Inserted)
	var n int64
	err := s.clocked(ctx, func() time.Time { return m.Inserted }, func(at *int64) error {
		tag, err := s.pool.Exec(ctx, insertSQL, at, m.ID, []byte(m.Text), never, ms(msgqueue.NeverExpires), ttl, vis, m.PopReceipt, queue)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return s.wrap("put message in", queue, err)
	}
	if n == 0 {
		return queueNotFound(queue)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

func scanMessage(r scanner, seq *int64) (msgqueue.Message, error) {
	var m msgqueue.Message
	var body []byte
	var ins, exp, vis int64
	dest := []any{&m.ID, &body, &ins, &exp, &vis, &m.DequeueCount, &m.PopReceipt}
	if seq != nil {
		dest = append(dest, seq)
	}
	if err := r.Scan(dest...); err != nil {
		return m, err
	}
	m.Text = string(body)
	m.Inserted, m.Expires, m.NextVisible = fromMS(ins), fromMS(exp), fromMS(vis)
	return m, nil
}

// Claim implements msgqueue.Store: one UPDATE over the rows its CTE
// picked and locked (FOR UPDATE SKIP LOCKED: rows another claimer holds
// are passed over, not waited for), on the statement's now.
func (s *Store) Claim(ctx context.Context, queue string, now func() time.Time, n int, visibility time.Duration, receiptPrefix string) ([]msgqueue.Message, error) {
	type claimed struct {
		m   msgqueue.Message
		seq int64
	}
	var got []claimed
	err := s.clocked(ctx, now, func(at *int64) error {
		got = got[:0]
		rows, err := s.pool.Query(ctx, claimSQL, at, queue, n, visibility.Milliseconds(), receiptPrefix)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c claimed
			if c.m, err = scanMessage(rows, &c.seq); err != nil {
				return err
			}
			got = append(got, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.wrap("get messages of", queue, err)
	}
	if len(got) == 0 {
		if err := s.queueExists(ctx, queue); err != nil {
			return nil, err
		}
		return []msgqueue.Message{}, nil
	}
	// RETURNING keeps no order: answer in put order, as sqlstore does.
	slices.SortFunc(got, func(a, b claimed) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]msgqueue.Message, len(got))
	for i, c := range got {
		out[i] = c.m
	}
	return out, nil
}

// Peek implements msgqueue.Store.
func (s *Store) Peek(ctx context.Context, queue string, now time.Time, n int) ([]msgqueue.Message, error) {
	rows, err := s.pool.Query(ctx, peekSQL, s.at(now), queue, n)
	if err != nil {
		return nil, s.wrap("peek messages of", queue, err)
	}
	defer rows.Close()
	out := []msgqueue.Message{}
	for rows.Next() {
		m, err := scanMessage(rows, nil)
		if err != nil {
			return nil, s.wrap("peek messages of", queue, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("peek messages of", queue, err)
	}
	if len(out) == 0 {
		if err := s.queueExists(ctx, queue); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Delete implements msgqueue.Store: keyed by the pop receipt.
func (s *Store) Delete(ctx context.Context, queue, id, receipt string, now func() time.Time) error {
	var n int64
	err := s.clocked(ctx, now, func(at *int64) error {
		tag, err := s.pool.Exec(ctx, deleteSQL, at, queue, id, receipt)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return s.wrap("delete message "+id+" of", queue, err)
	}
	if n == 1 {
		return nil
	}
	return s.missing(ctx, queue, id)
}

// missing tells a missing queue from a missing or stale message.
func (s *Store) missing(ctx context.Context, queue, id string) error {
	if err := s.queueExists(ctx, queue); err != nil {
		return err
	}
	return fmt.Errorf("queue %s: message %s: %w", queue, id, msgqueue.ErrMessageNotFound)
}

// Update implements msgqueue.Store: keyed by the pop receipt.
func (s *Store) Update(ctx context.Context, queue, id, receipt string, now func() time.Time, newReceipt string, visibility time.Duration, text *string) (msgqueue.Message, error) {
	var body []byte // nil: keep the text
	if text != nil {
		body = []byte(*text)
	}
	var m msgqueue.Message
	err := s.clocked(ctx, now, func(at *int64) (err error) {
		m, err = scanMessage(s.pool.QueryRow(ctx, updateSQL, at, newReceipt, visibility.Milliseconds(), body, queue, id, receipt), nil)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return m, s.missing(ctx, queue, id)
	}
	if err != nil {
		return m, s.wrap("update message "+id+" of", queue, err)
	}
	return m, nil
}

// Clear implements msgqueue.Store.
func (s *Store) Clear(ctx context.Context, queue string) error {
	if err := s.queueExists(ctx, queue); err != nil {
		return err
	}
	err := pgdb.Retry(ctx, func() error {
		_, err := s.pool.Exec(ctx, `DELETE FROM mq_messages WHERE queue = $1`, queue)
		return err
	})
	if err != nil {
		return s.wrap("clear messages of", queue, err)
	}
	return nil
}

// Sweep implements msgqueue.Store.
func (s *Store) Sweep(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := pgdb.Retry(ctx, func() error {
		tag, err := s.pool.Exec(ctx, sweepSQL, s.at(now))
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, s.wrap("sweep", s.schema, err)
	}
	return n, nil
}
