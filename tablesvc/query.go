package tablesvc

import (
	"context"
)

// Query returns one page in (PartitionKey, RowKey) order. It streams over
// the store's Scan (never loading the table), narrows the scan to the
// PartitionKey/RowKey bounds of the filter's top-level conjunction and the
// continuation, evaluates the whole filter on each row, and stops after
// Top matches or after reading the scan budget's worth of rows or bytes;
// in each case, if another row follows, the page says More with that row's keys
// as the continuation (so a page can be short or empty and still have
// More, as Azure's can).
func (s *Service) Query(ctx context.Context, table string, q Query) (Page, error) {
	if err := ValidTableName(table); err != nil {
		return Page{}, err
	}
	f, err := ParseFilter(q.Filter)
	if err != nil {
		return Page{}, err
	}
	n, err := pageSize(q.Top)
	if err != nil {
		return Page{}, err
	}
	r, possible := f.KeyRange()
	if q.HasNext {
		r.After = &Key{PK: q.NextPK, RK: q.NextRK}
	}
	if !possible {
		// Nothing can match; still answer TableNotFound for a missing table.
		if _, err := s.store.Table(ctx, table); err != nil {
			return Page{}, err
		}
		return Page{}, nil
	}
	page := Page{Entities: make([]Entity, 0, min(n, 100))}
	scanned, bytes := 0, 0
	err = s.store.Scan(ctx, table, r, func(e Entity) bool {
		if len(page.Entities) == n || scanned == s.scanBudget || bytes >= s.scanBytes {
			page.More, page.NextPK, page.NextRK = true, e.PartitionKey, e.RowKey
			return false
		}
		scanned++
		bytes += EntitySize(e)
		if f.MatchEntity(&e) {
			page.Entities = append(page.Entities, e)
		}
		return true
	})
	if err != nil {
		return Page{}, err
	}
	return page, nil
}
