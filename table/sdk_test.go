package table_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// wantCode asserts err is an HTTP failure with status and code.
func wantCode(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("%s: %v, want %d %s", what, err, status, code)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("%s: %d %s, want %d %s", what, re.StatusCode, re.ErrorCode, status, code)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSDKTables: create (any case variant conflicts), list with $filter,
// $top and NextTableName continuation, delete (again: 404
// ResourceNotFound), and an entity operation on the deleted table (404
// TableNotFound).
func TestSDKTables(t *testing.T) {
	ctx := context.Background()
	svc := newEnv(t, nil).service(t)
	names := []string{"alpha", "Beta", "gamma", "delta", "Epsilon"}
	for _, n := range names {
		if _, err := svc.CreateTable(ctx, n, nil); err != nil {
			t.Fatalf("CreateTable %s: %v", n, err)
		}
	}
	_, err := svc.CreateTable(ctx, "ALPHA", nil)
	wantCode(t, "CreateTable ALPHA", err, http.StatusConflict, "TableAlreadyExists")
	_, err = svc.CreateTable(ctx, "1bad", nil)
	wantCode(t, "CreateTable 1bad", err, http.StatusBadRequest, "InvalidResourceName")
	_, err = svc.CreateTable(ctx, "ab", nil)
	wantCode(t, "CreateTable ab", err, http.StatusBadRequest, "OutOfRangeInput")

	var listed []string
	pages := 0
	pager := svc.NewListTablesPager(&aztables.ListTablesOptions{Top: to.Ptr[int32](2)})
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, tb := range p.Tables {
			listed = append(listed, *tb.Name)
		}
	}
	if got := strings.Join(listed, ","); got != "alpha,Beta,delta,Epsilon,gamma" || pages < 3 {
		t.Fatalf("tables %s in %d pages, want alpha,Beta,delta,Epsilon,gamma in 3", got, pages)
	}
	pager = svc.NewListTablesPager(&aztables.ListTablesOptions{Filter: to.Ptr("TableName ge 'd' and TableName lt 'f'")})
	p, err := pager.NextPage(ctx)
	if err != nil || len(p.Tables) != 1 || *p.Tables[0].Name != "delta" {
		t.Fatalf("filtered list: %+v, %v (want delta: ordinal, case-sensitive compare)", p.Tables, err)
	}

	if _, err := svc.DeleteTable(ctx, "BETA", nil); err != nil {
		t.Fatalf("DeleteTable BETA (case-insensitive): %v", err)
	}
	_, err = svc.DeleteTable(ctx, "Beta", nil)
	wantCode(t, "DeleteTable again", err, http.StatusNotFound, "ResourceNotFound")
	_, err = svc.NewClient("Beta").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
	wantCode(t, "AddEntity on a deleted table", err, http.StatusNotFound, "TableNotFound")
}

// TestSDKEntityTypes: every EDM type goes in through EDMEntity and comes
// back typed, at every metadata level; odata.etag equals the ETag header.
func TestSDKEntityTypes(t *testing.T) {
	ctx := context.Background()
	svc := newEnv(t, nil).service(t)
	if _, err := svc.CreateTable(ctx, "types", nil); err != nil {
		t.Fatal(err)
	}
	c := svc.NewClient("types")
	when := time.Date(2026, 11, 28, 6, 36, 14, 598307800, time.UTC)
	in := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p 1", RowKey: "r é"}, Properties: map[string]any{
		"S": "text", "I": int32(-7), "L": aztables.EDMInt64(math.MaxInt64), "D": 2.5,
		"B": true, "T": aztables.EDMDateTime(when), "G": aztables.EDMGUID("6f0b2d3a-1c2b-4e5f-8a9b-0c1d2e3f4a5b"),
		"X": aztables.EDMBinary([]byte{0, 1, 254, 255}),
	}}
	add, err := c.AddEntity(ctx, mustJSON(t, in), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetEntity(ctx, "p 1", "r é", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.ETag != add.ETag || !strings.HasPrefix(string(got.ETag), `W/"datetime'`) {
		t.Fatalf("ETag of Get %q, of Add %q", got.ETag, add.ETag)
	}
	var out aztables.EDMEntity
	if err := json.Unmarshal(got.Value, &out); err != nil {
		t.Fatal(err)
	}
	if out.ETag != string(got.ETag) {
		t.Errorf("odata.etag %q != ETag header %q", out.ETag, got.ETag)
	}
	for k, want := range in.Properties {
		g := out.Properties[k]
		if fmt.Sprintf("%T %v", g, g) != fmt.Sprintf("%T %v", want, want) {
			t.Errorf("%s came back as %T %v, want %T %v", k, g, g, want, want)
		}
	}
	if out.PartitionKey != "p 1" || out.RowKey != "r é" || time.Since(time.Time(out.Timestamp)) > time.Minute {
		t.Errorf("keys/Timestamp %+v", out.Entity)
	}
	for _, f := range []aztables.MetadataFormat{aztables.MetadataFormatNone, aztables.MetadataFormatMinimal, aztables.MetadataFormatFull} {
		r, err := c.GetEntity(ctx, "p 1", "r é", &aztables.GetEntityOptions{Format: &f})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var m map[string]any
		if err := json.Unmarshal(r.Value, &m); err != nil {
			t.Fatal(err)
		}
		_, hasEtag := m["odata.etag"]
		_, hasType := m["odata.type"]
		_, annotated := m["L@odata.type"]
		if hasEtag != (f != aztables.MetadataFormatNone) || hasType != (f == aztables.MetadataFormatFull) ||
			annotated != (f != aztables.MetadataFormatNone) || m["L"] != "9223372036854775807" {
			t.Errorf("%s: %s", f, r.Value)
		}
	}
	// Double NaN and ±Infinity: strings with the Edm.Double annotation.
	nan := []byte(`{"PartitionKey":"p","RowKey":"nan","N@odata.type":"Edm.Double","N":"NaN","P@odata.type":"Edm.Double","P":"Infinity","M@odata.type":"Edm.Double","M":"-Infinity"}`)
	if _, err := c.AddEntity(ctx, nan, nil); err != nil {
		t.Fatal(err)
	}
	r, err := c.GetEntity(ctx, "p", "nan", nil)
	if err != nil || !strings.Contains(string(r.Value), `"N":"NaN"`) || !strings.Contains(string(r.Value), `"P":"Infinity"`) ||
		!strings.Contains(string(r.Value), `"M":"-Infinity"`) || !strings.Contains(string(r.Value), `"N@odata.type":"Edm.Double"`) {
		t.Fatalf("non-finite doubles: %s, %v", r.Value, err)
	}
}

// TestSDKSeedSample is the seed's sample: read an entity, another writer
// updates it, the first writer's Update with its stale ETag gets 412; the
// same Update with "*" succeeds and wins.
func TestSDKSeedSample(t *testing.T) {
	ctx := context.Background()
	svc := newEnv(t, nil).service(t)
	if _, err := svc.CreateTable(ctx, "customers", nil); err != nil {
		t.Fatal(err)
	}
	c := svc.NewClient("customers")
	if _, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"Harp","RowKey":"Walter","Email":"walter@contoso.com"}`), nil); err != nil {
		t.Fatal(err)
	}
	read, err := c.GetEntity(ctx, "Harp", "Walter", nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.UpdateEntity(ctx, []byte(`{"PartitionKey":"Harp","RowKey":"Walter","Email":"other@contoso.com"}`),
		&aztables.UpdateEntityOptions{IfMatch: &read.ETag, UpdateMode: aztables.UpdateModeReplace})
	if err != nil {
		t.Fatalf("the other writer's update: %v", err)
	}
	if other.ETag == read.ETag {
		t.Fatal("an update kept the ETag")
	}
	mine := []byte(`{"PartitionKey":"Harp","RowKey":"Walter","Email":"mine@contoso.com"}`)
	_, err = c.UpdateEntity(ctx, mine, &aztables.UpdateEntityOptions{IfMatch: &read.ETag, UpdateMode: aztables.UpdateModeReplace})
	wantCode(t, "Update with the stale ETag", err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
	_, err = c.UpdateEntity(ctx, mine, &aztables.UpdateEntityOptions{IfMatch: &read.ETag, UpdateMode: aztables.UpdateModeMerge})
	wantCode(t, "Merge with the stale ETag", err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
	_, err = c.DeleteEntity(ctx, "Harp", "Walter", &aztables.DeleteEntityOptions{IfMatch: &read.ETag})
	wantCode(t, "Delete with the stale ETag", err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
	star := azcore.ETagAny
	if _, err := c.UpdateEntity(ctx, mine, &aztables.UpdateEntityOptions{IfMatch: &star, UpdateMode: aztables.UpdateModeReplace}); err != nil {
		t.Fatalf("Update with *: %v", err)
	}
	now, err := c.GetEntity(ctx, "Harp", "Walter", nil)
	if err != nil || !strings.Contains(string(now.Value), "mine@contoso.com") {
		t.Fatalf("after the forced update: %s, %v", now.Value, err)
	}
}

// TestSDKEntityOperations: Insert conflicts, Update/Merge need the entity,
// the upserts do not, Merge keeps and Replace drops properties, Delete.
func TestSDKEntityOperations(t *testing.T) {
	ctx := context.Background()
	svc := newEnv(t, nil).service(t)
	if _, err := svc.CreateTable(ctx, "ops", nil); err != nil {
		t.Fatal(err)
	}
	c := svc.NewClient("ops")
	e := []byte(`{"PartitionKey":"p","RowKey":"r","A":"a","N":1}`)
	if _, err := c.AddEntity(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	_, err := c.AddEntity(ctx, e, nil)
	wantCode(t, "AddEntity twice", err, http.StatusConflict, "EntityAlreadyExists")
	star := azcore.ETagAny
	_, err = c.UpdateEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"none","A":"x"}`), &aztables.UpdateEntityOptions{IfMatch: &star, UpdateMode: aztables.UpdateModeReplace})
	wantCode(t, "Update of a missing entity", err, http.StatusNotFound, "ResourceNotFound")
	if _, err := c.UpdateEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","B":"b"}`), &aztables.UpdateEntityOptions{IfMatch: &star, UpdateMode: aztables.UpdateModeMerge}); err != nil {
		t.Fatal(err)
	}
	assertProps(t, c, "p", "r", `"A":"a"`, `"B":"b"`, `"N":1`)
	if _, err := c.UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","C":"c"}`), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
		t.Fatal(err)
	}
	assertProps(t, c, "p", "r", `"C":"c"`, `!"A"`, `!"N"`)
	if _, err := c.UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"new","M":"m"}`), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"new","O":2}`), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
		t.Fatal(err)
	}
	assertProps(t, c, "p", "new", `"M":"m"`, `"O":2`)
	if _, err := c.DeleteEntity(ctx, "p", "new", nil); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteEntity(ctx, "p", "new", nil)
	wantCode(t, "Delete twice", err, http.StatusNotFound, "ResourceNotFound")
	_, err = c.GetEntity(ctx, "p", "new", nil)
	wantCode(t, "Get of a deleted entity", err, http.StatusNotFound, "ResourceNotFound")
}

func assertProps(t *testing.T, c *aztables.Client, pk, rk string, want ...string) {
	t.Helper()
	r, err := c.GetEntity(context.Background(), pk, rk, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if neg, ok := strings.CutPrefix(w, "!"); ok {
			if strings.Contains(string(r.Value), neg) {
				t.Errorf("entity %s/%s has %s: %s", pk, rk, neg, r.Value)
			}
		} else if !strings.Contains(string(r.Value), w) {
			t.Errorf("entity %s/%s lacks %s: %s", pk, rk, w, r.Value)
		}
	}
}

// TestSDKQuery: $filter, $select, $top and the continuation walk in
// (PartitionKey, RowKey) order.
func TestSDKQuery(t *testing.T) {
	ctx := context.Background()
	svc := newEnv(t, nil).service(t)
	if _, err := svc.CreateTable(ctx, "query", nil); err != nil {
		t.Fatal(err)
	}
	c := svc.NewClient("query")
	for p := range 3 {
		for r := range 5 {
			e := fmt.Sprintf(`{"PartitionKey":"p%d","RowKey":"r%d","N":%d,"Tag":"%s"}`, p, r, p*10+r, []string{"x", "y"}[r%2])
			if _, err := c.AddEntity(ctx, []byte(e), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	walk := func(o *aztables.ListEntitiesOptions) (keys []string, pages int) {
		pager := c.NewListEntitiesPager(o)
		for pager.More() {
			p, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, e := range p.Entities {
				var m map[string]any
				if err := json.Unmarshal(e, &m); err != nil {
					t.Fatal(err)
				}
				keys = append(keys, fmt.Sprint(m["PartitionKey"], "/", m["RowKey"], "/", m["N"]))
			}
		}
		return keys, pages
	}
	all, pages := walk(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](4)})
	if len(all) != 15 || all[0] != "p0/r0/0" || all[14] != "p2/r4/24" || pages < 4 {
		t.Fatalf("walk with $top=4: %d entities in %d pages: %v", len(all), pages, all)
	}
	got, _ := walk(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p1' and N ge 12 and Tag eq 'x'")})
	if strings.Join(got, ",") != "p1/r2/12,p1/r4/14" {
		t.Fatalf("filtered: %v", got)
	}
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("RowKey eq 'r3'"), Select: to.Ptr("N")})
	p, err := pager.NextPage(ctx)
	if err != nil || len(p.Entities) != 3 {
		t.Fatalf("$select: %d entities, %v", len(p.Entities), err)
	}
	if s := string(p.Entities[0]); !strings.Contains(s, `"N":3`) || strings.Contains(s, "Tag") || strings.Contains(s, "PartitionKey") {
		t.Fatalf("$select=N: %s", s)
	}
	_, err = c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("N eq")}).NextPage(ctx)
	wantCode(t, "a bad filter", err, http.StatusBadRequest, "InvalidInput")
}

// TestSDKTransactions: every transaction type in one change set, then a
// failing change set (nothing applied, the failing index in the answer).
func TestSDKTransactions(t *testing.T) {
	ctx := context.Background()
	svc := newEnv(t, nil).service(t)
	if _, err := svc.CreateTable(ctx, "batch", nil); err != nil {
		t.Fatal(err)
	}
	c := svc.NewClient("batch")
	for _, rk := range []string{"upd", "mrg", "del"} {
		if _, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"`+rk+`","Old":1}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	cur, err := c.GetEntity(ctx, "p", "upd", nil)
	if err != nil {
		t.Fatal(err)
	}
	ent := func(rk, props string) []byte {
		return []byte(`{"PartitionKey":"p","RowKey":"` + rk + `"` + props + `}`)
	}
	actions := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: ent("add", `,"New":1`)},
		{ActionType: aztables.TransactionTypeUpdateReplace, Entity: ent("upd", `,"New":2`), IfMatch: &cur.ETag},
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: ent("mrg", `,"New":3`)},
		{ActionType: aztables.TransactionTypeDelete, Entity: ent("del", "")},
		{ActionType: aztables.TransactionTypeInsertReplace, Entity: ent("ups1", `,"New":4`)},
		{ActionType: aztables.TransactionTypeInsertMerge, Entity: ent("ups2", `,"New":5`)},
	}
	if _, err := c.SubmitTransaction(ctx, actions, nil); err != nil {
		t.Fatalf("SubmitTransaction: %v", err)
	}
	assertProps(t, c, "p", "add", `"New":1`)
	assertProps(t, c, "p", "upd", `"New":2`, `!"Old"`)
	assertProps(t, c, "p", "mrg", `"New":3`, `"Old":1`)
	assertProps(t, c, "p", "ups1", `"New":4`)
	assertProps(t, c, "p", "ups2", `"New":5`)
	_, err = c.GetEntity(ctx, "p", "del", nil)
	wantCode(t, "Get of the entity the batch deleted", err, http.StatusNotFound, "ResourceNotFound")

	// The stale ETag of op 2 fails the change set: op 0 is not applied.
	failing := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: ent("never", "")},
		{ActionType: aztables.TransactionTypeInsertMerge, Entity: ent("mrg", `,"Never":1`)},
		{ActionType: aztables.TransactionTypeUpdateReplace, Entity: ent("upd", ""), IfMatch: &cur.ETag},
	}
	_, err = c.SubmitTransaction(ctx, failing, nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("failing SubmitTransaction: %v", err)
	}
	body := readAll(t, re.RawResponse)
	if re.RawResponse.StatusCode != http.StatusAccepted || !strings.Contains(body, "HTTP/1.1 412 Precondition Failed") ||
		!strings.Contains(body, `"code":"UpdateConditionNotSatisfied"`) || !strings.Contains(body, `"value":"2:`) {
		t.Fatalf("failing batch answered %d:\n%s", re.RawResponse.StatusCode, body)
	}
	_, err = c.GetEntity(ctx, "p", "never", nil)
	wantCode(t, "Get of the failed batch's insert", err, http.StatusNotFound, "ResourceNotFound")
	assertProps(t, c, "p", "mrg", `!"Never"`)

	// Two partitions: refused whole (Azure; Azurite applies them).
	_, err = c.SubmitTransaction(ctx, []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: ent("x1", "")},
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"q","RowKey":"x2"}`)},
	}, nil)
	if !errors.As(err, &re) || !strings.Contains(readAll(t, re.RawResponse), "CommandsInBatchActOnDifferentPartitions") {
		t.Fatalf("a batch over two partitions: %v", err)
	}
}

func readAll(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := azruntimePayload(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSDKAccessPolicyAndProperties: Set/Get Table ACL (XML), Set/Get
// Table Service Properties.
func TestSDKAccessPolicyAndProperties(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	svc := e.service(t)
	if _, err := svc.CreateTable(ctx, "acl", nil); err != nil {
		t.Fatal(err)
	}
	c := svc.NewClient("acl")
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	exp := start.Add(365 * 24 * time.Hour)
	ids := []*aztables.SignedIdentifier{{ID: to.Ptr("reader"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &exp, Permission: to.Ptr("r")}}}
	if _, err := c.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: ids}); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetAccessPolicy(ctx, nil)
	if err != nil || len(got.SignedIdentifiers) != 1 || *got.SignedIdentifiers[0].ID != "reader" ||
		*got.SignedIdentifiers[0].AccessPolicy.Permission != "r" || !got.SignedIdentifiers[0].AccessPolicy.Expiry.Equal(exp) {
		t.Fatalf("GetAccessPolicy: %+v, %v", got.SignedIdentifiers, err)
	}
	// The SDK refuses a sixth policy itself; the server must too.
	six := "<SignedIdentifiers>" + strings.Repeat("<SignedIdentifier><Id>x</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier>", 6) + "</SignedIdentifiers>"
	if r := newRawClient(t, e.URL).do(t, "PUT", "/acl?comp=acl", http.Header{"Content-Type": {"application/xml"}}, []byte(six)); r.Status != 400 ||
		r.Code != "InvalidXmlDocument" || !strings.Contains(string(r.Body), "<Code>InvalidXmlDocument</Code>") {
		t.Fatalf("six policies: %d %s %s", r.Status, r.Code, r.Body)
	}
	_, err = svc.NewClient("nosuch").GetAccessPolicy(ctx, nil)
	wantCode(t, "ACL of a missing table", err, http.StatusNotFound, "TableNotFound")

	props := aztables.ServiceProperties{MinuteMetrics: &aztables.Metrics{Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true), Version: to.Ptr("1.0"),
		RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr[int32](3)}}}
	if _, err := svc.SetProperties(ctx, props, nil); err != nil {
		t.Fatal(err)
	}
	gp, err := svc.GetProperties(ctx, nil)
	if err != nil || gp.MinuteMetrics == nil || !*gp.MinuteMetrics.Enabled || *gp.MinuteMetrics.RetentionPolicy.Days != 3 ||
		gp.HourMetrics == nil || *gp.HourMetrics.Enabled {
		t.Fatalf("GetProperties: %+v, %v", gp, err)
	}
}

// TestSDKTablesLastPage: a listing whose last page ends with the last
// table the filter matches carries no continuation, even when tables the
// filter excludes follow (four matches with $top 2 are two pages, as
// aztables' own TestQueryTable expects of Azure).
func TestSDKTablesLastPage(t *testing.T) {
	ctx := context.Background()
	svc := newEnv(t, nil).service(t)
	for _, n := range []string{"zzza0", "zzza1", "zzza2", "zzza3", "zzzb4"} {
		if _, err := svc.CreateTable(ctx, n, nil); err != nil {
			t.Fatalf("CreateTable %s: %v", n, err)
		}
	}
	pager := svc.NewListTablesPager(&aztables.ListTablesOptions{
		Filter: to.Ptr("TableName ge 'zzza' and TableName lt 'zzzb'"), Top: to.Ptr[int32](2)})
	var listed []string
	pages := 0
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, tb := range p.Tables {
			listed = append(listed, *tb.Name)
		}
	}
	if got := strings.Join(listed, ","); got != "zzza0,zzza1,zzza2,zzza3" || pages != 2 {
		t.Fatalf("tables %s in %d pages, want zzza0,zzza1,zzza2,zzza3 in 2", got, pages)
	}
}

// TestSDKServicePropertiesLimits: more than five CORS rules, or a
// retention policy of more than 365 days (or less than 1), is 400
// InvalidXmlDocument and changes nothing; five rules and 365 days are
// taken.
func TestSDKServicePropertiesLimits(t *testing.T) {
	ctx := context.Background()
	svc := newEnv(t, nil).service(t)
	rule := &aztables.CorsRule{AllowedHeaders: to.Ptr("x-ms-meta-*"), AllowedMethods: to.Ptr("PUT"),
		AllowedOrigins: to.Ptr("www.xyz.com"), ExposedHeaders: to.Ptr("x-ms-meta-*"), MaxAgeInSeconds: to.Ptr[int32](500)}
	metrics := func(days int32) *aztables.Metrics {
		return &aztables.Metrics{Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true), Version: to.Ptr("1.0"),
			RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(days)}}
	}
	for _, tc := range []struct {
		name  string
		props aztables.ServiceProperties
	}{
		{"six CORS rules", aztables.ServiceProperties{Cors: []*aztables.CorsRule{rule, rule, rule, rule, rule, rule}}},
		{"366 days", aztables.ServiceProperties{MinuteMetrics: metrics(366)}},
		{"0 days", aztables.ServiceProperties{HourMetrics: metrics(0)}},
	} {
		_, err := svc.SetProperties(ctx, tc.props, nil)
		wantCode(t, tc.name, err, http.StatusBadRequest, "InvalidXmlDocument")
	}
	got, err := svc.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Cors) != 0 || *got.MinuteMetrics.Enabled || *got.HourMetrics.Enabled {
		t.Fatalf("a refused Set Properties changed the properties: %+v", got.ServiceProperties)
	}
	ok := aztables.ServiceProperties{Cors: []*aztables.CorsRule{rule, rule, rule, rule, rule}, MinuteMetrics: metrics(365)}
	if _, err := svc.SetProperties(ctx, ok, nil); err != nil {
		t.Fatalf("five rules, 365 days: %v", err)
	}
	got, err = svc.GetProperties(ctx, nil)
	if err != nil || len(got.Cors) != 5 || *got.MinuteMetrics.RetentionPolicy.Days != 365 {
		t.Fatalf("after five rules, 365 days: %+v, %v", got.ServiceProperties, err)
	}
}
