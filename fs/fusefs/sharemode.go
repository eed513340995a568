package fusefs

import (
	"fmt"
	"strings"

	"github.com/blobshare/blobshare/locks"
)

// ParseShareMode parses a --share-mode list: comma-separated words from
// read, write, delete, or the single word none. An empty list is an error
// (say none to share nothing).
func ParseShareMode(list string) (locks.ShareMode, error) {
	if strings.TrimSpace(list) == "" {
		return 0, fmt.Errorf("share mode: empty list (use none to share nothing): %w", locks.ErrInvalidParameter)
	}
	var m locks.ShareMode
	words := strings.Split(list, ",")
	for _, w := range words {
		switch strings.ToLower(strings.TrimSpace(w)) {
		case "read":
			m |= locks.ShareRead
		case "write":
			m |= locks.ShareWrite
		case "delete":
			m |= locks.ShareDelete
		case "none":
			if len(words) != 1 {
				return 0, fmt.Errorf("share mode %q: none cannot be combined: %w", list, locks.ErrInvalidParameter)
			}
			return locks.ShareNone, nil
		default:
			return 0, fmt.Errorf("share mode %q: unknown word %q (want read, write, delete or none): %w", list, w, locks.ErrInvalidParameter)
		}
	}
	return m, nil
}
