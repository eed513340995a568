package azuritetest

import (
	"net/http"
	"testing"
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
