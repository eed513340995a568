package fs

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestServiceProperties: the document is nil until set, and concurrent
// read-modify-write changes (each appending its own element) all hold,
// as the key lock on the account root makes them one after another.
func TestServiceProperties(t *testing.T) {
	e := newEnv(t)
	doc, err := e.fs.ServiceProperties(ctxBG)
	if err != nil || doc != nil {
		t.Fatalf("ServiceProperties before any set: %q, %v; want nil, nil", doc, err)
	}
	const writers = 8
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := e.fs.UpdateServiceProperties(ctxBG, func(old []byte) ([]byte, error) {
				return append(bytes.Clone(old), fmt.Sprintf("<w%d/>", i)...), nil
			})
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	doc, err = e.fs.ServiceProperties(ctxBG)
	if err != nil {
		t.Fatal(err)
	}
	for i := range writers {
		if !bytes.Contains(doc, fmt.Appendf(nil, "<w%d/>", i)) {
			t.Errorf("document %q lost writer %d's change", doc, i)
		}
	}
	refused := errors.New("refused")
	if err := e.fs.UpdateServiceProperties(ctxBG, func([]byte) ([]byte, error) { return nil, refused }); !errors.Is(err, refused) {
		t.Fatalf("a change that fails: %v, want its error", err)
	}
	if after, _ := e.fs.ServiceProperties(ctxBG); !bytes.Equal(after, doc) {
		t.Fatalf("a failed change altered the document: %q", after)
	}
}
