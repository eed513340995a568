package blob

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/storagehttp"
)

// FuzzParseBlockList: any body either decodes into entries of the three
// kinds, in document order, or is refused with 400 InvalidXmlDocument —
// never a panic, never another error.
func FuzzParseBlockList(f *testing.F) {
	for _, s := range []string{
		`<BlockList><Latest>QUFB</Latest><Committed>QkJC</Committed><Uncommitted>Q0ND</Uncommitted></BlockList>`,
		`<?xml version="1.0" encoding="utf-8"?><BlockList></BlockList>`,
		`<BlockList><Latest>`, `<Foo/>`, ``, `<BlockList><Latest><x/></Latest></BlockList>`,
		`<BlockList><Latest>&amp;&#x0;</Latest></BlockList>`, `<BlockList/><BlockList/>`,
		`<!DOCTYPE x [<!ENTITY a "aaaa">]><BlockList><Latest>&a;</Latest></BlockList>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		refs, err := parseBlockList(strings.NewReader(body))
		if err != nil {
			var e *storagehttp.Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Code != storagehttp.CodeInvalidXMLDocument {
				t.Fatalf("error %v is not 400 InvalidXmlDocument", err)
			}
			return
		}
		if len(refs) > blobsvc.MaxCommittedBlocks {
			t.Fatalf("%d entries accepted", len(refs))
		}
		for _, r := range refs {
			switch r.Where {
			case blobsvc.BlockLatest, blobsvc.BlockCommitted, blobsvc.BlockUncommitted:
			default:
				t.Fatalf("entry kind %q", r.Where)
			}
		}
	})
}

// negativeRange is the form of a range Azure ignores.
var negativeRange = regexp.MustCompile(`^-[0-9]+-(-?[0-9]+)?$`)

// FuzzRangeHeader: a Range / x-ms-range value either parses into a
// non-negative start with an end ≥ start (or open), is ignored when its
// start is negative ("bytes=-N-", "bytes=-N-M" or "bytes=-N--M", as
// Azure ignores it),
// or is 400 InvalidHeaderValue.
func FuzzRangeHeader(f *testing.F) {
	for _, s := range []string{"bytes=0-", "bytes=5-9", "bytes=9-5", "bytes=-5", "bytes=", "bytes=1-2-3", "items=0-1", "bytes=99999999999999999999-", "bytes=-1-", "bytes=-2-497", "bytes=-22--9", "bytes=--1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{}
		h.Set("x-ms-range", v)
		r, err := byteRange(h)
		if err != nil {
			var e *storagehttp.Error
			if !errors.As(err, &e) || e.Code != storagehttp.CodeInvalidHeaderValue {
				t.Fatalf("error %v", err)
			}
			return
		}
		if r == nil {
			spec, _ := strings.CutPrefix(h.Get("x-ms-range"), "bytes=")
			if h.Get("x-ms-range") != "" && !negativeRange.MatchString(spec) {
				t.Fatalf("%q ignored", v)
			}
			return
		}
		if r.Start < 0 || (r.End >= 0 && r.End < r.Start) || r.End < -1 {
			t.Fatalf("%q → %+v", v, r)
		}
	})
}
