package main

import (
	"strings"
	"testing"
	"time"
)

// TestWriteNodes: status's node table, alive, expired and killed, and the empty
// registry.
func TestWriteNodes(t *testing.T) {
	started := time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		nodes []nodeReport
		want  string
	}{
		{nil, "No nodes registered.\n\n" + notSharedYet + "\n"},
		{[]nodeReport{
			{ID: "a1", Host: "h1", PID: 10, Program: "blobshare serve", Endpoints: "queue=http://q table=http://t", Started: started, Alive: true, HeartbeatAge: "1.2s"},
			{ID: "b2", Host: "h2", PID: 20, Program: "blobshare serve", Endpoints: "table=http://t2", Started: started, Dead: deadExpired, HeartbeatAge: "14s"},
			{ID: "c3", Host: "h2", PID: 30, Program: "blobshare serve", Endpoints: "table=http://t2", Started: started, Dead: deadLockFree, HeartbeatAge: "0.5s"},
		}, "NODE  HOST  PID  PROGRAM          ENDPOINTS                      STARTED               LAST HEARTBEAT  STATE\n" +
			"a1    h1    10   blobshare serve  queue=http://q table=http://t  2026-11-28T14:00:00Z  1.2s ago        alive\n" +
			"b2    h2    20   blobshare serve  table=http://t2                2026-11-28T14:00:00Z  14s ago         EXPIRED\n" +
			"c3    h2    30   blobshare serve  table=http://t2                2026-11-28T14:00:00Z  0.5s ago        KILLED\n" +
			"\n" + notSharedYet + "\n"},
	} {
		var b strings.Builder
		if err := writeNodes(&b, tc.nodes); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("got:\n%s\nwant:\n%s", b.String(), tc.want)
		}
	}
}

// TestWriteClaims: status's Blob claim table after the node table: a
// blob's claim as container/blob, a container's as the container alone,
// and the line for none.
func TestWriteClaims(t *testing.T) {
	for _, tc := range []struct {
		claims []claimReport
		want   string
	}{
		{nil, "\nNo Blob claims held.\n"},
		{[]claimReport{
			{Container: "box", Node: "a1", Age: "2ms"},
			{Container: "box", Blob: "dir/x.bin", Node: "b2", Age: "1.5s"},
		}, "\nBLOB CLAIM     NODE  AGE\n" +
			"box            a1    2ms\n" +
			"box/dir/x.bin  b2    1.5s\n"},
	} {
		var b strings.Builder
		if err := writeClaims(&b, tc.claims); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("got:\n%q\nwant:\n%q", b.String(), tc.want)
		}
	}
}
