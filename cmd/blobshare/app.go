package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

// Main runs the command line with args (args[0] is the program name).
func Main(args []string) error {
	return newApp().Run(azuriteArgs(args))
}

func newApp() *cli.App {
	app := &cli.App{
		Name:  "blobshare",
		Usage: "Azure Storage on your machine, exact about concurrency",
		Description: "blobshare serve runs Azure Files over FileREST (127.0.0.1:10003) and SMB2/3 (127.0.0.1:10445),\n" +
			"the Blob (10000), Queue (10001) and Table (10002) services on Azurite's ports and, with --mount DIR,\n" +
			"a Linux FUSE mount of the shares; SMB-style locks hold across FileREST, SMB and the mount.\n" +
			"blobshare mount mounts the shares as a process of its own, session holds handles as a\n" +
			"Windows program does, status shows who holds what. HTTPS: serve --tls-cert FILE --tls-key FILE.",
		Commands: []*cli.Command{
			serveCommand(),
			mountCommand(),
			sessionCommand(),
			statusCommand(),
			versionCommand(),
		},
		// --version as well as the version command. (App.Version stays
		// empty: urfave/cli would print it through a package-level
		// printer in its own format.)
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "version", Aliases: []string{"v"}, Usage: "print the version"},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("version") {
				return runVersion(c)
			}
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

// flagsAfterArgument refuses flags written after a positional argument:
// urfave/cli stops parsing flags at the first argument, so in `mount DIR
// --data X` the --data would be silently taken as a second argument.
func flagsAfterArgument(c *cli.Context) error {
	args := c.Args().Slice()
	for _, a := range args[min(1, len(args)):] {
		if strings.HasPrefix(a, "-") && a != "-" {
			return fmt.Errorf("flag %s after %s: flags come first (blobshare %s [flags] %s)",
				a, args[0], c.Command.Name, strings.TrimSpace(strings.SplitN(c.Command.ArgsUsage, " ", 2)[0]))
		}
	}
	return nil
}
