//go:build !race

package sqlstore

const raceEnabled = false
