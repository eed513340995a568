package queue_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"

	"github.com/blobshare/blobshare/queue"
)

// code returns the Azure error code of err ("" if none).
func code(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// TestSDKQueueOperations drives every queue-level and service-level
// operation through the azqueue SDK, unchanged, with the devstore
// connection string.
func TestSDKQueueOperations(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	svc := e.service(t)

	// Create: new (201), again with the same metadata (204), with other
	// metadata (409 QueueAlreadyExists).
	md := map[string]*string{"owner": to.Ptr("alice")}
	if _, err := svc.CreateQueue(ctx, "jobs", &azqueue.CreateOptions{Metadata: md}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateQueue(ctx, "jobs", &azqueue.CreateOptions{Metadata: map[string]*string{"Owner": to.Ptr("alice")}}); err != nil {
		t.Fatalf("idempotent create: %v", err)
	}
	if _, err := svc.CreateQueue(ctx, "jobs", nil); code(err) != "QueueAlreadyExists" {
		t.Fatalf("create with other metadata: %v", err)
	}
	for _, n := range []string{"alpha", "alpha-2", "beta"} {
		if _, err := svc.CreateQueue(ctx, n, nil); err != nil {
			t.Fatal(err)
		}
	}

	// List: prefix, paging with marker, include=metadata.
	var names []string
	pager := svc.NewListQueuesPager(&azqueue.ListQueuesOptions{MaxResults: to.Ptr(int32(2)), Include: azqueue.ListQueuesInclude{Metadata: true}})
	pages := 0
	for pager.More() {
		resp, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, q := range resp.Queues {
			names = append(names, *q.Name)
			if *q.Name == "jobs" && (q.Metadata["owner"] == nil || *q.Metadata["owner"] != "alice") {
				t.Errorf("jobs metadata in listing: %v", q.Metadata)
			}
		}
	}
	if got := join(names); got != "alpha alpha-2 beta jobs" || pages != 2 {
		t.Fatalf("listed %q in %d pages", got, pages)
	}
	pager = svc.NewListQueuesPager(&azqueue.ListQueuesOptions{Prefix: to.Ptr("alp")})
	resp, err := pager.NextPage(ctx)
	if err != nil || len(resp.Queues) != 2 {
		t.Fatalf("prefix listing: %v %v", err, resp.Queues)
	}

	// Metadata and the approximate count.
	q := svc.NewQueueClient("jobs")
	if _, err := q.SetMetadata(ctx, &azqueue.SetMetadataOptions{Metadata: map[string]*string{"stage": to.Ptr("2")}}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := q.EnqueueMessage(ctx, "m", nil); err != nil {
			t.Fatal(err)
		}
	}
	props, err := q.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if props.ApproximateMessagesCount == nil || *props.ApproximateMessagesCount != 3 || len(props.Metadata) != 1 {
		t.Fatalf("properties: count %v metadata %v", props.ApproximateMessagesCount, props.Metadata)
	}

	// ACL: set two policies, read them back.
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	acl := []*azqueue.SignedIdentifier{
		{ID: to.Ptr("read"), AccessPolicy: &azqueue.AccessPolicy{Start: &start, Expiry: to.Ptr(start.Add(time.Hour)), Permission: to.Ptr("r")}},
		{ID: to.Ptr("proc"), AccessPolicy: &azqueue.AccessPolicy{Permission: to.Ptr("raup")}},
	}
	if _, err := q.SetAccessPolicy(ctx, &azqueue.SetAccessPolicyOptions{QueueACL: acl}); err != nil {
		t.Fatal(err)
	}
	got, err := q.GetAccessPolicy(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.SignedIdentifiers) != 2 || *got.SignedIdentifiers[0].ID != "read" || !got.SignedIdentifiers[0].AccessPolicy.Start.Equal(start) ||
		*got.SignedIdentifiers[1].AccessPolicy.Permission != "raup" {
		t.Fatalf("ACL read back: %+v", got.SignedIdentifiers)
	}

	// Service properties: stored and returned.
	if _, err := svc.SetProperties(ctx, &azqueue.SetPropertiesOptions{
		HourMetrics: &azqueue.Metrics{Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true), Version: to.Ptr("1.0"),
			RetentionPolicy: &azqueue.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(3))}},
		CORS: []*azqueue.CORSRule{{AllowedOrigins: to.Ptr("*"), AllowedMethods: to.Ptr("GET"), AllowedHeaders: to.Ptr("*"),
			ExposedHeaders: to.Ptr("*"), MaxAgeInSeconds: to.Ptr(int32(60))}},
	}); err != nil {
		t.Fatal(err)
	}
	sp, err := svc.GetServiceProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !*sp.HourMetrics.Enabled || *sp.HourMetrics.RetentionPolicy.Days != 3 || len(sp.CORS) != 1 || *sp.CORS[0].MaxAgeInSeconds != 60 {
		t.Fatalf("service properties read back: %+v %+v", sp.HourMetrics, sp.CORS)
	}

	// Delete; then every operation on it is QueueNotFound.
	if _, err := svc.DeleteQueue(ctx, "jobs", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := q.GetProperties(ctx, nil); code(err) != "QueueNotFound" {
		t.Fatalf("properties of a deleted queue: %v", err)
	}
	if _, err := q.EnqueueMessage(ctx, "x", nil); code(err) != "QueueNotFound" {
		t.Fatalf("put to a deleted queue: %v", err)
	}
	if _, err := svc.DeleteQueue(ctx, "jobs", nil); code(err) != "QueueNotFound" {
		t.Fatalf("second delete: %v", err)
	}
}

// TestSDKMessageOperations: put (with visibility and TTL incl. -1), get,
// peek, update (new receipt, new text, new visibility), delete, clear,
// and the stale-receipt answers, through the SDK.
func TestSDKMessageOperations(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	svc := e.service(t)
	if _, err := svc.CreateQueue(ctx, "work", nil); err != nil {
		t.Fatal(err)
	}
	q := svc.NewQueueClient("work")

	put, err := q.EnqueueMessage(ctx, "hello <world> & co", &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr(int32(-1))})
	if err != nil {
		t.Fatal(err)
	}
	pm := put.Messages[0]
	if pm.MessageID == nil || pm.PopReceipt == nil || pm.InsertionTime == nil || pm.TimeNextVisible == nil ||
		pm.ExpirationTime.Year() != 9999 {
		t.Fatalf("put answer: %+v", pm)
	}
	if _, err := q.EnqueueMessage(ctx, "later", &azqueue.EnqueueMessageOptions{VisibilityTimeout: to.Ptr(int32(3600)), TimeToLive: to.Ptr(int32(7200))}); err != nil {
		t.Fatal(err)
	}

	// Peek sees only the visible one, unchanged.
	peek, err := q.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	if err != nil {
		t.Fatal(err)
	}
	if len(peek.Messages) != 1 || *peek.Messages[0].MessageText != "hello <world> & co" || *peek.Messages[0].DequeueCount != 0 {
		t.Fatalf("peek: %+v", peek.Messages)
	}

	// Get hides it and counts the dequeue.
	got, err := q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(32)), VisibilityTimeout: to.Ptr(int32(60))})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || *got.Messages[0].DequeueCount != 1 || *got.Messages[0].MessageID != *pm.MessageID {
		t.Fatalf("get: %+v", got.Messages)
	}
	m := got.Messages[0]
	if again, err := q.DequeueMessage(ctx, nil); err != nil || len(again.Messages) != 0 {
		t.Fatalf("get while invisible: %v %+v", err, again.Messages)
	}
	// The put receipt is stale now: 404 MessageNotFound.
	if _, err := q.DeleteMessage(ctx, *pm.MessageID, *pm.PopReceipt, nil); code(err) != "MessageNotFound" {
		t.Fatalf("delete with the put receipt after a get: %v", err)
	}

	// Update: new text, visible now; answers a new receipt and time.
	up, err := q.UpdateMessage(ctx, *m.MessageID, *m.PopReceipt, "edited", &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(int32(0))})
	if err != nil {
		t.Fatal(err)
	}
	if up.PopReceipt == nil || *up.PopReceipt == *m.PopReceipt || up.TimeNextVisible == nil {
		t.Fatalf("update answer: %+v", up)
	}
	if _, err := q.UpdateMessage(ctx, *m.MessageID, *m.PopReceipt, "stale", nil); code(err) != "MessageNotFound" {
		t.Fatalf("update with a stale receipt: %v", err)
	}
	peek, err = q.PeekMessage(ctx, nil)
	if err != nil || len(peek.Messages) != 1 || *peek.Messages[0].MessageText != "edited" || *peek.Messages[0].DequeueCount != 1 {
		t.Fatalf("peek after update: %v %+v", err, peek.Messages)
	}
	if _, err := q.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil); code(err) != "MessageNotFound" {
		t.Fatalf("delete with the receipt the update replaced: %v", err)
	}
	if _, err := q.DeleteMessage(ctx, *m.MessageID, *up.PopReceipt, nil); err != nil {
		t.Fatalf("delete with the update's receipt: %v", err)
	}
	if _, err := q.DeleteMessage(ctx, *m.MessageID, *up.PopReceipt, nil); code(err) != "MessageNotFound" {
		t.Fatalf("second delete: %v", err)
	}

	// Clear removes the invisible one too.
	if _, err := q.ClearMessages(ctx, nil); err != nil {
		t.Fatal(err)
	}
	props, err := q.GetProperties(ctx, nil)
	if err != nil || *props.ApproximateMessagesCount != 0 {
		t.Fatalf("count after clear: %v %v", err, props.ApproximateMessagesCount)
	}

	// Bad parameters: the documented 400s, through the SDK.
	_, err = q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(33))})
	if code(err) != "OutOfRangeQueryParameterValue" {
		t.Fatalf("numofmessages 33: %v", err)
	}
	_, err = q.EnqueueMessage(ctx, "x", &azqueue.EnqueueMessageOptions{VisibilityTimeout: to.Ptr(int32(10)), TimeToLive: to.Ptr(int32(5))})
	if code(err) != "InvalidQueryParameterValue" {
		t.Fatalf("visibility beyond ttl: %v", err)
	}
}

// TestSDKSAS: an account SAS and a queue service SAS from the SDK's own
// signers work for what they allow and are refused beyond it.
func TestSDKSAS(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	svc := e.service(t)
	if _, err := svc.CreateQueue(ctx, "sas", nil); err != nil {
		t.Fatal(err)
	}
	expiry := time.Now().Add(time.Hour)
	// Signed by the SDK's own signers; over plain HTTP, as a devstore is.
	cred, err := azqueue.NewSharedKeyCredential(queue.DevAccount, queue.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	aqp, err := sas.AccountSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: expiry,
		Permissions:   (&sas.AccountPermissions{Read: true, Add: true, Process: true, List: true}).String(),
		ResourceTypes: (&sas.AccountResourceTypes{Service: true, Container: true, Object: true}).String(),
	}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	accountURL := e.URL + "/?" + aqp.Encode()
	asvc, err := azqueue.NewServiceClientWithNoCredential(accountURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	aq := asvc.NewQueueClient("sas")
	if _, err := aq.EnqueueMessage(ctx, "via account sas", nil); err != nil {
		t.Fatalf("account SAS put: %v", err)
	}
	if _, err := asvc.CreateQueue(ctx, "nope", nil); code(err) != "AuthorizationPermissionMismatch" {
		t.Fatalf("account SAS without c creates: %v", err)
	}

	qqp, err := sas.QueueSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: expiry, QueueName: "sas",
		Permissions: (&sas.QueuePermissions{Read: true, Process: true}).String(),
	}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	qURL := e.URL + "/sas?" + qqp.Encode()
	sq, err := azqueue.NewQueueClientWithNoCredential(qURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sq.DequeueMessage(ctx, nil)
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("service SAS get: %v", err)
	}
	if _, err := sq.DeleteMessage(ctx, *got.Messages[0].MessageID, *got.Messages[0].PopReceipt, nil); err != nil {
		t.Fatalf("service SAS delete: %v", err)
	}
	if _, err := sq.EnqueueMessage(ctx, "no add permission", nil); code(err) != "AuthorizationPermissionMismatch" {
		t.Fatalf("service SAS without a puts: %v", err)
	}
}

// TestUnauthenticatedRefused: no credentials → 401 with the error code.
func TestUnauthenticatedRefused(t *testing.T) {
	e := newEnv(t, nil)
	resp, err := http.Get(e.URL + "/?comp=list")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("x-ms-error-code") != "NoAuthenticationInformation" {
		t.Fatalf("anonymous list: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
}

func join(s []string) string {
	sort.Strings(s)
	out := ""
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}

// TestSDKMessageLimits: through the SDK, the 64 KiB text limit (exactly
// 64 KiB is kept whole, one byte more is 413 RequestBodyTooLarge), Get
// and Peek of 1…32 messages, a put's visibility timeout in its answer,
// and an update to empty text. Update without content is not something
// azqueue can send (its UpdateMessage always sends a MessageText):
// TestUpdateWithoutContent sends it raw.
func TestSDKMessageLimits(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	svc := e.service(t)
	if _, err := svc.CreateQueue(ctx, "limits", nil); err != nil {
		t.Fatal(err)
	}
	q := svc.NewQueueClient("limits")

	full := strings.Repeat("é", 32<<10) // 64 KiB of UTF-8
	if _, err := q.EnqueueMessage(ctx, full, nil); err != nil {
		t.Fatalf("put 64 KiB: %v", err)
	}
	if _, err := q.EnqueueMessage(ctx, full+"x", nil); code(err) != "RequestBodyTooLarge" {
		t.Fatalf("put 64 KiB + 1: %v", err)
	}
	got, err := q.DequeueMessage(ctx, nil)
	if err != nil || len(got.Messages) != 1 || *got.Messages[0].MessageText != full {
		t.Fatalf("get the 64 KiB message: %v", err)
	}
	if _, err := q.UpdateMessage(ctx, *got.Messages[0].MessageID, *got.Messages[0].PopReceipt, full+"x", nil); code(err) != "RequestBodyTooLarge" {
		t.Fatalf("update to 64 KiB + 1: %v", err)
	}
	up, err := q.UpdateMessage(ctx, *got.Messages[0].MessageID, *got.Messages[0].PopReceipt, "", &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(int32(0))})
	if err != nil {
		t.Fatalf("update to empty text: %v", err)
	}
	if p, err := q.PeekMessage(ctx, nil); err != nil || len(p.Messages) != 1 || *p.Messages[0].MessageText != "" {
		t.Fatalf("peek after the update to empty text: %v", err)
	}
	if _, err := q.DeleteMessage(ctx, *got.Messages[0].MessageID, *up.PopReceipt, nil); err != nil {
		t.Fatal(err)
	}

	hidden, err := q.EnqueueMessage(ctx, "hidden", &azqueue.EnqueueMessageOptions{VisibilityTimeout: to.Ptr(int32(3600))})
	if err != nil {
		t.Fatal(err)
	}
	if d := hidden.Messages[0].TimeNextVisible.Sub(*hidden.Messages[0].InsertionTime); d != time.Hour {
		t.Fatalf("put with visibilitytimeout 3600: next visible %v after insertion", d)
	}
	for i := range 40 {
		if _, err := q.EnqueueMessage(ctx, fmt.Sprintf("m%02d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	p, err := q.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	if err != nil || len(p.Messages) != 32 || *p.Messages[0].MessageText != "m00" {
		t.Fatalf("peek 32 of 40: %v", err)
	}
	g, err := q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	if err != nil || len(g.Messages) != 32 || *g.Messages[31].MessageText != "m31" {
		t.Fatalf("get 32 of 40: %v", err)
	}
	g, err = q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	if err != nil || len(g.Messages) != 8 {
		t.Fatalf("get 32 of the 8 left: %v %d", err, len(g.Messages))
	}
	if _, err := q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(0))}); code(err) != "OutOfRangeQueryParameterValue" {
		t.Fatalf("numofmessages 0: %v", err)
	}
	if _, err := q.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(33))}); code(err) != "OutOfRangeQueryParameterValue" {
		t.Fatalf("peek numofmessages 33: %v", err)
	}
}

// TestUpdateWithoutContent: Update Message with no body (the SDK cannot
// send one) changes the visibility and the receipt and keeps the text.
func TestUpdateWithoutContent(t *testing.T) {
	e := newEnv(t, nil)
	c := newRawClient(t, e.URL)
	c.do(t, "PUT", "/nobody", "", nil, nil)
	put := parseMessages(t, c.do(t, "POST", "/nobody/messages", "", nil, messageBody("keep me")).Body)[0]
	r := c.do(t, "PUT", "/nobody/messages/"+put.MessageID, q("popreceipt", put.PopReceipt, "visibilitytimeout", "3600"), nil, nil)
	if r.Status != 204 || r.Header.Get("x-ms-popreceipt") == "" || r.Header.Get("x-ms-popreceipt") == put.PopReceipt || r.Header.Get("x-ms-time-next-visible") == "" {
		t.Fatalf("update without a body: %d %s %v", r.Status, r.Code, r.Header)
	}
	if p := parseMessages(t, c.do(t, "GET", "/nobody/messages", q("peekonly", "true"), nil, nil).Body); len(p) != 0 {
		t.Fatalf("peek after hiding it for an hour: %v", p)
	}
	receipt := r.Header.Get("x-ms-popreceipt")
	r = c.do(t, "PUT", "/nobody/messages/"+put.MessageID, q("popreceipt", receipt, "visibilitytimeout", "0"), nil, nil)
	if r.Status != 204 {
		t.Fatalf("second update: %d %s", r.Status, r.Code)
	}
	if p := parseMessages(t, c.do(t, "GET", "/nobody/messages", q("peekonly", "true"), nil, nil).Body); len(p) != 1 || p[0].MessageText != "keep me" {
		t.Fatalf("peek after updates without content: %v", p)
	}
}

// TestSDKStoredAccessPolicy: a queue service SAS naming a stored access
// policy (si) takes its permission and expiry from the queue's ACL;
// Set Queue ACL refuses an identifier over 64 characters ("up to 64
// characters in length", Set Queue ACL) with InvalidXmlDocument; an
// operation no queue SAS can do (Create Queue) is AuthorizationFailure.
func TestSDKStoredAccessPolicy(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	svc := e.service(t)
	q := svc.NewQueueClient("policies")
	if _, err := q.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("p", 65)
	expiry := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	policy := func(id, perm string) *azqueue.SignedIdentifier {
		return &azqueue.SignedIdentifier{ID: to.Ptr(id),
			AccessPolicy: &azqueue.AccessPolicy{Expiry: to.Ptr(expiry), Permission: to.Ptr(perm)}}
	}
	_, err := q.SetAccessPolicy(ctx, &azqueue.SetAccessPolicyOptions{QueueACL: []*azqueue.SignedIdentifier{policy(long, "r")}})
	if code(err) != "InvalidXmlDocument" {
		t.Fatalf("65-character identifier: %v, want InvalidXmlDocument", err)
	}
	if _, err := q.SetAccessPolicy(ctx, &azqueue.SetAccessPolicyOptions{QueueACL: []*azqueue.SignedIdentifier{
		policy(strings.Repeat("p", 64), "ap"), policy("readers", "r")}}); err != nil {
		t.Fatalf("64-character identifier: %v", err)
	}

	cred, err := azqueue.NewSharedKeyCredential(queue.DevAccount, queue.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	client := func(id string) *azqueue.QueueClient {
		t.Helper()
		qp, err := sas.QueueSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, QueueName: "policies", Identifier: id}.SignWithSharedKey(cred)
		if err != nil {
			t.Fatal(err)
		}
		c, err := azqueue.NewQueueClientWithNoCredential(e.URL+"/policies?"+qp.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	adder := client(strings.Repeat("p", 64))
	if _, err := adder.EnqueueMessage(ctx, "through a stored policy", nil); err != nil {
		t.Fatalf("put under the policy's 'ap': %v", err)
	}
	if _, err := adder.PeekMessage(ctx, nil); code(err) != "AuthorizationPermissionMismatch" {
		t.Fatalf("peek under 'ap': %v, want AuthorizationPermissionMismatch", err)
	}
	got, err := client("readers").PeekMessage(ctx, nil)
	if err != nil || len(got.Messages) != 1 || *got.Messages[0].MessageText != "through a stored policy" {
		t.Fatalf("peek under the policy's 'r': %+v, %v", got, err)
	}
	if _, err := client("nobody").PeekMessage(ctx, nil); code(err) != "AuthenticationFailed" {
		t.Fatalf("unknown policy: %v, want AuthenticationFailed", err)
	}

	other, err := azqueue.NewQueueClientWithNoCredential(e.URL+"/another?"+func() string {
		qp, err := sas.QueueSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, QueueName: "another",
			ExpiryTime: expiry, Permissions: (&sas.QueuePermissions{Read: true, Add: true, Update: true, Process: true}).String()}.SignWithSharedKey(cred)
		if err != nil {
			t.Fatal(err)
		}
		return qp.Encode()
	}(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Create(ctx, nil); code(err) != "AuthorizationFailure" {
		t.Fatalf("Create Queue with a queue SAS: %v, want AuthorizationFailure", err)
	}
}
