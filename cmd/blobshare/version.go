package main

import (
	"fmt"
	"runtime"

	"github.com/urfave/cli/v2"
)

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:   "version",
		Usage:  "print the version",
		Action: runVersion,
	}
}

func runVersion(c *cli.Context) error {
	_, err := fmt.Fprintf(c.App.Writer, "blobshare %s %s/%s %s\n", Version, runtime.GOOS, runtime.GOARCH, runtime.Version())
	return err
}
