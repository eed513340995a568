//go:build race

package sqlstore

// raceEnabled: the race detector slows SQLite (pure Go here) about tenfold.
const raceEnabled = true
