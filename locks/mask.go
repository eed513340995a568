package locks

// Mask is a full 32-bit access mask for files and directories (MS-DTYP
// 2.4.3, MS-FSCC 2.2 file access rights), as an SMB CREATE or a Windows
// CreateFile asks for it. The lock rules decide on the reduced Access; Mask
// is how a caller gets from what it was asked to what the rules see, in one
// place: MapGeneric resolves GENERIC_* and MAXIMUM_ALLOWED (MS-FSA
// 2.1.5.1.2.1), Access keeps the bits the table distinguishes.
type Mask uint32

// Access rights. Specific file rights first, then standard and generic ones.
const (
	MaskReadData        Mask = 0x00000001 // FILE_READ_DATA / FILE_LIST_DIRECTORY
	MaskWriteData       Mask = 0x00000002 // FILE_WRITE_DATA / FILE_ADD_FILE
	MaskAppendData      Mask = 0x00000004 // FILE_APPEND_DATA / FILE_ADD_SUBDIRECTORY
	MaskReadEA          Mask = 0x00000008
	MaskWriteEA         Mask = 0x00000010
	MaskExecute         Mask = 0x00000020 // FILE_EXECUTE / FILE_TRAVERSE
	MaskDeleteChild     Mask = 0x00000040
	MaskReadAttributes  Mask = 0x00000080
	MaskWriteAttributes Mask = 0x00000100
	MaskDelete          Mask = 0x00010000
	MaskReadControl     Mask = 0x00020000
	MaskWriteDAC        Mask = 0x00040000
	MaskWriteOwner      Mask = 0x00080000
	MaskSynchronize     Mask = 0x00100000
	MaskSystemSecurity  Mask = 0x01000000 // ACCESS_SYSTEM_SECURITY
	MaskMaximumAllowed  Mask = 0x02000000
	MaskGenericAll      Mask = 0x10000000
	MaskGenericExecute  Mask = 0x20000000
	MaskGenericWrite    Mask = 0x40000000
	MaskGenericRead     Mask = 0x80000000

	// The generic mapping of files (FILE_GENERIC_* in MS-FSCC / winnt.h).
	MaskFileGenericRead    = MaskReadControl | MaskReadData | MaskReadAttributes | MaskReadEA | MaskSynchronize
	MaskFileGenericWrite   = MaskReadControl | MaskWriteData | MaskWriteAttributes | MaskWriteEA | MaskAppendData | MaskSynchronize
	MaskFileGenericExecute = MaskReadControl | MaskReadAttributes | MaskExecute | MaskSynchronize
	MaskFileAllAccess      = 0x001F01FF // FILE_ALL_ACCESS

	// MaskValid is every bit a request may carry; others are invalid.
	MaskValid = MaskFileAllAccess | MaskSystemSecurity | MaskMaximumAllowed |
		MaskGenericAll | MaskGenericExecute | MaskGenericWrite | MaskGenericRead
)

// MapGeneric resolves GENERIC_* bits to specific rights and MAXIMUM_ALLOWED
// to everything the object allows: all access, less the data write rights
// on a file with the ReadOnly attribute (MS-FSA 2.1.5.1.2.1: a ReadOnly
// file grants no FILE_WRITE_DATA or FILE_APPEND_DATA). The result has no
// generic bits and no MAXIMUM_ALLOWED.
func (m Mask) MapGeneric(readOnly bool) Mask {
	out := m &^ (MaskGenericAll | MaskGenericExecute | MaskGenericWrite | MaskGenericRead | MaskMaximumAllowed)
	if m&MaskGenericRead != 0 {
		out |= MaskFileGenericRead
	}
	if m&MaskGenericWrite != 0 {
		out |= MaskFileGenericWrite
	}
	if m&MaskGenericExecute != 0 {
		out |= MaskFileGenericExecute
	}
	if m&MaskGenericAll != 0 {
		out |= MaskFileAllAccess
	}
	if m&MaskMaximumAllowed != 0 {
		max := Mask(MaskFileAllAccess)
		if readOnly {
			max &^= MaskWriteData | MaskAppendData
		}
		out |= max
	}
	return out
}

// Access reduces a mapped mask to the bits the lock table distinguishes.
// A mask with no data bit and no FILE_READ_ATTRIBUTES still opens a handle
// (as attribute-only): only the data bits take part in sharing.
func (m Mask) Access() Access {
	var a Access
	for _, b := range [...]struct {
		m Mask
		a Access
	}{
		{MaskReadData, AccessRead}, {MaskWriteData, AccessWrite}, {MaskAppendData, AccessAppend},
		{MaskExecute, AccessExecute}, {MaskDelete, AccessDelete}, {MaskReadAttributes, AccessReadAttributes},
	} {
		if m&b.m != 0 {
			a |= b.a
		}
	}
	return a
}
