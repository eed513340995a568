package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	app := newApp()
	var out bytes.Buffer
	app.Writer = &out
	if err := app.Run([]string{"blobshare", "version"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "blobshare ") {
		t.Fatalf("version printed %q", out.String())
	}
}

func TestUnknownCommandIsAnError(t *testing.T) {
	app := newApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	if err := app.Run([]string{"blobshare", "no-such-command"}); err == nil {
		t.Fatal("unknown command succeeded")
	}
}
