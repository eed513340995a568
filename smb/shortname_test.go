package smb

import (
	"strings"
	"testing"
)

func TestShortName(t *testing.T) {
	for _, tt := range []struct {
		name      string
		want      string // "" when only the shape is checked
		generated bool
	}{
		{"README.TXT", "README.TXT", false},
		{"bufsize.txt", "bufsize.txt", false},
		{"A", "A", false},
		{"12345678.123", "12345678.123", false},
		{"123456789.txt", "", true},
		{"a.html", "", true},
		{"two.dots.txt", "", true},
		{"with space.txt", "", true},
		{".profile", "", true},
		{"torture_smb2_getfinfo_access", "", true},
		{"ünïcode.doc", "", true},
		{"x.", "", true},
	} {
		got, generated := shortName(tt.name)
		if generated != tt.generated {
			t.Errorf("shortName(%q) generated = %v, want %v", tt.name, generated, tt.generated)
		}
		if tt.want != "" && got != tt.want {
			t.Errorf("shortName(%q) = %q, want %q", tt.name, got, tt.want)
		}
		if !is8dot3(got) || strings.ToUpper(got) != got && generated {
			t.Errorf("shortName(%q) = %q: not an upper-case 8.3 name", tt.name, got)
		}
		if again, _ := shortName(strings.ToUpper(tt.name)); generated && again != got {
			t.Errorf("shortName is not case-blind: %q gives %q, its upper case %q", tt.name, got, again)
		}
	}
	if a, _ := shortName("document-one.txt"); !strings.HasPrefix(a, "DO") || !strings.HasSuffix(a, "~1.TXT") {
		t.Errorf("shortName(document-one.txt) = %q, want DO????~1.TXT", a)
	}
	if a, _ := shortName("document-one.txt"); a == func() string { b, _ := shortName("document-two.txt"); return b }() {
		t.Errorf("document-one.txt and document-two.txt share the short name %q", a)
	}
}
