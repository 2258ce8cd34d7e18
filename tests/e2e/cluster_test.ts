/**
 * The cluster smoke run (tools/cluster_smoke.ts) as tests, on both registry
 * engines: three real game processes and a real redis-server (or one Deno KV
 * file), 12 bots over real WebSockets through the hub portal, dungeons spread
 * over at least two processes, a bot travelling hub (g1) → dungeon (elsewhere)
 * → hub (g1) whose dropped link comes back through g2 and is handed over to g1 (the
 * same ship), and a process killed with SIGKILL leaving the registry within the
 * heartbeat TTL while its players find a live hub by themselves (a resume there fails,
 * and the client goes back to where it first came in).
 */
import assert from "node:assert/strict";
import { CLUSTER_TIMING } from "../../content/net_tuning.ts";
import { type ClusterSmokeReport, runClusterSmoke } from "../../tools/cluster_smoke.ts";

function check(report: ClusterSmokeReport): void {
  assert.deepEqual(report.failures, [], report.steps.join("\n"));
  assert.ok(report.ok);
  assert.equal(report.processes, 3);
  assert.equal(
    report.dungeonsPerProcess.reduce((a, b) => a + b, 0) >= 3,
    true,
    "12 bots, ≤ 4 each",
  );
  assert.ok(
    report.dungeonsPerProcess.filter((n) => n > 0).length >= 2,
    "spread over ≥ 2 processes",
  );
  // At least one dungeon's party (≤ 4, so ≥ 1 bot) on another process and the traveller's
  // way home; the orphans of the killed process go home by themselves (no new bots).
  assert.ok(report.crossProcessTransfers >= 5, `${report.crossProcessTransfers} transfers`);
  assert.ok(report.expiredAfterKillSeconds > 0);
  assert.ok(report.expiredAfterKillSeconds * 1000 <= CLUSTER_TIMING.heartbeatTtlMs + 1000);
  console.log(JSON.stringify({ ...report, steps: undefined }));
}

Deno.test("a cluster on Redis: placement across processes, transfers, and a killed process expiring", async () => {
  check(await runClusterSmoke({ backend: "redis" }));
});

Deno.test("the same cluster flow on the Deno KV registry", async () => {
  check(await runClusterSmoke({ backend: "kv" }));
});
