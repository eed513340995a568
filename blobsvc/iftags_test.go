package blobsvc

import (
	"errors"
	"testing"
)

func TestMatchTags(t *testing.T) {
	tags := map[string]string{"project": "alpha", "stage": "3", "team": "blue"}
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{`"project" = 'alpha'`, true},
		{`"project" = 'beta'`, false},
		{`"project" <> 'beta'`, true},
		{`"stage" > '2' AND "team" = 'blue'`, true},
		{`"stage" >= '4' OR "team" = 'blue'`, true},
		{`"stage" < '3' OR ("team" = 'red' AND "project" = 'alpha')`, false},
		{`("stage" <= '3') and "missing" <> 'x'`, true},
		{`"missing" = ''`, false},
		{`"project"='alpha'AND"team"='blue'`, true},
		{`"project"='alpha'AND"team"='red'`, false},
		{`"project"='x'OR("team"='blue')`, true},
	} {
		got, err := MatchTags(tc.expr, tags)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v %v, want %v", tc.expr, got, err, tc.want)
		}
	}
	for _, bad := range []string{``, `"a"`, `"a" = b`, `"a" = 'b`, `("a" = 'b'`, `"a" ~ 'b'`, `"a" = 'b' AND`, `"a" = 'b' junk`} {
		if _, err := MatchTags(bad, tags); !errors.Is(err, ErrInvalidTagsCondition) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func FuzzMatchTags(f *testing.F) {
	f.Add(`"a" = 'b' AND ("c" > 'd' OR "e" <> 'f')`)
	f.Fuzz(func(t *testing.T, expr string) {
		_, err := MatchTags(expr, map[string]string{"a": "b", "c": "x"})
		if err != nil && !errors.Is(err, ErrInvalidTagsCondition) {
			t.Fatalf("%q: %v", expr, err)
		}
	})
}
