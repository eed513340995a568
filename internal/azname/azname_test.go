package azname

import (
	"errors"
	"strings"
	"testing"
)

func TestDNSLabel(t *testing.T) {
	for _, tc := range []struct {
		name string
		want error
	}{
		{"abc", nil},
		{"a-b-c", nil},
		{"0ab", nil},
		{strings.Repeat("a", 63), nil},
		{"ab", ErrLength},
		{strings.Repeat("a", 64), ErrLength},
		{"", ErrLength},
		{"-ab", ErrCharacter},
		{"ab-", ErrCharacter},
		{"a--b", ErrCharacter},
		{"aBc", ErrCharacter},
		{"a_c", ErrCharacter},
		{"a.c", ErrCharacter},
		{"ab\xff", ErrCharacter},
	} {
		err := DNSLabel("share name", tc.name)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("DNSLabel(%q) = %v, want %v", tc.name, err, tc.want)
		}
	}
	if got := DNSLabel("share name", "x").Error(); got != `share name "x" must have 3-63 characters` {
		t.Errorf("message %q", got)
	}
}
