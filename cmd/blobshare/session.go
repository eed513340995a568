package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

func sessionCommand() *cli.Command {
	return &cli.Command{
		Name:  "session",
		Usage: "a scriptable SMB-style client: reads commands on stdin, answers one line each",
		Description: "Opens handles on the lock table of --data like a Windows client would, one command a\n" +
			"line: open, close, dispose, lock, unlock, attrs, read, write, quit. Answers `ok [...]`\n" +
			"or `err STATUS_...`. End of input or quit closes every handle and exits 0.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "data", Value: "./blobshare-data", Usage: "directory of the SQLite database and the local blob store"},
			metaFlag(),
			&cli.StringFlag{Name: "blob-backend", Usage: "where file content lives (default file://<data>/blobs)"},
		},
		Action: runSession,
	}
}

// runSession serves the session protocol on the app's reader and writer.
func runSession(c *cli.Context) error {
	if err := refuseSharedMeta(c, "session"); err != nil {
		return err
	}
	if c.NArg() != 0 {
		return fmt.Errorf("session: unexpected arguments %q", c.Args().Slice())
	}
	// Warnings only: standard error tells why a line was refused, and
	// stays quiet otherwise.
	logger := newLogger(c.App.ErrWriter, slog.LevelWarn)
	ctx := c.Context
	dd, err := openDataDir(ctx, dataDirOptions{Path: c.String("data"), BlobBackend: c.String("blob-backend"), Logger: logger})
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	in := c.App.Reader
	if in == nil {
		in = os.Stdin
	}
	s := newSession(dd.FS, logger)
	runErr := s.serve(ctx, in, c.App.Writer)
	closeErr := s.closeAll(context.WithoutCancel(ctx))
	if err := dd.Close(context.WithoutCancel(ctx)); err != nil {
		closeErr = errors.Join(closeErr, err)
	}
	if runErr != nil {
		return fmt.Errorf("session: %w", runErr)
	}
	if closeErr != nil {
		logger.Warn("session: closing handles", "err", closeErr)
	}
	return nil
}

// session is one scripted client: its handles by the script's ids.
type session struct {
	fs      *fs.FileSystem
	log     *slog.Logger
	client  string // the ClientName of its opens: "session:<host>"
	handles map[string]*fs.Handle
	order   []string // ids in open order, to close in that order
}

func newSession(fsys *fs.FileSystem, log *slog.Logger) *session {
	host, _ := os.Hostname()
	return &session{fs: fsys, log: log, client: locks.ClientName(locks.ProtocolSession, host), handles: make(map[string]*fs.Handle)}
}

// serve answers every line of in on out, one flushed line each, until EOF
// or quit.
func (s *session) serve(ctx context.Context, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20) // write lines carry hex payloads
	w := bufio.NewWriter(out)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		answer, quit := s.exec(ctx, line)
		if _, err := fmt.Fprintln(w, answer); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if quit {
			return nil
		}
	}
	return sc.Err()
}

// errBadLine is a malformed command line (STATUS_INVALID_PARAMETER).
var errBadLine = errors.New("malformed command")

// errUnknownID is an ID the script never opened (STATUS_INVALID_HANDLE).
var errUnknownID = errors.New("unknown handle id")

func badLine(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errBadLine}, args...)...)
}

// exec runs one command line and returns its answer.
func (s *session) exec(ctx context.Context, line string) (answer string, quit bool) {
	f := strings.Fields(line)
	if len(f) == 0 { // serve skips blank lines; exec alone must not index f[0]
		return "err " + ntStatus(badLine("empty line")), false
	}
	var res string
	var err error
	switch f[0] {
	case "open":
		res, err = s.open(ctx, f[1:])
	case "close":
		err = s.close(ctx, f[1:])
	case "dispose":
		err = s.dispose(ctx, f[1:])
	case "lock":
		err = s.lock(ctx, f[1:])
	case "unlock":
		err = s.unlock(ctx, f[1:])
	case "attrs":
		err = s.attrs(ctx, f[1:])
	case "read":
		res, err = s.read(ctx, f[1:])
	case "write":
		err = s.write(ctx, f[1:])
	case "quit":
		if len(f) != 1 {
			err = badLine("quit takes no arguments")
			break
		}
		return "ok", true
	default:
		err = badLine("unknown command %q", f[0])
	}
	if err != nil {
		status := ntStatus(err)
		switch {
		case errors.Is(err, errBadLine):
			// The answer says only INVALID_PARAMETER; a script's author
			// needs to know which word was wrong.
			s.log.Warn("session: cannot parse line", "line", line, "err", err)
		case status == "STATUS_UNSUCCESSFUL":
			s.log.Warn("session: command failed", "line", line, "err", err)
		}
		return "err " + status, false
	}
	if res != "" {
		return "ok " + res, false
	}
	return "ok", false
}

// ntStatus maps an error to the NT status name the session answers: the
// script's own mistakes here, every fs and locks outcome through the shared
// table (package ntstatus).
func ntStatus(err error) string {
	switch {
	case errors.Is(err, errBadLine):
		return ntstatus.InvalidParameter.String()
	case errors.Is(err, errUnknownID):
		return ntstatus.InvalidHandle.String()
	}
	return ntstatus.FromError(err).String()
}

var dispositions = map[string]fs.Disposition{
	"open":         fs.DispositionOpen,
	"create":       fs.DispositionCreate,
	"open_if":      fs.DispositionOpenIf,
	"overwrite":    fs.DispositionOverwrite,
	"overwrite_if": fs.DispositionOverwriteIf,
	"supersede":    fs.DispositionSupersede,
}

// open ID PATH access=LIST share=LIST [disposition=D] [delete_on_close]
func (s *session) open(ctx context.Context, args []string) (string, error) {
	if len(args) < 4 {
		return "", badLine("open ID PATH access=LIST share=LIST [disposition=D] [delete_on_close]")
	}
	id, path := args[0], args[1]
	if _, dup := s.handles[id]; dup {
		return "", badLine("id %q is already open", id)
	}
	req := fs.OpenPathRequest{Path: path, Disposition: fs.DispositionOpen}
	req.Open.SessionID = uint64(os.Getpid())
	req.Open.ClientName = s.client
	req.Open.ClientIP = "127.0.0.1"
	var haveAccess, haveShare bool
	for _, a := range args[2:] {
		k, v, hasValue := strings.Cut(a, "=")
		var err error
		switch {
		case k == "access" && hasValue && !haveAccess:
			if req.Open.Access, err = locks.ParseAccess(v); err != nil {
				err = badLine("%v", err)
			}
			haveAccess = true
		case k == "share" && hasValue && !haveShare:
			if req.Open.Share, err = locks.ParseShareMode(v); err != nil {
				err = badLine("%v", err)
			}
			haveShare = true
		case k == "disposition" && hasValue:
			d, ok := dispositions[v]
			if !ok {
				err = badLine("disposition %q", v)
			}
			req.Disposition = d
		case k == "delete_on_close" && !hasValue:
			req.Open.DeleteOnClose = true
		default:
			err = badLine("open argument %q", a)
		}
		if err != nil {
			return "", err
		}
	}
	if !haveAccess || !haveShare {
		return "", badLine("open needs access= and share=")
	}
	h, _, err := s.fs.OpenByPath(ctx, req)
	if err != nil {
		return "", err
	}
	s.handles[id] = h
	s.order = append(s.order, id)
	return strconv.FormatUint(uint64(h.ID()), 10), nil
}

func (s *session) handle(id string) (*fs.Handle, error) {
	h, ok := s.handles[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", errUnknownID, id)
	}
	return h, nil
}

func (s *session) forget(id string) {
	delete(s.handles, id)
	for i, v := range s.order {
		if v == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// close ID
func (s *session) close(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return badLine("close ID")
	}
	h, err := s.handle(args[0])
	if err != nil {
		return err
	}
	s.forget(args[0])
	return h.Close(ctx)
}

// dispose ID true|false
func (s *session) dispose(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return badLine("dispose ID true|false")
	}
	h, err := s.handle(args[0])
	if err != nil {
		return err
	}
	var pending bool
	switch args[1] {
	case "true":
		pending = true
	case "false":
	default:
		return badLine("dispose value %q", args[1])
	}
	return h.Dispose(ctx, pending)
}

func parseRange(off, n string) (locks.Range, error) {
	o, err := strconv.ParseUint(off, 10, 64)
	if err != nil {
		return locks.Range{}, badLine("offset %q", off)
	}
	l, err := strconv.ParseUint(n, 10, 64)
	if err != nil {
		return locks.Range{}, badLine("length %q", n)
	}
	return locks.Range{Offset: o, Length: l}, nil
}

// lock ID OFFSET LENGTH shared|exclusive
func (s *session) lock(ctx context.Context, args []string) error {
	if len(args) != 4 {
		return badLine("lock ID OFFSET LENGTH shared|exclusive")
	}
	h, err := s.handle(args[0])
	if err != nil {
		return err
	}
	r, err := parseRange(args[1], args[2])
	if err != nil {
		return err
	}
	var kind locks.LockKind
	switch args[3] {
	case "shared":
		kind = locks.LockShared
	case "exclusive":
		kind = locks.LockExclusive
	default:
		return badLine("lock kind %q", args[3])
	}
	return h.Lock(ctx, r, kind)
}

// unlock ID OFFSET LENGTH
func (s *session) unlock(ctx context.Context, args []string) error {
	if len(args) != 3 {
		return badLine("unlock ID OFFSET LENGTH")
	}
	h, err := s.handle(args[0])
	if err != nil {
		return err
	}
	r, err := parseRange(args[1], args[2])
	if err != nil {
		return err
	}
	return h.Unlock(ctx, r)
}

// attrs PATH LIST
func (s *session) attrs(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return badLine("attrs PATH LIST")
	}
	a, err := fs.ParseAttributes(args[1], ",|")
	if err != nil {
		return badLine("attributes %q", args[1])
	}
	_, err = s.fs.SetAttributesByPath(ctx, args[0], a)
	return err
}

// maxSessionRead bounds one read's answer.
const maxSessionRead = 8 << 20

// read ID OFFSET LENGTH → ok <hex>
func (s *session) read(ctx context.Context, args []string) (string, error) {
	if len(args) != 3 {
		return "", badLine("read ID OFFSET LENGTH")
	}
	h, err := s.handle(args[0])
	if err != nil {
		return "", err
	}
	r, err := parseRange(args[1], args[2])
	if err != nil {
		return "", err
	}
	if r.Length > maxSessionRead || r.Offset > 1<<62 {
		return "", badLine("read of %d bytes at %d", r.Length, r.Offset)
	}
	if r.Length == 0 {
		return "", nil
	}
	buf := make([]byte, r.Length)
	n, err := h.ReadAt(ctx, buf, int64(r.Offset))
	if errors.Is(err, io.EOF) && n > 0 {
		err = nil
	}
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(buf[:n]), nil
}

// write ID OFFSET HEXBYTES — committed at once, as an SMB write is visible
// to every other client when it completes.
func (s *session) write(ctx context.Context, args []string) error {
	if len(args) != 3 {
		return badLine("write ID OFFSET HEXBYTES")
	}
	h, err := s.handle(args[0])
	if err != nil {
		return err
	}
	off, err := strconv.ParseUint(args[1], 10, 63)
	if err != nil {
		return badLine("offset %q", args[1])
	}
	data, err := hex.DecodeString(args[2])
	if err != nil {
		return badLine("hex bytes: %v", err)
	}
	if _, err := h.WriteAt(ctx, data, int64(off)); err != nil {
		return err
	}
	return h.Flush(ctx)
}

// closeAll closes every handle still open, in open order (delete-on-close
// runs).
func (s *session) closeAll(ctx context.Context) error {
	var errs []error
	for _, id := range append([]string(nil), s.order...) {
		h := s.handles[id]
		s.forget(id)
		if err := h.Close(ctx); err != nil && !errors.Is(err, locks.ErrHandleClosed) {
			errs = append(errs, fmt.Errorf("close %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}
