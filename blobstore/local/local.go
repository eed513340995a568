package local

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/blobshare/blobshare/blobstore"
)

// Store is the local directory backend. Create it with New.
type Store struct {
	dir     string // absolute root
	keysDir string // dir/keys: one directory per key
	log     *slog.Logger
	locks   keyLocks
	bufs    sync.Pool // *[]byte of copyBufSize
	now     func() time.Time
}

var (
	_ blobstore.Store            = (*Store)(nil)
	_ blobstore.GarbageCollector = (*Store)(nil)
	_ blobstore.DurableStager    = (*Store)(nil)
)

// Option configures a Store.
type Option func(*Store)

// WithLogger sets the logger for best-effort cleanups that fail (the
// default discards).
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// WithClock sets the clock used for LastModified (tests).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

const (
	formatFile   = "FORMAT"
	formatLine   = "blobshare local blobstore v1\n"
	keysDirName  = "keys"
	manifestName = "m"
	lockName     = "lock"
	blockPrefix  = "b-"  // committed block data, unique name per staging
	stagedPrefix = "s-"  // staged block: s-<block id>
	tempPrefix   = "t-"  // block being staged
	mtempPrefix  = "mt-" // manifest being written
	copyBufSize  = 1 << 20
	// maxEscapedKey keeps a key's directory name within NAME_MAX (255)
	// with room to spare; longer keys get hashed directory names.
	maxEscapedKey = 240
)

// New opens (creating if needed) a store rooted at dir. An existing
// non-empty dir must be a store created by New (it holds a FORMAT file);
// New checks that it can create, sync and rename files there.
func New(dir string, opts ...Option) (*Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("local blobstore: empty directory: %w", fs.ErrInvalid)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("local blobstore %s: %w", dir, err)
	}
	s := &Store{
		dir:     abs,
		keysDir: filepath.Join(abs, keysDirName),
		log:     slog.New(slog.DiscardHandler),
		now:     time.Now,
	}
	s.locks.m = make(map[string]*keyLock)
	s.bufs.New = func() any { b := make([]byte, copyBufSize); return &b }
	for _, o := range opts {
		o(s)
	}
	if err := s.initDir(); err != nil {
		return nil, err
	}
	return s, nil
}

// Dir returns the store's root directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) initDir() error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("local blobstore %s: %w", s.dir, err)
	}
	st, err := os.Stat(s.dir)
	if err != nil {
		return fmt.Errorf("local blobstore %s: %w", s.dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("local blobstore %s: not a directory: %w", s.dir, fs.ErrInvalid)
	}
	fpath := filepath.Join(s.dir, formatFile)
	b, err := os.ReadFile(fpath)
	switch {
	case err == nil:
		if string(b) != formatLine {
			return fmt.Errorf("local blobstore %s: unknown format %q: %w", s.dir, strings.TrimSpace(string(b)), fs.ErrInvalid)
		}
	case errors.Is(err, fs.ErrNotExist):
		ents, err := os.ReadDir(s.dir)
		if err != nil {
			return fmt.Errorf("local blobstore %s: %w", s.dir, err)
		}
		// Another process may be formatting the directory right now:
		// its temp file, FORMAT or keys may already be there.
		for _, e := range ents {
			if n := e.Name(); n == formatFile || n == keysDirName || strings.HasPrefix(n, mtempPrefix) {
				continue
			}
			return fmt.Errorf("local blobstore %s: directory is not empty and holds no %s file: %w", s.dir, formatFile, fs.ErrInvalid)
		}
		// Self check and format in one: temp file, sync, rename, sync dir.
		if err := writeFileAtomic(s.dir, fpath, []byte(formatLine)); err != nil {
			return fmt.Errorf("local blobstore %s: %w", s.dir, err)
		}
	default:
		return fmt.Errorf("local blobstore %s: %w", s.dir, err)
	}
	if err := os.Mkdir(s.keysDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("local blobstore %s: %w", s.dir, err)
	}
	return syncDir(s.dir)
}

// writeFileAtomic writes data to path through a synced temp file in dir.
func writeFileAtomic(dir, path string, data []byte) error {
	f, err := os.CreateTemp(dir, mtempPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// keyDir validates key and returns its directory.
func (s *Store) keyDir(key string) (string, error) {
	if err := blobstore.ValidKey(key); err != nil {
		return "", err
	}
	return filepath.Join(s.keysDir, keyDirName(key)), nil
}

// hashedPrefix starts the directory name of keys too long to escape into
// one file name; '#' never starts an escaped key (it escapes to %23).
const hashedPrefix = "#"

// keyDirName is the escaped key, or, when that would exceed
// maxEscapedKey, "#" and the SHA-256 of the key (the key itself is then
// known only from the manifest, which records every key).
func keyDirName(key string) string {
	esc := escapeKey(key)
	if len(esc) <= maxEscapedKey {
		return esc
	}
	sum := sha256.Sum256([]byte(key))
	return hashedPrefix + hex.EncodeToString(sum[:])
}

// ensureKeyDir creates the key directory, syncing the parent when it is new.
func (s *Store) ensureKeyDir(kd string) error {
	err := os.Mkdir(kd, 0o755)
	if err == nil {
		return syncDir(s.keysDir)
	}
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	return err
}

// escapeKey maps a key to one file name: [A-Za-z0-9_.-] stay, every other
// byte becomes %XX. Reversible by unescapeKey; not order preserving (List
// sorts after decoding).
func escapeKey(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteString(strings.ToUpper(hex.EncodeToString([]byte{c})))
	}
	return b.String()
}

func unescapeKey(name string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(name) {
			return "", false
		}
		v, err := hex.DecodeString(name[i+1 : i+3])
		if err != nil {
			return "", false
		}
		b.WriteByte(v[0])
		i += 2
	}
	return b.String(), true
}

// manifest is a committed version: the file "m" in the key directory,
// replaced (never rewritten) by each commit. Its text form (manifest.go)
// is cheap to parse, which matters: every read parses it.
type manifest struct {
	Key      string
	ETag     string
	Modified time.Time
	Blocks   []manifestBlk
}

type manifestBlk struct {
	ID   string
	Size int64
	File string // b-<unique> in the key directory
}

func (m *manifest) info(key string) blobstore.Info {
	var size int64
	for _, b := range m.Blocks {
		size += b.Size
	}
	return blobstore.Info{Key: key, Size: size, ETag: m.ETag, LastModified: m.Modified}
}

// readManifest reads the committed manifest of the key directory kd.
// A missing one is blobstore.ErrNotFound. Unless key is "" (caller does
// not know it), the manifest must be key's.
func readManifest(key, kd string) (*manifest, error) {
	path := filepath.Join(kd, manifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("blob %q: %w", key, blobstore.ErrNotFound)
		}
		return nil, fmt.Errorf("blob %q: read manifest: %w", key, err)
	}
	m, err := parseManifest(b)
	if err == nil && key != "" && m.Key != key {
		err = fmt.Errorf("%w: it belongs to key %q", errCorrupt, m.Key)
	}
	if err != nil {
		return nil, fmt.Errorf("blob %q: manifest %s: %w", key, path, err)
	}
	return m, nil
}

// randHex returns 2n random hex digits.
func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails since Go 1.24
	return hex.EncodeToString(b)
}

func newETag() string { return `"0x` + strings.ToUpper(randHex(8)) + `"` }

// checkConds applies cond to the current manifest (nil: no blob).
func checkConds(key string, cur *manifest, cond blobstore.Conditions) error {
	etag := ""
	if cur != nil {
		etag = cur.ETag
	}
	if err := cond.Check(cur != nil, etag); err != nil {
		return fmt.Errorf("blob %q: %w", key, err)
	}
	return nil
}

func ctxErr(ctx context.Context, op, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s %q: %w", op, key, err)
	}
	return nil
}
