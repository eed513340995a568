package fusefs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// helperEnv marks a re-executed test binary that acts as a second process
// on the mount (fcntl locks are per process).
const helperEnv = "BLOBSHARE_FUSEFS_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "1":
		os.Exit(helperMain(os.Args[len(os.Args)-5:]))
	case "serve":
		os.Exit(serveMain(os.Getenv("BLOBSHARE_FUSEFS_DATA"), os.Getenv("BLOBSHARE_FUSEFS_MNT")))
	case "smallfiles":
		os.Exit(smallFilesMain())
	}
	os.Exit(m.Run())
}

// runHelper runs the test binary as a helper process with args (always 5:
// op path type start len) and returns its one-line answer.
func runHelper(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$"}, args...)...)
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// helperMain: setlk|setlkw|getlk|read|write PATH r|w START LEN. Prints ok /
// EAGAIN / the F_GETLK answer ("F_UNLCK" or "F_WRLCK start end"); read and
// write (pread/pwrite of LEN bytes at START) print ok or the errno's name.
func helperMain(args []string) int {
	op, path, typ := args[0], args[1], args[2]
	start, err1 := strconv.ParseInt(args[3], 10, 64)
	n, err2 := strconv.ParseInt(args[4], 10, 64)
	if err1 != nil || err2 != nil {
		fmt.Println("bad args", args)
		return 2
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		fmt.Println("open:", err)
		return 2
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_RDLCK, Start: start, Len: n}
	if typ == "w" {
		lk.Type = syscall.F_WRLCK
	}
	switch op {
	case "setlkw":
		if err := fcntlRetry(f.Fd(), syscall.F_SETLKW, &lk); err != nil {
			fmt.Println("error:", err)
			return 0
		}
		fmt.Println("ok")
	case "setlk":
		err := fcntlRetry(f.Fd(), syscall.F_SETLK, &lk)
		switch err {
		case nil:
			fmt.Println("ok")
		case syscall.EAGAIN:
			fmt.Println("EAGAIN")
		default:
			fmt.Println("error:", err)
		}
	case "getlk":
		if err := fcntlRetry(f.Fd(), syscall.F_GETLK, &lk); err != nil {
			fmt.Println("error:", err)
			return 0
		}
		switch lk.Type {
		case syscall.F_UNLCK:
			fmt.Println("F_UNLCK")
		case syscall.F_WRLCK:
			fmt.Printf("F_WRLCK %d %d\n", lk.Start, lk.Start+lk.Len-1)
		default:
			fmt.Printf("F_RDLCK %d %d\n", lk.Start, lk.Start+lk.Len-1)
		}
	case "read", "write":
		buf := make([]byte, n)
		var err error
		if op == "read" {
			_, err = f.ReadAt(buf, start)
		} else {
			_, err = f.WriteAt(buf, start)
		}
		var errno syscall.Errno
		switch {
		case err == nil:
			fmt.Println("ok")
		case errors.As(err, &errno):
			fmt.Println(unix.ErrnoName(errno))
		default:
			fmt.Println("error:", err)
		}
	default:
		fmt.Println("unknown op", op)
		return 2
	}
	return 0
}

// serveMain mounts a blobshare file system over data at mnt (the whole
// account) and serves until SIGTERM: the mount server as its own process,
// so that its peak RSS can be measured alone.
func serveMain(data, mnt string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	table, err := locks.Open(ctx, filepath.Join(data, "blobshare.db"), locks.Options{Remove: fs.RemoveFile})
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	store, err := local.New(filepath.Join(data, "blobs"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	fsys, err := fs.New(ctx, fs.Config{Table: table, Store: store, Logger: logger, SpillDir: filepath.Join(data, "spill")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	m, err := Mount(ctx, mnt, fsys, Options{ShareMode: DefaultShareMode, Logger: logger})
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	fmt.Println("ready")
	m.Wait()
	bg := context.Background()
	if err := fsys.Close(bg); err != nil {
		fmt.Fprintln(os.Stderr, "serve: close:", err)
	}
	if err := table.Close(bg); err != nil {
		fmt.Fprintln(os.Stderr, "serve: close:", err)
	}
	return 0
}
