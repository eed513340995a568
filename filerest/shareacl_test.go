package filerest_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
)

func storedPolicy(id, perm string, start, expiry time.Time) *share.SignedIdentifier {
	p := &share.AccessPolicy{}
	if perm != "" {
		p.Permission = to.Ptr(perm)
	}
	if !start.IsZero() {
		p.Start = to.Ptr(start)
	}
	if !expiry.IsZero() {
		p.Expiry = to.Ptr(expiry)
	}
	return &share.SignedIdentifier{ID: to.Ptr(id), AccessPolicy: p}
}

func TestShareACLRoundTrip(t *testing.T) {
	e := newEnv(t)
	s := e.mustShare("acl")
	got, err := s.GetAccessPolicy(ctxBG, nil)
	if err != nil || len(got.SignedIdentifiers) != 0 {
		t.Fatalf("new share's ACL: %v %v", got.SignedIdentifiers, err)
	}
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	expiry := start.Add(48 * time.Hour)
	before, _ := s.GetProperties(ctxBG, nil)
	if _, err := s.SetAccessPolicy(ctxBG, &share.SetAccessPolicyOptions{ShareACL: []*share.SignedIdentifier{
		storedPolicy("readers", "lr", start, expiry), // letters canonicalised to Azure's order
		storedPolicy("open", "", time.Time{}, time.Time{}),
	}}); err != nil {
		t.Fatalf("set ACL: %v", err)
	}
	after, _ := s.GetProperties(ctxBG, nil)
	if deref(after.ETag) == deref(before.ETag) {
		t.Fatal("Set Share ACL left the share's ETag")
	}
	got, err = s.GetAccessPolicy(ctxBG, nil)
	if err != nil || len(got.SignedIdentifiers) != 2 {
		t.Fatalf("get ACL: %v %v", got.SignedIdentifiers, err)
	}
	r := got.SignedIdentifiers[0]
	if *r.ID != "readers" || deref(r.AccessPolicy.Permission) != "rl" || !deref(r.AccessPolicy.Start).Equal(start) || !deref(r.AccessPolicy.Expiry).Equal(expiry) {
		t.Fatalf("first policy %s %v %v %v", *r.ID, deref(r.AccessPolicy.Permission), r.AccessPolicy.Start, r.AccessPolicy.Expiry)
	}
	if o := got.SignedIdentifiers[1]; *o.ID != "open" || o.AccessPolicy != nil && (o.AccessPolicy.Permission != nil || o.AccessPolicy.Start != nil) {
		t.Fatalf("second policy %+v", o)
	}

	// At most five; ids unique; only the letters rcwdl.
	six := make([]*share.SignedIdentifier, 6)
	for i := range six {
		six[i] = storedPolicy(string(rune('a'+i)), "r", time.Time{}, expiry)
	}
	_, err = s.SetAccessPolicy(ctxBG, &share.SetAccessPolicyOptions{ShareACL: six})
	wantCode(t, "six signed identifiers", err, "InvalidXmlDocument")
	_, err = s.SetAccessPolicy(ctxBG, &share.SetAccessPolicyOptions{ShareACL: []*share.SignedIdentifier{storedPolicy("x", "rx", time.Time{}, expiry)}})
	wantCode(t, "unknown permission letter", err, "InvalidXmlNodeValue")
	_, err = s.SetAccessPolicy(ctxBG, &share.SetAccessPolicyOptions{ShareACL: []*share.SignedIdentifier{storedPolicy("x", "r", time.Time{}, expiry), storedPolicy("x", "w", time.Time{}, expiry)}})
	wantCode(t, "repeated id", err, "InvalidXmlNodeValue")
	_, err = s.SetAccessPolicy(ctxBG, &share.SetAccessPolicyOptions{ShareACL: []*share.SignedIdentifier{storedPolicy(strings.Repeat("i", 65), "r", time.Time{}, expiry)}})
	wantCode(t, "id of 65 characters", err, "InvalidXmlDocument")
	if got, _ := s.GetAccessPolicy(ctxBG, nil); len(got.SignedIdentifiers) != 2 {
		t.Fatalf("refused ACLs changed the stored one: %d", len(got.SignedIdentifiers))
	}
	// An empty ACL clears it.
	if _, err := s.SetAccessPolicy(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetAccessPolicy(ctxBG, nil); len(got.SignedIdentifiers) != 0 {
		t.Fatalf("after clearing: %d policies", len(got.SignedIdentifiers))
	}
	_, err = e.share("nope").GetAccessPolicy(ctxBG, nil)
	wantCode(t, "ACL of a missing share", err, "ShareNotFound")
}

// sasFile is a file client authorised only by the SAS v signs.
func (e *env) sasFile(t *testing.T, shareName, path string, v sas.SignatureValues) *file.Client {
	t.Helper()
	v.ShareName = shareName
	qp, err := v.SignWithSharedKey(e.cred)
	if err != nil {
		t.Fatal(err)
	}
	u := e.file(shareName, path).URL() + "?" + qp.Encode()
	f, err := file.NewClientWithNoCredential(u, &file.ClientOptions{ClientOptions: e.clientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func readAll(t *testing.T, f *file.Client) (string, error) {
	t.Helper()
	dl, err := f.DownloadStream(ctxBG, nil)
	if err != nil {
		return "", err
	}
	defer dl.Body.Close()
	b, err := io.ReadAll(dl.Body)
	return string(b), err
}

func TestShareACLServiceSAS(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, withClock(clock))
	s := e.mustShare("pol")
	e.mustFile("pol", "f.txt", []byte("hello"))
	now := clock.Now()
	if _, err := s.SetAccessPolicy(ctxBG, &share.SetAccessPolicyOptions{ShareACL: []*share.SignedIdentifier{
		storedPolicy("read", "r", now.Add(-time.Minute), now.Add(time.Hour)),
		storedPolicy("bare", "", time.Time{}, time.Time{}),
	}}); err != nil {
		t.Fatal(err)
	}

	// The policy gives permission and window.
	f := e.sasFile(t, "pol", "f.txt", sas.SignatureValues{Identifier: "read", Protocol: sas.ProtocolHTTPSandHTTP})
	if body, err := readAll(t, f); err != nil || body != "hello" {
		t.Fatalf("read through a SAS naming policy read: %q %v", body, err)
	}
	_, err := f.SetMetadata(ctxBG, &file.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("b")}})
	wantCode(t, "write through a read policy", err, "AuthorizationPermissionMismatch")

	// A field given by both the policy and the SAS is refused.
	both := e.sasFile(t, "pol", "f.txt", sas.SignatureValues{Identifier: "read", Permissions: "r"})
	_, err = readAll(t, both)
	wantCode(t, "permission in policy and SAS", err, "AuthenticationFailed")

	// A policy that leaves fields to the SAS.
	bare := e.sasFile(t, "pol", "f.txt", sas.SignatureValues{Identifier: "bare", Permissions: "rw", ExpiryTime: now.Add(time.Hour)})
	if _, err := bare.SetMetadata(ctxBG, &file.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("b")}}); err != nil {
		t.Fatalf("write through the bare policy: %v", err)
	}

	// An unknown policy, and a policy past its expiry.
	_, err = readAll(t, e.sasFile(t, "pol", "f.txt", sas.SignatureValues{Identifier: "nope", Permissions: "r", ExpiryTime: now.Add(time.Hour)}))
	wantCode(t, "unknown policy", err, "AuthenticationFailed")
	clock.Advance(2 * time.Hour)
	_, err = readAll(t, f)
	wantCode(t, "expired policy", err, "AuthenticationFailed")

	// Changing the policy changes what SAS tokens naming it grant,
	// without re-signing them.
	now = clock.Now()
	if _, err := s.SetAccessPolicy(ctxBG, &share.SetAccessPolicyOptions{ShareACL: []*share.SignedIdentifier{
		storedPolicy("read", "r", time.Time{}, now.Add(time.Hour)),
	}}); err != nil {
		t.Fatal(err)
	}
	if body, err := readAll(t, f); err != nil || body != "hello" {
		t.Fatalf("read after extending the policy: %q %v", body, err)
	}
	// Removing the policy revokes them.
	if _, err := s.SetAccessPolicy(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, f)
	wantCode(t, "revoked policy", err, "AuthenticationFailed")
}
