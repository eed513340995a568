package main

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/internal/endpoint"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/smb"
)

// smbFlag is serve's --smb flag (cli-contract.md).
func smbFlag() cli.Flag {
	return &cli.StringFlag{Name: "smb", Value: "127.0.0.1:10445",
		Usage: "SMB2/3 listen address (user = the account name, password = the account key), or off"}
}

// smbEncryptFlag is serve's --smb-encrypt: SMB sessions must encrypt.
func smbEncryptFlag() cli.Flag {
	return &cli.BoolFlag{Name: "smb-encrypt",
		Usage: "require SMB 3 encryption (AES-128-GCM/CCM): clients that cannot encrypt are refused"}
}

// smbEndpoint is serve's SMB listener and server, not serving until serve
// hands it to the supervisor; nil when --smb off.
type smbEndpoint struct {
	ep *endpoint.Server
	ln net.Listener
}

// startSMB listens on addr ("off": no endpoint) for an SMB server over
// fsys; encrypt requires encryption (--smb-encrypt). Oplocks and leases
// are granted and broken in table, fsys's lock table, the one FileREST
// breaks them in too. Shutting the endpoint down closes every SMB
// connection (their opens close).
func startSMB(addr string, encrypt bool, fsys *fs.FileSystem, table *locks.Table, account, key string, logger *slog.Logger) (*smbEndpoint, error) {
	if addr == "off" {
		return nil, nil
	}
	srv, err := smb.New(smb.Config{FS: fsys, Caching: table, Account: account, Key: key, Logger: logger, EncryptData: encrypt})
	if err != nil {
		return nil, fmt.Errorf("--smb: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		srv.Close()
		return nil, listenError("smb", addr, err)
	}
	return &smbEndpoint{ep: &endpoint.Server{Label: "smb", Srv: srv, Closed: smb.ErrServerClosed}, ln: ln}, nil
}

// bound is what the supervisor runs: nothing when --smb is off.
func (e *smbEndpoint) bound() []endpoint.Bound {
	if e == nil {
		return nil
	}
	return []endpoint.Bound{{Endpoint: e.ep, Listener: e.ln}}
}

// addr is what the serving line shows: the listen address, or off.
func (e *smbEndpoint) addr() string {
	if e == nil {
		return "off"
	}
	return e.ln.Addr().String()
}
