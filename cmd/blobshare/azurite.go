package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/storagehttp"
)

// azuriteCategory groups Azurite's own flag names in serve --help, so a
// command line written for Azurite runs, or says in one line what to use.
const azuriteCategory = "Azurite's flags"

// azuriteDescription is serve --help's note on Azurite's flags.
const azuriteDescription = "Azurite's command-line flags work too: --location, --blobHost/--blobPort, --queueHost/--queuePort,\n" +
	"--tableHost/--tablePort, --debug FILE, --oauth basic, --silent, --skipApiVersionCheck, --disableProductStyleUrl and\n" +
	"--disableTelemetry mean what they mean there; the others (--cert, --key FILE, --pwd, --loose, --inMemoryPersistence, ...)\n" +
	"answer with what to use instead. HTTPS is --tls-cert FILE --tls-key FILE: --key is the account key."

// azuriteAliases are the Azurite host/port flags that make up each
// endpoint flag's HOST:PORT. FileREST (--addr) has none: Azurite has no
// Files service.
var azuriteAliases = map[string][2]string{
	"blob-addr":  {"blobHost", "blobPort"},
	"queue-addr": {"queueHost", "queuePort"},
	"table-addr": {"tableHost", "tablePort"},
}

// azuriteRefused are the Azurite flags whose meaning blobshare does not
// have, each with what blobshare does instead.
var azuriteRefused = []struct{ name, answer string }{
	{"cert", "blobshare's HTTPS flags are --tls-cert FILE --tls-key FILE (PEM): its --key is the account key"},
	{"pwd", "blobshare takes PEM, not PFX: openssl pkcs12 -in cert.pfx -nodes -out cert.pem, then --tls-cert cert.pem --tls-key cert.pem"},
	{"loose", "blobshare has no loose mode: it ignores a header it does not implement only when the header cannot change the result, and refuses the others as Azure does; drop --loose"},
	{"inMemoryPersistence", "blobshare always keeps its data in --data; for a throwaway store use --data \"$(mktemp -d)\""},
	{"extentMemoryLimit", "blobshare keeps content on disk in --data, not in memory; drop --extentMemoryLimit"},
	{"blobKeepAliveTimeout", "blobshare closes idle connections after 2 minutes; there is no flag for it"},
	{"queueKeepAliveTimeout", "blobshare closes idle connections after 2 minutes; there is no flag for it"},
	{"tableKeepAliveTimeout", "blobshare closes idle connections after 2 minutes; there is no flag for it"},
}

// azuriteFlags are serve's flags named as Azurite names them.
func azuriteFlags() []cli.Flag {
	cat := azuriteCategory
	fs := []cli.Flag{
		&cli.StringFlag{Name: "location", Aliases: []string{"l"}, Category: cat, Usage: "the same as --data"},
		&cli.StringFlag{Name: "debug-log", Usage: "append the debug log (every failed request, why authentication failed) to this file; Azurite's --debug FILE and -d FILE mean this"},
		&cli.StringFlag{Name: "blobHost", Category: cat, Usage: "the host of --blob-addr"},
		&cli.StringFlag{Name: "blobPort", Category: cat, Usage: "the port of --blob-addr"},
		&cli.StringFlag{Name: "queueHost", Category: cat, Usage: "the host of --queue-addr"},
		&cli.StringFlag{Name: "queuePort", Category: cat, Usage: "the port of --queue-addr"},
		&cli.StringFlag{Name: "tableHost", Category: cat, Usage: "the host of --table-addr"},
		&cli.StringFlag{Name: "tablePort", Category: cat, Usage: "the port of --table-addr"},
		&cli.BoolFlag{Name: "silent", Aliases: []string{"s"}, Category: cat, Usage: "accepted: blobshare writes no access log"},
		&cli.BoolFlag{Name: "skipApiVersionCheck", Category: cat, Usage: "accepted: blobshare accepts every well-formed x-ms-version"},
		&cli.BoolFlag{Name: "disableProductStyleUrl", Category: cat, Usage: "read the account from the URL's path even when the host is ACCOUNT.SERVICE.… (production style)"},
		&cli.BoolFlag{Name: "disableTelemetry", Category: cat, Usage: "accepted: blobshare collects no telemetry"},
	}
	for _, r := range azuriteRefused {
		usage := "refused: " + r.answer
		switch r.name {
		case "loose", "inMemoryPersistence":
			var aliases []string
			if r.name == "loose" {
				aliases = []string{"L"}
			}
			fs = append(fs, &cli.BoolFlag{Name: r.name, Aliases: aliases, Category: cat, Usage: usage})
		default:
			fs = append(fs, &cli.StringFlag{Name: r.name, Category: cat, Usage: usage})
		}
	}
	return fs
}

// checkAzuriteFlags answers the Azurite flags serve refuses, one line
// each (the first given), and the conflicts of the aliases with
// blobshare's own flags.
func checkAzuriteFlags(c *cli.Context) error {
	for _, r := range azuriteRefused {
		if c.IsSet(r.name) {
			return fmt.Errorf("--%s: %s", r.name, r.answer)
		}
	}
	if c.IsSet("location") && c.IsSet("data") {
		return errors.New("--location is Azurite's name for --data: give one of them")
	}
	if k := c.String("key"); c.IsSet("key") && (strings.HasSuffix(k, ".pem") || isFile(k)) {
		return fmt.Errorf("--key %s: blobshare's --key is the account key (base64); the TLS key is --tls-key", k)
	}
	for flag := range azuriteAliases {
		if _, _, err := endpointAddr(c, flag); err != nil {
			return err
		}
	}
	return nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// dataFlag is --data, or Azurite's --location.
func dataFlag(c *cli.Context) string {
	if c.IsSet("location") {
		return c.String("location")
	}
	return c.String("data")
}

// endpointAddr is the address an endpoint listens on and the flag that
// chose it: the endpoint flag, or its Azurite host/port flags applied to
// the flag's default (--blobPort 7777 is --blob-addr 127.0.0.1:7777).
// Giving both forms is an error, and so is an alias of an endpoint this
// build has no flag for.
func endpointAddr(c *cli.Context, flag string) (addr, chosenBy string, err error) {
	alias, ok := azuriteAliases[flag]
	hostSet, portSet := ok && c.IsSet(alias[0]), ok && c.IsSet(alias[1])
	if !hostSet && !portSet {
		return c.String(flag), flag, nil
	}
	given := alias[0]
	if portSet {
		given = alias[1]
	}
	if !hasFlag(c, flag) {
		return "", "", fmt.Errorf("--%s: this blobshare has no --%s endpoint", given, flag)
	}
	if c.IsSet(flag) {
		return "", "", fmt.Errorf("--%s and --%s both set the %s address: give one of them", given, flag, strings.TrimSuffix(flag, "-addr"))
	}
	host, port, err := net.SplitHostPort(c.String(flag))
	if err != nil {
		return "", "", fmt.Errorf("--%s default %q: %w", flag, c.String(flag), err)
	}
	if hostSet {
		host = c.String(alias[0])
	}
	if portSet {
		port = c.String(alias[1])
	}
	return net.JoinHostPort(host, port), given, nil
}

// hasFlag reports whether the command defines the flag name.
func hasFlag(c *cli.Context, name string) bool {
	for _, f := range c.Command.Flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

// azuriteArgs rewrites Azurite's debug flag in serve's arguments before
// parsing: Azurite's --debug and -d take a log file (--debug FILE), while
// blobshare's --debug is a switch. "--debug FILE", "-d FILE" and
// "--debug=FILE" become "--debug-log FILE" (the debug log goes to FILE,
// standard error keeps its level); a bare -d is --debug. Everything else passes unchanged.
func azuriteArgs(args []string) []string {
	const serve = 1 // blobshare serve ...
	if len(args) <= serve || args[serve] != "serve" {
		return args
	}
	out := slices.Clone(args[:serve+1])
	for i := serve + 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		switch {
		case a == "--debug" || a == "-debug" || a == "-d":
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !isBoolWord(args[i+1]) {
				out = append(out, "--debug-log", args[i+1])
				i++
				continue
			}
			out = append(out, "--debug")
		case strings.HasPrefix(a, "--debug=") || strings.HasPrefix(a, "-d="):
			_, v, _ := strings.Cut(a, "=")
			if isBoolWord(v) {
				out = append(out, "--debug="+v)
			} else {
				out = append(out, "--debug-log="+v)
			}
		default:
			out = append(out, a)
		}
	}
	return out
}

func isBoolWord(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "1", "0", "t", "f":
		return true
	}
	return false
}

// productStyle applies --disableProductStyleUrl to an endpoint's handler:
// with it, the account always comes from the URL's path.
func productStyle(c *cli.Context, h http.Handler) http.Handler {
	if c.Bool("disableProductStyleUrl") {
		return storagehttp.PathStyleOnly(h)
	}
	return h
}
