//go:build linux

// Command cifsguest is the program TestLinuxCIFSClient (package
// integration) runs inside a QEMU guest booted with Debian's kernel, whose
// SMB client (cifs.ko) this repository's test machines lack. It is built
// static (CGO_ENABLED=0) and put in the guest's initramfs.
//
//	cifsguest serve DEVICE   the guest side: read one command a line from
//	                         DEVICE (the guest's second serial port), do it
//	                         with plain system calls on the cifs mounts and
//	                         answer one line
//	cifsguest relay ADDR     the host side of QEMU's guestfwd=…-cmd: QEMU
//	                         runs it for each connection the guest opens,
//	                         with the connection as standard input and
//	                         output; it copies both ways to ADDR (the SMB
//	                         endpoint on the host's loopback)
//
// Answers are "ok", "ok VALUE" or "err ERRNO" (the errno's name, such as
// EBUSY), so the test asserts exactly what a Linux program on a cifs mount
// sees. Handles are named by the test: "open f1 /mnt/a/x rw" then
// "write f1 0 hello".
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: cifsguest serve DEVICE | relay ADDR")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2])
	case "relay":
		err = relay(os.Args[2])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		// In relay mode standard error is the guest's connection too:
		// nothing may be written there, so the error is only the exit code.
		if os.Args[1] != "relay" {
			fmt.Fprintln(os.Stderr, "cifsguest:", err)
		}
		os.Exit(1)
	}
}

// relay joins standard input and output to a TCP connection to addr.
func relay(addr string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return fmt.Errorf("relay to %s: %w", addr, err)
	}
	defer c.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(os.Stdout, c)
		os.Stdout.Close()
		close(done)
	}()
	io.Copy(c, os.Stdin)
	c.(*net.TCPConn).CloseWrite()
	<-done
	return nil
}

// serve answers the test's commands on device until "poweroff".
func serve(device string) error {
	tty, err := os.OpenFile(device, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", device, err)
	}
	if err := rawTTY(int(tty.Fd())); err != nil {
		return fmt.Errorf("raw mode on %s: %w", device, err)
	}
	g := &guest{files: map[string]*os.File{}}
	in := bufio.NewScanner(tty)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	fmt.Fprintln(tty, "ready")
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		if line == "poweroff" {
			fmt.Fprintln(tty, "ok")
			unix.Sync()
			return unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
		}
		fmt.Fprintln(tty, g.do(fields(line)))
	}
	return in.Err()
}

// fields splits a command line at spaces; a Go-quoted argument ("a b")
// is one field, still quoted (arg unquotes it).
func fields(line string) []string {
	var f []string
	for {
		line = strings.TrimLeft(line, " ")
		if line == "" {
			return f
		}
		if q, err := strconv.QuotedPrefix(line); err == nil {
			f = append(f, q)
			line = line[len(q):]
			continue
		}
		w, rest, _ := strings.Cut(line, " ")
		f = append(f, w)
		line = rest
	}
}

// rawTTY turns off echo, line editing and output processing, so lines
// pass through the serial port as they are.
func rawTTY(fd int) error {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return err
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	return unix.IoctlSetTermios(fd, unix.TCSETS, t)
}

type guest struct {
	files map[string]*os.File
}

// answer turns a result into the answer line.
func answer(value string, err error) string {
	if err == nil {
		if value == "" {
			return "ok"
		}
		return "ok " + value
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return "err " + unix.ErrnoName(errno)
	}
	return "err " + strconv.QuoteToASCII(err.Error())
}

// arg decodes a quoted argument (names with spaces, data); unquoted ones
// stand for themselves.
func arg(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

func (g *guest) do(f []string) string {
	v, err := g.run(f)
	return answer(v, err)
}

var errUsage = errors.New("bad command")

func (g *guest) run(f []string) (string, error) {
	need := func(n int) error {
		if len(f) != n {
			return fmt.Errorf("%w: %q takes %d arguments", errUsage, f[0], n-1)
		}
		return nil
	}
	num := func(s string) int64 {
		n, _ := strconv.ParseInt(s, 10, 64)
		return n
	}
	switch f[0] {
	case "mount": // mount SOURCE DIR OPTIONS
		if err := need(4); err != nil {
			return "", err
		}
		if err := os.MkdirAll(f[2], 0o755); err != nil {
			return "", err
		}
		return "", unix.Mount(f[1], f[2], "cifs", 0, f[3])
	case "procfs": // procfs: mounts /proc (the cifs client's counters are in /proc/fs/cifs)
		if err := os.MkdirAll("/proc", 0o555); err != nil {
			return "", err
		}
		return "", unix.Mount("proc", "/proc", "proc", 0, "")
	case "umount":
		if err := need(2); err != nil {
			return "", err
		}
		return "", unix.Unmount(f[1], 0)
	case "open": // open HANDLE PATH FLAGS (r, w, rw, and +creat, +excl, +trunc, +append)
		if err := need(4); err != nil {
			return "", err
		}
		if g.files[f[1]] != nil {
			return "", fmt.Errorf("%w: handle %s is open", errUsage, f[1])
		}
		flags := 0
		for _, p := range strings.Split(f[3], "+") {
			flags |= map[string]int{"r": os.O_RDONLY, "w": os.O_WRONLY, "rw": os.O_RDWR, "creat": os.O_CREATE,
				"excl": os.O_EXCL, "trunc": os.O_TRUNC, "append": os.O_APPEND}[p]
		}
		h, err := os.OpenFile(arg(f[2]), flags, 0o644)
		if err != nil {
			return "", err
		}
		g.files[f[1]] = h
		return "", nil
	case "close", "fsync", "read", "write", "flock", "fcntl", "fstat":
		if len(f) < 2 || g.files[f[1]] == nil {
			return "", fmt.Errorf("%w: no handle %v", errUsage, f[1:])
		}
		return g.handle(g.files[f[1]], f)
	case "dial": // dial HOST:PORT MILLISECONDS: whether a TCP connection opens
		if err := need(3); err != nil {
			return "", err
		}
		c, err := net.DialTimeout("tcp", f[1], time.Duration(num(f[2]))*time.Millisecond)
		if err != nil {
			var errno syscall.Errno
			if errors.As(err, &errno) {
				return "", errno
			}
			return "", errors.New("timeout") // restrict=on drops the packets: nothing answers
		}
		return "", c.Close()
	case "writefile": // writefile PATH DATA
		if err := need(3); err != nil {
			return "", err
		}
		return "", os.WriteFile(arg(f[1]), []byte(arg(f[2])), 0o644)
	case "readfile":
		if err := need(2); err != nil {
			return "", err
		}
		b, err := os.ReadFile(arg(f[1]))
		return strconv.QuoteToASCII(string(b)), err
	case "mkdir":
		if err := need(2); err != nil {
			return "", err
		}
		return "", os.Mkdir(arg(f[1]), 0o755)
	case "rename":
		if err := need(3); err != nil {
			return "", err
		}
		return "", os.Rename(arg(f[1]), arg(f[2]))
	case "unlink":
		if err := need(2); err != nil {
			return "", err
		}
		return "", unix.Unlink(arg(f[1]))
	case "rmdir":
		if err := need(2); err != nil {
			return "", err
		}
		return "", unix.Rmdir(arg(f[1]))
	case "ls": // the names in a directory, sorted, each quoted
		if err := need(2); err != nil {
			return "", err
		}
		ents, err := os.ReadDir(arg(f[1]))
		if err != nil {
			return "", err
		}
		var names []string
		for _, e := range ents {
			names = append(names, strconv.QuoteToASCII(e.Name()))
		}
		slices.Sort(names)
		return strings.Join(names, " "), nil
	case "tree": // every file under a directory: "PATH:SIZE" quoted, sorted; directories end in /
		if err := need(2); err != nil {
			return "", err
		}
		root := arg(f[1])
		var out []string
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || p == root {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if d.IsDir() {
				out = append(out, strconv.QuoteToASCII(rel+"/"))
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			out = append(out, strconv.QuoteToASCII(fmt.Sprintf("%s:%d", rel, info.Size())))
			return nil
		})
		slices.Sort(out)
		return strings.Join(out, " "), err
	case "stat": // stat PATH: size and kind
		if err := need(2); err != nil {
			return "", err
		}
		info, err := os.Stat(arg(f[1]))
		if err != nil {
			return "", err
		}
		kind := "file"
		if info.IsDir() {
			kind = "dir"
		}
		return fmt.Sprintf("%d %s", info.Size(), kind), nil
	case "mkfile": // mkfile PATH SIZE: a file of SIZE bytes, byte i = i%251
		if err := need(3); err != nil {
			return "", err
		}
		return "", os.WriteFile(arg(f[1]), pattern(num(f[2])), 0o644)
	case "checkfile": // checkfile PATH SIZE: reads it back and compares with the pattern
		if err := need(3); err != nil {
			return "", err
		}
		b, err := os.ReadFile(arg(f[1]))
		if err != nil {
			return "", err
		}
		if want := pattern(num(f[2])); string(b) != string(want) {
			return "", fmt.Errorf("%s: %d bytes, not the %d-byte pattern", f[1], len(b), len(want))
		}
		return "", nil
	}
	return "", fmt.Errorf("%w: %q", errUsage, f[0])
}

func pattern(n int64) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// handle runs a command on an open file.
func (g *guest) handle(h *os.File, f []string) (string, error) {
	num := func(i int) int64 {
		if i >= len(f) {
			return 0
		}
		n, _ := strconv.ParseInt(f[i], 10, 64)
		return n
	}
	fd := int(h.Fd())
	switch f[0] {
	case "close":
		delete(g.files, f[1])
		return "", h.Close()
	case "fsync":
		return "", h.Sync()
	case "fstat":
		info, err := h.Stat()
		if err != nil {
			return "", err
		}
		return strconv.FormatInt(info.Size(), 10), nil
	case "read": // read H OFF LEN: the bytes read, quoted
		b := make([]byte, num(3))
		n, err := unix.Pread(fd, b, num(2))
		return strconv.QuoteToASCII(string(b[:max(n, 0)])), err
	case "write": // write H OFF DATA: the count written
		if len(f) != 4 {
			return "", fmt.Errorf("%w: write H OFF DATA", errUsage)
		}
		n, err := unix.Pwrite(fd, []byte(arg(f[3])), num(2))
		return strconv.Itoa(n), err
	case "flock": // flock H ex|sh|un: always LOCK_NB, so a conflict is an answer, not a wait
		how := map[string]int{"ex": unix.LOCK_EX, "sh": unix.LOCK_SH, "un": unix.LOCK_UN}[arg(f[2])]
		return "", unix.Flock(fd, how|unix.LOCK_NB)
	case "fcntl": // fcntl H OFF LEN wr|rd|un: F_SETLK
		if len(f) != 5 {
			return "", fmt.Errorf("%w: fcntl H OFF LEN wr|rd|un", errUsage)
		}
		typ := map[string]int16{"wr": unix.F_WRLCK, "rd": unix.F_RDLCK, "un": unix.F_UNLCK}[f[4]]
		lk := unix.Flock_t{Type: typ, Whence: io.SeekStart, Start: num(2), Len: num(3)}
		return "", unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &lk)
	}
	return "", fmt.Errorf("%w: %q", errUsage, f[0])
}
