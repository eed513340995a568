// Share features and everyday client paths with the official JS SDK
// (@azure/storage-file-share), against blobshare's FileREST endpoint. Run
// by TestJSShareFeatures (BLOBSHARE_CONN, NODE_PATH). Every scenario runs;
// failures are listed together, and the script exits 1 if there was any.
"use strict";
const fsp = require("fs/promises");
const os = require("os");
const path = require("path");
const {
  ShareServiceClient,
  StorageSharedKeyCredential,
  generateFileSASQueryParameters,
  ShareClient,
} = require("@azure/storage-file-share");

function check(cond, what) {
  if (!cond) {
    throw new Error("check failed: " + what);
  }
}

async function readAll(stream) {
  const chunks = [];
  for await (const c of stream) {
    chunks.push(Buffer.from(c));
  }
  return Buffer.concat(chunks);
}

async function errorCode(p) {
  try {
    await p;
  } catch (e) {
    return (e.details && e.details.errorCode) || e.code || String(e);
  }
  return "no error";
}

const failures = [];
async function scenario(name, fn) {
  try {
    await fn();
    console.log("ok   " + name);
  } catch (e) {
    failures.push(name);
    console.log("FAIL " + name + ": " + (e && e.message ? e.message : e));
  }
}

async function main() {
  const conn = process.env.BLOBSHARE_CONN;
  const svc = ShareServiceClient.fromConnectionString(conn);
  const account = /AccountName=([^;]+)/.exec(conn)[1];
  const key = /AccountKey=([^;]+)/.exec(conn)[1];
  const cred = new StorageSharedKeyCredential(account, key);
  const share = svc.getShareClient("jsfeatures");
  await share.create({ quota: 1 });
  const root = share.getDirectoryClient("");

  // renewLease is not driven: ShareLeaseClient.renewLease of SDK 12.31.0
  // throws "not available for lease on file" for shares too (its isFile
  // test looks for renewLease, which only shares have). The Go SDK test
  // covers renew.
  await scenario("share lease: acquire, change, break, release", async () => {
    const lc = share.getShareLeaseClient();
    const acq = await lc.acquireLease(15);
    check(acq.leaseId === lc.leaseId, "lease id");
    let p = await share.getProperties();
    check(p.leaseState === "leased" && p.leaseStatus === "locked" && p.leaseDuration === "fixed", "leased " + p.leaseState);
    const newId = "11111111-2222-3333-4444-555555555555";
    await lc.changeLease(newId);
    check(lc.leaseId === newId, "changed id");
    check((await errorCode(share.delete())) === "LeaseIdMissing", "delete without the lease id");
    const br = await lc.breakLease({ breakPeriod: 0 });
    check(br.leaseTimeInSeconds === 0, "lease time " + br.leaseTimeInSeconds);
    p = await share.getProperties();
    check(p.leaseState === "broken", "broken " + p.leaseState);
    await lc.releaseLease();
    p = await share.getProperties();
    check(p.leaseState === "available", "available " + p.leaseState);
  });

  await scenario("stored access policy used by a service SAS (si)", async () => {
    const f = root.getFileClient("policy.txt");
    await f.uploadData(Buffer.from("policy content"));
    const expiresOn = new Date(Date.now() + 3600 * 1000);
    await share.setAccessPolicy([{ id: "readers", accessPolicy: { permissions: "r", expiresOn } }]);
    const acl = await share.getAccessPolicy();
    check(acl.signedIdentifiers.length === 1 && acl.signedIdentifiers[0].id === "readers", "acl");
    check(acl.signedIdentifiers[0].accessPolicy.permissions === "r", "permissions");
    const sas = generateFileSASQueryParameters({ shareName: "jsfeatures", filePath: "policy.txt", identifier: "readers" }, cred).toString();
    const url = f.url + "?" + sas;
    const { ShareFileClient } = require("@azure/storage-file-share");
    const viaSAS = new ShareFileClient(url);
    check((await readAll((await viaSAS.download()).readableStreamBody)).toString() === "policy content", "read through si");
    check((await errorCode(viaSAS.setMetadata({ a: "b" }))) === "AuthorizationPermissionMismatch", "write through a read policy");
  });

  await scenario("create and get permission, permission key on a file", async () => {
    const sddl = "O:BAG:SYD:(A;;FA;;;BA)(A;;0x1200a9;;;BU)";
    const cp = await share.createPermission(sddl);
    check(!!cp.filePermissionKey, "key");
    const gp = await share.getPermission(cp.filePermissionKey);
    check(gp.permission === sddl, "sddl back " + gp.permission);
    const f = root.getFileClient("perm.txt");
    await f.create(0, { filePermissionKey: cp.filePermissionKey });
    const fp = await f.getProperties();
    check(fp.filePermissionKey === cp.filePermissionKey, "file key " + fp.filePermissionKey);
    const g = root.getFileClient("perm2.txt");
    await g.create(0, { filePermission: sddl });
    check((await g.getProperties()).filePermissionKey === cp.filePermissionKey, "inline permission's key");
  });

  await scenario("share snapshot: read the past, list it, delete it", async () => {
    const f = root.getFileClient("snap.txt");
    await f.uploadData(Buffer.from("before"));
    const snap = await share.createSnapshot({ metadata: { taken: "yes" } });
    check(!!snap.snapshot, "snapshot name");
    await f.uploadData(Buffer.from("after!"));
    const past = share.withSnapshot(snap.snapshot).getDirectoryClient("").getFileClient("snap.txt");
    check((await readAll((await past.download()).readableStreamBody)).toString() === "before", "snapshot content");
    check((await readAll((await f.download()).readableStreamBody)).toString() === "after!", "live content");
    const listed = [];
    for await (const s of svc.listShares({ includeSnapshots: true })) {
      if (s.name === "jsfeatures") listed.push(s.snapshot || "");
    }
    check(listed.length === 2 && listed[0] === snap.snapshot, "listing " + listed.join(","));
    check((await errorCode(past.delete())) === "ShareSnapshotOperationNotSupported", "write to a snapshot");
    await share.withSnapshot(snap.snapshot).delete();
  });

  await scenario("share statistics and quota", async () => {
    const st = await share.getStatistics();
    check(typeof st.shareUsageBytes === "number", "usage " + st.shareUsageBytes);
    const big = root.getFileClient("toobig.bin");
    check((await errorCode(big.create(2 * 1024 * 1024 * 1024))) === "ShareSizeLimitReached", "past the quota");
  });

  await scenario("uploadFile / downloadToBuffer in parallel ranges", async () => {
    const tmp = path.join(os.tmpdir(), "blobshare-js-" + process.pid);
    const data = Buffer.alloc(9 * 1024 * 1024 + 123);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
    await fsp.writeFile(tmp, data);
    try {
      const f = root.getFileClient("parallel.bin");
      await f.uploadFile(tmp, { rangeSize: 4 * 1024 * 1024, concurrency: 4 });
      const got = await f.downloadToBuffer(undefined, undefined, { rangeSize: 2 * 1024 * 1024, concurrency: 4 });
      check(got.equals(data), "parallel round trip");
      const ranges = await f.getRangeList();
      check(ranges.rangeList.length >= 1 && ranges.rangeList[0].start === 0, "range list");
    } finally {
      await fsp.rm(tmp, { force: true });
    }
  });

  // rename is not driven: ShareFileClient.rename builds the destination
  // URL with setURLPath("/<share>/<path>"), dropping the account segment
  // of a path-style (IP) endpoint, so the request names share
  // "<path>" of account "<share>" (400 InvalidResourceName here).
  await scenario("copy with source times, handles", async () => {
    const src = root.getFileClient("renamed.txt");
    await src.uploadData(Buffer.from("copy me"));
    const sp = await src.getProperties();
    const dst = root.getFileClient("copy.txt");
    const cp = await dst.startCopyFromURL(src.url, {
      copyFileSmbInfo: { fileCreationTime: "source", fileLastWriteTime: "source", fileAttributes: "source" },
    });
    check(cp.copyStatus === "success", "copy status " + cp.copyStatus);
    const dp = await dst.getProperties();
    check(dp.fileCreatedOn.getTime() === sp.fileCreatedOn.getTime(), "creation time carried");
    const handles = [];
    for await (const h of root.listHandles({ recursive: true })) handles.push(h);
    check(handles.length === 0, "no handles");
  });

  await scenario("directory properties, metadata, exists", async () => {
    const d = root.getDirectoryClient("meta");
    await d.create({ metadata: { a: "1" } });
    check(await d.exists(), "exists");
    await d.setMetadata({ b: "2" });
    const p = await d.getProperties();
    check(p.metadata.b === "2" && p.metadata.a === undefined, "metadata replaced");
    check(!(await root.getFileClient("nope").exists()), "exists on a missing file");
  });

  for await (const s of svc.listShares({ includeSnapshots: true })) {
    if (s.name === "jsfeatures" && s.snapshot) {
      await share.withSnapshot(s.snapshot).delete();
    }
  }
  await share.delete({ deleteSnapshots: "include" });
  if (failures.length > 0) {
    console.log("FAILED: " + failures.join("; "));
    process.exit(1);
  }
  console.log("JS share features OK");
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
