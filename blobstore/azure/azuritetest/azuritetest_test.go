package azuritetest

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStartAnswers(t *testing.T) {
	s := Start(t)
	resp, err := http.Get(s.Endpoint + "?comp=list")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Unauthenticated listing is refused, but by Azurite itself.
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("GET %s?comp=list: %s, want 403 from Azurite", s.Endpoint, resp.Status)
	}
}

// TestStopsOnCleanup: when the test that started Azurite ends, nothing
// listens on its port any more (the whole process group was stopped).
func TestStopsOnCleanup(t *testing.T) {
	var endpoint string
	t.Run("start", func(t *testing.T) {
		endpoint = Start(t).Endpoint
	})
	if t.Skipped() || endpoint == "" {
		t.Skip("azurite did not start")
	}
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(endpoint + "?comp=list")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("azurite still answers on %s after its test ended", endpoint)
	}
}

// TestStartQueueAnswers: StartQueue's endpoint is Azurite's Queue
// service (an anonymous listing is refused by it, not by a blob server).
func TestStartQueueAnswers(t *testing.T) {
	s := StartQueue(t)
	resp, err := http.Get(s.Endpoint + "?comp=list")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("GET %s?comp=list: %s, want 403 from Azurite", s.Endpoint, resp.Status)
	}
	if !strings.Contains(s.ConnectionString, "QueueEndpoint="+s.Endpoint) {
		t.Fatalf("connection string %q does not name the queue endpoint", s.ConnectionString)
	}
}

func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("ModuleRoot() = %s without go.mod: %v", root, err)
	}
	t.Chdir(t.TempDir())
	if _, err := ModuleRoot(); err == nil {
		t.Fatal("ModuleRoot found a go.mod above a fresh temp dir")
	}
}
