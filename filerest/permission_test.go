package filerest_test

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
)

// The SDK's own sample descriptors (azfile internal/testcommon).
const (
	sampleSDDL   = `O:S-1-5-32-548G:S-1-5-21-397955417-626881126-188441444-512D:(A;;RPWPCCDCLCSWRCWDWOGA;;;S-1-0-0)`
	sampleBinary = `AQAUhGwAAACIAAAAAAAAABQAAAACAFgAAwAAAAAAFAD/AR8AAQEAAAAAAAUSAAAAAAAYAP8BHwABAgAAAAAABSAAAAAgAgAAAAAkAKkAEgABBQAAAAAABRUAAABZUbgXZnJdJWRjOwuMmS4AAQUAAAAAAAUVAAAAoGXPfnhLm1/nfIdwr/1IAQEFAAAAAAAFFQAAAKBlz354S5tf53yHcAECAAA=`
)

func TestPermissionCreateGet(t *testing.T) {
	e := newEnv(t, noAuth)
	s := e.mustShare("perms")
	cr, err := s.CreatePermission(ctxBG, sampleSDDL, nil)
	if err != nil || deref(cr.FilePermissionKey) == "" {
		t.Fatalf("create permission: %v %v", deref(cr.FilePermissionKey), err)
	}
	key := *cr.FilePermissionKey
	again, err := s.CreatePermission(ctxBG, sampleSDDL, nil)
	if err != nil || deref(again.FilePermissionKey) != key {
		t.Fatalf("the same permission again: key %v, want %s (%v)", deref(again.FilePermissionKey), key, err)
	}
	// SDDL back (aliases for well-known SIDs, rights as given bits).
	got, err := s.GetPermission(ctxBG, key, nil)
	if err != nil || got.Permission == nil {
		t.Fatalf("get permission: %v", err)
	}
	if *got.Permission != `O:AOG:S-1-5-21-397955417-626881126-188441444-512D:(A;;0x100e003f;;;S-1-0-0)` {
		t.Fatalf("SDDL %s", *got.Permission)
	}
	// Binary round trip: what comes back as binary, created as binary,
	// names the same permission.
	bin, err := s.GetPermission(ctxBG, key, &share.GetPermissionOptions{FilePermissionFormat: to.Ptr(share.PermissionFormat("Binary"))})
	if err != nil || bin.Permission == nil || *bin.Permission == *got.Permission {
		t.Fatalf("binary permission: %v %v", deref(bin.Permission), err)
	}
	r := e.do(t, "PUT", "/devstoreaccount1/perms?restype=share&comp=filepermission",
		map[string]string{"Content-Type": "application/json"}, []byte(`{"permission":"`+*bin.Permission+`","format":"Binary"}`))
	if r.status != 201 || r.header.Get("x-ms-file-permission-key") != key {
		t.Fatalf("create from the binary form: %d key %q want %q", r.status, r.header.Get("x-ms-file-permission-key"), key)
	}
	// The SDK's binary sample parses, and its SDDL comes back.
	r = e.do(t, "PUT", "/devstoreaccount1/perms?restype=share&comp=filepermission", nil, []byte(`{"permission":"`+sampleBinary+`","format":"binary"}`))
	if r.status != 201 {
		t.Fatalf("create the SDK's binary sample: %d %s", r.status, r.body)
	}
	bk := r.header.Get("x-ms-file-permission-key")
	sd, err := s.GetPermission(ctxBG, bk, nil)
	if err != nil || deref(sd.Permission) != "O:S-1-5-21-2127521184-1604012920-1887927527-21560751G:S-1-5-21-2127521184-1604012920-1887927527-513D:AI(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x1200a9;;;S-1-5-21-397955417-626881126-188441444-3053964)" {
		t.Fatalf("SDDL of the SDK's binary sample: %v %v", deref(sd.Permission), err)
	}

	// Errors.
	_, err = s.CreatePermission(ctxBG, "not a descriptor", nil)
	wantCode(t, "invalid SDDL", err, "FileInvalidPermission")
	_, err = s.CreatePermission(ctxBG, "O:BAD:(OA;;FA;11111111-1111-1111-1111-111111111111;;WD)", nil)
	wantCode(t, "object ACE", err, "FileInvalidPermission")
	_, err = s.GetPermission(ctxBG, "1234*5678", nil)
	wantCode(t, "unknown key", err, "FileInvalidPermissionKey")
	_, err = e.share("otherperms").GetPermission(ctxBG, key, nil)
	wantCode(t, "a key of a missing share", err, "ShareNotFound")
	e.mustShare("otherperms")
	_, err = e.share("otherperms").GetPermission(ctxBG, key, nil)
	wantCode(t, "a key of another share", err, "FileInvalidPermissionKey")
}

func TestPermissionOnFilesAndDirectories(t *testing.T) {
	e := newEnv(t)
	s := e.mustShare("perms")
	cr, err := s.CreatePermission(ctxBG, "O:BAG:SYD:P(A;OICI;FA;;;BA)(A;;FR;;;AU)", nil)
	if err != nil {
		t.Fatal(err)
	}
	key := *cr.FilePermissionKey
	f := e.file("perms", "f")
	// Default key until one is set.
	if _, err := f.Create(ctxBG, 0, nil); err != nil {
		t.Fatal(err)
	}
	p, _ := f.GetProperties(ctxBG, nil)
	def := deref(p.FilePermissionKey)
	if def == "" || def == key {
		t.Fatalf("default key %q", def)
	}
	if sd, err := s.GetPermission(ctxBG, def, nil); err != nil || deref(sd.Permission) == "" {
		t.Fatalf("the default key's permission: %v", err)
	}
	// By key.
	if _, err := f.SetHTTPHeaders(ctxBG, &file.SetHTTPHeadersOptions{Permissions: &file.Permissions{PermissionKey: &key}}); err != nil {
		t.Fatalf("set properties with a permission key: %v", err)
	}
	if p, _ := f.GetProperties(ctxBG, nil); deref(p.FilePermissionKey) != key {
		t.Fatalf("key after set %q want %q", deref(p.FilePermissionKey), key)
	}
	// Inline SDDL becomes the key of the same permission.
	g := e.file("perms", "g")
	if _, err := g.Create(ctxBG, 0, &file.CreateOptions{Permissions: &file.Permissions{Permission: to.Ptr("O:BAG:SYD:P(A;OICI;FA;;;BA)(A;;FR;;;AU)")}}); err != nil {
		t.Fatalf("create with an inline permission: %v", err)
	}
	if p, _ := g.GetProperties(ctxBG, nil); deref(p.FilePermissionKey) != key {
		t.Fatalf("inline permission's key %q want %q", deref(p.FilePermissionKey), key)
	}
	// Inline binary (the SDK's sample) on a directory.
	d := e.dir("perms", "d")
	if _, err := d.Create(ctxBG, &directory.CreateOptions{FilePermissionFormat: to.Ptr(directory.FilePermissionFormat("Binary")),
		FilePermissions: &file.Permissions{Permission: to.Ptr(sampleBinary)}}); err != nil {
		t.Fatalf("create a directory with a binary permission: %v", err)
	}
	dp, _ := d.GetProperties(ctxBG, nil)
	if sd, err := s.GetPermission(ctxBG, deref(dp.FilePermissionKey), nil); err != nil || deref(sd.Permission) == "" || deref(dp.FilePermissionKey) == def {
		t.Fatalf("directory's permission %v %v", deref(dp.FilePermissionKey), err)
	}
	// Listings with include=PermissionKey report it.
	page, err := s.NewRootDirectoryClient().NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{
		Include: directory.ListFilesInclude{PermissionKey: true}}).NextPage(ctxBG)
	if err != nil {
		t.Fatal(err)
	}
	for _, fi := range page.Segment.Files {
		if *fi.Name == "g" && deref(fi.PermissionKey) != key {
			t.Fatalf("listing's key of g %q", deref(fi.PermissionKey))
		}
	}

	// Errors: an unknown key, an invalid descriptor, both headers.
	_, err = f.SetHTTPHeaders(ctxBG, &file.SetHTTPHeadersOptions{Permissions: &file.Permissions{PermissionKey: to.Ptr("1*2")}})
	wantCode(t, "unknown key", err, "FileInvalidPermissionKey")
	_, err = e.file("perms", "h").Create(ctxBG, 0, &file.CreateOptions{Permissions: &file.Permissions{Permission: to.Ptr("D:(X;;FA;;;WD)")}})
	wantCode(t, "invalid inline permission", err, "FileInvalidPermission")
	_, err = e.file("perms", "h").Create(ctxBG, 0, &file.CreateOptions{Permissions: &file.Permissions{Permission: to.Ptr("O:BA"), PermissionKey: &key}})
	wantCode(t, "permission and key", err, "InvalidHeaderValue")
	if p, _ := f.GetProperties(ctxBG, nil); deref(p.FilePermissionKey) != key {
		t.Fatalf("refused changes moved the key to %q", deref(p.FilePermissionKey))
	}
}

// Copy File with x-ms-file-permission-copy-mode override takes an inline
// permission (stored in the share) or an existing key.
func TestPermissionOnCopy(t *testing.T) {
	e := newEnv(t)
	s := e.mustShare("perms")
	src := e.mustFile("perms", "src", []byte("x"))
	const sddl = "O:BAG:SYD:(A;;FA;;;BA)"
	cr, err := s.CreatePermission(ctxBG, sddl, nil)
	if err != nil {
		t.Fatal(err)
	}
	dst := e.file("perms", "dst")
	if _, err := dst.StartCopyFromURL(ctxBG, src.URL(), &file.StartCopyFromURLOptions{
		CopyFileSMBInfo: &file.CopyFileSMBInfo{PermissionCopyMode: to.Ptr(file.PermissionCopyModeTypeOverride)},
		Permissions:     &file.Permissions{Permission: to.Ptr(sddl)}}); err != nil {
		t.Fatalf("copy with an inline permission: %v", err)
	}
	if p, _ := dst.GetProperties(ctxBG, nil); deref(p.FilePermissionKey) != *cr.FilePermissionKey {
		t.Fatalf("copy's key %q want %q", deref(p.FilePermissionKey), *cr.FilePermissionKey)
	}
	_, err = e.file("perms", "dst2").StartCopyFromURL(ctxBG, src.URL(), &file.StartCopyFromURLOptions{
		CopyFileSMBInfo: &file.CopyFileSMBInfo{PermissionCopyMode: to.Ptr(file.PermissionCopyModeTypeOverride)},
		Permissions:     &file.Permissions{PermissionKey: to.Ptr("9*9")}})
	wantCode(t, "copy with an unknown key", err, "FileInvalidPermissionKey")
}

// x-ms-file-property-semantics: New adds Archive to the attributes asked,
// Restore (with a permission) keeps them as given, Restore without one is
// New; an unknown value is 400.
func TestFilePropertySemantics(t *testing.T) {
	e := newEnv(t)
	e.mustShare("sem")
	attrs := func(f *file.Client) string {
		t.Helper()
		p, err := f.GetProperties(ctxBG, nil)
		if err != nil {
			t.Fatal(err)
		}
		return deref(p.FileAttributes)
	}
	hidden := &file.SMBProperties{Attributes: &file.NTFSFileAttributes{Hidden: true}}
	n := e.file("sem", "new")
	if _, err := n.Create(ctxBG, 0, &file.CreateOptions{SMBProperties: hidden, FilePropertySemantics: to.Ptr(file.FilePropertySemanticsNew)}); err != nil {
		t.Fatal(err)
	}
	if got := attrs(n); got != "Hidden | Archive" {
		t.Fatalf("New: %q", got)
	}
	r := e.file("sem", "restore")
	if _, err := r.Create(ctxBG, 0, &file.CreateOptions{SMBProperties: hidden, FilePropertySemantics: to.Ptr(file.FilePropertySemanticsRestore),
		Permissions: &file.Permissions{Permission: to.Ptr("O:BAG:SYD:(A;;FA;;;BA)")}}); err != nil {
		t.Fatal(err)
	}
	if got := attrs(r); got != "Hidden" {
		t.Fatalf("Restore: %q", got)
	}
	r2 := e.file("sem", "restore2")
	if _, err := r2.Create(ctxBG, 0, &file.CreateOptions{SMBProperties: hidden, FilePropertySemantics: to.Ptr(file.FilePropertySemanticsRestore)}); err != nil {
		t.Fatal(err)
	}
	if got := attrs(r2); got != "Hidden | Archive" {
		t.Fatalf("Restore without a permission: %q", got)
	}
	_, err := e.file("sem", "bad").Create(ctxBG, 0, &file.CreateOptions{FilePropertySemantics: to.Ptr(file.PropertySemantics("Sometimes"))})
	wantCode(t, "unknown semantics", err, "InvalidHeaderValue")
}
