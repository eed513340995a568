package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/fs"
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

// smbEndpoint is serve's SMB listener and server; nil when --smb off.
type smbEndpoint struct {
	srv  *smb.Server
	ln   net.Listener
	done chan struct{} // closed when Serve has returned, err set
	err  error         // Serve's error; nil after Close
	fail chan error    // err, if not nil (for the supervisor)

	stopOnce sync.Once
	stopErr  error
}

// startSMB listens on addr ("off": no endpoint) and serves fsys over SMB
// on a goroutine until stop; encrypt requires encryption (--smb-encrypt).
// Oplocks and leases are granted and broken in table, fsys's lock table,
// the one FileREST breaks them in too.
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
		return nil, listenError("smb", addr, err)
	}
	e := &smbEndpoint{srv: srv, ln: ln, done: make(chan struct{}), fail: make(chan error, 1)}
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, smb.ErrServerClosed) {
			err = nil
		}
		e.err = err
		if err != nil {
			e.fail <- err
		}
		close(e.done)
	}()
	return e, nil
}

// failed delivers the error that stopped the SMB server on its own; a
// nil channel when --smb is off.
func (e *smbEndpoint) failed() <-chan error {
	if e == nil {
		return nil
	}
	return e.fail
}

// addr is what the serving line shows: the listen address, or off.
func (e *smbEndpoint) addr() string {
	if e == nil {
		return "off"
	}
	return e.ln.Addr().String()
}

// stop closes the listener and every SMB connection (their opens close)
// and waits for the server. Later calls return the first call's result.
func (e *smbEndpoint) stop() error {
	if e == nil {
		return nil
	}
	e.stopOnce.Do(func() {
		e.srv.Close()
		<-e.done
		if e.err != nil {
			e.stopErr = fmt.Errorf("SMB server: %w", e.err)
		}
	})
	return e.stopErr
}
