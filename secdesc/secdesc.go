package secdesc

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

type sid struct {
	authority uint64 // 48 bits
	subs      []uint32
}

type ace struct {
	typ   byte
	flags byte
	mask  uint32
	sid   sid
}

type acl struct {
	present bool
	aces    []ace
}

// Descriptor is a parsed security descriptor.
type Descriptor struct {
	control      uint16 // SE_* flags other than the presence bits
	owner, group *sid
	dacl, sacl   acl
}

const (
	seDACLPresent      = 0x0004
	seSACLPresent      = 0x0010
	seDACLAutoInhReq   = 0x0100
	seSACLAutoInhReq   = 0x0200
	seDACLAutoInh      = 0x0400
	seSACLAutoInh      = 0x0800
	seDACLProtected    = 0x1000
	seSACLProtected    = 0x2000
	seSelfRelative     = 0x8000
	maxSecurityDescLen = 64 << 10
)

// ErrInvalid: the text or bytes are no security descriptor this package
// reads (wrapped with what is wrong).
var ErrInvalid = errors.New("invalid security descriptor")

// sidAliases are SDDL's two-letter names of well-known SIDs.
var sidAliases = map[string]string{
	"WD": "S-1-1-0", "CO": "S-1-3-0", "CG": "S-1-3-1", "OW": "S-1-3-4", "NU": "S-1-5-2", "IU": "S-1-5-4",
	"SU": "S-1-5-6", "AN": "S-1-5-7", "ED": "S-1-5-9", "PS": "S-1-5-10", "AU": "S-1-5-11", "RC": "S-1-5-12",
	"SY": "S-1-5-18", "LS": "S-1-5-19", "NS": "S-1-5-20", "BA": "S-1-5-32-544", "BU": "S-1-5-32-545",
	"BG": "S-1-5-32-546", "PU": "S-1-5-32-547", "AO": "S-1-5-32-548", "SO": "S-1-5-32-549", "PO": "S-1-5-32-550",
	"BO": "S-1-5-32-551", "RE": "S-1-5-32-552", "RU": "S-1-5-32-554", "RD": "S-1-5-32-555", "NO": "S-1-5-32-556",
	"AC": "S-1-15-2-1", "LW": "S-1-16-4096", "ME": "S-1-16-8192", "HI": "S-1-16-12288", "SI": "S-1-16-16384",
}

var aceTypes = map[string]byte{"A": 0, "D": 1, "AU": 2, "AL": 3}

var aceFlagNames = []struct {
	name string
	bit  byte
}{{"OI", 0x01}, {"CI", 0x02}, {"NP", 0x04}, {"IO", 0x08}, {"ID", 0x10}, {"SA", 0x40}, {"FA", 0x80}}

// rightNames: combinations first (they are written when they match
// exactly), then single bits.
var rightNames = []struct {
	name string
	mask uint32
}{
	{"FA", 0x1F01FF}, {"FR", 0x120089}, {"FW", 0x120116}, {"FX", 0x1200A0},
	{"GA", 0x10000000}, {"GX", 0x20000000}, {"GW", 0x40000000}, {"GR", 0x80000000},
	{"SD", 0x10000}, {"RC", 0x20000}, {"WD", 0x40000}, {"WO", 0x80000},
	{"CC", 0x1}, {"DC", 0x2}, {"LC", 0x4}, {"SW", 0x8}, {"RP", 0x10}, {"WP", 0x20}, {"DT", 0x40}, {"LO", 0x80}, {"CR", 0x100},
}

func parseSIDString(s string) (sid, error) {
	if full, ok := sidAliases[strings.ToUpper(s)]; ok {
		s = full
	}
	parts := strings.Split(s, "-")
	if len(parts) < 3 || !strings.EqualFold(parts[0], "S") || parts[1] != "1" || len(parts)-3 > 15 {
		return sid{}, fmt.Errorf("%w: SID %q", ErrInvalid, s)
	}
	auth, err := strconv.ParseUint(parts[2], 0, 48)
	if err != nil {
		return sid{}, fmt.Errorf("%w: SID %q", ErrInvalid, s)
	}
	out := sid{authority: auth}
	for _, p := range parts[3:] {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return sid{}, fmt.Errorf("%w: SID %q", ErrInvalid, s)
		}
		out.subs = append(out.subs, uint32(v))
	}
	return out, nil
}

func (s sid) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "S-1-%d", s.authority)
	for _, v := range s.subs {
		fmt.Fprintf(&b, "-%d", v)
	}
	full := b.String()
	for alias, f := range sidAliases {
		if f == full {
			return alias
		}
	}
	return full
}

// ParseSDDL parses SDDL text: O:, G:, D: and S: parts in any order, each
// at most once.
func ParseSDDL(text string) (Descriptor, error) {
	var sd Descriptor
	s := strings.TrimSpace(text)
	seen := map[byte]bool{}
	for s != "" {
		if len(s) < 2 || s[1] != ':' {
			return sd, fmt.Errorf("%w: %q", ErrInvalid, s)
		}
		part := s[0] &^ 0x20 // upper case
		if seen[part] {
			return sd, fmt.Errorf("%w: %c: twice", ErrInvalid, part)
		}
		seen[part] = true
		s = s[2:]
		// The part runs to the next "X:" outside parentheses.
		end, depth := len(s), 0
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == '(':
				depth++
			case c == ')':
				depth--
			case depth == 0 && i+1 < len(s) && s[i+1] == ':' && strings.IndexByte("OGDSogds", c) >= 0:
				end = i
			}
			if end != len(s) {
				break
			}
		}
		body := s[:end]
		s = s[end:]
		switch part {
		case 'O', 'G':
			v, err := parseSIDString(body)
			if err != nil {
				return sd, err
			}
			if part == 'O' {
				sd.owner = &v
			} else {
				sd.group = &v
			}
		case 'D', 'S':
			a, flags, err := parseACL(body, part == 'S')
			if err != nil {
				return sd, err
			}
			if part == 'D' {
				sd.dacl = a
			} else {
				sd.sacl = a
			}
			sd.control |= flags
		default:
			return sd, fmt.Errorf("%w: part %c", ErrInvalid, part)
		}
	}
	if !seen['O'] && !seen['G'] && !seen['D'] && !seen['S'] {
		return sd, fmt.Errorf("%w: empty", ErrInvalid)
	}
	return sd, nil
}

func parseACL(body string, sacl bool) (acl, uint16, error) {
	a := acl{present: true}
	var flags uint16
	i := strings.IndexByte(body, '(')
	if i < 0 {
		i = len(body)
	}
	fl := body[:i]
	for fl != "" {
		var bit uint16
		switch {
		case strings.HasPrefix(fl, "P"):
			bit, fl = seDACLProtected, fl[1:]
		case strings.HasPrefix(fl, "AI"):
			bit, fl = seDACLAutoInh, fl[2:]
		case strings.HasPrefix(fl, "AR"):
			bit, fl = seDACLAutoInhReq, fl[2:]
		default:
			return a, 0, fmt.Errorf("%w: ACL flags %q", ErrInvalid, body[:i])
		}
		if sacl {
			bit <<= 1
		}
		flags |= bit
	}
	rest := body[i:]
	for rest != "" {
		if rest[0] != '(' {
			return a, 0, fmt.Errorf("%w: ACE list %q", ErrInvalid, rest)
		}
		j := strings.IndexByte(rest, ')')
		if j < 0 {
			return a, 0, fmt.Errorf("%w: unterminated ACE", ErrInvalid)
		}
		e, err := parseACE(rest[1:j])
		if err != nil {
			return a, 0, err
		}
		a.aces = append(a.aces, e)
		rest = rest[j+1:]
	}
	return a, flags, nil
}

func parseACE(s string) (ace, error) {
	f := strings.Split(s, ";")
	if len(f) != 6 {
		return ace{}, fmt.Errorf("%w: ACE %q", ErrInvalid, s)
	}
	var e ace
	t, ok := aceTypes[strings.ToUpper(f[0])]
	if !ok || f[3] != "" || f[4] != "" {
		return ace{}, fmt.Errorf("%w: ACE %q: only allow, deny, audit and alarm ACEs", ErrInvalid, s)
	}
	e.typ = t
	for fl := strings.ToUpper(f[1]); fl != ""; {
		ok := false
		for _, n := range aceFlagNames {
			if strings.HasPrefix(fl, n.name) {
				e.flags |= n.bit
				fl, ok = fl[2:], true
				break
			}
		}
		if !ok {
			return ace{}, fmt.Errorf("%w: ACE flags %q", ErrInvalid, f[1])
		}
	}
	if r := f[2]; strings.HasPrefix(r, "0x") || strings.HasPrefix(r, "0X") {
		v, err := strconv.ParseUint(r[2:], 16, 32)
		if err != nil {
			return ace{}, fmt.Errorf("%w: rights %q", ErrInvalid, r)
		}
		e.mask = uint32(v)
	} else {
		for r = strings.ToUpper(r); r != ""; {
			ok := false
			for _, n := range rightNames {
				if strings.HasPrefix(r, n.name) {
					e.mask |= n.mask
					r, ok = r[2:], true
					break
				}
			}
			if !ok {
				return ace{}, fmt.Errorf("%w: rights %q", ErrInvalid, f[2])
			}
		}
	}
	var err error
	if e.sid, err = parseSIDString(f[5]); err != nil {
		return ace{}, err
	}
	return e, nil
}

// Security information bits (SECURITY_INFORMATION, MS-DTYP 2.4.7): which
// parts of a descriptor a query asks for.
const (
	OwnerSecurityInformation = 0x1
	GroupSecurityInformation = 0x2
	DACLSecurityInformation  = 0x4
	SACLSecurityInformation  = 0x8
)

// Select returns the parts of sd that info asks for (owner, group, DACL,
// SACL), the others left out, as a security query answers.
func (sd Descriptor) Select(info uint32) Descriptor {
	out := sd
	if info&OwnerSecurityInformation == 0 {
		out.owner = nil
	}
	if info&GroupSecurityInformation == 0 {
		out.group = nil
	}
	if info&DACLSecurityInformation == 0 {
		out.dacl = acl{}
		out.control &^= seDACLAutoInhReq | seDACLAutoInh | seDACLProtected
	}
	if info&SACLSecurityInformation == 0 {
		out.sacl = acl{}
		out.control &^= seSACLAutoInhReq | seSACLAutoInh | seSACLProtected
	}
	return out
}

// SDDL is the canonical SDDL text of sd.
func (sd Descriptor) SDDL() string {
	var b strings.Builder
	if sd.owner != nil {
		b.WriteString("O:" + sd.owner.String())
	}
	if sd.group != nil {
		b.WriteString("G:" + sd.group.String())
	}
	for _, part := range []struct {
		letter string
		a      acl
		shift  uint
	}{{"D", sd.dacl, 0}, {"S", sd.sacl, 1}} {
		if !part.a.present {
			continue
		}
		b.WriteString(part.letter + ":")
		if sd.control&(seDACLProtected<<part.shift) != 0 {
			b.WriteString("P")
		}
		if sd.control&(seDACLAutoInhReq<<part.shift) != 0 {
			b.WriteString("AR")
		}
		if sd.control&(seDACLAutoInh<<part.shift) != 0 {
			b.WriteString("AI")
		}
		for _, e := range part.a.aces {
			var t string
			for name, v := range aceTypes {
				if v == e.typ {
					t = name
				}
			}
			var fl strings.Builder
			for _, n := range aceFlagNames {
				if e.flags&n.bit != 0 {
					fl.WriteString(n.name)
				}
			}
			fmt.Fprintf(&b, "(%s;%s;%s;;;%s)", t, fl.String(), rightsString(e.mask), e.sid.String())
		}
	}
	return b.String()
}

func rightsString(m uint32) string {
	for _, n := range rightNames[:4] {
		if m == n.mask {
			return n.name
		}
	}
	return fmt.Sprintf("0x%x", m)
}

// Binary is sd in self-relative form: owner, group, SACL, DACL.
func (sd Descriptor) Binary() []byte {
	out := make([]byte, 20)
	out[0] = 1
	control := sd.control | seSelfRelative
	put := func(off int) { binary.LittleEndian.PutUint32(out[off:], uint32(len(out))) }
	if sd.owner != nil {
		put(4)
		out = appendSID(out, *sd.owner)
	}
	if sd.group != nil {
		put(8)
		out = appendSID(out, *sd.group)
	}
	if sd.sacl.present {
		control |= seSACLPresent
		put(12)
		out = appendACL(out, sd.sacl)
	}
	if sd.dacl.present {
		control |= seDACLPresent
		put(16)
		out = appendACL(out, sd.dacl)
	}
	binary.LittleEndian.PutUint16(out[2:], control)
	return out
}

func appendSID(b []byte, s sid) []byte {
	b = append(b, 1, byte(len(s.subs)))
	var auth [8]byte
	binary.BigEndian.PutUint64(auth[:], s.authority)
	b = append(b, auth[2:]...)
	for _, v := range s.subs {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

func appendACL(b []byte, a acl) []byte {
	start := len(b)
	b = append(b, 2, 0, 0, 0, 0, 0, 0, 0)
	for _, e := range a.aces {
		as := len(b)
		b = append(b, e.typ, e.flags, 0, 0)
		b = binary.LittleEndian.AppendUint32(b, e.mask)
		b = appendSID(b, e.sid)
		binary.LittleEndian.PutUint16(b[as+2:], uint16(len(b)-as))
	}
	binary.LittleEndian.PutUint16(b[start+2:], uint16(len(b)-start))
	binary.LittleEndian.PutUint16(b[start+4:], uint16(len(a.aces)))
	return b
}

// ParseBinary parses a self-relative security descriptor.
func ParseBinary(b []byte) (Descriptor, error) {
	var sd Descriptor
	if len(b) < 20 || b[0] != 1 || len(b) > maxSecurityDescLen {
		return sd, fmt.Errorf("%w: header", ErrInvalid)
	}
	control := binary.LittleEndian.Uint16(b[2:])
	if control&seSelfRelative == 0 {
		return sd, fmt.Errorf("%w: not self-relative", ErrInvalid)
	}
	sd.control = control &^ (seSelfRelative | seDACLPresent | seSACLPresent)
	off := func(i int) int { return int(binary.LittleEndian.Uint32(b[i:])) }
	var err error
	if o := off(4); o != 0 {
		var s sid
		if s, _, err = readSID(b, o); err != nil {
			return sd, err
		}
		sd.owner = &s
	}
	if o := off(8); o != 0 {
		var s sid
		if s, _, err = readSID(b, o); err != nil {
			return sd, err
		}
		sd.group = &s
	}
	if o := off(12); control&seSACLPresent != 0 && o != 0 {
		if sd.sacl, err = readACL(b, o); err != nil {
			return sd, err
		}
	}
	if o := off(16); control&seDACLPresent != 0 && o != 0 {
		if sd.dacl, err = readACL(b, o); err != nil {
			return sd, err
		}
	}
	return sd, nil
}

func readSID(b []byte, o int) (sid, int, error) {
	if o < 0 || o+8 > len(b) || b[o] != 1 {
		return sid{}, 0, fmt.Errorf("%w: SID at %d", ErrInvalid, o)
	}
	n := int(b[o+1])
	end := o + 8 + 4*n
	if n > 15 || end > len(b) {
		return sid{}, 0, fmt.Errorf("%w: SID at %d", ErrInvalid, o)
	}
	var auth [8]byte
	copy(auth[2:], b[o+2:o+8])
	s := sid{authority: binary.BigEndian.Uint64(auth[:])}
	for i := range n {
		s.subs = append(s.subs, binary.LittleEndian.Uint32(b[o+8+4*i:]))
	}
	return s, end, nil
}

func readACL(b []byte, o int) (acl, error) {
	a := acl{present: true}
	if o < 0 || o+8 > len(b) {
		return a, fmt.Errorf("%w: ACL at %d", ErrInvalid, o)
	}
	size := int(binary.LittleEndian.Uint16(b[o+2:]))
	count := int(binary.LittleEndian.Uint16(b[o+4:]))
	if o+size > len(b) || size < 8 {
		return a, fmt.Errorf("%w: ACL size", ErrInvalid)
	}
	p := o + 8
	for range count {
		if p+8 > o+size {
			return a, fmt.Errorf("%w: ACE past its ACL", ErrInvalid)
		}
		e := ace{typ: b[p], flags: b[p+1], mask: binary.LittleEndian.Uint32(b[p+4:])}
		asz := int(binary.LittleEndian.Uint16(b[p+2:]))
		if e.typ > 3 || asz < 16 || p+asz > o+size {
			return a, fmt.Errorf("%w: ACE type %d size %d", ErrInvalid, e.typ, asz)
		}
		s, end, err := readSID(b, p+8)
		if err != nil || end > p+asz {
			return a, fmt.Errorf("%w: ACE SID", ErrInvalid)
		}
		e.sid = s
		a.aces = append(a.aces, e)
		p += asz
	}
	return a, nil
}

// Canonical reads a permission in format ("sddl", "binary", any
// case; "" is SDDL) and returns its canonical SDDL.
func Canonical(value, format string) (string, error) {
	var sd Descriptor
	var err error
	if strings.EqualFold(format, "binary") {
		raw, derr := base64.StdEncoding.DecodeString(value)
		if derr != nil {
			return "", fmt.Errorf("%w: %v", ErrInvalid, derr)
		}
		sd, err = ParseBinary(raw)
	} else {
		sd, err = ParseSDDL(value)
	}
	if err != nil {
		return "", err
	}
	return sd.SDDL(), nil
}

// Format renders canonical SDDL in format ("binary": base64 of
// the self-relative form).
func Format(sddl, format string) (string, error) {
	if !strings.EqualFold(format, "binary") {
		return sddl, nil
	}
	sd, err := ParseSDDL(sddl)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(sd.Binary()), nil
}
