// The Table service with the official JS SDK (@azure/data-tables), run by
// TestJSTables with the connection string in BLOBSHARE_CONN and NODE_PATH
// pointing at integration/js/node_modules. Exits non-zero on a failure.
"use strict";
const {
  TableServiceClient,
  TableClient,
  AzureNamedKeyCredential,
  AzureSASCredential,
  generateTableSas,
  odata,
} = require("@azure/data-tables");

// show renders a value for a message (BigInt included).
function show(v) {
  return JSON.stringify(v, (k, x) => (typeof x === "bigint" ? x.toString() + "n" : x));
}

function check(cond, what) {
  if (!cond) {
    throw new Error("check failed: " + what);
  }
}

// errorCode is the service's error code as the SDK's RestError carries it.
function errorCode(e) {
  if (e.code) {
    return e.code;
  }
  const h = e.response && e.response.headers;
  return (h && h.get && h.get("x-ms-error-code")) || (e.details && e.details.errorCode) || "";
}

async function expectStatus(promise, status, code, what) {
  try {
    await promise;
  } catch (e) {
    const got = e.statusCode + " " + errorCode(e);
    check(e.statusCode === status && (!code || errorCode(e) === code), what + ": got " + got + ", want " + status + " " + code);
    return e;
  }
  throw new Error(what + ": succeeded, want " + status + " " + code);
}

async function main() {
  const conn = process.env.BLOBSHARE_CONN;
  const opts = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };
  const svc = TableServiceClient.fromConnectionString(conn, opts);
  await svc.createTable("jstable");
  await svc.createTable("jsother");
  const names = [];
  for await (const t of svc.listTables({ queryOptions: { filter: odata`TableName ge ${"js"}` } })) {
    names.push(t.name);
  }
  check(names.join(",") === "jsother,jstable", "listTables: " + names);

  const client = TableClient.fromConnectionString(conn, "jstable", opts);
  const when = new Date("2026-11-28T06:36:14.598Z");
  await client.createEntity({
    partitionKey: "p",
    rowKey: "it's",
    S: "text",
    I: 42,
    D: 2.5,
    B: true,
    T: when,
    L: { value: "9223372036854775807", type: "Int64" },
    G: { value: "6f0b2d3a-1c2b-4e5f-8a9b-0c1d2e3f4a5b", type: "Guid" },
    X: new Uint8Array([0, 1, 254, 255]),
  });
  await expectStatus(client.createEntity({ partitionKey: "p", rowKey: "it's" }), 409, "EntityAlreadyExists", "createEntity twice");
  const got = await client.getEntity("p", "it's");
  check(got.S === "text" && got.I === 42 && got.D === 2.5 && got.B === true, "scalars " + show(got));
  check(got.T instanceof Date && got.T.getTime() === when.getTime(), "DateTime " + got.T);
  check(got.L === 9223372036854775807n, "Int64 " + show(got.L)); // 13.x reads Int64 as a BigInt
  check(got.G.type === "Guid" && got.G.value === "6f0b2d3a-1c2b-4e5f-8a9b-0c1d2e3f4a5b", "Guid " + show(got.G));
  check(Buffer.from(got.X).equals(Buffer.from([0, 1, 254, 255])), "Binary " + got.X);
  check(typeof got.etag === "string" && got.etag.startsWith('W/"datetime'), "etag " + got.etag);

  // The seed's sample: stale ETag → 412, "*" wins.
  const first = got.etag;
  await client.updateEntity({ partitionKey: "p", rowKey: "it's", S: "other" }, "Merge", { etag: first });
  await expectStatus(
    client.updateEntity({ partitionKey: "p", rowKey: "it's", S: "mine" }, "Replace", { etag: first }),
    412,
    "UpdateConditionNotSatisfied",
    "update with a stale etag",
  );
  await expectStatus(client.deleteEntity("p", "it's", { etag: first }), 412, "UpdateConditionNotSatisfied", "delete with a stale etag");
  await client.updateEntity({ partitionKey: "p", rowKey: "it's", S: "mine" }, "Replace", { etag: "*" });
  const after = await client.getEntity("p", "it's");
  check(after.S === "mine" && after.I === undefined, "replace with * " + show(after));

  await client.upsertEntity({ partitionKey: "p", rowKey: "up", A: 1 }, "Merge");
  await client.upsertEntity({ partitionKey: "p", rowKey: "up", B: 2 }, "Merge");
  const up = await client.getEntity("p", "up");
  check(up.A === 1 && up.B === 2, "upsert merge " + show(up));

  await client.submitTransaction([
    ["create", { partitionKey: "q", rowKey: "1", N: 1 }],
    ["create", { partitionKey: "q", rowKey: "2", N: 2 }],
    ["upsert", { partitionKey: "q", rowKey: "3", N: 3 }, "Replace"],
  ]);
  await client.submitTransaction([
    ["update", { partitionKey: "q", rowKey: "1", N: 10 }, "Merge"],
    ["delete", { partitionKey: "q", rowKey: "2" }],
  ]);
  const failed = await expectStatus(
    client.submitTransaction([
      ["create", { partitionKey: "q", rowKey: "4" }],
      ["create", { partitionKey: "q", rowKey: "1" }],
    ]),
    409,
    "EntityAlreadyExists",
    "a failing transaction",
  );
  check(/^1:/.test(failed.message) || /1:The specified entity/.test(failed.message), "failing index in " + failed.message);
  const rows = [];
  for await (const e of client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"q"}` } })) {
    rows.push(e.rowKey + "=" + e.N);
  }
  check(rows.join(",") === "1=10,3=3", "after the transactions: " + rows);

  // Paging with a page size of 2 walks everything in key order.
  let n = 0;
  for await (const page of client.listEntities().byPage({ maxPageSize: 2 })) {
    check(page.length <= 2, "page of " + page.length);
    n += page.length;
  }
  check(n === 4, "walked " + n + " entities");

  // A table SAS with a partition range.
  // UseDevelopmentStorage=true names http://127.0.0.1:10002/devstoreaccount1.
  const m = /TableEndpoint=([^;]+)/.exec(conn);
  const endpoint = m ? m[1] : "http://127.0.0.1:10002/devstoreaccount1";
  const cred = new AzureNamedKeyCredential("devstoreaccount1", process.env.BLOBSHARE_KEY);
  const sas = generateTableSas("jstable", cred, {
    permissions: { query: true, add: true },
    expiresOn: new Date(Date.now() + 3600 * 1000),
    startPartitionKey: "q",
    endPartitionKey: "q",
  });
  const sasClient = new TableClient(endpoint, "jstable", new AzureSASCredential(sas), opts);
  const ok = await sasClient.getEntity("q", "1");
  check(ok.N === 10, "SAS read in range");
  await expectStatus(sasClient.getEntity("p", "up"), 403, "AuthorizationFailure", "SAS read out of range");
  await expectStatus(sasClient.deleteEntity("q", "1"), 403, "AuthorizationPermissionMismatch", "SAS delete without d");

  await client.setAccessPolicy([{ id: "pol", accessPolicy: { permission: "r", start: new Date(Date.now() - 60000), expiry: new Date(Date.now() + 3600000) } }]);
  const acl = await client.getAccessPolicy();
  check(acl.length === 1 && acl[0].id === "pol" && acl[0].accessPolicy.permission === "r", "access policy " + show(acl));

  await client.deleteEntity("p", "up");
  await expectStatus(client.deleteEntity("p", "up"), 404, "ResourceNotFound", "delete twice");
  await svc.deleteTable("jsother");
  await expectStatus(TableClient.fromConnectionString(conn, "jsother", opts).getEntity("a", "b"), 404, "TableNotFound", "a deleted table");
  console.log("tables.js: all checks passed");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
