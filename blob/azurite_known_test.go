package blob_test

import (
	"net/http"
	"strings"
)

// diffReq is one request of a differential run against Azurite.
type diffReq struct {
	method, path, body string
	hdr                map[string]string
	// discarded: blobshare discarded the blob's staged blocks (a Put
	// Blob or Delete Blob since its last commit) where Azurite keeps
	// them.
	discarded bool
	// copyOnto: the HEAD that follows a Copy Blob onto the blob (the
	// lease matrix compares the lease state it answers).
	copyOnto bool
	// renewB: the HEAD that follows a renew with another id (idB).
	renewB bool
}

// knownDiff is a place where Azurite departs from Azure's documentation
// (or from what Azure answers in the SDKs' recordings) and blobshare
// follows Azure: doc quotes the words blobshare's answer rests on, match
// recognises the difference (both answers, so that blobshare's answer is
// asserted too). blob/doc.go lists the same.
type knownDiff struct {
	name, doc string
	match     func(r diffReq, az, bs answer) bool
}

var knownDiffs = []knownDiff{
	{
		name: "copy source condition code",
		doc: `Blob service error codes: "SourceConditionNotMet | Precondition Failed (412) | The source condition ` +
			`specified using HTTP conditional header(s) is not met."; the azblob tests TestBlobStartCopySourceIfMatchFalse ` +
			`and TestBlobStartCopySourceIfNoneMatchFalse expect it. Azurite: 412 or 304 ConditionNotMet.`,
		match: func(r diffReq, az, bs answer) bool {
			return isCopy(r) && (az.status == http.StatusPreconditionFailed || az.status == http.StatusNotModified) &&
				az.code == "ConditionNotMet" && bs.status == http.StatusPreconditionFailed && bs.code == "SourceConditionNotMet"
		},
	},
	{
		name: "undocumented conditions on container writes",
		doc: `Specifying conditional headers, "Operations Supporting Conditional Headers": Set Container Metadata ` +
			`takes If-Modified-Since; Delete Container, Lease Container and Set Container ACL If-Modified-Since and ` +
			`If-Unmodified-Since; and for any write "a request may specify only a single conditional header" but for ` +
			`the two pairs. Azurite ignores the other headers there (If-Match, If-None-Match, If-Unmodified-Since on Set ` +
			`Container Metadata); blobshare honours every conditional header a write carries (never ignores one) and ` +
			`refuses the combinations the rule forbids.`,
		match: func(r diffReq, az, bs answer) bool {
			ims, ius := r.hdr["If-Modified-Since"] != "", r.hdr["If-Unmodified-Since"] != ""
			undocumented := r.hdr["If-Match"] != "" || r.hdr["If-None-Match"] != "" || ims && ius ||
				ius && strings.Contains(r.path, "comp=metadata")
			if !strings.Contains(r.path, "restype=container") || !undocumented {
				return false
			}
			return bs.status < 300 || bs.code == "ConditionNotMet" || bs.code == "MultipleConditionHeadersNotSupported"
		},
	},
	{
		name: "x-ms-blob-if-* on Set Blob Tags",
		doc: `Set Blob Tags evaluates the conditions the SDKs send as x-ms-blob-if-match, -none-match, ` +
			`-modified-since and -unmodified-since (azblob's TestGetSetTagsWithBlobModifiedAccessConditions: If-None-Match ` +
			`current and If-Unmodified-Since past fail), under the one-header rule of any write. Azurite ignores them (204).`,
		match: func(r diffReq, az, bs answer) bool {
			blobIf := false
			for k := range r.hdr {
				blobIf = blobIf || strings.HasPrefix(strings.ToLower(k), "x-ms-blob-if-")
			}
			return blobIf && strings.Contains(r.path, "comp=tags") && az.status == http.StatusNoContent &&
				(bs.code == "ConditionNotMet" || bs.code == "MultipleConditionHeadersNotSupported")
		},
	},
	{
		name: "Copy Blob onto a broken or expired lease",
		doc: `Lease Blob: "When a lease is active, the lease ID must be included in the request for any of the ` +
			`following operations: ... Copy Blob (lease ID needed for destination blob)", and "Write, no lease ` +
			`specified" on Broken (A) and Expired (A) is "Available, write succeeds". Azurite keeps the destination's ` +
			`lease broken or expired after a copy (it makes it available after every other write).`,
		match: func(r diffReq, az, bs answer) bool {
			return r.copyOnto && (az.lease == "broken" || az.lease == "expired") && bs.lease == "available"
		},
	},
	{
		name: "lease id on an expired lease",
		doc: `Blob service error codes: "LeaseLost | Precondition Failed (412) | A lease ID was specified, but the ` +
			`lease for the blob has expired." Azurite answers 412 LeaseNotPresentWithBlobOperation.`,
		match: func(r diffReq, az, bs answer) bool {
			return r.hdr["x-ms-lease-id"] != "" && az.status == http.StatusPreconditionFailed &&
				az.code == "LeaseNotPresentWithBlobOperation" && bs.status == http.StatusPreconditionFailed && bs.code == "LeaseLost"
		},
	},
	{
		name: "renew of an expired lease with another id",
		doc: `Lease Blob, "Outcomes of lease operations on blobs by lease state": "Renew (B)" on Expired (A) ` +
			`"Fails (409)". Azurite renews it under the other id (200, then leased).`,
		match: func(r diffReq, az, bs answer) bool {
			renewB := r.hdr["x-ms-lease-action"] == "renew" && r.hdr["x-ms-lease-id"] == idB
			return renewB && az.status == http.StatusOK && bs.status == http.StatusConflict && bs.code == "LeaseIdMismatchWithLeaseOperation" ||
				r.renewB && az.lease == "leased" && bs.lease == "expired"
		},
	},
	{
		name: "If-Match: * on a missing blob",
		doc: `Specifying conditional headers: If-Match "Specify this header to perform the operation only if the ` +
			`resource's ETag matches the value specified"; a missing blob has no ETag, and RFC 7232 makes "If-Match: *" ` +
			`false "if the origin server does not have a current representation": 412 ConditionNotMet. Azurite lets ` +
			`the write through (Put Blob 201, an update 404 BlobNotFound).`,
		match: func(r diffReq, az, bs answer) bool {
			return strings.TrimSpace(r.hdr["If-Match"]) == "*" && (az.status < 300 || az.code == "BlobNotFound") &&
				bs.status == http.StatusPreconditionFailed && bs.code == "ConditionNotMet"
		},
	},
	{
		name: "lease id on a write that creates the blob",
		doc: `Lease Blob, "Outcomes of use attempts on blobs by lease state": "Write using (A)" on "Available" ` +
			`"Fails (412)" (LeaseNotPresentWithBlobOperation: "There is currently no lease on the blob."); nothing is ` +
			`created. Azurite creates the blob (or, for a Put Block List naming blocks that do not exist, answers ` +
			`400 InvalidBlockList: blobshare checks the lease before the list, as it does on an existing blob).`,
		match: func(r diffReq, az, bs answer) bool {
			azOK := az.status < 300 || strings.Contains(r.path, "comp=blocklist") && az.code == "InvalidBlockList"
			return r.method == http.MethodPut && r.hdr["x-ms-lease-id"] != "" && azOK &&
				bs.status == http.StatusPreconditionFailed && bs.code == "LeaseNotPresentWithBlobOperation"
		},
	},
	{
		name: "second Delete Container",
		doc: `Delete Container: "The Delete Container operation marks the specified container for deletion. The ` +
			`container and any blobs contained within it are later deleted during garbage collection." Azure accepts a ` +
			`second Delete Container meanwhile (202 in the azure-sdk-assets recording ` +
			`TestContainerDeleteContainerWithoutLeaseId, though the page says other operations fail with 404); ` +
			`blobshare accepts it for 30 s. Azurite: 404 ContainerNotFound.`,
		match: func(r diffReq, az, bs answer) bool {
			return r.method == http.MethodDelete && strings.Contains(r.path, "restype=container") &&
				az.status == http.StatusNotFound && az.code == "ContainerNotFound" && bs.status == http.StatusAccepted
		},
	},
	{
		name: "staged blocks discarded",
		doc: `Understanding block blobs: "All uncommitted blocks are also discarded when a new blob of the same name ` +
			`is created using a single step (rather than the two-step block upload-then-commit process)"; Delete Blob ` +
			`deletes the blob with its uncommitted blocks. Azurite keeps them and a later Put Block List commits them; ` +
			`blobshare answers 400 InvalidBlockList.`,
		match: func(r diffReq, az, bs answer) bool {
			return r.discarded && strings.Contains(r.path, "comp=blocklist") && az.status == http.StatusCreated &&
				bs.status == http.StatusBadRequest && bs.code == "InvalidBlockList"
		},
	},
}

// isCopy reports whether r is a Copy Blob (x-ms-copy-source without
// x-ms-blob-type, on a blob path with no comp).
func isCopy(r diffReq) bool {
	return r.method == http.MethodPut && r.hdr["x-ms-copy-source"] != "" && r.hdr["x-ms-blob-type"] == "" &&
		!strings.Contains(r.path, "comp=")
}

// explain returns the known difference that accounts for az and bs
// answering r differently, or nil.
func explain(r diffReq, az, bs answer) *knownDiff {
	for i := range knownDiffs {
		if knownDiffs[i].match(r, az, bs) {
			return &knownDiffs[i]
		}
	}
	return nil
}
