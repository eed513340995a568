package reliability

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"net"
	"testing"
	"time"
)

// TestHostileStalledUploads opens many Put Range requests of the largest
// allowed size (4 MiB, with Content-MD5 so the server verifies the body
// before writing) whose bodies stop one byte short and then stall. The
// server's peak memory must stay bounded no matter how many such clients
// there are: a server that buffers each stalled body pins 4 MiB per
// connection, indefinitely when nothing times the body out.
func TestHostileStalledUploads(t *testing.T) {
	for _, tc := range []struct {
		name string
		md5  bool
	}{{"buffered for Content-MD5", true}, {"streamed", false}} {
		t.Run(tc.name, func(t *testing.T) { stalledUploads(t, tc.md5) })
	}
}

func stalledUploads(t *testing.T, withMD5 bool) {
	const conns = 48
	const size = 4 << 20
	s := startServe(t, t.TempDir())
	ctx := context.Background()
	svc := serviceClient(t, s.RESTURL, 3)
	if _, err := svc.CreateShare(ctx, "slow", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.NewShareClient("slow").NewRootDirectoryClient().NewFileClient("f").Create(ctx, size, nil); err != nil {
		t.Fatal(err)
	}
	hwm0, err := vmHWM(s.Pid())
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte{'s'}, size)
	sum := md5.Sum(body)
	md5Header := ""
	if withMD5 {
		md5Header = "Content-MD5: " + base64.StdEncoding.EncodeToString(sum[:]) + "\r\n"
	}
	date := time.Now().UTC().Format(time.RFC1123)
	head := fmt.Sprintf("PUT /%s/slow/f?comp=range HTTP/1.1\r\nHost: %s\r\nx-ms-version: 2025-05-05\r\nx-ms-date: %s\r\n"+
		"x-ms-write: update\r\nx-ms-range: bytes=0-%d\r\nContent-Length: %d\r\n%s\r\n",
		devAccount, s.Addr, date, size-1, size, md5Header)
	// Unsigned requests are refused before the body matters; sign with a
	// SAS so the request reaches the Put Range handler.
	sasQ := accountSAS(t, svc)
	head = replaceTarget(head, "/"+devAccount+"/slow/f?comp=range&"+sasQ)
	var open []net.Conn
	t.Cleanup(func() {
		for _, c := range open {
			c.Close()
		}
	})
	for i := 0; i < conns; i++ {
		c, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
		c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		if _, err := c.Write([]byte(head)); err != nil {
			t.Fatalf("conn %d: %v", i, err)
		}
		if _, err := c.Write(body[:size-1]); err != nil {
			// The server may refuse to read more: that is a bound.
			t.Logf("conn %d: server stopped reading: %v", i, err)
		}
	}
	time.Sleep(time.Second)
	hwm, err := vmHWM(s.Pid())
	if err != nil {
		t.Fatal(err)
	}
	grew := hwm - hwm0
	t.Logf("%d stalled 4 MiB uploads: server VmHWM %d KiB → %d KiB (+%d MiB)", conns, hwm0, hwm, grew>>10)
	fmt.Printf("stalled uploads (%s): %d × 4 MiB, server VmHWM +%d MiB\n", t.Name(), conns, grew>>10)
	if grew > 96<<10 {
		t.Errorf("FINDING: %d stalled 4 MiB Put Range bodies grew the server's peak memory by %d MiB (want < 96 MiB): "+
			"each stalled upload pins its buffer with no limit on how many and no body read deadline", conns, grew>>10)
	}
}

func replaceTarget(head, target string) string {
	i := bytes.IndexByte([]byte(head), ' ')
	j := bytes.Index([]byte(head), []byte(" HTTP/1.1"))
	return head[:i+1] + target + head[j:]
}
