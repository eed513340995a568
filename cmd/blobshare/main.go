// Command blobshare serves Azure Storage on one machine: Azure Files over
// FileREST, SMB2/3 and a FUSE mount with SMB-style locks honored across
// all three, and the Blob, Queue and Table services on Azurite's ports,
// over HTTP or HTTPS (listen.go), with Azurite's flags understood
// (azurite.go).
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := Main(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "blobshare:", err)
		os.Exit(1)
	}
}
