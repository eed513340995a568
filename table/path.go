package table

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/blobshare/blobshare/storagehttp"
)

// scope says which kind of URL an operation addresses.
type scope uint8

const (
	scopeService  scope = iota // /<account>/ (service properties)
	scopeTables                // /<account>/Tables or Tables()
	scopeTable                 // /<account>/Tables('name')
	scopeBatch                 // /<account>/$batch
	scopeEntities              // /<account>/<table> or <table>()
	scopeEntity                // /<account>/<table>(PartitionKey='pk',RowKey='rk')
)

// resourcePath is a parsed request path. table is as written in the URL
// (tablesvc looks names up case-insensitively); pk and rk are decoded.
type resourcePath struct {
	account, table string
	pk, rk         string
	scope          scope
}

// maxPathBytes bounds the escaped path: two keys of 1 KiB each,
// percent-encoded (3 bytes a byte), plus the rest.
const maxPathBytes = 8 << 10

// parsePath splits the escaped path into the account and the one OData
// resource segment after it, percent-decodes the segment and parses it.
// Shapes it does not know are 400 InvalidUri; names and keys are
// tablesvc's to validate.
//
// host is the host the request addressed: a production-style host
// (<account>.table.…) names the account and the path starts at the
// resource segment (storagehttp.PathStyle).
func parsePath(host, escaped string) (resourcePath, error) {
	var p resourcePath
	escaped = storagehttp.PathStyle(host, "table", escaped)
	if !strings.HasPrefix(escaped, "/") || len(escaped) > maxPathBytes {
		return p, errInvalidURI()
	}
	acct, rest, _ := strings.Cut(escaped[1:], "/")
	rest = strings.TrimSuffix(rest, "/")
	if strings.Contains(rest, "/") {
		return p, errInvalidURI()
	}
	var err error
	if p.account, err = url.PathUnescape(acct); err != nil {
		return p, errInvalidURI()
	}
	seg, err := url.PathUnescape(rest)
	if err != nil || !utf8.ValidString(seg) {
		return p, errInvalidURI()
	}
	if err := parseSegment(seg, &p); err != nil {
		return p, err
	}
	return p, nil
}

// parseSegment parses the decoded resource segment: "", "Tables",
// "Tables()", "Tables('name')", "$batch", "name", "name()" or
// "name(PartitionKey='pk',RowKey='rk')" (keys in either order, single
// quotes doubled inside a key).
func parseSegment(seg string, p *resourcePath) error {
	switch seg {
	case "":
		p.scope = scopeService
		return nil
	case "Tables", "Tables()":
		p.scope = scopeTables
		return nil
	case "$batch":
		p.scope = scopeBatch
		return nil
	}
	name, args, hasArgs := strings.Cut(seg, "(")
	if name == "" || strings.ContainsAny(name, "')$,=") {
		return errInvalidURI()
	}
	if !hasArgs {
		p.table, p.scope = name, scopeEntities
		return nil
	}
	if !strings.HasSuffix(args, ")") {
		return errInvalidURI()
	}
	args = args[:len(args)-1]
	if name == "Tables" {
		t, rest, ok := quoted(args)
		if !ok || rest != "" {
			return errInvalidURI()
		}
		p.table, p.scope = t, scopeTable
		return nil
	}
	p.table = name
	if args == "" {
		p.scope = scopeEntities
		return nil
	}
	pk, rk, err := parseKeys(args)
	if err != nil {
		return err
	}
	p.pk, p.rk, p.scope = pk, rk, scopeEntity
	return nil
}

// parseKeys parses "PartitionKey='pk',RowKey='rk'" (either order, each
// once).
func parseKeys(s string) (pk, rk string, err error) {
	var seenPK, seenRK bool
	for i := 0; i < 2; i++ {
		name, rest, ok := strings.Cut(s, "=")
		if !ok {
			return "", "", errInvalidURI()
		}
		v, after, ok := quoted(rest)
		if !ok {
			return "", "", errInvalidURI()
		}
		switch {
		case name == "PartitionKey" && !seenPK:
			pk, seenPK = v, true
		case name == "RowKey" && !seenRK:
			rk, seenRK = v, true
		default:
			return "", "", errInvalidURI()
		}
		if i == 0 {
			if !strings.HasPrefix(after, ",") {
				return "", "", errInvalidURI()
			}
			s = after[1:]
		} else if after != "" {
			return "", "", errInvalidURI()
		}
	}
	return pk, rk, nil
}

// quoted reads a single-quoted OData string literal at the start of s
// (” stands for one quote) and returns its value and what follows.
func quoted(s string) (v, rest string, ok bool) {
	if !strings.HasPrefix(s, "'") {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), s[i+1:], true
	}
	return "", "", false
}

// keyLiteral renders a key as an OData string literal, quotes doubled.
func keyLiteral(k string) string { return "'" + strings.ReplaceAll(k, "'", "''") + "'" }

// entityPath is "<table>(PartitionKey='pk',RowKey='rk')", keys
// percent-encoded as a URL path segment (odata.id, editLink, Location).
func entityPath(table, pk, rk string) string {
	return url.PathEscape(table) + "(PartitionKey=" + escapeLiteral(pk) + ",RowKey=" + escapeLiteral(rk) + ")"
}

// escapeLiteral percent-encodes a key literal for a path, quotes kept as
// they are (Azure writes t(PartitionKey='p',RowKey='r')).
func escapeLiteral(k string) string {
	return strings.ReplaceAll(url.PathEscape(keyLiteral(k)), "%27", "'")
}

func errInvalidURI() *storagehttp.Error {
	return storagehttp.NewError(http.StatusBadRequest, storagehttp.CodeInvalidURI,
		"The requested URI does not represent any resource on the server.")
}
