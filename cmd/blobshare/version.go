package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:   "version",
		Usage:  "print the version, the commit it was built from, the platform and the Go release",
		Action: runVersion,
	}
}

func runVersion(c *cli.Context) error {
	info, _ := debug.ReadBuildInfo()
	_, err := fmt.Fprintf(c.App.Writer, "blobshare %s %s/%s %s\n", versionString(Version, info), runtime.GOOS, runtime.GOARCH, runtime.Version())
	return err
}

// versionString is the version to print: -ldflags "-X main.Version=..."
// when a release build set it, else the module version Go recorded (a
// tagged version for `go install …@v1.2.3`, "(devel)" for a build from a
// clone), followed by the commit, its time and "modified" when the tree
// had uncommitted changes, as far as the build info has them.
func versionString(ldflags string, info *debug.BuildInfo) string {
	v := ldflags
	if v == "dev" || v == "" {
		v = "(devel)"
		if info != nil && info.Main.Version != "" {
			v = info.Main.Version
		}
	}
	if info == nil {
		return v
	}
	var vcs []string
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		vcs = append(vcs, "commit "+rev[:min(12, len(rev))])
	}
	if t := settings["vcs.time"]; t != "" {
		vcs = append(vcs, t)
	}
	if settings["vcs.modified"] == "true" {
		vcs = append(vcs, "modified")
	}
	if len(vcs) == 0 {
		return v
	}
	return v + " (" + strings.Join(vcs, ", ") + ")"
}
