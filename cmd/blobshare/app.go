package main

import (
	"github.com/urfave/cli/v2"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

// Main runs the command line with args (args[0] is the program name).
func Main(args []string) error {
	return newApp().Run(args)
}

func newApp() *cli.App {
	return &cli.App{
		Name:            "blobshare",
		Usage:           "an Azure Files–compatible share: FileREST and a FUSE mount, SMB-style locks across both",
		HideHelpCommand: true,
		Commands: []*cli.Command{
			versionCommand(),
			mountCommand(),
		},
		// Errors are printed once, by main, on one line.
		ExitErrHandler: func(*cli.Context, error) {},
	}
}
