package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

// Main runs the command line with args (args[0] is the program name).
func Main(args []string) error {
	return newApp().Run(args)
}

func newApp() *cli.App {
	app := &cli.App{
		Name:            "blobshare",
		Usage:           "an Azure Files–compatible share: FileREST and a FUSE mount, SMB-style locks across both",
		HideHelpCommand: true,
		Commands: []*cli.Command{
			serveCommand(),
			mountCommand(),
			sessionCommand(),
			versionCommand(),
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return fmt.Errorf("unknown command %q (try --help)", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		// Errors are printed once, by main, on one line: no usage dump.
		OnUsageError:   usageError,
		ExitErrHandler: func(*cli.Context, error) {},
	}
	for _, cmd := range app.Commands {
		cmd.OnUsageError = usageError
	}
	return app
}

func usageError(c *cli.Context, err error, _ bool) error {
	if c.Command != nil && c.Command.Name != "" {
		return fmt.Errorf("%s: %w (try --help)", c.Command.Name, err)
	}
	return fmt.Errorf("%w (try --help)", err)
}
