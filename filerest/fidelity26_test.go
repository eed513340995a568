package filerest_test

// Regression tests for the FileREST defects the azfile SDK's own live
// tests found (issue 26): each asserts what Azure answers, through the
// SDK where it can send the request, raw HTTP otherwise.

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"

	"github.com/blobshare/blobshare/filerest"
)

// Copy File without x-ms-file-attributes gives the destination a new
// file's attributes (Archive), not the source's (the SDK's
// TestFileStartCopySourceCreationTime: a ReadOnly|Hidden source copied
// with only the creation time from the source has other attributes).
func TestCopyFileDefaultAttributesAreArchive(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	src := e.file("share", "src.txt")
	if _, err := src.Create(ctxBG, 0, &file.CreateOptions{SMBProperties: &file.SMBProperties{
		Attributes: &file.NTFSFileAttributes{ReadOnly: true, Hidden: true},
	}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts *file.StartCopyFromURLOptions
		want string
	}{
		{"no SMB options", nil, "Archive"},
		{"creation time from the source", &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{
			CreationTime: file.SourceCopyFileCreationTime{}}}, "Archive"},
		{"attributes from the source", &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{
			Attributes: file.SourceCopyFileAttributes{}}}, "ReadOnly|Hidden"},
		{"attributes given", &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{
			Attributes: file.DestinationCopyFileAttributes{System: true}}}, "System"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := e.file("share", "dst "+c.name)
			if _, err := dst.StartCopyFromURL(ctxBG, src.URL(), c.opts); err != nil {
				t.Fatal(err)
			}
			p, err := dst.GetProperties(ctxBG, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := file.ParseNTFSFileAttributes(p.FileAttributes)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := file.ParseNTFSFileAttributes(to.Ptr(c.want))
			if *got != *want {
				t.Fatalf("attributes %q, want %q", *p.FileAttributes, c.want)
			}
		})
	}
}

// Put Range From URL keeps the last write time with
// x-ms-file-last-write-time: preserve (the SDK's
// TestFileUploadRangeFromURLPreserve), and sets it to now without.
func TestPutRangeFromURLPreservesLastWriteTime(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	src := e.mustFile("share", "src", bytes.Repeat([]byte("s"), 1024))
	srcSAS, err := src.GetSASURL(sas.FilePermissions{Read: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	written := time.Date(2023, 3, 31, 21, 0, 0, 0, time.UTC)
	dst := e.file("share", "dst")
	if _, err := dst.Create(ctxBG, 1024, &file.CreateOptions{SMBProperties: &file.SMBProperties{LastWriteTime: &written}}); err != nil {
		t.Fatal(err)
	}
	r, err := dst.UploadRangeFromURL(ctxBG, srcSAS, 0, 0, 512, &file.UploadRangeFromURLOptions{
		LastWrittenMode: to.Ptr(file.LastWrittenModePreserve)})
	if err != nil {
		t.Fatal(err)
	}
	if r.FileLastWriteTime == nil || !r.FileLastWriteTime.Equal(written) {
		t.Fatalf("preserve: last write time %v, want %v", r.FileLastWriteTime, written)
	}
	p, err := dst.GetProperties(ctxBG, nil)
	if err != nil || !p.FileLastWriteTime.Equal(written) {
		t.Fatalf("preserve: stored last write time %v (%v), want %v", p.FileLastWriteTime, err, written)
	}
	r, err = dst.UploadRangeFromURL(ctxBG, srcSAS, 512, 512, 512, &file.UploadRangeFromURLOptions{
		LastWrittenMode: to.Ptr(file.LastWrittenModeNow)})
	if err != nil {
		t.Fatal(err)
	}
	if r.FileLastWriteTime == nil || !r.FileLastWriteTime.After(written) {
		t.Fatalf("now: last write time %v, want later than %v", r.FileLastWriteTime, written)
	}
	dl, err := dst.DownloadStream(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(dl.Body)
	dl.Body.Close()
	if !bytes.Equal(body, bytes.Repeat([]byte("s"), 1024)) {
		t.Fatalf("content after the two copies: %q…", body[:16])
	}
}

// x-ms-file-property-semantics: Restore (with a permission, as it needs)
// leaves the attribute flags as given: none given is None, where New and
// no semantics give a new file Archive (the SDK's
// TestFileCreateFilePropertySemantics and TestDirCreateDirPropertySemantics).
func TestPropertySemanticsRestoreWithoutAttributes(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	perm := &file.Permissions{Permission: to.Ptr(sampleSDDL)}
	for i, c := range []struct {
		name     string
		ps       *file.PropertySemantics
		perm     *file.Permissions
		hidden   bool // x-ms-file-attributes: Hidden
		wantFile string
		wantDir  string
	}{
		{"default", nil, nil, false, "Archive", "Directory"},
		{"New", to.Ptr(file.FilePropertySemanticsNew), nil, false, "Archive", "Directory"},
		{"Restore", to.Ptr(file.FilePropertySemanticsRestore), perm, false, "None", "Directory"},
		// "If Restore is specified, the file permission must also be
		// provided or PropertySemantics will default to New."
		{"Restore without a permission", to.Ptr(file.FilePropertySemanticsRestore), nil, false, "Archive", "Directory"},
		{"Restore with attributes", to.Ptr(file.FilePropertySemanticsRestore), perm, true, "Hidden", "Hidden | Directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := &file.CreateOptions{FilePropertySemantics: c.ps, Permissions: c.perm}
			dopts := &directory.CreateOptions{FilePropertySemantics: c.ps, FilePermissions: c.perm}
			if c.hidden {
				opts.SMBProperties = &file.SMBProperties{Attributes: &file.NTFSFileAttributes{Hidden: true}}
				dopts.FileSMBProperties = &file.SMBProperties{Attributes: &file.NTFSFileAttributes{Hidden: true}}
			}
			fr, err := e.file("share", "f"+string(rune('0'+i))).Create(ctxBG, 1024, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(*fr.FileAttributes); got != c.wantFile {
				t.Fatalf("file attributes %q, want %q", got, c.wantFile)
			}
			dr, err := e.dir("share", "d"+string(rune('0'+i))).Create(ctxBG, dopts)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(*dr.FileAttributes); got != c.wantDir {
				t.Fatalf("directory attributes %q, want %q", got, c.wantDir)
			}
		})
	}
}

// A Delete Share right after the first answers 202 again while the share
// is being deleted (Azure's "at least 30 seconds"; the SDK's
// TestShareDeleteShareWithoutLeaseId deletes twice); later, and for a
// share never deleted, it is 404 ShareNotFound. The share is gone at once
// for every other operation.
func TestDeleteShareTwice(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, withClock(clock))
	s := e.mustShare("gone")
	if _, err := s.Delete(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctxBG, nil); err != nil {
		t.Fatalf("second delete right after the first: %v", err)
	}
	_, err := s.GetProperties(ctxBG, nil)
	wantCode(t, "properties of the deleted share", err, "ShareNotFound")
	clock.Advance(29 * time.Second)
	if _, err := s.Delete(ctxBG, nil); err != nil {
		t.Fatalf("delete 29 s after: %v", err)
	}
	clock.Advance(time.Second)
	_, err = s.Delete(ctxBG, nil)
	wantCode(t, "delete 30 s after", err, "ShareNotFound")
	_, err = e.share("never").Delete(ctxBG, nil)
	wantCode(t, "delete of a share never created", err, "ShareNotFound")
}

// Every AuthenticationFailed answer of FileREST carries the reason in
// AuthenticationErrorDetail after Azure's common message ("Server failed to
// authenticate the request. …"), whichever check refused it.
func TestAuthenticationFailedCarriesDetail(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.mustFile("share", "f.txt", []byte("x"))
	opts := &file.ClientOptions{ClientOptions: e.clientOptions()}
	cred, err := file.NewSharedKeyCredential(e.account, filerest.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	wrongKey, err := file.NewSharedKeyCredential(e.account, "d3Jvbmcga2V5IHdyb25nIGtleSB3cm9uZyBrZXkgd3Jvbmcga2V5")
	if err != nil {
		t.Fatal(err)
	}
	sasClient := func(v sas.SignatureValues, cred *file.SharedKeyCredential, edit func(string) string) *file.Client {
		t.Helper()
		v.Protocol, v.ShareName, v.FilePath = sas.ProtocolHTTPSandHTTP, "share", "f.txt"
		q, err := v.SignWithSharedKey(cred)
		if err != nil {
			t.Fatal(err)
		}
		u := f.URL() + "?" + q.Encode()
		if edit != nil {
			u = edit(u)
		}
		c, err := file.NewClientWithNoCredential(u, opts)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	wrongKeyClient, err := file.NewClientWithSharedKeyCredential(f.URL(), wrongKey, opts)
	if err != nil {
		t.Fatal(err)
	}
	read := (&sas.FilePermissions{Read: true}).String()
	hour := time.Now().Add(time.Hour)
	for _, c := range []struct {
		name   string
		client *file.Client
	}{
		{"SharedKey with a wrong key", wrongKeyClient},
		{"SAS signed with a wrong key", sasClient(sas.SignatureValues{Permissions: read, ExpiryTime: hour}, wrongKey, nil)},
		{"SAS expired", sasClient(sas.SignatureValues{Permissions: read, ExpiryTime: time.Now().Add(-time.Hour)}, cred, nil)},
		{"SAS not yet valid", sasClient(sas.SignatureValues{Permissions: read, StartTime: hour, ExpiryTime: hour.Add(time.Hour)}, cred, nil)},
		{"SAS naming an unknown policy", sasClient(sas.SignatureValues{Identifier: "nosuchpolicy"}, cred, nil)},
		{"SAS with a permission added", sasClient(sas.SignatureValues{Permissions: read, ExpiryTime: hour}, cred,
			func(u string) string { return strings.Replace(u, "sp=r&", "sp=rw&", 1) })},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.client.DownloadStream(ctxBG, nil)
			var re *azcore.ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("download: %v, want a refusal", err)
			}
			body, _ := io.ReadAll(re.RawResponse.Body)
			var x struct {
				Code    string
				Message string
				Detail  string `xml:"AuthenticationErrorDetail"`
			}
			if err := xml.Unmarshal(body, &x); err != nil {
				t.Fatalf("%d %s: %v", re.StatusCode, body, err)
			}
			if re.StatusCode != http.StatusForbidden || x.Code != "AuthenticationFailed" ||
				!strings.HasPrefix(x.Message, "Server failed to authenticate the request.") || x.Detail == "" {
				t.Fatalf("answer %d %s", re.StatusCode, body)
			}
		})
	}
}

// Snapshot Share ignores sharesnapshot= on its URL, valid or not, and
// snapshots the share as it is (the SDK's
// TestShareCreateSnapshotNegativeSnapshotOfSnapshot: "this would not fail,
// snapshot would be ignored").
func TestSnapshotShareIgnoresSharesnapshot(t *testing.T) {
	e := newEnv(t)
	s := e.mustShare("share")
	f := e.mustFile("share", "f.txt", []byte("old"))
	first, err := s.CreateSnapshot(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.UploadBuffer(ctxBG, []byte("new"), nil); err != nil {
		t.Fatal(err)
	}
	readAt := func(snap string) string {
		t.Helper()
		at, err := s.WithSnapshot(snap)
		if err != nil {
			t.Fatal(err)
		}
		dl, err := at.NewRootDirectoryClient().NewFileClient("f.txt").DownloadStream(ctxBG, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer dl.Body.Close()
		body, _ := io.ReadAll(dl.Body)
		return string(body)
	}
	if got := readAt(*first.Snapshot); got != "old" {
		t.Fatalf("the first snapshot holds %q", got)
	}
	for _, snap := range []string{*first.Snapshot, time.Date(2023, 3, 31, 20, 0, 0, 0, time.UTC).String()} {
		sc, err := s.WithSnapshot(snap)
		if err != nil {
			t.Fatal(err)
		}
		r, err := sc.CreateSnapshot(ctxBG, nil)
		if err != nil {
			t.Fatalf("snapshot through sharesnapshot=%s: %v", snap, err)
		}
		if r.Snapshot == nil || *r.Snapshot == *first.Snapshot {
			t.Fatalf("snapshot through sharesnapshot=%s answered %v, want a new snapshot", snap, deref(r.Snapshot))
		}
		if got := readAt(*r.Snapshot); got != "new" {
			t.Fatalf("the new snapshot holds %q, want the share's current %q", got, "new")
		}
	}
}

// Copy File from a file in a share snapshot (x-ms-copy-source with
// ?sharesnapshot=) copies the file as it was in the snapshot: onto itself
// (restore), onto a new name, and after the live file was deleted; for
// inline (small) and blob-backed files. A snapshot the share does not have
// is 404 ShareSnapshotNotFound.
func TestCopyFileFromShareSnapshot(t *testing.T) {
	for _, size := range []int{11, 300 << 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			e := newEnv(t)
			s := e.mustShare("share")
			old := bytes.Repeat([]byte("o"), size)
			f := e.mustFile("share", "f.txt", old)
			snap, err := s.CreateSnapshot(ctxBG, nil)
			if err != nil {
				t.Fatal(err)
			}
			newer := bytes.Repeat([]byte("n"), size+5)
			if _, err := f.Resize(ctxBG, int64(len(newer)), nil); err != nil {
				t.Fatal(err)
			}
			if err := f.UploadBuffer(ctxBG, newer, nil); err != nil {
				t.Fatal(err)
			}
			from := f.URL() + "?sharesnapshot=" + url.QueryEscape(*snap.Snapshot)
			check := func(what string, c *file.Client) {
				t.Helper()
				dl, err := c.DownloadStream(ctxBG, nil)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				got, _ := io.ReadAll(dl.Body)
				dl.Body.Close()
				if !bytes.Equal(got, old) {
					t.Fatalf("%s: %d bytes %q…, want the snapshot's %d bytes", what, len(got), got[:min(len(got), 8)], len(old))
				}
			}
			if _, err := f.StartCopyFromURL(ctxBG, from, nil); err != nil {
				t.Fatalf("restore onto itself: %v", err)
			}
			check("restored onto itself", f)
			other := e.file("share", "other.txt")
			if _, err := other.StartCopyFromURL(ctxBG, from, nil); err != nil {
				t.Fatalf("copy to a new name: %v", err)
			}
			check("copied to a new name", other)
			if _, err := f.Delete(ctxBG, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := f.StartCopyFromURL(ctxBG, from, nil); err != nil {
				t.Fatalf("restore after delete: %v", err)
			}
			check("restored after delete", f)

			_, err = other.StartCopyFromURL(ctxBG, f.URL()+"?sharesnapshot=2001-01-01T00%3A00%3A00.0000000Z", nil)
			wantCode(t, "copy from a snapshot the share lacks", err, "ShareSnapshotNotFound")
			_, err = other.StartCopyFromURL(ctxBG, f.URL()+"?sharesnapshot=yesterday", nil)
			wantCode(t, "copy from a malformed snapshot", err, "InvalidHeaderValue")
		})
	}
}

// Set File Properties and Set Directory Properties with an SDDL answer a
// new permission key, even for the descriptor the entry was created with
// (the SDK's TestDirSetPropertiesFilePermissionFormat: NotEqual to the key
// Create answered for the same SDDL); Get Properties then reports that key,
// and Get Permission gives the descriptor back under it.
func TestSetPropertiesWithSDDLAnswersNewKey(t *testing.T) {
	e := newEnv(t)
	s := e.mustShare("share")
	perm := &file.Permissions{Permission: to.Ptr(sampleSDDL)}
	for _, c := range []struct {
		name string
		// create and set return the permission keys Create and Set
		// Properties answered; get the one Get Properties reports.
		create, set func() (*string, error)
		get         func() (*string, error)
	}{
		{"file created with the SDDL",
			func() (*string, error) {
				r, err := e.file("share", "f1").Create(ctxBG, 0, &file.CreateOptions{Permissions: perm})
				return r.FilePermissionKey, err
			},
			func() (*string, error) {
				r, err := e.file("share", "f1").SetHTTPHeaders(ctxBG, &file.SetHTTPHeadersOptions{Permissions: perm})
				return r.FilePermissionKey, err
			},
			func() (*string, error) {
				r, err := e.file("share", "f1").GetProperties(ctxBG, nil)
				return r.FilePermissionKey, err
			}},
		{"file created without",
			func() (*string, error) {
				r, err := e.file("share", "f2").Create(ctxBG, 0, nil)
				return r.FilePermissionKey, err
			},
			func() (*string, error) {
				r, err := e.file("share", "f2").SetHTTPHeaders(ctxBG, &file.SetHTTPHeadersOptions{Permissions: perm})
				return r.FilePermissionKey, err
			},
			func() (*string, error) {
				r, err := e.file("share", "f2").GetProperties(ctxBG, nil)
				return r.FilePermissionKey, err
			}},
		{"directory created with the SDDL",
			func() (*string, error) {
				r, err := e.dir("share", "d1").Create(ctxBG, &directory.CreateOptions{FilePermissions: perm})
				return r.FilePermissionKey, err
			},
			func() (*string, error) {
				r, err := e.dir("share", "d1").SetProperties(ctxBG, &directory.SetPropertiesOptions{FilePermissions: perm})
				return r.FilePermissionKey, err
			},
			func() (*string, error) {
				r, err := e.dir("share", "d1").GetProperties(ctxBG, nil)
				return r.FilePermissionKey, err
			}},
		{"directory created without",
			func() (*string, error) {
				r, err := e.dir("share", "d2").Create(ctxBG, nil)
				return r.FilePermissionKey, err
			},
			func() (*string, error) {
				r, err := e.dir("share", "d2").SetProperties(ctxBG, &directory.SetPropertiesOptions{FilePermissions: perm})
				return r.FilePermissionKey, err
			},
			func() (*string, error) {
				r, err := e.dir("share", "d2").GetProperties(ctxBG, nil)
				return r.FilePermissionKey, err
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ck, err := c.create()
			if err != nil || ck == nil {
				t.Fatalf("create: %v %v", deref(ck), err)
			}
			sk, err := c.set()
			if err != nil || sk == nil || *sk == *ck {
				t.Fatalf("Set Properties answered key %v (%v), Create %q: want a new key", deref(sk), err, *ck)
			}
			gk, err := c.get()
			if err != nil || gk == nil || *gk != *sk {
				t.Fatalf("Get Properties key %v (%v), want %q", deref(gk), err, *sk)
			}
			p, err := s.GetPermission(ctxBG, *sk, nil)
			if err != nil || p.Permission == nil {
				t.Fatalf("Get Permission of %s: %v", *sk, err)
			}
			want, err := s.CreatePermission(ctxBG, sampleSDDL, nil)
			if err != nil {
				t.Fatal(err)
			}
			if w, err := s.GetPermission(ctxBG, *want.FilePermissionKey, nil); err != nil || *w.Permission != *p.Permission {
				t.Fatalf("descriptor under the new key %q, want %v (%v)", *p.Permission, w.Permission, err)
			}
		})
	}
}

// A range diff (List Ranges with prevsharesnapshot) reports the ranges
// written since the previous snapshot, not the bytes that changed: the
// same bytes written again are listed (the SDK's
// TestFileGetRangeListSupportRename uploads the same 512 bytes again and
// expects [0, 511]), and a write is listed whole where only part of it
// changed; for inline (small) and blob-backed files, against a later
// snapshot and against the live file.
func TestRangeDiffReportsWrittenRanges(t *testing.T) {
	for _, size := range []int64{4096, 6 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			e := newEnv(t)
			s := e.mustShare("share")
			data := bytes.Repeat([]byte("0123456789abcdef"), int(size/16))
			f := e.mustFile("share", "f", data)
			s1, err := s.CreateSnapshot(ctxBG, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The same bytes again at 0..511; at 2048..3071 new bytes only
			// in the first 10 of 1024.
			if _, err := f.UploadRange(ctxBG, 0, nopCloser(bytes.NewReader(data[:512])), nil); err != nil {
				t.Fatal(err)
			}
			part := append([]byte("CHANGED!!!"), data[2048+10:3072]...)
			if _, err := f.UploadRange(ctxBG, 2048, nopCloser(bytes.NewReader(part)), nil); err != nil {
				t.Fatal(err)
			}
			s2, err := s.CreateSnapshot(ctxBG, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := "[0-511 2048-3071]"
			list := func(r file.GetRangeListResponse) string {
				var out []string
				for _, x := range r.Ranges {
					out = append(out, fmt.Sprintf("%d-%d", *x.Start, *x.End))
				}
				return fmt.Sprint(out)
			}
			r, err := f.GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: s1.Snapshot})
			if err != nil || list(r) != want || len(r.ClearRanges) != 0 {
				t.Fatalf("live since s1: %s cleared %d (%v), want %s", list(r), len(r.ClearRanges), err, want)
			}
			r, err = f.GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: s1.Snapshot, ShareSnapshot: s2.Snapshot})
			if err != nil || list(r) != want {
				t.Fatalf("s2 since s1: %s (%v), want %s", list(r), err, want)
			}
			// Nothing written since s2.
			r, err = f.GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: s2.Snapshot})
			if err != nil || len(r.Ranges) != 0 || len(r.ClearRanges) != 0 {
				t.Fatalf("live since s2: %s cleared %d (%v), want nothing", list(r), len(r.ClearRanges), err)
			}
			// Metadata and properties are no writes.
			if _, err := f.SetMetadata(ctxBG, &file.SetMetadataOptions{Metadata: map[string]*string{"k": to.Ptr("v")}}); err != nil {
				t.Fatal(err)
			}
			r, err = f.GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: s2.Snapshot})
			if err != nil || len(r.Ranges) != 0 {
				t.Fatalf("after Set Metadata, since s2: %s (%v), want nothing", list(r), err)
			}
		})
	}
}
