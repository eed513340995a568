package acl

import (
	"strings"
	"testing"
	"time"
)

// TestValidate runs each service's rules over the same documents: the
// bounds every service shares, and what each adds.
func TestValidate(t *testing.T) {
	id := func(name, start, expiry, perm string) SignedIdentifier {
		return SignedIdentifier{ID: name, Start: start, Expiry: expiry, Permission: perm}
	}
	six := make([]SignedIdentifier, 6)
	for i := range six {
		six[i] = id(string(rune('a'+i)), "", "", "r")
	}
	long := strings.Repeat("é", 64) // 64 characters, 128 bytes
	rules := map[string]Rules{"share": ShareRules, "container": ContainerRules, "queue": QueueRules, "table": TableRules}
	for _, c := range []struct {
		name string
		ids  []SignedIdentifier
		// want: the Problem per service (0: accepted), in the order
		// share, container, queue, table.
		want [4]Problem
		perm string // the permission stored, when accepted by share
	}{
		{"none", nil, [4]Problem{}, ""},
		{"five", six[:5], [4]Problem{}, "r"},
		{"six", six, [4]Problem{TooMany, TooMany, TooMany, TooMany}, ""},
		{"id of 64 characters", []SignedIdentifier{id(long, "", "", "r")}, [4]Problem{}, "r"},
		{"id of 65 characters", []SignedIdentifier{id(long+"x", "", "", "r")}, [4]Problem{IDTooLong, IDTooLong, IDTooLong, IDTooLong}, ""},
		{"empty id", []SignedIdentifier{id("", "", "", "r")}, [4]Problem{BadID, BadID, 0, BadID}, ""},
		{"same id twice", []SignedIdentifier{id("x", "", "", "r"), id("x", "", "", "r")}, [4]Problem{BadID, 0, 0, 0}, ""},
		{"share letters out of order", []SignedIdentifier{id("x", "", "", "lr")}, [4]Problem{0, 0, BadPermission, BadPermission}, "rl"},
		{"repeated letter", []SignedIdentifier{id("x", "", "", "rr")}, [4]Problem{BadPermission, 0, 0, 0}, ""},
		{"container letters", []SignedIdentifier{id("x", "", "", "racwdxltmeopi")}, [4]Problem{BadPermission, 0, BadPermission, BadPermission}, ""},
		{"queue letters", []SignedIdentifier{id("x", "", "", "raup")}, [4]Problem{BadPermission, BadPermission, 0, BadPermission}, ""},
		{"table letters", []SignedIdentifier{id("x", "", "", "raud")}, [4]Problem{BadPermission, BadPermission, BadPermission, 0}, ""},
		{"times in every form", []SignedIdentifier{id("x", "2030-01-01T00:00:00.1234567Z", "2030-01-02", "r"), id("y", "2030-01-01T00:00Z", "2030-01-01T01:00:00+02:00", "r")}, [4]Problem{}, "r"},
		{"bad start", []SignedIdentifier{id("x", "tomorrow", "", "r")}, [4]Problem{BadStart, 0, 0, BadStart}, ""},
		{"bad expiry", []SignedIdentifier{id("x", "", "2030-13-01", "r")}, [4]Problem{BadExpiry, 0, 0, BadExpiry}, ""},
	} {
		for i, svc := range []string{"share", "container", "queue", "table"} {
			got, err := Validate(c.ids, rules[svc])
			var p Problem
			if err != nil {
				e, ok := err.(*Error)
				if !ok {
					t.Fatalf("%s, %s: %T %v", c.name, svc, err, err)
				}
				p = e.Problem
			}
			if p != c.want[i] {
				t.Errorf("%s, %s: problem %d (%v), want %d", c.name, svc, p, err, c.want[i])
			}
			if err == nil && len(got) != len(c.ids) {
				t.Errorf("%s, %s: %d policies kept of %d", c.name, svc, len(got), len(c.ids))
			}
			if err == nil && svc == "share" && len(got) > 0 && got[0].Permission != c.perm {
				t.Errorf("%s, share: permission stored %q, want %q", c.name, got[0].Permission, c.perm)
			}
			if err == nil && svc != "share" && len(got) > 0 && got[0].Permission != c.ids[0].Permission {
				t.Errorf("%s, %s: permission %q not kept as sent", c.name, svc, got[0].Permission)
			}
		}
	}
}

// TestTimes: one parser for policy times, UTC; Get Share ACL's format.
func TestTimes(t *testing.T) {
	want := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, v := range []string{"2030-01-01T00:00:00Z", "2030-01-01T00:00Z", "2030-01-01", "2030-01-01T02:00:00+02:00", "2030-01-01T00:00:00.0000000Z"} {
		got, err := ParseTime(v)
		if err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, %v", v, got, err)
		}
	}
	if got, err := ParseTime(""); err != nil || !got.IsZero() {
		t.Errorf(`ParseTime("") = %v, %v`, got, err)
	}
	if _, err := ParseTime("01/01/2030"); err == nil {
		t.Error("a non-ISO time parsed")
	}
	if got := FormatTime(want.Add(123456789)); got != "2030-01-01T00:00:00.1234567Z" {
		t.Errorf("FormatTime: %s", got)
	}
	if FormatTime(time.Time{}) != "" {
		t.Error("the zero time formats")
	}
	p, err := SignedIdentifier{ID: "x", Start: "2030-01-01", Permission: "r"}.Policy()
	if err != nil || !p.Start.Equal(want) || !p.Expiry.IsZero() || p.Permission != "r" {
		t.Errorf("Policy: %+v %v", p, err)
	}
	if _, err := (SignedIdentifier{ID: "x", Expiry: "soon"}).Policy(); err == nil || err.(*Error).Problem != BadExpiry {
		t.Errorf("Policy with a bad expiry: %v", err)
	}
	if got, ok := Find([]SignedIdentifier{{ID: "a"}, {ID: "b", Permission: "w"}}, "b"); !ok || got.Permission != "w" {
		t.Errorf("Find: %+v %v", got, ok)
	}
	if _, ok := Find(nil, "a"); ok {
		t.Error("Find in no policies")
	}
}
