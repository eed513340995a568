package secdesc

import (
	"encoding/base64"
	"testing"
)

// FuzzPermission: any SDDL text or binary descriptor either fails with
// an error or parses to canonical SDDL that survives the binary form
// unchanged; never a panic.
func FuzzPermission(f *testing.F) {
	for _, s := range []string{
		"O:BAG:SYD:P(A;OICI;FA;;;BA)(A;;FR;;;AU)",
		"O:S-1-5-32-548G:S-1-5-21-1-2-3-512D:(A;;RPWPCCDCLCSWRCWDWOGA;;;S-1-0-0)",
		"D:AI(D;CI;0x1f01ff;;;WD)S:(AU;SAFA;FA;;;WD)",
		"O:", "D:(", "G:S-1-99999999999999999", "D:(A;;;;;)",
	} {
		f.Add(s, false)
	}
	f.Add("AQAUhGwAAACIAAAAAAAAABQAAAACAFgAAwAAAAAAFAD/AR8AAQEAAAAAAAUSAAAAAAAYAP8BHwABAgAAAAAABSAAAAAgAgAAAAAkAKkAEgABBQAAAAAABRUAAABZUbgXZnJdJWRjOwuMmS4AAQUAAAAAAAUVAAAAoGXPfnhLm1/nfIdwr/1IAQEFAAAAAAAFFQAAAKBlz354S5tf53yHcAECAAA=", true)
	f.Add("AQAAgA==", true)
	f.Fuzz(func(t *testing.T, v string, bin bool) {
		format := "sddl"
		if bin {
			format = "binary"
		}
		sddl, err := Canonical(v, format)
		if err != nil {
			return
		}
		b64, err := Format(sddl, "binary")
		if err != nil {
			t.Fatalf("canonical SDDL %q does not parse again: %v", sddl, err)
		}
		back, err := Canonical(b64, "binary")
		if err != nil || back != sddl {
			t.Fatalf("%q → binary %s → %q (%v)", sddl, b64, back, err)
		}
		if _, err := base64.StdEncoding.DecodeString(b64); err != nil {
			t.Fatal(err)
		}
	})
}
