package locks

import "time"

func unixNano(n int64) time.Time { return time.Unix(0, n) }
