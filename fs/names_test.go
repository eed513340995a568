package fs

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestValidateName decides the edge cases of Azure Files' naming rules
// ("Naming and referencing shares, directories, files, and metadata"):
// names are at most 255 characters, counted as Windows counts them (UTF-16
// code units: é is one, an emoji two; bytes do not matter); `" \ / : | <
// > * ?` and control characters are refused; so are private-use code
// points (the rules name U+E000); the reserved device names are refused
// as whole names in any case ("CON", "nul"), not with an extension
// ("CON.txt"), because the rules list bare names.
func TestValidateName(t *testing.T) {
	emoji := "😀" // U+1F600: 4 UTF-8 bytes, 2 UTF-16 code units
	tests := []struct {
		name string
		want error // nil: valid
	}{
		{"a.txt", nil},
		{"with space", nil},
		{"ünïcödé", nil},
		{"trailing.", nil},
		{" leading space", nil},
		{"CONSOLE", nil},
		{"CON.txt", nil},
		{"nul.tar.gz", nil},
		{"COM10", nil},
		{"LPT0", nil},
		{"a\u00a0b", nil},      // no-break space is an ordinary character
		{"tab\u200bzero", nil}, // so is a zero-width space
		{strings.Repeat("x", 255), nil},
		{strings.Repeat("é", 255), nil},         // 510 bytes, 255 characters
		{strings.Repeat(emoji, 127) + "x", nil}, // 255 UTF-16 units
		{"", ErrInvalidName},
		{".", ErrInvalidName},
		{"..", ErrInvalidName},
		{"a/b", ErrInvalidName},
		{`a\b`, ErrInvalidName},
		{"a:b", ErrInvalidName}, // an alternate data stream on Windows
		{"a|b", ErrInvalidName},
		{"a<b", ErrInvalidName},
		{"a>b", ErrInvalidName},
		{"a*b", ErrInvalidName},
		{"a?b", ErrInvalidName},
		{`a"b`, ErrInvalidName},
		{"a\x00b", ErrInvalidName},
		{"a\x01b", ErrInvalidName},
		{"a\x1fb", ErrInvalidName},
		{"a\x7fb", ErrInvalidName},
		{"a\ue000b", ErrInvalidName},
		{"a\uf8ffb", ErrInvalidName},
		{"CON", ErrInvalidName},
		{"con", ErrInvalidName},
		{"nul", ErrInvalidName},
		{"Aux", ErrInvalidName},
		{"PRN", ErrInvalidName},
		{"CLOCK$", ErrInvalidName},
		{"COM1", ErrInvalidName},
		{"lpt9", ErrInvalidName},
		{string([]byte{0xff, 0xfe}), ErrInvalidName},
		{"\xed\xa0\x80", ErrInvalidName}, // an encoded surrogate is not UTF-8
		{strings.Repeat("x", 256), ErrNameTooLong},
		{strings.Repeat("é", 256), ErrNameTooLong},
		{strings.Repeat(emoji, 128), ErrNameTooLong}, // 128 characters, 256 UTF-16 units
	}
	for _, tt := range tests {
		err := ValidateName(tt.name)
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("ValidateName(%q) = %v, want %v", tt.name, err, tt.want)
		}
		if errors.Is(err, ErrNameTooLong) && !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateName(%q): a too-long name must also match ErrInvalidName", tt.name)
		}
	}
}

// TestValidatePath: depth and total length (2048 characters below the
// share, slashes included, in UTF-16 units) and every component.
func TestValidatePath(t *testing.T) {
	comp := strings.Repeat("x", 255)
	deep := func(n int) []string { return strings.Split(strings.Repeat("d/", n-1)+"d", "/") }
	tests := []struct {
		name  string
		parts []string
		want  error
	}{
		{"root", nil, nil},
		{"250 deep", deep(250), nil},
		{"251 deep", deep(251), ErrInvalidName},
		// 7×255 + 252 + 1 + 1 characters and 9 slashes make 2048.
		{"2048 characters", append(slicesRepeat(comp, 7), strings.Repeat("x", 252), "x", "x"), nil},
		{"2049 characters", append(slicesRepeat(comp, 7), strings.Repeat("x", 253), "x", "x"), ErrNameTooLong},
		{"2048 with é", append(slicesRepeat(strings.Repeat("é", 255), 7), strings.Repeat("é", 252), "é", "é"), nil},
		{"2049 with é", append(slicesRepeat(strings.Repeat("é", 255), 7), strings.Repeat("é", 253), "é", "é"), ErrNameTooLong},
		{"bad component", []string{"ok", "a:b"}, ErrInvalidName},
		{"empty component", []string{"a", "", "b"}, ErrInvalidName},
	}
	for _, tt := range tests {
		err := ValidatePath(tt.parts)
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%s: ValidatePath = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func slicesRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestValidateShareName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"abc", true}, {"my-share-1", true}, {"123", true}, {strings.Repeat("a", 63), true},
		{"ab", false}, {strings.Repeat("a", 64), false}, {"Abc", false}, {"-abc", false}, {"abc-", false},
		{"a--b", false}, {"a_b", false}, {"a.b", false}, {"shäre", false}, {"", false},
	}
	for _, tt := range tests {
		if err := ValidateShareName(tt.name); (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateShareName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

// TestAttributes: one list of keywords serves FileREST ('|', rendered
// " | ") and the session (',' too); keywords are case-insensitive, None is
// the empty set and stands alone, empty and unknown keywords are refused.
func TestAttributes(t *testing.T) {
	tests := []struct {
		in, seps string
		want     Attributes
		str      string
	}{
		{"None", "|", 0, "None"},
		{"none", "|", 0, "None"},
		{"ReadOnly|Archive", "|", AttrReadOnly | AttrArchive, "ReadOnly|Archive"},
		{" archive | readonly ", "|", AttrReadOnly | AttrArchive, "ReadOnly|Archive"},
		{"readonly, hidden ,SYSTEM", ",|", AttrReadOnly | AttrHidden | AttrSystem, "ReadOnly|Hidden|System"},
		{"Directory", "|", AttrDirectory, "Directory"},
		{"Temporary|Offline|NotContentIndexed|NoScrubData", "|", AttrTemporary | AttrOffline | AttrNotContentIndexed | AttrNoScrubData, "Temporary|Offline|NotContentIndexed|NoScrubData"},
	}
	for _, tt := range tests {
		got, err := ParseAttributes(tt.in, tt.seps)
		if err != nil || got != tt.want || got.String() != tt.str {
			t.Errorf("ParseAttributes(%q, %q) = %v (%s), %v; want %v (%s)", tt.in, tt.seps, got, got, err, tt.want, tt.str)
		}
	}
	for _, bad := range []struct{ in, seps string }{
		{"", "|"}, {"Bogus", "|"}, {"ReadOnly|Nope", "|"}, {"ReadOnly||Hidden", "|"}, {"ReadOnly|", "|"},
		{"ReadOnly,Hidden", "|"}, // FileREST takes '|' only
		{"None|ReadOnly", "|"}, {"readonly | none", "|"}, {"None,Hidden", ",|"},
	} {
		if _, err := ParseAttributes(bad.in, bad.seps); !errors.Is(err, ErrInvalidArg) {
			t.Errorf("ParseAttributes(%q, %q) = %v, want ErrInvalidArg", bad.in, bad.seps, err)
		}
	}
	if got := (AttrArchive | AttrReadOnly).Format(" | "); got != "ReadOnly | Archive" {
		t.Errorf("Format = %q", got)
	}
}

// TestETagFormat: etagOf renders what fmt's "%06X%010X" did, ETags clients
// may have stored included.
func TestETagFormat(t *testing.T) {
	for _, c := range []struct {
		id      FileID
		version uint64
	}{{0, 0}, {1, 1}, {0xABCDEF, 0x123456789A}, {0x1234567, 0xFFFFFFFFFFF}, {^FileID(0), ^uint64(0)}} {
		want := fmt.Sprintf("\"0x8DE%06X%010X\"", uint64(c.id), c.version)
		if got := etagOf(c.id, c.version); got != want {
			t.Errorf("etagOf(%d, %d) = %s, want %s", c.id, c.version, got, want)
		}
	}
}
