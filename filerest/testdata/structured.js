// Structured bodies through the official JS SDK
// (@azure/storage-file-share): with contentChecksumAlgorithm
// "StorageCrc64", uploadRange frames its body as a structured message
// (x-ms-structured-body) and download asks for one and checks its CRC-64s. Run by TestJSStructuredDownload with the
// connection string in BLOBSHARE_CONN and NODE_PATH pointing at
// integration/js.
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
  const share = svc.getShareClient("jsstructured");
  await share.create();
  const content = Buffer.alloc(300 * 1024);
  for (let i = 0; i < content.length; i++) {
    content[i] = (i * 31 + (i >> 9)) & 0xff;
  }
  const file = share.rootDirectoryClient.getFileClient("data.bin");
  await file.create(content.length);
  const up = await file.uploadRange(content, 0, content.length, { contentChecksumAlgorithm: "StorageCrc64" });
  check(up._response.headers.get("x-ms-structured-body") === "XSM/1.0; properties=crc64", "uploadRange: x-ms-structured-body echoed");
  const plain = await readAll((await file.download()).readableStreamBody);
  check(plain.equals(content), "structured uploadRange stored " + plain.length + " bytes");
  const multi = share.rootDirectoryClient.getFileClient("multi.bin");
  await multi.uploadData(content, { contentChecksumAlgorithm: "StorageCrc64", rangeSize: 64 * 1024, concurrency: 2 });
  const multiGot = await readAll((await multi.download()).readableStreamBody);
  check(multiGot.equals(content), "structured uploadData stored " + multiGot.length + " bytes");

  for (const [offset, count] of [[0, undefined], [1000, 5000], [content.length - 1, 1]]) {
    const dl = await file.download(offset, count, { contentChecksumAlgorithm: "StorageCrc64" });
    const got = await readAll(dl.readableStreamBody);
    const want = content.subarray(offset, count === undefined ? content.length : offset + count);
    check(got.equals(want), `download ${offset}+${count}: ${got.length} bytes, want ${want.length}`);
  }
  const buf = await file.downloadToBuffer(0, undefined, { contentChecksumAlgorithm: "StorageCrc64", rangeSize: 64 * 1024 });
  check(buf.equals(content), "downloadToBuffer: " + buf.length + " bytes");
  console.log("structured uploads and downloads ok");
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
