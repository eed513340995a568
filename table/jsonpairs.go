package table

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// jsonPair is one member of a request body's object: the key and the
// value as encoding/json's Decoder.Token gives it (string, json.Number,
// bool, nil, or json.Delim for a nested object or array, which
// decodeEntity refuses).
type jsonPair struct {
	key string
	tok any
}

// tokenPairs reads the body's members with encoding/json's tokenizer and
// hands each to member as it is read, so that a body is refused at its
// first fault, whatever follows; malformed bodies get their precise
// errors.
func tokenPairs(body []byte, member func(key string, tok any) error) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return invalidInput("The request body must be one JSON object.")
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return invalidInput("The request body is not valid JSON.")
		}
		key, _ := kt.(string)
		vt, err := dec.Token()
		if err != nil {
			return invalidInput("The request body is not valid JSON.")
		}
		if err := member(key, vt); err != nil {
			return err
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return invalidInput("The request body is not valid JSON.")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalidInput("The request body holds more than one JSON value.")
	}
	return nil
}

// flatPairs is the fast path for the common body, a valid JSON object
// (whose members decodeEntity then takes in order, as from tokenPairs): json.Valid checks the grammar without allocating, after which
// the members are sliced out directly (a string is copied once, unescaped
// by encoding/json only if it holds a backslash). The Token-based reader
// cost 5 µs of an Insert Entity's 8 µs of decoding. ok is false for
// anything else (invalid JSON, not an object), which tokenPairs answers.
// body must be valid UTF-8 (decodeEntity checks that first), as
// encoding/json would replace invalid bytes.
func flatPairs(body []byte) (pairs []jsonPair, ok bool) {
	if !json.Valid(body) {
		return nil, false
	}
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, false
	}
	i = skipSpace(body, i+1)
	if body[i] == '}' {
		return nil, true
	}
	for {
		key, j, ok := jsonString(body, i)
		if !ok {
			return nil, false
		}
		i = skipSpace(body, j)
		if body[i] != ':' {
			return nil, false
		}
		i = skipSpace(body, i+1)
		var tok any
		switch c := body[i]; {
		case c == '"':
			s, j, ok := jsonString(body, i)
			if !ok {
				return nil, false
			}
			tok, i = s, j
		case c == '{' || c == '[':
			// Nested: decodeEntity refuses the body at this member.
			return append(pairs, jsonPair{key, json.Delim(c)}), true
		case c == 't':
			tok, i = true, i+len("true")
		case c == 'f':
			tok, i = false, i+len("false")
		case c == 'n':
			tok, i = nil, i+len("null")
		default: // a number: up to the next delimiter
			j := i
			for j < len(body) && !isJSONDelim(body[j]) {
				j++
			}
			tok, i = json.Number(body[i:j]), j
		}
		pairs = append(pairs, jsonPair{key, tok})
		i = skipSpace(body, i)
		switch body[i] {
		case ',':
			i = skipSpace(body, i+1)
		case '}':
			return pairs, true
		default:
			return nil, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func isJSONDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// jsonString reads the valid JSON string starting at b[i] ('"') and
// returns it and the index after its closing quote.
func jsonString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	escaped := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++ // skip the escaped character (a \u's digits are plain)
		case '"':
			if !escaped {
				return string(b[i+1 : j]), j + 1, true
			}
			var s string
			if err := json.Unmarshal(b[i:j+1], &s); err != nil {
				return "", 0, false
			}
			return s, j + 1, true
		}
	}
	return "", 0, false
}
