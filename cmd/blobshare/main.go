// Command blobshare serves an Azure Files–compatible share over FileREST and
// a FUSE mount, with SMB-style locks honored across both.
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
