package fusefs

import (
	"errors"
	"testing"

	"github.com/blobshare/blobshare/locks"
)

func TestParseShareMode(t *testing.T) {
	tests := []struct {
		in      string
		want    locks.ShareMode
		wantErr bool
	}{
		{"read,write,delete", locks.ShareAll, false},
		{"read", locks.ShareRead, false},
		{"Write, Delete", locks.ShareWrite | locks.ShareDelete, false},
		{"none", locks.ShareNone, false},
		{"read,read", locks.ShareRead, false},
		{"", 0, true},
		{"none,read", 0, true},
		{"exclusive", 0, true},
		{"read,", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseShareMode(tt.in)
			if tt.wantErr {
				if !errors.Is(err, locks.ErrInvalidParameter) {
					t.Fatalf("ParseShareMode(%q) = %v, %v; want ErrInvalidParameter", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseShareMode(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
	if DefaultShareMode != locks.ShareAll {
		t.Fatalf("DefaultShareMode = %v, want read,write,delete", DefaultShareMode)
	}
}
