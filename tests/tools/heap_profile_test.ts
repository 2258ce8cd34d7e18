/**
 * tools/heap_profile.ts: a real Deno process under the inspector, sampled for what no
 * scavenge collected (what it keeps shows, what it drops young does not), and for all
 * it allocated.
 */
import assert from "node:assert/strict";
import {
  allocationSites,
  recordAllocationProfile,
  recordOldGenerationProfile,
} from "../../tools/heap_profile.ts";
import { freePort } from "../../tools/redis_server.ts";

const PROGRAM = `
const kept = [];
function keep() { for (let i = 0; i < 200; i++) kept.push({ a: i, b: [i, i, i, i] }); }
function churn() { const tmp = []; for (let i = 0; i < 200; i++) tmp.push({ i }); return tmp.length; }
let sink = 0;
setInterval(() => { keep(); for (let k = 0; k < 100; k++) sink += churn(); }, 5);
`;

Deno.test("what a process keeps is sampled at its allocation site; what dies young is not, unless asked", async () => {
  const hostPort = `127.0.0.1:${freePort()}`;
  const child = new Deno.Command(Deno.execPath(), {
    // Without inlining, each allocation is charged to its own function; without V8's
    // pretenuring (as the server runs), churn's objects are born young, not in the old space.
    args: [
      "run",
      `--inspect=${hostPort}`,
      "--v8-flags=--no-allocation-site-pretenuring,--no-turbo-inlining,--no-maglev-inlining",
      "-",
    ],
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
    const bytesAt = (profile: Awaited<ReturnType<typeof recordOldGenerationProfile>>) => {
      const sites = allocationSites(profile, 1);
      const at = (name: string) =>
        sites.filter((s) => s.stack.startsWith(`${name} `)).reduce((a, s) => a + s.bytes, 0);
      return {
        kept: at("keep"),
        churned: at("churn"),
        total: sites.reduce((a, s) => a + s.bytes, 0),
      };
    };
    // churn() allocates some 35 times what keep() does, all of it dead within the call;
    // what of it is left in the old generation's profile is the few calls a scavenge
    // interrupted twice (promoted) and what a full collection's marking caught.
    const old = bytesAt(await recordOldGenerationProfile(hostPort, { seconds: 1.5 }));
    assert.ok(old.kept > 0.1 * old.total, `keep: ${old.kept} of ${old.total} B`);
    assert.ok(old.churned < 10 * old.kept, `churn: ${old.churned} B, keep: ${old.kept} B`);
    // Every sample kept: churn() is most of what the process allocates.
    const all = bytesAt(await recordAllocationProfile(hostPort, { seconds: 1.5 }));
    assert.ok(all.churned > 10 * all.kept, `all: churn ${all.churned} B, keep ${all.kept} B`);
    assert.ok(all.churned > 0.5 * all.total, `all: churn ${all.churned} of ${all.total} B`);
  } finally {
    child.kill();
    await child.status;
  }
});
