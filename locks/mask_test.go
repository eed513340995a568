package locks

import "testing"

func TestMaskMapGeneric(t *testing.T) {
	tests := []struct {
		name     string
		in       Mask
		readOnly bool
		want     Mask
	}{
		{"generic read", MaskGenericRead, false, 0x00120089},
		{"generic write", MaskGenericWrite, false, 0x00120116},
		{"generic execute", MaskGenericExecute, false, 0x001200A0},
		{"generic all", MaskGenericAll, false, 0x001F01FF},
		{"maximum allowed", MaskMaximumAllowed, false, 0x001F01FF},
		{"maximum allowed, read-only file", MaskMaximumAllowed, true, 0x001F01F9},
		{"specific bits kept", MaskDelete | MaskReadAttributes, false, MaskDelete | MaskReadAttributes},
		{"generic read plus delete", MaskGenericRead | MaskDelete, false, 0x00130089},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.MapGeneric(tt.readOnly); got != tt.want {
				t.Errorf("MapGeneric(%#x, %v) = %#x, want %#x", tt.in, tt.readOnly, got, tt.want)
			}
		})
	}
}

func TestMaskAccess(t *testing.T) {
	tests := []struct {
		in   Mask
		want Access
	}{
		{0x00120089, AccessRead | AccessReadAttributes},
		{0x00120116, AccessWrite | AccessAppend},
		{MaskDelete | MaskReadAttributes | MaskSynchronize, AccessDelete | AccessReadAttributes},
		{MaskFileAllAccess, AccessRead | AccessWrite | AccessAppend | AccessExecute | AccessDelete | AccessReadAttributes},
		{MaskSynchronize | MaskReadControl, 0},
	}
	for _, tt := range tests {
		if got := tt.in.Access(); got != tt.want {
			t.Errorf("Mask(%#x).Access() = %v, want %v", tt.in, got, tt.want)
		}
	}
}
