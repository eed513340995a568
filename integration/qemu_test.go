package integration

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/integration/servetest"
)

// The Linux kernel's SMB client (cifs.ko) is tested in a QEMU guest booted
// with Debian's kernel, as this machine's kernel lacks the module: `make
// cifs` extracts linux-image-amd64 and busybox-static (apt-get download,
// dpkg-deb -x: nothing is installed into the host, so no bootloader or
// initramfs hook runs) into the guest root below, and installs
// qemu-system-x86.

// guestRootEnv names the directory holding the extracted packages; by
// default it is blobshare/cifs-guest under the user's cache directory
// (the Makefile's CIFS_ROOT).
const guestRootEnv = "BLOBSHARE_CIFS_ROOT"

// guestKit is what a guest boots from: the kernel, its modules and busybox.
type guestKit struct {
	root    string // the extracted packages
	kernel  string // boot/vmlinuz-VERSION
	modDir  string // lib/modules/VERSION
	busybox string
	qemu    string
}

// findGuestKit finds the extracted packages and QEMU, or says what is
// missing.
func findGuestKit() (*guestKit, error) {
	root := os.Getenv(guestRootEnv)
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("no cache directory for the guest kernel: %w", err)
		}
		root = filepath.Join(cache, "blobshare", "cifs-guest")
	}
	k := &guestKit{root: root, busybox: filepath.Join(root, "bin", "busybox")}
	kernels, _ := filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*"))
	if len(kernels) != 1 {
		return nil, fmt.Errorf("want one kernel in %s/boot, found %d (make cifs extracts linux-image-amd64 there)", root, len(kernels))
	}
	k.kernel = kernels[0]
	k.modDir = filepath.Join(root, "lib", "modules", strings.TrimPrefix(filepath.Base(k.kernel), "vmlinuz-"))
	if _, err := os.Stat(k.busybox); err != nil {
		return nil, fmt.Errorf("busybox (make cifs extracts busybox-static): %w", err)
	}
	q, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		return nil, fmt.Errorf("QEMU (make cifs installs qemu-system-x86): %w", err)
	}
	k.qemu = q
	return k, nil
}

// kmod is one loadable module of the guest kernel.
type kmod struct {
	path    string   // relative to the modules directory
	depends []string // modinfo depends=
	softdep []string // modinfo softdep= (module names or aliases)
	aliases []string // modinfo alias=
}

// modinfo reads a module's .modinfo section (NUL-separated key=value).
func modinfo(path string) (*kmod, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", path, err)
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, fmt.Errorf("module %s: no .modinfo section", path)
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", path, err)
	}
	m := &kmod{}
	for _, kv := range bytes.Split(data, []byte{0}) {
		k, v, ok := strings.Cut(string(kv), "=")
		if !ok {
			continue
		}
		switch k {
		case "depends":
			for _, d := range strings.Split(v, ",") {
				if d != "" {
					m.depends = append(m.depends, modName(d))
				}
			}
		case "softdep":
			for _, d := range strings.Fields(v) {
				if d != "pre:" && d != "post:" {
					m.softdep = append(m.softdep, d)
				}
			}
		case "alias":
			m.aliases = append(m.aliases, v)
		}
	}
	return m, nil
}

// modName is a module's canonical name: '-' and '_' are the same to the
// kernel.
func modName(s string) string { return strings.ReplaceAll(s, "-", "_") }

// moduleClosure lists the module files to load, in load order, for the
// modules and algorithms wanted: each one's depends= come first, softdeps
// are followed, and a name is resolved as a module name, then as a crypto
// alias ("crypto-NAME" or NAME); names built into the kernel
// (modules.builtin.modinfo) need nothing.
func moduleClosure(modDir string, want []string) ([]string, error) {
	byName := map[string]string{} // module name → path relative to modDir
	err := filepath.WalkDir(filepath.Join(modDir, "kernel"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".ko") {
			rel, _ := filepath.Rel(modDir, p)
			byName[modName(strings.TrimSuffix(d.Name(), ".ko"))] = rel
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("modules of %s: %w", modDir, err)
	}
	builtin := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(modDir, "modules.builtin.modinfo")); err == nil {
		for _, kv := range bytes.Split(b, []byte{0}) {
			mod, rest, _ := strings.Cut(string(kv), ".")
			builtin[modName(mod)] = true
			if a, ok := strings.CutPrefix(rest, "alias="); ok {
				builtin[a] = true
			}
		}
	}
	// Crypto aliases: only the crypto directories are read (a few hundred
	// small files), not every module of the kernel.
	alias := map[string]string{}
	info := map[string]*kmod{}
	for name, rel := range byName {
		if !strings.HasPrefix(rel, "kernel/crypto/") && !strings.HasPrefix(rel, "kernel/arch/x86/crypto/") {
			continue
		}
		m, err := modinfo(filepath.Join(modDir, rel))
		if err != nil {
			return nil, err
		}
		info[name] = m
		for _, a := range m.aliases {
			// The generic implementation wins over an accelerated one
			// (aesni_intel needs a CPU feature TCG lacks).
			if prev, ok := alias[a]; !ok || strings.Contains(name, "generic") && !strings.Contains(prev, "generic") {
				alias[a] = name
			}
		}
	}
	var order []string
	done := map[string]bool{}
	var visit func(name string, soft bool) error
	visit = func(want string, soft bool) error {
		name := modName(want)
		if _, ok := byName[name]; !ok {
			if builtin[name] || builtin[want] || builtin["crypto-"+want] {
				return nil
			}
			a, ok := alias["crypto-"+want]
			if !ok {
				a, ok = alias[want]
			}
			if !ok && soft {
				return nil // as modprobe, a softdep that names nothing loadable is left out
			}
			if !ok {
				return fmt.Errorf("module or algorithm %q: neither a module of %s nor built in", want, modDir)
			}
			name = a
		}
		if done[name] {
			return nil
		}
		done[name] = true
		m := info[name]
		if m == nil {
			var err error
			if m, err = modinfo(filepath.Join(modDir, byName[name])); err != nil {
				return err
			}
		}
		for _, d := range m.depends {
			if err := visit(d, false); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		for _, d := range m.softdep {
			if err := visit(d, true); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		order = append(order, byName[name])
		return nil
	}
	for _, w := range want {
		if err := visit(w, false); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// cpioWriter writes a cpio archive in the "newc" format, the one the
// kernel unpacks as an initramfs.
type cpioWriter struct {
	w   io.Writer
	ino int
	err error
}

// entry writes one member: mode holds the file type bits (0o100000 file,
// 0o040000 directory, 0o120000 symlink, 0o020000 character device).
func (c *cpioWriter) entry(name string, mode uint32, data []byte, rdevMajor, rdevMinor int) {
	if c.err != nil {
		return
	}
	c.ino++
	nlink := 1
	if mode&0o170000 == 0o040000 {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdevMajor, rdevMinor, len(name)+1, 0)
	var b bytes.Buffer
	b.WriteString(hdr)
	b.WriteString(name)
	b.WriteByte(0)
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
	b.Write(data)
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
	_, c.err = c.w.Write(b.Bytes())
}

func (c *cpioWriter) dir(name string) { c.entry(name, 0o040755, nil, 0, 0) }
func (c *cpioWriter) file(name string, data []byte, x bool) {
	c.entry(name, 0o100644|boolMode(x), data, 0, 0)
}
func (c *cpioWriter) symlink(name, target string) { c.entry(name, 0o120777, []byte(target), 0, 0) }

func boolMode(x bool) uint32 {
	if x {
		return 0o111
	}
	return 0
}

func (c *cpioWriter) close() error {
	c.entry("TRAILER!!!", 0, nil, 0, 0)
	return c.err
}

// guestModules are the modules the guest loads: the SMB client, the
// network card, and what cifs asks the kernel for at mount time, which
// modprobe would load on a full system: the algorithms (GCM needs GHASH
// and CTR, which neither cifs nor gcm names as a dependency) and the UTF-8
// character set (without it names outside Latin-1 turn into '?').
var guestModules = []string{"virtio_pci", "virtio_net", "cifs", "ghash", "ctr", "ccm", "gcm", "cmac", "nls_utf8"}

// buildInitramfs writes the guest's initramfs to path: busybox and its
// applets, the modules in load order, agent (the static cifsguest
// program) and an /init that loads the modules, brings up the network
// card as QEMU's user network expects (10.0.2.15/24) and hands the second
// serial port to the agent.
func buildInitramfs(k *guestKit, agent, path string) error {
	mods, err := moduleClosure(k.modDir, guestModules)
	if err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("initramfs: %w", err)
	}
	defer out.Close()
	bw := bufio.NewWriterSize(out, 1<<20)
	c := &cpioWriter{w: bw}
	for _, d := range []string{"bin", "sbin", "dev", "proc", "sys", "mnt", "tmp", "lib", "lib/modules"} {
		c.dir(d)
	}
	c.entry("dev/console", 0o020600, nil, 5, 1)
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil && c.err == nil {
			c.err = fmt.Errorf("initramfs: %w", err)
		}
		return b
	}
	c.file("bin/busybox", read(k.busybox), true)
	for _, applet := range []string{"sh", "mount", "insmod", "ifconfig", "cat", "echo", "dmesg", "poweroff"} {
		c.symlink("bin/"+applet, "busybox")
	}
	c.file("cifsguest", read(agent), true)
	var script strings.Builder
	script.WriteString("#!/bin/sh\nmount -t proc proc /proc\nmount -t sysfs sys /sys\nmount -t devtmpfs dev /dev\n")
	for i, m := range mods {
		name := fmt.Sprintf("lib/modules/%02d-%s", i, filepath.Base(m))
		c.file(name, read(filepath.Join(k.modDir, m)), false)
		fmt.Fprintf(&script, "insmod /%s || echo 'guest: insmod %s failed'\n", name, m)
	}
	script.WriteString("ifconfig lo 127.0.0.1 up\nifconfig eth0 10.0.2.15 netmask 255.255.255.0 up || echo 'guest: no eth0'\n")
	script.WriteString("echo 'guest: init done'\nexec /cifsguest serve /dev/ttyS1\n")
	c.file("init", []byte(script.String()), true)
	if err := c.close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("initramfs: %w", err)
	}
	return out.Close()
}

// unpackKernel writes the ELF kernel inside a bzImage (Debian's is
// xz-compressed) to dir and returns its path. QEMU boots that ELF straight
// at its PVH entry point: under TCG that saves the real-mode setup and the
// decompression, 20 of the 25 s a boot took on a loaded 2-core machine.
func unpackKernel(bzImage, dir string) (string, error) {
	b, err := os.ReadFile(bzImage)
	if err != nil {
		return "", fmt.Errorf("kernel: %w", err)
	}
	i := bytes.Index(b, []byte("\xfd7zXZ\x00"))
	if i < 0 {
		return "", fmt.Errorf("kernel %s: no xz stream", bzImage)
	}
	out := filepath.Join(dir, "vmlinux")
	f, err := os.Create(out)
	if err != nil {
		return "", fmt.Errorf("kernel: %w", err)
	}
	defer f.Close()
	xz := exec.Command("xz", "-dc")
	xz.Stdin, xz.Stdout = bytes.NewReader(b[i:]), f
	// The bzImage goes on after the stream, so xz ends with "trailing
	// garbage"; the ELF check below says whether the kernel came out whole.
	xzErr := xz.Run()
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("kernel: %w", err)
	}
	e, err := elf.Open(out)
	if err != nil {
		return "", fmt.Errorf("unpacking %s (xz: %v): %w", bzImage, xzErr, err)
	}
	defer e.Close()
	for _, p := range e.Progs {
		if p.Type == elf.PT_NOTE {
			return out, nil // the PVH entry is an ELF note
		}
	}
	return "", fmt.Errorf("unpacked %s has no notes (no PVH entry point)", bzImage)
}

// kvmOpens reports whether /dev/kvm opens for reading and writing. That
// is not enough: under some nested virtualisation KVM opens, prints the
// boot loader's first line and then runs nothing, so bootGuest gives a KVM
// guest kvmProbe to answer (it takes about 2 s when KVM works) before it
// falls back to TCG (software emulation, about 10 s on a loaded 2-core
// machine).
func kvmOpens() bool {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

const kvmProbe = 15 * time.Second

// kvmFirstLine bounds the wait for a KVM guest's first console line (the
// kernel's first message, well under a second after QEMU starts when KVM
// works); a guest silent that long is not waited for further.
const kvmFirstLine = 3 * time.Second

// vm is a booted guest: commands go to its agent over the second serial
// port (QEMU's standard input and output), the console (kernel and init
// messages) to a file.
type vm struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Scanner
	console string
	stderr  *servetest.Buffer
	done    chan struct{}
	cancel  context.CancelFunc
}

// guestSMB is where the guest reaches the SMB endpoint: the README's port
// on an address of QEMU's user network.
const guestSMB = "10.0.2.100:10445"

// bootGuest builds the agent and the initramfs and boots the guest, its
// network restricted to one address, guestSMB, which QEMU forwards
// (through the agent's relay mode, one process a connection) to smbAddr
// on the host's loopback. It returns once the agent answers "ready".
func bootGuest(t *testing.T, k *guestKit, smbAddr string) *vm {
	t.Helper()
	start := time.Now()
	dir := t.TempDir()
	agent := filepath.Join(dir, "cifsguest")
	build := exec.Command("go", "build", "-o", agent, "./cifsguest")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the guest agent: %v\n%s", err, out)
	}
	initrd := filepath.Join(dir, "initramfs.cpio")
	if err := buildInitramfs(k, agent, initrd); err != nil {
		t.Fatal(err)
	}
	kernel, err := unpackKernel(k.kernel, dir)
	if err != nil {
		t.Logf("booting the compressed kernel (slower under TCG): %v", err)
		kernel = k.kernel
	}
	t.Logf("guest agent, initramfs and kernel ready in %v", time.Since(start).Round(100*time.Millisecond))
	start = time.Now()
	if kvmOpens() {
		g := startQEMU(t, k, kernel, "kvm", dir, initrd, agent, smbAddr)
		if g.waitConsole(kvmFirstLine) && g.readyWithin(kvmProbe) {
			t.Logf("guest booted (kvm) in %v", time.Since(start).Round(100*time.Millisecond))
			return g
		}
		g.cancel()
		<-g.done
		t.Logf("the guest did not start under KVM: booting under TCG")
		start = time.Now()
	}
	g := startQEMU(t, k, kernel, "tcg", dir, initrd, agent, smbAddr)
	if line := g.line(); line != "ready" {
		t.Fatalf("guest did not start its agent: %q", line)
	}
	t.Logf("guest booted (tcg) in %v", time.Since(start).Round(100*time.Millisecond))
	return g
}

func startQEMU(t *testing.T, k *guestKit, kernel, accel, dir, initrd, agent, smbAddr string) *vm {
	t.Helper()
	console := filepath.Join(dir, "console-"+accel+".log")
	args := []string{
		"-accel", accel, "-m", "512", "-smp", "1", "-nodefaults", "-no-reboot",
		"-display", "none", "-monitor", "none",
		"-kernel", kernel, "-initrd", initrd,
		"-append", "console=ttyS0 earlyprintk=ttyS0 panic=-1 loglevel=6",
		"-serial", "file:" + console, "-serial", "stdio",
		// restrict=on: the guest reaches nothing but the guestfwd target.
		"-netdev", "user,id=n,restrict=on,guestfwd=tcp:" + guestSMB + "-cmd:" + agent + " relay " + smbAddr,
		"-device", "virtio-net-pci,netdev=n",
	}
	if accel == "kvm" {
		args = append(args, "-cpu", "host")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cmd := exec.CommandContext(ctx, k.qemu, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	g := &vm{t: t, cmd: cmd, in: in, out: bufio.NewScanner(pr), console: console, stderr: &servetest.Buffer{},
		done: make(chan struct{}), cancel: cancel}
	cmd.Stderr = g.stderr
	g.out.Buffer(make([]byte, 1<<20), 1<<20)
	if err := cmd.Start(); err != nil {
		t.Fatalf("qemu: %v", err)
	}
	go func() {
		cmd.Wait()
		close(g.done)
	}()
	t.Cleanup(func() {
		g.stop()
		if t.Failed() {
			g.logConsole()
			if s := g.stderr.String(); s != "" {
				t.Logf("qemu stderr:\n%s", s)
			}
		}
	})
	return g
}

// waitConsole reports whether the guest wrote to its console within d.
func (g *vm) waitConsole(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(g.console); err == nil && fi.Size() > 0 {
			return true
		}
		select {
		case <-g.done:
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return false
}

// readyWithin reports whether the agent said "ready" within d.
func (g *vm) readyWithin(d time.Duration) bool {
	ready := make(chan bool, 1)
	go func() {
		ok := g.out.Scan() && strings.TrimSpace(g.out.Text()) == "ready"
		ready <- ok
	}()
	select {
	case ok := <-ready:
		return ok
	case <-time.After(d):
		g.cancel() // the reader ends with QEMU's output
		<-ready
		return false
	}
}

// stop closes the guest's input and waits for QEMU, killing it after 30 s
// (it powers off by itself after "poweroff").
func (g *vm) stop() {
	g.in.Close()
	select {
	case <-g.done:
	case <-time.After(30 * time.Second):
		g.cancel()
		<-g.done
	}
	g.cancel()
}

// line reads the agent's next line (skipping anything before its first
// answer the port may carry).
func (g *vm) line() string {
	g.t.Helper()
	for g.out.Scan() {
		if l := strings.TrimRight(g.out.Text(), "\r"); l != "" {
			return l
		}
	}
	g.t.Fatalf("guest agent: no answer (%v); QEMU exited", g.out.Err())
	return ""
}

// on is g reporting to t (a subtest).
func (g *vm) on(t *testing.T) *vm {
	c := *g
	c.t = t
	return &c
}

// do sends one command and returns the agent's answer.
func (g *vm) do(format string, args ...any) string {
	g.t.Helper()
	cmd := fmt.Sprintf(format, args...)
	if _, err := fmt.Fprintln(g.in, cmd); err != nil {
		g.t.Fatalf("guest %q: %v", cmd, err)
	}
	return g.line()
}

// expect sends a command and fails the test unless the answer is want.
func (g *vm) expect(want, format string, args ...any) {
	g.t.Helper()
	if got := g.do(format, args...); got != want {
		g.t.Errorf("guest %q = %q, want %q", fmt.Sprintf(format, args...), got, want)
	}
}

// logConsole logs the guest console's end (kernel and cifs messages).
func (g *vm) logConsole() {
	b, err := os.ReadFile(g.console)
	if err != nil {
		return
	}
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	g.t.Logf("guest console (end):\n%s", b)
}

// poweroff stops the guest and waits for QEMU to exit.
func (g *vm) poweroff() error {
	if _, err := fmt.Fprintln(g.in, "poweroff"); err != nil {
		return err
	}
	select {
	case <-g.done:
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("QEMU still running 30 s after poweroff")
	}
}
