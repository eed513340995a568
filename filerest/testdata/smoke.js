// Smoke test of blobshare's FileREST endpoint with the official JS SDK
// (@azure/storage-file-share). Run by TestJSSmoke with the connection
// string in BLOBSHARE_CONN and NODE_PATH pointing at integration/js.
"use strict";
const { ShareServiceClient } = require("@azure/storage-file-share");

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

async function main() {
  const svc = ShareServiceClient.fromConnectionString(process.env.BLOBSHARE_CONN);
  const share = svc.getShareClient("jsshare");
  await share.create({ metadata: { from: "js" } });

  const dir = share.getDirectoryClient("dir");
  await dir.create();

  const content = Buffer.from("hello from the JS SDK\n".repeat(1000));
  const file = dir.getFileClient("hello world.txt");
  await file.create(content.length, { fileHttpHeaders: { fileContentType: "text/plain" } });
  await file.uploadRange(content, 0, content.length);

  const props = await file.getProperties();
  check(props.contentLength === content.length, "size " + props.contentLength);
  check(props.contentType === "text/plain", "content type " + props.contentType);
  check(props.fileCreatedOn instanceof Date, "creation time parsed");

  const dl = await file.download();
  const got = await readAll(dl.readableStreamBody);
  check(got.equals(content), "download content");

  const part = await file.download(6, 4);
  check((await readAll(part.readableStreamBody)).toString() === "from", "ranged download");

  const names = [];
  for await (const item of dir.listFilesAndDirectories()) {
    names.push(item.kind + ":" + item.name);
  }
  check(names.join(",") === "file:hello world.txt", "listing " + names.join(","));

  const shares = [];
  for await (const s of svc.listShares({ includeMetadata: true })) {
    shares.push(s.name);
  }
  check(shares.includes("jsshare"), "share listing " + shares.join(","));

  let code = "";
  try {
    await dir.getFileClient("missing.txt").getProperties();
  } catch (e) {
    code = e.details && e.details.errorCode;
  }
  check(code === "ResourceNotFound", "missing file error code " + code);

  await file.delete();
  await dir.delete();
  await share.delete();
  console.log("JS smoke OK");
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
