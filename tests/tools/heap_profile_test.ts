/**
 * tools/heap_profile.ts: a real Deno process under the inspector, sampled for what no
 * scavenge collected: what it keeps shows, what it drops young does not.
 */
import assert from "node:assert/strict";
import { allocationSites, recordOldGenerationProfile } from "../../tools/heap_profile.ts";
import { freePort } from "../../tools/redis_server.ts";

const PROGRAM = `
const kept = [];
function keep() { for (let i = 0; i < 2000; i++) kept.push({ a: i, b: [i, i, i, i] }); }
function churn() { let n = 0; for (let i = 0; i < 20000; i++) n += [i, { i }].length; return n; }
let sink = 0;
setInterval(() => { keep(); sink += churn(); if (kept.length > 2e6) kept.length = 0; }, 5);
`;

Deno.test("what a process keeps is sampled at its allocation site; what dies young is not", async () => {
  const hostPort = `127.0.0.1:${freePort()}`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", `--inspect=${hostPort}`, "-"],
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(PROGRAM));
  await writer.close();
  try {
    for (let i = 0;; i++) {
      try {
        if ((await fetch(`http://${hostPort}/json/list`).then((r) => r.json())).length > 0) break;
      } catch {
        // Not listening yet.
      }
      if (i > 100) throw new Error("the inspector did not come up");
      await new Promise((r) => setTimeout(r, 50));
    }
    const profile = await recordOldGenerationProfile(hostPort, { seconds: 1.5 });
    const sites = allocationSites(profile, 1);
    const bytesAt = (name: string) =>
      sites.filter((s) => s.stack.startsWith(`${name} `)).reduce((a, s) => a + s.bytes, 0);
    const total = sites.reduce((a, s) => a + s.bytes, 0);
    assert.ok(bytesAt("keep") > 0.5 * total, `keep: ${bytesAt("keep")} of ${total} B`);
    assert.ok(bytesAt("churn") < 0.1 * total, `churn: ${bytesAt("churn")} of ${total} B`);
  } finally {
    child.kill();
    await child.status;
  }
});
