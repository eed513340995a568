package filerest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/blobshare/blobshare/filerest"
)

// fileToken hands out an unsigned JWT that --oauth basic accepts.
type fileToken struct{ oid, tid string }

func (c fileToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	now := time.Now()
	part := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	tok := part(map[string]any{"alg": "none", "typ": "JWT"}) + "." + part(map[string]any{
		"iss": "https://sts.windows.net/" + c.tid + "/", "aud": "https://storage.azure.com",
		"oid": c.oid, "tid": c.tid, "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
	}) + ".unsigned"
	return azcore.AccessToken{Token: tok, ExpiresOn: now.Add(time.Hour)}, nil
}

// TestGetUserDelegationKeyFile: the File endpoint answers Get User
// Delegation Key (where azfile's GetUserDelegationCredential asks) to a
// bearer token only, with a key for the token's oid and tid and service
// "f"; SharedKey is 403 AuthenticationFailed, and so is a delegated user
// tenant other than the token's.
func TestGetUserDelegationKeyFile(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	h, err := filerest.New(filerest.Config{FS: e.fs, OAuth: true, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	const oid, tid = "aaaaaaaa-0000-0000-0000-00000000000f", "72f988bf-86f1-41af-91ab-2d7cd011db47"
	opts := &service.ClientOptions{ClientOptions: policy.ClientOptions{Transport: srv.Client(), Retry: policy.RetryOptions{MaxRetries: -1}}}
	svc, err := service.NewClient(srv.URL+"/"+filerest.DevAccount+"/", fileToken{oid, tid}, opts)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	info := service.KeyInfo{Start: to.Ptr(now.Format(time.RFC3339)), Expiry: to.Ptr(now.Add(time.Hour).Format(time.RFC3339))}
	if _, err := svc.GetUserDelegationCredential(ctx, info, nil); err != nil {
		t.Fatalf("with a bearer token: %v", err)
	}
	other := info
	other.DelegatedUserTenantID = to.Ptr("00000000-0000-0000-0000-000000000000")
	if _, err := svc.GetUserDelegationCredential(ctx, other, nil); !fileerror.HasCode(err, fileerror.AuthenticationFailed) {
		t.Errorf("another tenant's delegated user: %v", err)
	}

	// The answer's fields.
	tok, _ := fileToken{oid, tid}.GetToken(ctx, policy.TokenRequestOptions{})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/"+filerest.DevAccount+"/?restype=service&comp=userdelegationkey",
		strings.NewReader("<KeyInfo><Expiry>"+now.Add(time.Hour).Format("2006-01-02T15:04:05Z")+"</Expiry></KeyInfo>"))
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	req.Header.Set("x-ms-version", "2025-11-05")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"<SignedOid>" + oid + "</SignedOid>", "<SignedTid>" + tid + "</SignedTid>",
		"<SignedService>f</SignedService>", "<SignedVersion>2025-11-05</SignedVersion>", "<Value>"} {
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Fatalf("%d %s: want %s", resp.StatusCode, body, want)
		}
	}

	// SharedKey: "Only authorization with Microsoft Entra ID is supported."
	shared, err := service.NewClientWithSharedKeyCredential(srv.URL+"/"+filerest.DevAccount+"/", e.cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := shared.GetUserDelegationCredential(ctx, info, nil); !fileerror.HasCode(err, fileerror.AuthenticationFailed) {
		t.Errorf("SharedKey: %v", err)
	}
}
