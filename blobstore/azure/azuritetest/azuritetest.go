package azuritetest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The development storage account every Azurite accepts.
const (
	Account = "devstoreaccount1"
	Key     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// RequireAllEnv names the variable that turns a missing dependency into a
// test failure instead of a skip.
const RequireAllEnv = "BLOBSHARE_REQUIRE_ALL"

// Server is a running Azurite blob, queue or table service.
type Server struct {
	// Endpoint is the service URL, path-style:
	// http://127.0.0.1:<port>/devstoreaccount1.
	Endpoint string
	// Port is the TCP port it listens on.
	Port int
	// Account and Key are the shared-key credentials (Account, Key).
	Account, Key string
	// ConnectionString is the equivalent connection string.
	ConnectionString string
	// Dir is Azurite's workspace (a t.TempDir()).
	Dir string
}

// service is one of Azurite's services: its binary under
// node_modules/.bin, its listen flags and its connection-string key.
type service struct {
	binary, hostFlag, portFlag, endpointKey string
}

var (
	blobService  = service{"azurite-blob", "--blobHost", "--blobPort", "BlobEndpoint"}
	queueService = service{"azurite-queue", "--queueHost", "--queuePort", "QueueEndpoint"}
	tableService = service{"azurite-table", "--tableHost", "--tablePort", "TableEndpoint"}
)

// Start starts Azurite blob for the test and returns it. It skips (or
// fails under BLOBSHARE_REQUIRE_ALL=1) when Azurite cannot be found.
func Start(t testing.TB) *Server {
	t.Helper()
	return startService(t, blobService)
}

// StartQueue starts Azurite's Queue service for the test, as Start does
// the blob service; Endpoint and ConnectionString address the queue
// service.
func StartQueue(t testing.TB) *Server {
	t.Helper()
	return startService(t, queueService)
}

// StartTable starts Azurite's Table service for the test, as Start does
// the blob service; Endpoint and ConnectionString address the table
// service.
func StartTable(t testing.TB) *Server {
	t.Helper()
	return startService(t, tableService)
}

func startService(t testing.TB, svc service) *Server {
	t.Helper()
	bin, err := binary(svc.binary)
	if err != nil {
		missing(t, err)
		return nil
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing(t, fmt.Errorf("azurite needs node: %w", err))
		return nil
	}
	var lastErr error
	for range 3 { // the free port may be taken between probe and listen
		s, err := start(t, bin, svc)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("azuritetest: %v", lastErr)
	return nil
}

func missing(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(RequireAllEnv) == "1" {
		t.Fatalf("azuritetest: %v (%s=1; run `make npm`)", err, RequireAllEnv)
	}
	t.Skipf("azuritetest: %v (run `make npm`)", err)
}

// Binary returns the path of azurite-blob under the module root.
func Binary() (string, error) { return binary(blobService.binary) }

// QueueBinary returns the path of azurite-queue under the module root.
func QueueBinary() (string, error) { return binary(queueService.binary) }

func binary(name string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "integration", "js", "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("azurite not installed: %w", err)
	}
	return bin, nil
}

// mainModule is the module line of blobshare's own go.mod; nested modules
// (integration/rclone) have go.mod files of their own on the way up.
const mainModule = "module github.com/blobshare/blobshare\n"

// ModuleRoot walks up from the working directory to the directory
// holding blobshare's go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte(mainModule)) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lockedBuffer collects Azurite's output for error messages.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 64<<10 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func start(t testing.TB, bin string, svc service) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir := t.TempDir()
	cmd := exec.Command(bin,
		svc.hostFlag, "127.0.0.1", svc.portFlag, strconv.Itoa(port),
		"--location", dir, "--skipApiVersionCheck", "--silent", "--loose",
		"--disableTelemetry")
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-exited
		}
	}
	s := &Server{
		Endpoint: fmt.Sprintf("http://127.0.0.1:%d/%s", port, Account),
		Port:     port,
		Account:  Account,
		Key:      Key,
		Dir:      dir,
	}
	s.ConnectionString = fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;%s=%s;", Account, Key, svc.endpointKey, s.Endpoint)
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := client.Get(s.Endpoint + "?comp=list")
		if err == nil {
			resp.Body.Close()
			break // any HTTP answer (403 without auth) means it is up
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("azurite exited before answering (%v): %s", err, out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("azurite did not answer on port %d within 60s: %s", port, out.String())
		}
	}
	t.Cleanup(stop)
	return s, nil
}
