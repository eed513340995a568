// Command blobshare serves Azure Storage on one machine: Azure Files over
// FileREST, SMB2/3 and a FUSE mount with SMB-style locks honored across
// all three, and the Blob, Queue and Table services on Azurite's ports,
// over HTTP or HTTPS (listen.go), with Azurite's flags understood
// (azurite.go).
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() {
	if err := Main(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "blobshare:", oneLine(err.Error()))
		os.Exit(1)
	}
}

// oneLine folds a multi-line error (a database driver's, say) into the one
// line the command prints.
func oneLine(msg string) string {
	lines := strings.FieldsFunc(msg, func(r rune) bool { return r == '\n' || r == '\r' })
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, "; ")
}
