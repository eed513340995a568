package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/fs"
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
	srv      *smb.Server
	ln       net.Listener
	done     chan error
	stopOnce sync.Once
	stopErr  error
}

// startSMB listens on addr ("off": no endpoint) and serves fsys over SMB
// on a goroutine until stop; encrypt requires encryption (--smb-encrypt).
func startSMB(addr string, encrypt bool, fsys *fs.FileSystem, account, key string, logger *slog.Logger) (*smbEndpoint, error) {
	if addr == "off" {
		return nil, nil
	}
	srv, err := smb.New(smb.Config{FS: fsys, Account: account, Key: key, Logger: logger, EncryptData: encrypt})
	if err != nil {
		return nil, fmt.Errorf("--smb: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, listenError("smb", addr, err)
	}
	e := &smbEndpoint{srv: srv, ln: ln, done: make(chan error, 1)}
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, smb.ErrServerClosed) {
			err = nil
		}
		if err != nil {
			logger.Error("SMB server stopped", "err", err)
		}
		e.done <- err
	}()
	return e, nil
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
		if err := <-e.done; err != nil {
			e.stopErr = fmt.Errorf("SMB server: %w", err)
		}
	})
	return e.stopErr
}
