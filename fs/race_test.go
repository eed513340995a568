package fs

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// Calls that find a file in one transaction and act on it by id in a later
// one must not answer "not found" when the path existed all along and a
// concurrent rename or delete only moved the file in between: they start
// over and answer as a call made just after the race (reliability
// TestContention: Create File may not 404 while its parent exists).
func TestLookupActRaces(t *testing.T) {
	const names = 3
	rounds := 150
	if testing.Short() {
		rounds = 40
	}
	for _, tc := range []struct {
		name string
		call func(e *env, path string) error
	}{
		{"create file", func(e *env, path string) error {
			_, err := e.fs.CreateFile(ctxBG, CreateFileRequest{Path: path, Size: 1000})
			return err
		}},
		{"copy file", func(e *env, path string) error {
			_, err := e.fs.CopyFile(ctxBG, CopyFileRequest{Source: "data/src", Dest: path})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.share("data")
			_, err := e.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: "data/d"})
			mustNil(t, err, "mkdir")
			e.putFile("data/src", []byte("source"))
			ctx, cancel := context.WithCancel(ctxBG)
			var wg sync.WaitGroup
			// Churn: rename one name over another (replacing it) and
			// delete names, so a file found by a lookup often moves or
			// vanishes before the caller acts on it. (A pause per churn
			// step: against a path that churns without any pause a call
			// gives up after maxLookupRetries lost races, as busy. 1 ms, not
			// less: under the race detector on a loaded 2-core machine one
			// Copy File attempt — resolve, key locks, read the source,
			// stage, commit — spans several 200 µs steps, and in one make
			// test run of 2026-11-28 it lost 51 races in a row.)
			for w := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ctx.Err() == nil; i++ {
						a := fmt.Sprintf("data/d/n%d", (i+w)%names)
						b := fmt.Sprintf("data/d/n%d", (i+w+1)%names)
						if i%3 == 2 {
							_ = e.fs.DeleteFile(ctxBG, a, "")
						} else {
							_, _ = e.fs.RenamePath(ctxBG, RenamePathRequest{Source: a, Dest: b, ReplaceIfExists: true})
						}
						time.Sleep(time.Millisecond)
					}
				}()
			}
			errs := make(chan error, 4*rounds)
			var callers sync.WaitGroup
			for c := range 4 {
				callers.Add(1)
				go func() {
					defer callers.Done()
					for i := range rounds {
						path := fmt.Sprintf("data/d/n%d", (i+c)%names)
						if err := tc.call(e, path); err != nil {
							errs <- fmt.Errorf("%s %s: %w", tc.name, path, err)
						}
					}
				}()
			}
			callers.Wait()
			cancel()
			wg.Wait()
			close(errs)
			for err := range errs {
				// No handles are open and the parent always exists: every
				// call must succeed.
				if err != nil {
					t.Errorf("spurious failure: %v", err)
				}
			}
		})
	}
}

// resolve's collected path is what pathOf builds from the parents (stored
// case), for shares, directories and files at several depths.
func TestResolvedPath(t *testing.T) {
	e := newEnv(t)
	e.share("data")
	for _, d := range []string{"data/A", "data/A/Bb"} {
		_, err := e.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: d})
		mustNil(t, err, "mkdir "+d)
	}
	e.putFile("data/A/Bb/File.TXT", []byte("x"))
	e.putFile("data/top", []byte("y"))
	for _, path := range []string{"data", "data/a", "data/A/bb", "data/a/BB/file.txt", "data/TOP"} {
		t.Run(path, func(t *testing.T) {
			mustNil(t, e.fs.view(ctxBG, func(tx *locks.Tx, q *q) error {
				r, err := q.mustResolve(path)
				if err != nil {
					return err
				}
				want, err := q.pathOf(r.e)
				if err != nil {
					return err
				}
				if r.path != want {
					t.Errorf("resolve(%q).path = %q, pathOf = %q", path, r.path, want)
				}
				return nil
			}), "view")
		})
	}
}
