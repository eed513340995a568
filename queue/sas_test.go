package queue_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"

	"github.com/blobshare/blobshare/queue"
)

// A queue service SAS may name a stored access policy of its queue (si),
// which supplies its permissions and lifetime; a policy the queue does not
// have fails authentication. An operation no service SAS may do (Create
// Queue) is AuthorizationFailure whatever the SAS's permissions, a missing
// permission AuthorizationPermissionMismatch (as the azqueue live tests
// TestQueueSASUsingAccessPolicy and TestQueueGetSASURL expect of Azure).
func TestServiceSASStoredPolicyAndScope(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	svc := e.service(t)
	q := svc.NewQueueClient("policy")
	if _, err := q.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	_, err := q.SetAccessPolicy(ctx, &azqueue.SetAccessPolicyOptions{QueueACL: []*azqueue.SignedIdentifier{{
		ID: to.Ptr("addonly"),
		AccessPolicy: &azqueue.AccessPolicy{Start: to.Ptr(now.Add(-time.Minute)), Expiry: to.Ptr(now.Add(time.Hour)),
			Permission: to.Ptr((&azqueue.AccessPolicyPermission{Add: true}).String())},
	}}})
	if err != nil {
		t.Fatalf("set ACL: %v", err)
	}
	cred, err := azqueue.NewSharedKeyCredential(queue.DevAccount, queue.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	client := func(v sas.QueueSignatureValues) *azqueue.QueueClient {
		t.Helper()
		v.Protocol, v.QueueName = sas.ProtocolHTTPSandHTTP, "policy"
		qp, err := v.SignWithSharedKey(cred)
		if err != nil {
			t.Fatal(err)
		}
		c, err := azqueue.NewQueueClientWithNoCredential(e.URL+"/policy?"+qp.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	byPolicy := client(sas.QueueSignatureValues{Identifier: "addonly"})
	if _, err := byPolicy.EnqueueMessage(ctx, "by policy", nil); err != nil {
		t.Fatalf("enqueue under the policy's a: %v", err)
	}
	if _, err := byPolicy.DequeueMessage(ctx, nil); code(err) != "AuthorizationPermissionMismatch" {
		t.Fatalf("dequeue without p: %v, want AuthorizationPermissionMismatch", err)
	}
	if _, err := client(sas.QueueSignatureValues{Identifier: "nosuch"}).EnqueueMessage(ctx, "x", nil); code(err) != "AuthenticationFailed" {
		t.Fatalf("a policy the queue does not have: %v, want AuthenticationFailed", err)
	}

	all := client(sas.QueueSignatureValues{ExpiryTime: now.Add(time.Hour),
		Permissions: (&sas.QueuePermissions{Read: true, Add: true, Update: true, Process: true}).String()})
	if _, err := all.Create(ctx, nil); code(err) != "AuthorizationFailure" {
		t.Fatalf("create queue with a queue SAS: %v, want AuthorizationFailure", err)
	}
}

// A signed identifier is at most 64 characters (Set Queue ACL); 65 is
// 400 InvalidXmlDocument.
func TestACLIdentifierLength(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	q := e.service(t).NewQueueClient("acl")
	if _, err := q.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n    int
		want string
	}{{64, ""}, {65, "InvalidXmlDocument"}} {
		_, err := q.SetAccessPolicy(ctx, &azqueue.SetAccessPolicyOptions{QueueACL: []*azqueue.SignedIdentifier{{
			ID: to.Ptr(strings.Repeat("é", tc.n)), AccessPolicy: &azqueue.AccessPolicy{Permission: to.Ptr("r")},
		}}})
		if code(err) != tc.want {
			t.Errorf("identifier of %d characters: %v, want %q", tc.n, err, tc.want)
		}
	}
}
