package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/storagehttp"
)

// tlsFlags are serve's --tls-cert/--tls-key (Azurite's --cert/--key:
// blobshare's --key is the account key) and --oauth.
func tlsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "tls-cert", Usage: "serve FileREST, Blob, Queue and Table over HTTPS with this PEM certificate (chain); needs --tls-key"},
		&cli.StringFlag{Name: "tls-key", Usage: "the PEM private key of --tls-cert"},
		&cli.StringFlag{Name: "oauth", Usage: "basic: accept OAuth bearer tokens (issuer, audience and expiry checked, not the signature, as Azurite's --oauth basic); needs --tls-cert"},
	}
}

// serveTLS loads --tls-cert and --tls-key: nil without them (plain
// HTTP), an error naming the flag when only one is given or the files do
// not load.
func serveTLS(c *cli.Context) (*tls.Config, error) {
	cert, key := c.String("tls-cert"), c.String("tls-key")
	switch {
	case cert == "" && key == "":
		return nil, nil
	case cert == "":
		return nil, errors.New("--tls-key needs --tls-cert (the PEM certificate of that key)")
	case key == "":
		return nil, errors.New("--tls-cert needs --tls-key (the PEM private key of that certificate)")
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s / --tls-key %s: %w", cert, key, err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		MinVersion:   tls.VersionTLS12,
		// HTTP/1.1 only, as Azure Storage and Azurite speak.
		NextProtos: []string{"http/1.1"},
	}, nil
}

// checkOAuth validates --oauth: "" (off) or basic, and basic needs TLS.
func checkOAuth(c *cli.Context) error {
	switch c.String("oauth") {
	case "":
		return nil
	case "basic":
		if c.String("tls-cert") == "" {
			return errors.New("--oauth basic needs HTTPS: add --tls-cert FILE --tls-key FILE (bearer tokens are accepted only over TLS, as by Azure and Azurite)")
		}
		return nil
	default:
		return fmt.Errorf("--oauth %q: the only level is basic", c.String("oauth"))
	}
}

// httpsListener marks a listener whose connections are TLS, so the URL
// serve logs for it says https.
type httpsListener struct{ net.Listener }

// listenHTTP opens the listener of the HTTP endpoint whose address flag
// is flag ("addr", "blob-addr", "queue-addr", "table-addr"), with the
// address that flag or its Azurite aliases chose (endpointAddr), over TLS
// when --tls-cert/--tls-key are given. Every HTTP endpoint listens
// through it. A busy port is one line naming the flag that chose it.
func listenHTTP(c *cli.Context, flag string) (net.Listener, error) {
	addr, chosenBy, err := endpointAddr(c, flag)
	if err != nil {
		return nil, err
	}
	cfg, err := serveTLS(c)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, listenError(chosenBy, addr, err)
	}
	if cfg == nil {
		return ln, nil
	}
	return httpsListener{storagehttp.TLSListener(ln, cfg)}, nil
}

// endpointURL is what serve logs for an endpoint: SCHEME://ADDR/ACCOUNT.
func endpointURL(ln net.Listener, account string) string {
	scheme := "http"
	if _, ok := ln.(httpsListener); ok {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s/%s", scheme, ln.Addr(), account)
}

// listenError is the one line of a listener that cannot open, naming the
// flag that chose the address; a busy port suggests the usual cause.
func listenError(flag, addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("--%s %s: the port is in use (another blobshare? pick another --%s): %w", flag, addr, flag, err)
	}
	return fmt.Errorf("--%s %s: %w", flag, addr, err)
}
