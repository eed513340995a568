package main

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestAzuriteArgs: Azurite's --debug FILE and -d FILE become --debug-log
// FILE; blobshare's --debug switch and other commands are untouched.
func TestAzuriteArgs(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"serve --debug /w/debug.log --blobPort 7777", "serve --debug-log /w/debug.log --blobPort 7777"},
		{"serve -l /w -d /w/debug.log", "serve -l /w --debug-log /w/debug.log"},
		{"serve --debug=/w/d.log", "serve --debug-log=/w/d.log"},
		{"serve --debug --data x", "serve --debug --data x"},
		{"serve --debug", "serve --debug"},
		{"serve -d", "serve --debug"},
		{"serve --debug=true", "serve --debug=true"},
		{"serve --debug true", "serve --debug true"}, // a bool word is not a log file
		{"session --debug x", "session --debug x"},
		{"serve -- --debug x", "serve -- --debug x"},
	} {
		got := strings.Join(azuriteArgs(append([]string{"blobshare"}, strings.Fields(tt.in)...))[1:], " ")
		if got != tt.want {
			t.Errorf("%q → %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestAzuriteFlagsAnswered: every Azurite flag blobshare has no meaning
// for, and every conflict of an alias with blobshare's own flag, is one
// line saying what to do; nothing is created.
func TestAzuriteFlagsAnswered(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--cert", "cert.pem", "--key", "key.pem"}, "--tls-cert FILE --tls-key FILE"},
		{[]string{"--key", "key.pem"}, "the TLS key is --tls-key"},
		{[]string{"--pwd", "secret"}, "PEM, not PFX"},
		{[]string{"--loose"}, "no loose mode"},
		{[]string{"-L"}, "no loose mode"},
		{[]string{"--inMemoryPersistence"}, "--data \"$(mktemp -d)\""},
		{[]string{"--extentMemoryLimit", "100"}, "drop --extentMemoryLimit"},
		{[]string{"--blobKeepAliveTimeout", "5"}, "idle connections"},
		{[]string{"--location", "x"}, "--location is Azurite's name for --data"},
		{[]string{"--blobPort", "7777", "--blob-addr", "127.0.0.1:7777"}, "--blobPort and --blob-addr both set"},
		{[]string{"--queueHost", "0.0.0.0", "--queue-addr", "127.0.0.1:1"}, "--queueHost and --queue-addr both set"},
		{[]string{"--oauth", "basic"}, "--oauth basic needs HTTPS"},
		{[]string{"--oauth", "full"}, "the only level is basic"},
		{[]string{"--tls-cert", "cert.pem"}, "--tls-cert needs --tls-key"},
		{[]string{"--tls-key", "key.pem"}, "--tls-key needs --tls-cert"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := append([]string{"serve", "--data", data}, tt.args...)
			c := exec.Command(blobshareBinary(t), args...)
			var stderr bytes.Buffer
			c.Stderr = &stderr
			if err := c.Run(); err == nil {
				t.Fatal("serve succeeded")
			}
			if msg := stderr.String(); !strings.Contains(msg, tt.want) || strings.Count(msg, "\n") != 1 {
				t.Errorf("stderr %q, want one line with %q", msg, tt.want)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("serve created %s before refusing", data)
			}
		})
	}
}

// TestAzuriteCommandLine: an Azurite command line (-l, -d FILE,
// --blobHost/--blobPort, --queuePort, the accepted switches) serves: the
// data is in the -l directory, the endpoints on the ports asked, and the
// debug log file receives the failed request.
func TestAzuriteCommandLine(t *testing.T) {
	work := t.TempDir()
	debugLog := filepath.Join(work, "debug.log")
	c := exec.Command(blobshareBinary(t), "serve", "-l", work, "-d", debugLog,
		"--blobHost", "127.0.0.1", "--blobPort", "0", "--queuePort", "0", "--addr", "127.0.0.1:0", "--smb", "off",
		"--skipApiVersionCheck", "--disableProductStyleUrl", "--disableTelemetry", "--silent")
	stderr := newLineSignal(`msg="blobshare serving"`)
	c.Stderr = stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			c.Process.Kill()
			<-exited
		}
	})
	stderr.wait(t, exited)
	m := regexp.MustCompile(` blob=(http://127\.0\.0\.1:\d+/devstoreaccount1) `).FindStringSubmatch(stderr.String())
	if m == nil || strings.HasSuffix(m[1], ":0/devstoreaccount1") {
		t.Fatalf("no blob URL on a chosen port in:\n%s", stderr)
	}
	if !regexp.MustCompile(` queue=http://127\.0\.0\.1:\d+/devstoreaccount1 `).MatchString(stderr.String()) {
		t.Fatalf("no queue URL in:\n%s", stderr)
	}
	resp, err := http.Get(m[1] + "?comp=list")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an unsigned List Containers: %d", resp.StatusCode)
	}
	c.Process.Signal(os.Interrupt)
	if err := <-exited; err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr)
	}
	stopped = true
	if _, err := os.Stat(filepath.Join(work, "blobshare.db")); err != nil {
		t.Errorf("-l did not hold the data: %v", err)
	}
	log, err := os.ReadFile(debugLog)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), `msg="request failed"`) || !strings.Contains(string(log), "status=401") {
		t.Errorf("the -d log lacks the failed request:\n%s", log)
	}
	if strings.Contains(stderr.String(), "level=DEBUG") {
		t.Errorf("standard error got debug lines without --debug:\n%s", stderr)
	}
}

// TestBusyPortNamesItsFlag: a port in use is one line naming the flag
// (or Azurite alias) that chose it and suggesting the usual cause.
func TestBusyPortNamesItsFlag(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	base := []string{"serve", "--addr", "127.0.0.1:0", "--smb", "off", "--blob-addr", "127.0.0.1:0", "--queue-addr", "127.0.0.1:0"}
	for _, tt := range []struct {
		set  []string
		flag string
	}{
		{[]string{"--addr", addr}, "addr"},
		{[]string{"--blob-addr", addr}, "blob-addr"},
		{[]string{"--queue-addr", addr}, "queue-addr"},
		{[]string{"--smb", addr}, "smb"},
	} {
		t.Run(tt.flag, func(t *testing.T) {
			args := slices.Clone(base)
			i := slices.Index(args, tt.set[0])
			args[i+1] = tt.set[1]
			args = append(args, "--data", t.TempDir())
			err := runApp(t, args...)
			want := "--" + tt.flag + " " + addr + ": the port is in use (another blobshare? pick another --" + tt.flag + ")"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got %v, want %q", err, want)
			}
		})
	}
	t.Run("blobPort", func(t *testing.T) {
		err := runApp(t, "serve", "--addr", "127.0.0.1:0", "--smb", "off", "--queue-addr", "off",
			"--blobPort", port, "--data", t.TempDir())
		want := "--blobPort " + addr + ": the port is in use (another blobshare? pick another --blobPort)"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want %q", err, want)
		}
	})
}
