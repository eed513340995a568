// Package secdesc reads and writes Windows security descriptors in their
// two wire forms: SDDL text (MS-DTYP 2.5.1) and the self-relative binary
// form (MS-DTYP 2.4.6). FileREST's Create/Get Permission and
// x-ms-file-permission use both (binary as base64); the SMB endpoint
// answers security queries in the binary form.
//
// Both parse into Descriptor; the SDDL it writes back is canonical
// (two-letter aliases for well-known SIDs, rights as letters where a
// combination has one — FA, FR, FW, FX — else hex), so a descriptor has
// one text whichever form it came in, and a key derived from that text is
// stable. Supported: owner, group, DACL and SACL with their protected /
// auto-inherited flags; allow, deny, audit and alarm ACEs. Object and
// callback ACEs are refused (ErrInvalid). FuzzPermission checks that
// nothing panics and that SDDL → binary → SDDL is stable.
package secdesc
