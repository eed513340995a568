package tablesvc

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// checkedOp is an Op that passed validation, with its parsed If-Match.
type checkedOp struct {
	Op
	cond ifMatch
}

// validateOp checks everything about op that does not depend on the
// stored entity: keys, names, values, counts, sizes and the If-Match rules
// (Update, Merge and Delete need one; the others take none).
func validateOp(op Op) (checkedOp, error) {
	op.Entity.Props = withoutSystemProps(op.Entity.Props)
	c := checkedOp{Op: op}
	e := op.Entity
	switch op.Kind {
	case Delete:
		if err := validateKeys(e.PartitionKey, e.RowKey); err != nil {
			return c, err
		}
	case Insert, Update, Merge, InsertOrReplace, InsertOrMerge:
		if err := ValidateEntity(e); err != nil {
			return c, err
		}
	default:
		return c, inputErr("InvalidInput", "Unknown entity operation %d.", op.Kind)
	}
	switch op.Kind {
	case Update, Merge, Delete:
		if op.IfMatch == "" {
			return c, inputErr("MissingRequiredHeader", "An HTTP header that's mandatory for this request is not specified: If-Match.")
		}
		cond, err := parseIfMatch(op.IfMatch)
		if err != nil {
			return c, err
		}
		c.cond = cond
	default:
		if op.IfMatch != "" {
			return c, inputErr("InvalidInput", "This operation takes no If-Match header.")
		}
	}
	return c, nil
}

// withoutSystemProps drops PartitionKey, RowKey and Timestamp from a
// body's properties: the keys are the Entity's fields (from the URL) and
// "a sent Timestamp is ignored" (the contract; clients such as the .NET
// SDK send it back on updates). props is copied only if it has one.
func withoutSystemProps(props []Property) []Property {
	isSystem := func(p Property) bool {
		return p.Name == "PartitionKey" || p.Name == "RowKey" || p.Name == "Timestamp"
	}
	for i, p := range props {
		if isSystem(p) {
			out := append([]Property(nil), props[:i]...)
			for _, q := range props[i+1:] {
				if !isSystem(q) {
					out = append(out, q)
				}
			}
			return out
		}
	}
	return props
}

// Apply runs one write and returns the entity as stored (for Delete: the
// keys only). Validation happens before any store access; the existence
// and ETag checks happen inside the store's write transaction.
func (s *Service) Apply(ctx context.Context, table string, op Op) (Entity, error) {
	if err := ValidTableName(table); err != nil {
		return Entity{}, err
	}
	c, err := validateOp(op)
	if err != nil {
		return Entity{}, err
	}
	var out Entity
	fn := func(tx Tx) error {
		var err error
		out, err = s.apply(ctx, tx, c, s.now())
		return err
	}
	// apply makes one change at most, as its last step.
	if sw, ok := s.store.(SingleWriter); ok {
		err = sw.WriteSingle(ctx, table, fn)
	} else {
		err = s.store.Write(ctx, table, fn)
	}
	return out, err
}

// Batch validates every op first (≤ 100 ops, one PartitionKey, no row
// twice, each op's own rules: else a *BatchError wrapping an *InputError
// with the offending index), then applies all in one store transaction or
// none; on failure a *BatchError with the failing index. Results are in op
// order.
func (s *Service) Batch(ctx context.Context, table string, ops []Op) ([]Entity, error) {
	if err := ValidTableName(table); err != nil {
		return nil, &BatchError{Index: 0, Err: err}
	}
	if len(ops) > MaxBatchOps {
		// Azurite answers index 0; CS saw 0 or 99 from Azure.
		return nil, &BatchError{Index: 0, Err: inputErr("InvalidInput", "The batch request operation exceeds the maximum %d changes per change set.", MaxBatchOps)}
	}
	checked := make([]checkedOp, len(ops))
	rows := make(map[string]struct{}, len(ops))
	for i, op := range ops {
		c, err := validateOp(op)
		if err != nil {
			return nil, &BatchError{Index: i, Err: err}
		}
		if op.Entity.PartitionKey != ops[0].Entity.PartitionKey {
			return nil, &BatchError{Index: i, Err: inputErr("CommandsInBatchActOnDifferentPartitions", "All commands in a batch must operate on same entity group.")}
		}
		if _, dup := rows[op.Entity.RowKey]; dup {
			return nil, &BatchError{Index: i, Err: inputErr("InvalidDuplicateRow", "A command with RowKey '%s' is already present in the batch. An entity can appear only once in a batch.", op.Entity.RowKey)}
		}
		rows[op.Entity.RowKey] = struct{}{}
		checked[i] = c
	}
	if len(ops) == 0 {
		if _, err := s.store.Table(ctx, table); err != nil {
			return nil, &BatchError{Index: 0, Err: err}
		}
		return nil, nil
	}
	out := make([]Entity, len(ops))
	err := s.store.Write(ctx, table, func(tx Tx) error {
		now := s.now() // one instant for the whole transaction
		for i, c := range checked {
			e, err := s.apply(ctx, tx, c, now)
			if err != nil {
				return &BatchError{Index: i, Err: err}
			}
			out[i] = e
		}
		return nil
	})
	if err != nil {
		if be := (*BatchError)(nil); !errors.As(err, &be) { // the table is missing, or the store failed
			err = &BatchError{Index: 0, Err: err}
		}
		return nil, err
	}
	return out, nil
}

// apply decides one checked op against the entity as the transaction sees
// it and writes the result.
func (s *Service) apply(ctx context.Context, tx Tx, c checkedOp, now time.Time) (Entity, error) {
	pk, rk := c.Entity.PartitionKey, c.Entity.RowKey
	key := func() string { return fmt.Sprintf("(PartitionKey=%q, RowKey=%q)", pk, rk) } // for errors only
	if ins, ok := tx.(Inserter); ok && c.Kind == Insert {
		// An insert needs only to know that the keys are free: one step.
		e := Entity{PartitionKey: pk, RowKey: rk, Props: append([]Property(nil), c.Entity.Props...),
			Timestamp: nextTimestamp(now, Entity{}, false)}
		done, err := ins.Insert(ctx, e)
		if err != nil {
			return Entity{}, err
		}
		if !done {
			return Entity{}, fmt.Errorf("entity %s: %w", key(), ErrEntityExists)
		}
		return e, nil
	}
	cur, exists, err := tx.Get(ctx, pk, rk)
	if err != nil {
		return Entity{}, err
	}
	switch c.Kind {
	case Insert:
		if exists {
			return Entity{}, fmt.Errorf("entity %s: %w", key(), ErrEntityExists)
		}
	case Update, Merge, Delete:
		if !exists {
			return Entity{}, fmt.Errorf("entity %s: %w", key(), ErrEntityNotFound)
		}
		if !c.cond.matches(cur) {
			return Entity{}, fmt.Errorf("entity %s, If-Match %s, current %s: %w", key(), c.IfMatch, cur.ETag(), ErrConditionNotMet)
		}
	}
	if c.Kind == Delete {
		return Entity{PartitionKey: pk, RowKey: rk}, tx.Delete(ctx, pk, rk)
	}
	e := Entity{PartitionKey: pk, RowKey: rk, Props: c.Entity.Props}
	if exists && (c.Kind == Merge || c.Kind == InsertOrMerge) {
		e.Props = mergeProps(cur.Props, c.Entity.Props)
		if err := checkTotals(e); err != nil {
			return Entity{}, err
		}
	}
	e.Props = append([]Property(nil), e.Props...) // never alias the caller's slice
	e.Timestamp = nextTimestamp(now, cur, exists)
	return e, tx.Put(ctx, e)
}

// nextTimestamp is now at 100 ns, but strictly after the entity's previous
// Timestamp, so that no write ever gives an entity an ETag it had before
// (a clock that stepped back, or two writes in one tick).
func nextTimestamp(now time.Time, cur Entity, exists bool) time.Time {
	t := now.UTC().Truncate(Tick)
	if exists && !t.After(cur.Timestamp) {
		t = cur.Timestamp.Add(Tick)
	}
	return t
}

// mergeProps keeps old's order, replaces values (and types) of the
// properties named in upd, and appends the new ones.
func mergeProps(old, upd []Property) []Property {
	out := append(make([]Property, 0, len(old)+len(upd)), old...)
	idx := make(map[string]int, len(out))
	for i, p := range out {
		idx[p.Name] = i
	}
	for _, p := range upd {
		if i, ok := idx[p.Name]; ok {
			out[i].Value = p.Value
			continue
		}
		idx[p.Name] = len(out)
		out = append(out, p)
	}
	return out
}
