package blobsvc

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidTagsCondition: an x-ms-if-tags expression that does not parse
// (400).
var ErrInvalidTagsCondition = errors.New("invalid x-ms-if-tags expression")

// MatchTags evaluates an x-ms-if-tags expression against tags:
//
//	expr   = term { "OR" term }
//	term   = factor { "AND" factor }
//	factor = "(" expr ")" | key op value
//	key    = "name" (double quotes)      value = 'text' (single quotes)
//	op     = "=" | "<>" | ">" | ">=" | "<" | "<="
//
// Comparisons are on strings (Azure's tag values are text); a missing tag
// compares as never equal and never ordered. An expression that does not
// parse is ErrInvalidTagsCondition.
func MatchTags(expr string, tags map[string]string) (bool, error) {
	p := &tagParser{in: expr, tags: tags}
	v, err := p.expr()
	if err == nil {
		p.space()
		if p.pos != len(p.in) {
			err = p.fail("trailing input")
		}
	}
	return v, err
}

type tagParser struct {
	in   string
	pos  int
	tags map[string]string
	keys map[string]bool // the keys the expression names
}

// tagKeys returns the tag keys a valid expression names.
func tagKeys(expr string) (map[string]bool, error) {
	p := &tagParser{in: expr, keys: map[string]bool{}}
	if _, err := p.expr(); err != nil {
		return nil, err
	}
	return p.keys, nil
}

func (p *tagParser) fail(why string) error {
	return fmt.Errorf("x-ms-if-tags %q at %d: %s: %w", p.in, p.pos, why, ErrInvalidTagsCondition)
}

func (p *tagParser) space() {
	for p.pos < len(p.in) && p.in[p.pos] == ' ' {
		p.pos++
	}
}

// keyword consumes kw (case-insensitive) followed by a space or "(".
func (p *tagParser) keyword(kw string) bool {
	p.space()
	end := p.pos + len(kw)
	if end > len(p.in) || !strings.EqualFold(p.in[p.pos:end], kw) {
		return false
	}
	// The keyword ends at a space, "(" or the next key's quote: Azure
	// takes "tag1"='a'AND"tag2"='b' (azblob's TestFilterBlobsWithTags).
	if end < len(p.in) && p.in[end] != ' ' && p.in[end] != '(' && p.in[end] != '"' {
		return false
	}
	p.pos = end
	return true
}

func (p *tagParser) expr() (bool, error) {
	v, err := p.term()
	for err == nil && p.keyword("OR") {
		var w bool
		w, err = p.term()
		v = v || w
	}
	return v, err
}

func (p *tagParser) term() (bool, error) {
	v, err := p.factor()
	for err == nil && p.keyword("AND") {
		var w bool
		w, err = p.factor()
		v = v && w
	}
	return v, err
}

func (p *tagParser) quoted(q byte) (string, error) {
	p.space()
	if p.pos >= len(p.in) || p.in[p.pos] != q {
		return "", p.fail("expected " + string(q))
	}
	end := strings.IndexByte(p.in[p.pos+1:], q)
	if end < 0 {
		return "", p.fail("unterminated " + string(q))
	}
	s := p.in[p.pos+1 : p.pos+1+end]
	p.pos += end + 2
	return s, nil
}

func (p *tagParser) factor() (bool, error) {
	p.space()
	if p.pos < len(p.in) && p.in[p.pos] == '(' {
		p.pos++
		v, err := p.expr()
		if err != nil {
			return false, err
		}
		p.space()
		if p.pos >= len(p.in) || p.in[p.pos] != ')' {
			return false, p.fail("expected )")
		}
		p.pos++
		return v, nil
	}
	key, err := p.quoted('"')
	if err != nil {
		return false, err
	}
	if p.keys != nil {
		p.keys[key] = true
	}
	p.space()
	var op string
	for _, o := range []string{"<>", ">=", "<=", "=", ">", "<"} {
		if strings.HasPrefix(p.in[p.pos:], o) {
			op = o
			break
		}
	}
	if op == "" {
		return false, p.fail("expected an operator")
	}
	p.pos += len(op)
	val, err := p.quoted('\'')
	if err != nil {
		return false, err
	}
	have, ok := p.tags[key]
	if !ok {
		return op == "<>", nil
	}
	switch op {
	case "=":
		return have == val, nil
	case "<>":
		return have != val, nil
	case ">":
		return have > val, nil
	case ">=":
		return have >= val, nil
	case "<":
		return have < val, nil
	default:
		return have <= val, nil
	}
}

// TaggedBlob is one Find Blobs by Tags result.
type TaggedBlob struct {
	Container, Name string
	Tags            map[string]string
}

// FindBlobsByTags returns up to max committed blobs (in container, then
// name order) whose tags match where, each with the tags where names;
// container "" searches every container. In where, "@container" names the container. The marker is
// "container/name" of the next result.
func (s *Service) FindBlobsByTags(ctx context.Context, container, where, marker string, max int) ([]TaggedBlob, string, error) {
	if _, err := MatchTags(where, nil); err != nil {
		return nil, "", err
	}
	named, err := tagKeys(where)
	if err != nil {
		return nil, "", err
	}
	var containers []string
	if container != "" {
		if _, err := s.GetContainer(ctx, container, ""); err != nil {
			return nil, "", err
		}
		containers = []string{container}
	} else {
		from := ""
		for {
			cs, err := s.meta.ListContainers(ctx, "", from, listBatch)
			if err != nil {
				return nil, "", err
			}
			for _, c := range cs {
				containers = append(containers, c.Name)
			}
			if len(cs) < listBatch {
				break
			}
			from = cs[len(cs)-1].Name + "\x00"
		}
	}
	mc, mn, _ := strings.Cut(marker, "/")
	var out []TaggedBlob
	for _, c := range containers {
		if c < mc {
			continue
		}
		from := ""
		if c == mc {
			from = mn
		}
		for {
			rows, err := s.meta.ListBlobs(ctx, c, "", from, listBatch)
			if err != nil {
				return nil, "", err
			}
			for _, b := range rows {
				if !b.Committed || len(b.Tags) == 0 {
					continue
				}
				tags := make(map[string]string, len(b.Tags)+1)
				for k, v := range b.Tags {
					tags[k] = v
				}
				tags["@container"] = c
				ok, err := MatchTags(where, tags)
				if err != nil {
					return nil, "", err
				}
				if !ok {
					continue
				}
				if len(out) == max {
					return out, c + "/" + b.Name, nil
				}
				// Azure answers the tags the expression names, not all
				// of the blob's (TestFilterBlobsWithTags: two of four).
				matched := map[string]string{}
				for k, v := range b.Tags {
					if named[k] {
						matched[k] = v
					}
				}
				out = append(out, TaggedBlob{Container: c, Name: b.Name, Tags: matched})
			}
			if len(rows) < listBatch {
				break
			}
			from = rows[len(rows)-1].Name + "\x00"
		}
	}
	return out, "", nil
}
