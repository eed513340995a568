package broken

import "testing"

func TestNeverBuilt(t *testing.T) { var x int = "not an int" }
