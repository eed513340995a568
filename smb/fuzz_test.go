package smb

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/blobshare/blobshare/fs"
)

// FuzzHeader: any 64+ bytes decode without panic, and what decodes
// encodes back to the same fields.
func FuzzHeader(f *testing.F) {
	h := header{Command: cmdCreate, Credits: 3, MessageID: 7, SessionID: 9, TreeID: 1}
	b := make([]byte, headerSize)
	h.encode(b)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeHeader(b)
		if err != nil {
			return
		}
		out := make([]byte, headerSize)
		h.encode(out)
		h2, err := decodeHeader(out)
		if err != nil || h2 != h {
			t.Fatalf("round trip: %+v -> %+v (%v)", h, h2, err)
		}
	})
}

// requestSeeds are well-formed bodies of each command the fuzzer starts
// from (as rawClient builds them).
func requestSeeds() map[uint16][]byte {
	create := func(name string, opts uint32) []byte {
		n := utf16le(name)
		b := make([]byte, 56, 56+len(n))
		le.PutUint16(b, 57)
		le.PutUint32(b[24:], 0xc0000000)
		le.PutUint32(b[32:], 7)
		le.PutUint32(b[36:], 3)
		le.PutUint32(b[40:], opts)
		le.PutUint16(b[44:], headerSize+56)
		le.PutUint16(b[46:], uint16(len(n)))
		return append(b, n...)
	}
	withFile := func(size uint16, n int, at int) []byte {
		b := make([]byte, n)
		le.PutUint16(b, size)
		relatedFileID.put(b[at:])
		return b
	}
	write := withFile(49, 48, 16)
	le.PutUint16(write[2:], headerSize+48)
	le.PutUint32(write[4:], 5)
	write = append(write, "hello"...)
	read := withFile(49, 49, 16)
	le.PutUint32(read[4:], 5)
	lock := withFile(48, 48, 8)
	le.PutUint16(lock[2:], 1)
	le.PutUint64(lock[32:], 5)
	le.PutUint32(lock[40:], lockExclusive|lockFailImmediately)
	qd := withFile(33, 32, 8)
	qd[2] = classFileIDBothDirectoryInformation
	le.PutUint16(qd[24:], headerSize+32)
	le.PutUint16(qd[26:], 2)
	le.PutUint32(qd[28:], 65536)
	qd = append(qd, '*', 0)
	qi := withFile(41, 40, 24)
	qi[2], qi[3] = infoFile, fileAllInformation
	le.PutUint32(qi[4:], 4096)
	si := withFile(33, 32, 16)
	si[2], si[3] = infoFile, fileRenameInformation
	name := utf16le(`d\y.txt`)
	info := make([]byte, 20)
	le.PutUint32(info[16:], uint32(len(name)))
	info = append(info, name...)
	le.PutUint32(si[4:], uint32(len(info)))
	le.PutUint16(si[8:], headerSize+32)
	si = append(si, info...)
	return map[uint16][]byte{
		cmdCreate:         create(`d\x.txt`, 0x40),
		cmdWrite:          write,
		cmdRead:           read,
		cmdLock:           lock,
		cmdQueryDirectory: qd,
		cmdQueryInfo:      qi,
		cmdSetInfo:        si,
		cmdFlush:          withFile(24, 24, 8),
		cmdClose:          withFile(24, 24, 8),
		cmdIoctl:          withFile(57, 56, 8),
		cmdEcho:           {4, 0, 0, 0},
		cmdTreeDisconnect: {4, 0, 0, 0},
		cmdLogoff:         {4, 0, 0, 0},
	}
}

// FuzzFrame serves arbitrary frames on a connection that has negotiated
// and logged on (signing off, so that inputs reach every decoder): a
// compound CREATE + request seeds the corpus for each command. Nothing may
// panic; the fs must stay usable.
func FuzzFrame(f *testing.F) {
	fsys := newTestFS(f)
	srv, err := New(Config{FS: fsys, Account: testAccount, Key: testKey, SigningOptional: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		f.Fatal(err)
	}
	share, err := fsys.GetShare(context.Background(), "data")
	if err != nil {
		f.Fatal(err)
	}
	seeds := requestSeeds()
	create := seeds[cmdCreate]
	eas := eaSeeds()
	f.Add(frameOf(header{Command: cmdCreate, SessionID: 1, TreeID: 1}, eas[cmdCreate]))
	for _, cmd := range []uint16{cmdSetInfo, cmdQueryInfo} {
		first := appendPad(frameOf(header{Command: cmdCreate, SessionID: 1, TreeID: 1}, eas[cmdCreate]))
		le.PutUint32(first[20:], uint32(len(first)))
		f.Add(append(first, frameOf(header{Command: cmd, MessageID: 1, Flags: flagRelated}, eas[cmd])...))
	}
	for cmd, body := range seeds {
		one := frameOf(header{Command: cmd, SessionID: 1, TreeID: 1}, body)
		f.Add(one)
		// CREATE, then cmd on the created file (related), as clients compound.
		first := frameOf(header{Command: cmdCreate, SessionID: 1, TreeID: 1}, create)
		for len(first)%8 != 0 {
			first = append(first, 0)
		}
		le.PutUint32(first[20:], uint32(len(first)))
		second := frameOf(header{Command: cmd, MessageID: 1, Flags: flagRelated}, body)
		f.Add(append(first, second...))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		a, b := net.Pipe()
		defer b.Close()
		c := newConn(srv, a)
		c.negotiated, c.dialect, c.maxIO, c.maxRead, c.seqHi = true, dialect311, maxIO, maxRead, 1<<40
		s := &session{id: 1, trees: map[uint32]*tree{1: {id: 1, share: share.Name, shareID: share.ID}}, opens: map[uint64]*open{},
			channels: map[*conn]signer{}}
		s.valid.Store(true)
		s.addChannel(c, nil)
		c.sessions[1] = s
		_, _, _ = c.handleFrame(context.Background(), frame, nil)
		c.close()
	})
}

// eaSeeds are requests that carry EA lists: a CREATE with an ExtA
// context, and SET_INFO and QUERY_INFO (with a name list) of
// FileFullEaInformation on the related file.
func eaSeeds() map[uint16][]byte {
	list := eaList(fs.EA{Name: "EAONE", Value: []byte("VALUE1")}, fs.EA{Name: "TWO", Flags: eaNeedEA, Value: []byte{0}})
	n := utf16le("ea.txt")
	create := make([]byte, 56, 128)
	le.PutUint16(create, 57)
	le.PutUint32(create[24:], 0xc0000018)
	le.PutUint32(create[32:], 7)
	le.PutUint32(create[36:], 3)
	le.PutUint16(create[44:], headerSize+56)
	le.PutUint16(create[46:], uint16(len(n)))
	create = appendPad(append(create, n...))
	ctx := createContext("ExtA", list)
	le.PutUint32(create[48:], uint32(headerSize+len(create)))
	le.PutUint32(create[52:], uint32(len(ctx)))
	create = append(create, ctx...)
	get := append([]byte{0, 0, 0, 0, 5}, "EAONE\x00"...)
	return map[uint16][]byte{
		cmdCreate:    create,
		cmdSetInfo:   setEAsBody(relatedFileID, list),
		cmdQueryInfo: queryEAsBody(relatedFileID, 4096, 0, 0, get),
	}
}

func frameOf(h header, body []byte) []byte {
	b := make([]byte, headerSize, headerSize+len(body))
	h.encode(b)
	return append(b, body...)
}

// FuzzMatchPattern: QUERY_DIRECTORY patterns never panic and cost at most
// len(pattern)·len(name) steps; "*" matches everything.
func FuzzMatchPattern(f *testing.F) {
	f.Add("*.txt", "a.txt")
	f.Add("<.t>t", "a.b.txt")
	f.Add("*a*a*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		matchPattern(pattern, name)
		if !matchPattern("*", name) {
			t.Fatalf("* did not match %q", name)
		}
	})
}

func TestMatchPattern(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*", "anything", true},
		{"*.txt", "A.TXT", true},
		{"*.txt", "a.txt.bak", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"<.txt", "a.b.txt", true},
		{"<", "a.b", false}, // "<" stops at the last dot
		{"<.b", "a.b", true},
		{"<", "ab", true},
		{"a>", "a", true},
		{"a\"", "a", true},
		{"a\"txt", "a.txt", true},
		{"*a*a*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	}
	for _, tt := range tests {
		if got := matchPattern(tt.pattern, tt.name); got != tt.want {
			t.Errorf("matchPattern(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}
