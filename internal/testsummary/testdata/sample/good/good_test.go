package good

import "testing"

func TestPass(t *testing.T) {}

func TestPassLogs(t *testing.T) { t.Log("hidden-log of a passing test") }

func TestSkip(t *testing.T) { t.Skip("skipped on purpose") }

func TestFail(t *testing.T) { t.Error("boom-visible") }

func TestParent(t *testing.T) {
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) {})
	}
}

func TestParentFails(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("bad", func(t *testing.T) { t.Error("sub-boom-visible") })
}
