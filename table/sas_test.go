package table_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/blobshare/blobshare/table"
)

func sharedKey(t *testing.T) *aztables.SharedKeyCredential {
	t.Helper()
	cred, err := aztables.NewSharedKeyCredential(table.DevAccount, table.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

// TestTableSAS: GetTableSASURL with a key range — entities inside are
// read and written, outside refused (403) and left out of queries; a
// missing permission, another table, an expired token and a stored
// access policy.
func TestTableSAS(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	svc := e.service(t)
	for _, n := range []string{"ranged", "other"} {
		if _, err := svc.CreateTable(ctx, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	owner := svc.NewClient("ranged")
	for _, pk := range []string{"a", "b", "c", "d", "e"} {
		if _, err := owner.AddEntity(ctx, []byte(`{"PartitionKey":"`+pk+`","RowKey":"1"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	keyed, err := aztables.NewClientWithSharedKey(e.URL+"/ranged", sharedKey(t), noRetry)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sasURL, err := keyed.GetTableSASURL(aztables.SASPermissions{Read: true, Add: true, StartPartitionKey: "b", EndPartitionKey: "d"}, now.Add(-time.Minute), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// aztables v1.4.0 joins endpoint and table without a slash when the
	// endpoint has a path (path-style, as against any emulator):
	// ".../devstoreaccount1ranged?...". The token itself is right.
	fixPath := func(u string) string {
		return strings.Replace(u, "/"+table.DevAccount+"ranged?", "/"+table.DevAccount+"/ranged?", 1)
	}
	// It also signs spk/epk but leaves them out of the query
	// (SASQueryParameters never gets the range): a ranged token from it
	// verifies nowhere until they are added back, as Sign signed them.
	sasURL = fixPath(sasURL) + "&spk=b&epk=d"
	c, err := aztables.NewClientWithNoCredential(sasURL, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetEntity(ctx, "c", "1", nil); err != nil {
		t.Fatalf("Get inside the range: %v", err)
	}
	if _, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"d","RowKey":"2"}`), nil); err != nil {
		t.Fatalf("Add inside the range: %v", err)
	}
	_, err = c.GetEntity(ctx, "e", "1", nil)
	wantCode(t, "Get outside the range", err, http.StatusForbidden, "AuthorizationFailure")
	_, err = c.AddEntity(ctx, []byte(`{"PartitionKey":"a","RowKey":"2"}`), nil)
	wantCode(t, "Add outside the range", err, http.StatusForbidden, "AuthorizationFailure")
	_, err = c.DeleteEntity(ctx, "c", "1", nil)
	wantCode(t, "Delete without d", err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = c.UpsertEntity(ctx, []byte(`{"PartitionKey":"c","RowKey":"1"}`), nil)
	wantCode(t, "Upsert without u", err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	var keys []string
	for pager := c.NewListEntitiesPager(nil); pager.More(); {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range p.Entities {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, m["PartitionKey"].(string)+m["RowKey"].(string))
		}
	}
	if got := strings.Join(keys, ","); got != "b1,c1,d1,d2" {
		t.Fatalf("a ranged SAS lists %s, want b1,c1,d1,d2", got)
	}

	// The same token on another table's URL: 403.
	otherURL := strings.Replace(sasURL, "/ranged?", "/other?", 1)
	oc, err := aztables.NewClientWithNoCredential(otherURL, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	_, err = oc.AddEntity(ctx, []byte(`{"PartitionKey":"c","RowKey":"9"}`), nil)
	wantCode(t, "the SAS of another table", err, http.StatusForbidden, "AuthorizationFailure")

	expired, err := keyed.GetTableSASURL(aztables.SASPermissions{Read: true}, now.Add(-2*time.Hour), now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ec, _ := aztables.NewClientWithNoCredential(fixPath(expired), noRetry)
	_, err = ec.GetEntity(ctx, "c", "1", nil)
	wantCode(t, "an expired SAS", err, http.StatusForbidden, "AuthenticationFailed")

	// A stored access policy supplies permission and window.
	start, exp := now.Add(-time.Minute).UTC().Truncate(time.Second), now.Add(time.Hour).UTC().Truncate(time.Second)
	if _, err := owner.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{
		{ID: to.Ptr("readers"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &exp, Permission: to.Ptr("r")}}}}); err != nil {
		t.Fatal(err)
	}
	qs, err := aztables.SASSignatureValues{TableName: "ranged", Identifier: "readers"}.Sign(sharedKey(t))
	if err != nil {
		t.Fatal(err)
	}
	pc, _ := aztables.NewClientWithNoCredential(e.URL+"/ranged?"+qs, noRetry)
	if _, err := pc.GetEntity(ctx, "a", "1", nil); err != nil {
		t.Fatalf("Get with the stored policy: %v", err)
	}
	_, err = pc.AddEntity(ctx, []byte(`{"PartitionKey":"z","RowKey":"z"}`), nil)
	wantCode(t, "Add with a read-only stored policy", err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	qs, _ = aztables.SASSignatureValues{TableName: "ranged", Identifier: "nosuch"}.Sign(sharedKey(t))
	nc, _ := aztables.NewClientWithNoCredential(e.URL+"/ranged?"+qs, noRetry)
	_, err = nc.GetEntity(ctx, "a", "1", nil)
	wantCode(t, "a SAS naming a missing policy", err, http.StatusForbidden, "AuthenticationFailed")
}

// TestAccountSAS: an account SAS (ss=t) by resource type and permission.
func TestAccountSAS(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	sign := func(services, rts, perms string) *aztables.ServiceClient {
		qps, err := aztables.AccountSASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, Services: services, ResourceTypes: rts,
			Permissions: perms, StartTime: time.Now().Add(-time.Minute).UTC(), ExpiryTime: time.Now().Add(time.Hour).UTC()}.Sign(sharedKey(t))
		if err != nil {
			t.Fatal(err)
		}
		c, err := aztables.NewServiceClientWithNoCredential(e.URL+"/?"+qps.Encode(), noRetry)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	full := sign("t", "sco", "rwdlacu")
	if _, err := full.CreateTable(ctx, "viasas", nil); err != nil {
		t.Fatalf("CreateTable with an account SAS: %v", err)
	}
	if _, err := full.NewClient("viasas").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
		t.Fatalf("AddEntity with an account SAS: %v", err)
	}
	if p, err := full.NewListTablesPager(nil).NextPage(ctx); err != nil || len(p.Tables) != 1 {
		t.Fatalf("list tables with an account SAS: %+v, %v", p, err)
	}
	if _, err := full.GetProperties(ctx, nil); err != nil {
		t.Fatalf("GetProperties with an account SAS: %v", err)
	}
	_, err := sign("t", "o", "rwdlacu").CreateTable(ctx, "nope", nil)
	wantCode(t, "CreateTable with srt=o", err, http.StatusForbidden, "AuthorizationResourceTypeMismatch")
	_, err = sign("t", "sco", "r").NewClient("viasas").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"s"}`), nil)
	wantCode(t, "AddEntity with sp=r", err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = sign("bq", "sco", "rwdlacu").CreateTable(ctx, "nope", nil)
	wantCode(t, "an account SAS without t", err, http.StatusForbidden, "AuthorizationServiceMismatch")
	_, err = sign("t", "sco", "rwdlacu").NewClient("viasas").GetAccessPolicy(ctx, nil)
	wantCode(t, "Get Table ACL with a SAS", err, http.StatusForbidden, "AuthorizationPermissionMismatch")
}

// TestSharedKeyFlavours: SharedKey (the Table string-to-sign) and
// SharedKey Lite (what aztables sends) pass; a wrong signature is 403
// AuthenticationFailed; no credentials at all is refused.
func TestSharedKeyFlavours(t *testing.T) {
	e := newEnv(t, nil)
	raw := newRawClient(t, e.URL)
	if r := raw.do(t, "POST", "/Tables", jsonHeaders(), []byte(`{"TableName":"signed"}`)); r.Status != http.StatusCreated {
		t.Fatalf("SharedKey Create Table: %d %s", r.Status, r.Body)
	}
	if _, err := e.service(t).NewClient("signed").AddEntity(context.Background(), []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
		t.Fatalf("SharedKey Lite (aztables): %v", err)
	}
	bad, err := aztables.NewSharedKeyCredential(table.DevAccount, "AAAA"+table.DevKey[4:])
	if err != nil {
		t.Fatal(err)
	}
	c, _ := aztables.NewServiceClientWithSharedKey(e.URL, bad, noRetry)
	_, err = c.CreateTable(context.Background(), "forged", nil)
	wantCode(t, "a wrong key", err, http.StatusForbidden, "AuthenticationFailed")
	resp, err := http.Get(e.URL + "/Tables")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		t.Fatalf("an unsigned request: %d", resp.StatusCode)
	}
}

// TestInjectedClock: Timestamps and ETags come from the service's clock,
// SAS windows from the front end's.
func TestInjectedClock(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2021, 7, 1, 12, 0, 0, 123456700, time.UTC)
	e := newEnv(t, func() time.Time { return at })
	svc := e.service(t)
	if _, err := svc.CreateTable(ctx, "clock", nil); err != nil {
		t.Fatal(err)
	}
	c := svc.NewClient("clock")
	add, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `W/"datetime'2021-07-01T12%3A00%3A00.1234567Z'"`; string(add.ETag) != want {
		t.Fatalf("ETag %s, want %s (the injected clock)", add.ETag, want)
	}
	got, err := c.GetEntity(ctx, "p", "r", nil)
	if err != nil || !strings.Contains(string(got.Value), `"Timestamp":"2021-07-01T12:00:00.1234567Z"`) {
		t.Fatalf("Timestamp: %s, %v", got.Value, err)
	}
	// A SAS expired at the injected time is refused; one valid then (and
	// long expired in real time) is accepted.
	qs, err := aztables.SASSignatureValues{TableName: "clock", Permissions: "r", ExpiryTime: at.Add(-time.Minute)}.Sign(sharedKey(t))
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := aztables.NewClientWithNoCredential(e.URL+"/clock?"+qs, noRetry)
	_, err = sc.GetEntity(ctx, "p", "r", nil)
	wantCode(t, "a SAS expired at the injected time", err, http.StatusForbidden, "AuthenticationFailed")
	qs, _ = aztables.SASSignatureValues{TableName: "clock", Permissions: "r", ExpiryTime: at.Add(time.Minute)}.Sign(sharedKey(t))
	sc, _ = aztables.NewClientWithNoCredential(e.URL+"/clock?"+qs, noRetry)
	if _, err := sc.GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatalf("a SAS valid at the injected time (expired in real time): %v", err)
	}
}
