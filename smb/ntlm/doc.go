// Package ntlm is the server side of NTLMv2 authentication (MS-NLMP) and
// the SPNEGO wrapping (RFC 4178) SMB clients put around it: pure functions
// over byte slices, no I/O, no state beyond one exchange's Challenge.
//
// An exchange is NEGOTIATE (client) → CHALLENGE (server) → AUTHENTICATE
// (client). The server accepts only NTLMv2 responses; NTLMv1, anonymous
// (empty user or empty NT response) and unknown users fail. The secret is
// the password as typed: NTOWFv2 is computed from it at check time, so
// nothing password-equivalent needs to be stored.
//
// Every decoder checks each offset and length against its buffer; the
// fuzz targets in this package hold that promise.
package ntlm
