package tablesvc

import (
	"bytes"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
)

// Bounds of the $filter parser: input length, nesting depth (parentheses
// and not), and the number of comparisons (QRY: "no more than 15 discrete
// comparisons are permitted within a $filter string").
const (
	MaxFilterLength      = 32 * 1024
	MaxFilterDepth       = 64
	MaxFilterComparisons = 15
)

// cmpOp is a comparison operator.
type cmpOp uint8

const (
	opEq cmpOp = iota
	opNe
	opGt
	opGe
	opLt
	opLe
)

var cmpOps = map[string]cmpOp{"eq": opEq, "ne": opNe, "gt": opGt, "ge": opGe, "lt": opLt, "le": opLe}

// flip is the operator with its operands swapped (3 lt N ≡ N gt 3).
func (o cmpOp) flip() cmpOp {
	switch o {
	case opGt:
		return opLt
	case opGe:
		return opLe
	case opLt:
		return opGt
	case opLe:
		return opGe
	}
	return o
}

// expr is a parsed $filter: a tree of and/or/not over comparisons of one
// property with one literal, and bare Boolean properties.
type expr interface {
	eval(get func(string) (Value, bool)) bool
}

type (
	andExpr  struct{ l, r expr }
	orExpr   struct{ l, r expr }
	notExpr  struct{ x expr }
	boolProp struct{ name string }
	cmpExpr  struct {
		prop string
		op   cmpOp
		lit  Value
	}
)

func (e andExpr) eval(get func(string) (Value, bool)) bool { return e.l.eval(get) && e.r.eval(get) }
func (e orExpr) eval(get func(string) (Value, bool)) bool  { return e.l.eval(get) || e.r.eval(get) }
func (e notExpr) eval(get func(string) (Value, bool)) bool { return !e.x.eval(get) }

func (e boolProp) eval(get func(string) (Value, bool)) bool {
	v, ok := get(e.name)
	return ok && v.Type == Boolean && v.Bool
}

// eval compares the entity's property with the literal. A missing
// property or one of another type matches nothing, for every operator
// ("The constant value must be of the same data type as the property").
func (e cmpExpr) eval(get func(string) (Value, bool)) bool {
	v, ok := get(e.prop)
	if !ok || v.Type != e.lit.Type {
		return false
	}
	if v.Type == Double && (math.IsNaN(v.Num) || math.IsNaN(e.lit.Num)) {
		return e.op == opNe // IEEE: NaN is unordered and unequal to everything
	}
	c := compareValues(v, e.lit)
	switch e.op {
	case opEq:
		return c == 0
	case opNe:
		return c != 0
	case opGt:
		return c > 0
	case opGe:
		return c >= 0
	case opLt:
		return c < 0
	default:
		return c <= 0
	}
}

// compareValues orders two values of one type: strings and binary
// ordinally by bytes, GUIDs case-insensitively, DateTimes to the 100 ns.
func compareValues(a, b Value) int {
	switch a.Type {
	case String:
		return strings.Compare(a.Str, b.Str)
	case Guid:
		return strings.Compare(strings.ToLower(a.Str), strings.ToLower(b.Str))
	case Int32, Int64:
		return cmpOrdered(a.Int, b.Int)
	case Double:
		return cmpOrdered(a.Num, b.Num)
	case Boolean:
		return cmpOrdered(b2i(a.Bool), b2i(b.Bool))
	case DateTime:
		return a.Time.Truncate(Tick).Compare(b.Time.Truncate(Tick))
	case Binary:
		return bytes.Compare(a.Bin, b.Bin)
	}
	return 0
}

func cmpOrdered[T int64 | float64 | int](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Filter is a compiled $filter.
type Filter struct {
	root expr // nil: everything
}

// ParseFilter parses an OData $filter as the Table service accepts it
// (table.md §8). Errors are *InputError InvalidInput.
func ParseFilter(s string) (*Filter, error) {
	if len(s) > MaxFilterLength {
		return nil, badFilter("the filter is longer than %d bytes", MaxFilterLength)
	}
	p := &parser{src: s}
	if err := p.lex(); err != nil {
		return nil, err
	}
	if len(p.toks) == 0 {
		return &Filter{}, nil // an empty $filter selects everything (Azurite #1573)
	}
	root, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, badFilter("unexpected %q at offset %d", p.toks[p.pos].text, p.toks[p.pos].off)
	}
	return &Filter{root: root}, nil
}

// Match evaluates the filter over a property lookup.
func (f *Filter) Match(get func(string) (Value, bool)) bool {
	return f.root == nil || f.root.eval(get)
}

// MatchEntity evaluates the filter over an entity (PartitionKey, RowKey
// and Timestamp included).
func (f *Filter) MatchEntity(e *Entity) bool {
	if f.root == nil {
		return true
	}
	return f.root.eval(func(name string) (Value, bool) {
		switch name {
		case "PartitionKey":
			return Value{Type: String, Str: e.PartitionKey}, true
		case "RowKey":
			return Value{Type: String, Str: e.RowKey}, true
		case "Timestamp":
			return Value{Type: DateTime, Time: e.Timestamp}, true
		}
		return e.Prop(name)
	})
}

// KeyRange returns the PartitionKey/RowKey bounds implied by the
// comparisons ANDed at the filter's top level (the index's part of the
// query; the whole filter is still evaluated on every row), and false if
// those comparisons already exclude every entity (a key compared with a
// non-string literal, or contradictory bounds).
func (f *Filter) KeyRange() (KeyRange, bool) {
	var r KeyRange
	ok := true
	var walk func(e expr)
	walk = func(e expr) {
		switch e := e.(type) {
		case andExpr:
			walk(e.l)
			walk(e.r)
		case cmpExpr:
			var lo, hi *Bound
			switch e.prop {
			case "PartitionKey":
				lo, hi = &r.PKLow, &r.PKHigh
			case "RowKey":
				lo, hi = &r.RKLow, &r.RKHigh
			default:
				return
			}
			if e.lit.Type != String {
				ok = false
				return
			}
			v := e.lit.Str
			switch e.op {
			case opEq:
				lo.tighten(v, true, true)
				hi.tighten(v, true, false)
			case opGt, opGe:
				lo.tighten(v, e.op == opGe, true)
			case opLt, opLe:
				hi.tighten(v, e.op == opLe, false)
			}
		}
	}
	if f.root != nil {
		walk(f.root)
	}
	return r, ok && !r.Empty()
}

// tighten narrows b to v if v is stricter (low: larger; high: smaller).
func (b *Bound) tighten(v string, inclusive, low bool) {
	if !b.Set {
		*b = Bound{Set: true, Value: v, Inclusive: inclusive}
		return
	}
	c := strings.Compare(v, b.Value)
	if low && c > 0 || !low && c < 0 {
		*b = Bound{Set: true, Value: v, Inclusive: inclusive}
	} else if c == 0 && !inclusive {
		b.Inclusive = false
	}
}

func badFilter(format string, args ...any) *InputError {
	return inputErr("InvalidInput", msgBadFilter+" ("+format+")", args...)
}

// token kinds.
const (
	tkIdent = iota // a name or keyword
	tkLit          // a literal, already parsed into val
	tkLParen
	tkRParen
)

type token struct {
	kind int
	text string
	val  Value
	off  int
}

type parser struct {
	src   string
	toks  []token
	pos   int
	comps int
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}
func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// lex splits the filter into tokens. Literal prefixes (datetime'…',
// guid'…', X'…', binary'…') are recognised here.
func (p *parser) lex() error {
	s := p.src
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '(':
			p.toks = append(p.toks, token{kind: tkLParen, text: "(", off: i})
			i++
		case c == ')':
			p.toks = append(p.toks, token{kind: tkRParen, text: ")", off: i})
			i++
		case c == '\'':
			str, n, err := lexQuoted(s[i:])
			if err != nil {
				return badFilter("%v at offset %d", err, i)
			}
			p.toks = append(p.toks, token{kind: tkLit, text: s[i : i+n], val: Value{Type: String, Str: str}, off: i})
			i += n
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && (isIdentPart(s[j]) || s[j] == '.' || (s[j] == '+' || s[j] == '-') && (s[j-1] == 'e' || s[j-1] == 'E')) {
				j++
			}
			v, err := parseNumber(s[i:j])
			if err != nil {
				return badFilter("%v at offset %d", err, i)
			}
			p.toks = append(p.toks, token{kind: tkLit, text: s[i:j], val: v, off: i})
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			word := s[i:j]
			if j < len(s) && s[j] == '\'' {
				str, n, err := lexQuoted(s[j:])
				if err != nil {
					return badFilter("%v at offset %d", err, j)
				}
				v, err := typedLiteral(word, str)
				if err != nil {
					return badFilter("%v at offset %d", err, i)
				}
				p.toks = append(p.toks, token{kind: tkLit, text: s[i : j+n], val: v, off: i})
				i = j + n
				continue
			}
			switch word {
			case "true", "false":
				p.toks = append(p.toks, token{kind: tkLit, text: word, val: Value{Type: Boolean, Bool: word == "true"}, off: i})
			default:
				p.toks = append(p.toks, token{kind: tkIdent, text: word, off: i})
			}
			i = j
		default:
			return badFilter("unexpected character %q at offset %d", c, i)
		}
	}
	return nil
}

// lexQuoted reads a '…' literal with doubled quotes inside; it returns
// the content and the bytes consumed.
func lexQuoted(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '\'' {
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), i + 1, nil
		}
		b.WriteByte(s[i])
	}
	return "", 0, errString("unterminated string literal")
}

type errString string

func (e errString) Error() string { return string(e) }

// typedLiteral parses prefix'content'.
func typedLiteral(prefix, content string) (Value, error) {
	switch prefix {
	case "datetime":
		t, err := ParseTime(content)
		if err != nil {
			return Value{}, err
		}
		return Value{Type: DateTime, Time: t}, nil
	case "guid":
		if !validGUID(content) {
			return Value{}, errString("malformed guid literal")
		}
		return Value{Type: Guid, Str: content}, nil
	case "X", "binary":
		b, err := hex.DecodeString(content)
		if err != nil {
			return Value{}, errString("malformed binary literal")
		}
		return Value{Type: Binary, Bin: b}, nil
	}
	return Value{}, errString("unknown literal type " + strconv.Quote(prefix))
}

// parseNumber parses 5 (Int32), 5L (Int64), 2.5 / 1e3 / 2.5d (Double).
func parseNumber(s string) (Value, error) {
	if n := len(s); n > 1 && (s[n-1] == 'L' || s[n-1] == 'l') {
		v, err := strconv.ParseInt(s[:n-1], 10, 64)
		if err != nil || !isDigits(s[:n-1]) {
			return Value{}, errString("malformed Int64 literal " + strconv.Quote(s))
		}
		return Value{Type: Int64, Int: v}, nil
	}
	if isDigits(s) {
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return Value{}, errString("Int32 literal out of range " + strconv.Quote(s) + " (an Int64 literal ends in L)")
		}
		return Value{Type: Int32, Int: v}, nil
	}
	f := strings.TrimRight(s, "dD")
	if len(s)-len(f) > 1 || !strings.ContainsAny(f, "0123456789") || strings.ContainsAny(f, "xXpP_") {
		return Value{}, errString("malformed number " + strconv.Quote(s))
	}
	v, err := strconv.ParseFloat(f, 64)
	if err != nil {
		return Value{}, errString("malformed Double literal " + strconv.Quote(s))
	}
	return Value{Type: Double, Num: v}, nil
}

// isDigits: an optional '-' and at least one decimal digit, nothing else.
func isDigits(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (p *parser) peek() *token {
	if p.pos < len(p.toks) {
		return &p.toks[p.pos]
	}
	return nil
}

func (p *parser) keyword(w string) bool {
	if t := p.peek(); t != nil && t.kind == tkIdent && t.text == w {
		p.pos++
		return true
	}
	return false
}

func (p *parser) or(depth int) (expr, error) {
	l, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for p.keyword("or") {
		r, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		l = orExpr{l, r}
	}
	return l, nil
}

func (p *parser) and(depth int) (expr, error) {
	l, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for p.keyword("and") {
		r, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		l = andExpr{l, r}
	}
	return l, nil
}

func (p *parser) unary(depth int) (expr, error) {
	if depth > MaxFilterDepth {
		return nil, badFilter("nested deeper than %d", MaxFilterDepth)
	}
	if p.keyword("not") {
		x, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return notExpr{x}, nil
	}
	return p.primary(depth)
}

func (p *parser) primary(depth int) (expr, error) {
	t := p.peek()
	if t == nil {
		return nil, badFilter("unexpected end")
	}
	if t.kind == tkLParen {
		p.pos++
		x, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if t := p.peek(); t == nil || t.kind != tkRParen {
			return nil, badFilter("missing )")
		}
		p.pos++
		return x, nil
	}
	if t.kind != tkIdent && t.kind != tkLit || isKeyword(t) {
		return nil, badFilter("unexpected %q at offset %d", t.text, t.off)
	}
	left := *t
	p.pos++
	o := p.peek()
	var op cmpOp
	isOp := false
	if o != nil && o.kind == tkIdent {
		op, isOp = cmpOps[o.text]
	}
	if !isOp {
		if left.kind == tkIdent { // a bare Boolean property
			return p.count(boolProp{name: left.text})
		}
		return nil, badFilter("a literal %q needs a comparison", left.text)
	}
	p.pos++
	r := p.peek()
	if r == nil || r.kind != tkIdent && r.kind != tkLit || isKeyword(r) {
		return nil, badFilter("missing operand after %q", o.text)
	}
	right := *r
	p.pos++
	switch {
	case left.kind == tkIdent && right.kind == tkLit:
		return p.count(cmpExpr{prop: left.text, op: op, lit: right.val})
	case left.kind == tkLit && right.kind == tkIdent: // 3 lt N (Azurite #1599)
		return p.count(cmpExpr{prop: right.text, op: op.flip(), lit: left.val})
	}
	return nil, badFilter("a comparison needs one property and one literal, at offset %d", left.off)
}

// count enforces MaxFilterComparisons.
func (p *parser) count(e expr) (expr, error) {
	p.comps++
	if p.comps > MaxFilterComparisons {
		return nil, badFilter("more than %d comparisons", MaxFilterComparisons)
	}
	return e, nil
}

func isKeyword(t *token) bool {
	if t.kind != tkIdent {
		return false
	}
	switch t.text {
	case "and", "or", "not":
		return true
	}
	_, op := cmpOps[t.text]
	return op
}
