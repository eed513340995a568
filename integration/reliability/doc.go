// Package reliability holds blobshare's reliability suite: crashes,
// a full or failing disk, contention and hostile input, each against the
// real `blobshare serve` binary (built once in TestMain), real SQLite
// files, real FUSE mounts and the official azfile SDK. It has no code of
// its own besides this file; everything is in the tests.
//
// # Running it
//
// Short form (CI, part of `make test`; about two minutes on two cores):
//
//	go test ./integration/reliability
//
// Long form (hundreds of kills, more contention, a fuzzing session):
//
//	BLOBSHARE_CRASH_KILLS=300 BLOBSHARE_CONTENTION_OPS=400 \
//	    go test ./integration/reliability -run 'TestCrashMatrix|TestContention' -timeout 60m -v
//	go test ./integration/reliability -run '^$' -fuzz FuzzRequest -fuzztime 10m
//
// BLOBSHARE_CRASH_SEED (default 1) picks another kill schedule; a failure
// names the seed and the kill number. Tests needing FUSE or mount(2) (root
// and /dev/fuse) skip without them, and fail under BLOBSHARE_REQUIRE_ALL=1.
//
// # Crash matrix (crash_test.go, model_test.go, content_test.go)
//
// Each round starts `serve --mount`, runs REST and mount clients for a
// seeded random time (50 ms to 1.25 s), SIGKILLs the server, detaches the
// dead mount (MNT_DETACH), restarts and checks. Clients:
//
//   - slot writers: a file is cut into fixed slots; each write replaces one
//     whole slot (one Put Range, or one pwrite+fsync on the mount) with a
//     record naming file, slot and version, the rest derived from them
//     (content_test.go), so a torn or stale slot is always detected. The
//     REST file p0 has a slot across the 4 MiB block boundary; p1 and s1
//     stay small enough to live inline in SQLite; x0 is written by the
//     mount (even slots) and REST (odd slots) at once. Single-writer files
//     are also resized (Set File Properties, ftruncate+fsync).
//   - whole-file replacement: write a temporary file, then rename it over
//     the name (REST rename with replace-if-exists; on the mount write,
//     fsync, close, rename) — each version has its own length.
//   - delete: files created and unlinked on the mount while a descriptor
//     keeps them open (delete pending at the crash), and REST deletes.
//   - a mount descriptor holding an fcntl write lock until the crash.
//
// The model (model_test.go) keeps each writer's acknowledged state and its
// one operation in flight; after the restart the file must equal the
// acknowledged state with or without that operation, never anything else.
// Checks per kill: PRAGMA integrity_check; every slot file and whole file
// (content and, for slot files, the mount's view equal to REST's); every
// acknowledged delete gone (404), including the pending ones; no rows in
// lk_handles, lk_locks, pending deletes, unlinked entries, ns_intents or
// ns_gc; List Handles empty; a Put Range over the dead mount's lock range
// succeeds; every blob key directory belongs to a live file and no staged
// or half-written blob file (s-, t-, mt-) survives the restart. A worker
// that fails while the server is alive is itself a failure. The test
// prints the number of kills and the checks passed per kind.
//
// A kill that leaves the server unable to exit (a thread in uninterruptible
// sleep on its own mount) is detected after 10 s, reported with the kernel
// stacks of the stuck threads, and cleared by aborting the mount's FUSE
// connection through fusectl (mounted on demand).
//
// TestCrashBesideSurvivor (survivor_test.go) kills a `serve --mount` while a
// second serve on the same data directory lives on and is never
// restarted: the survivor alone must clear the dead process's byte-range
// lock, pending delete, open handles (List Handles) and lease obstacles as
// it meets them (odd rounds meet them in reverse order).
//
// # Disk full and I/O errors (diskfull_test.go)
//
// --data lives on a 64 MiB tmpfs mounted by the test. It is filled over
// REST and then over the mount: the mount must report ENOSPC, REST an
// Azure error that the SDKs do not retry (a 5xx is retried: the test
// measures how long a default-option client takes to give up); files
// stored before stay intact (SHA-256 over REST and the mount); after
// deleting the filler, writes work again. The I/O-error variant turns the
// blob store read-only under the running server (a read-only bind mount
// over <data>/blobs): writes fail with EROFS/EIO, reads work, recovery
// after the bind is removed.
//
// # Contention (contention_test.go)
//
// 32 REST clients split over two serve processes on one data directory
// (SQLite contended across processes) plus four mount writers taking fcntl
// locks hammer four files and one directory: own-slot Put Range, whole
// reads (each slot must decode: no torn read), create/delete of files and
// directories, renames, lease acquire/write/release, metadata, listings.
// Every failure must be a legitimate race or lock outcome (the legitimate
// table); anything else, SQLITE_BUSY in a server log, or not finishing
// before the deadline (then both servers are SIGQUIT for their stacks)
// fails. At the end every acknowledged slot write is there.
//
// # Hostile input (hostile_test.go, fuzz_test.go)
//
// Raw TCP against a running serve with SharedKey auth: Content-Length and
// x-ms-content-length of 2^63 and 2^63-1, ranges to 2^63, 10,000 headers,
// a 1 MB header value, an endless chunked body, malformed XML, absurd
// maxresults, unsigned requests, a wrong key, expired, tampered and
// widened SAS, a wrong account, and path traversal in every spelling
// (.., %2e%2e, %2f, %5c, NUL) for reads and writes. Each gets its Azure
// status and code; the server's VmHWM must grow by less than 96 MiB; a
// canary file beside --data is never served nor changed and nothing is
// created beside --data. FuzzRequest feeds raw requests through the whole
// in-process REST stack (rest over fs over SQLite and the local blob
// store), with and without authentication: never a 5xx, every refusal
// carries x-ms-error-code, nothing written outside the data directory.
// TestHostileStalledUploads (slowbody_test.go) stalls 48 Put Range
// uploads one byte short of 4 MiB, with and without Content-MD5: the
// server's peak memory must grow by less than 96 MiB.
// Its corpus (testdata/fuzz/FuzzRequest) covers every operation and
// header family and runs in every `go test`.
//
// # Traps
//
//   - A killed server leaves a dead FUSE mount: descriptors on it return
//     ENOTCONN, and the mount point must be detached before remounting.
//   - The crash checks read <data>/blobshare.db read-only beside the
//     running server (WAL); they never write to it.
//   - Each kill point is random in time, not in code: a failure is
//     reproduced by its seed often but not always; rerun with the same
//     BLOBSHARE_CRASH_SEED and more kills.
package reliability
