/**
 * The cluster smoke run (tools/cluster_smoke.ts) as tests, on both registry
 * engines: three real game processes and a real redis-server (or one Deno KV
 * file), 12 bots over real WebSockets through the hub portal, dungeons spread
 * over at least two processes, a bot travelling hub (g1) → dungeon (elsewhere)
 * → hub (g1) whose dropped link comes back through g2 and is handed over to g1 (the
 * same ship), and a process killed with SIGKILL leaving the registry within the
 * heartbeat TTL while its players find a live hub by themselves (a resume there fails,
 * and the client goes back to where it first came in). Then "again" across processes:
 * two game processes in this one (real app, real ports, one memory registry) and two
 * bots, one of whom is sent home to the other process before the wipe.
 */
import assert from "node:assert/strict";
import { HUB } from "../../content/mod.ts";
import { Bot } from "../../net/client/bot.ts";
import { ClusterNode } from "../../net/server/cluster.ts";
import { MemoryStore, Registry } from "../../net/server/registry/mod.ts";
import { realClock } from "../../net/server/scheduler.ts";
import { GameServer } from "../../net/server/server.ts";
import { TokenSigner } from "../../net/server/tokens.ts";
import { Choice, EnterReason } from "../../net/wire/protocol.ts";
import { createApp } from "../../routes/app.ts";
import { CLUSTER_TIMING } from "../../content/net_tuning.ts";
import { type ClusterSmokeReport, runClusterSmoke } from "../../tools/cluster_smoke.ts";
import { deadlyRoom } from "../net/_harness.ts";

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

/** A game process in this test process: the real app on a real port, in a cluster. */
class LiveNode {
  readonly server: GameServer;
  readonly http: Deno.HttpServer<Deno.NetAddr>;
  readonly node: ClusterNode;
  readonly wsUrl: string;

  constructor(id: string, registry: Registry) {
    this.server = new GameServer({
      clock: realClock,
      instancePrefix: `${id}/`,
      processId: id,
      tokenSecret: SECRET,
      worldDef: (kind) => kind === "dungeon" ? deadlyRoom() : undefined,
    });
    this.server.start();
    const app = createApp(this.server, { clientJs: () => Promise.resolve("") });
    this.http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
    const url = `http://127.0.0.1:${this.http.addr.port}`;
    this.wsUrl = `ws://127.0.0.1:${this.http.addr.port}/ws`;
    this.node = new ClusterNode(this.server, {
      registry,
      signer: new TokenSigner(SECRET),
      processId: id,
      publicUrl: url,
      wallNow: () => Date.now(),
    });
  }

  /** The server side of a bot's ship (a test moves it: no walking needed). */
  ship(bot: Bot): { x: number; y: number; iframeTicks: number } {
    const rt = bot.client.runtime;
    const instance = this.server.instances.get(rt.instanceId);
    const ship = instance?.world.players.get(rt.playerId);
    assert.ok(ship, `${bot.name}'s ship is on ${rt.instanceId}`);
    return ship;
  }

  async stop(): Promise<void> {
    await this.node.stop({ withdrawWithinMs: 100 });
    this.server.shutdown("test over");
    await this.http.shutdown();
  }
}

const SECRET = new Uint8Array(32).fill(9);

async function until(what: string, done: () => boolean, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

Deno.test("'again' across processes over real sockets: a bot sent home to A gets B's results, and both regroup on B", async () => {
  const registry = new Registry(new MemoryStore({ now: () => Date.now() }), {
    now: () => Date.now(),
    heartbeatTtlMs: CLUSTER_TIMING.heartbeatTtlMs,
    partyTtlMs: CLUSTER_TIMING.partyTtlMs,
  });
  const [a, b] = [new LiveNode("a", registry), new LiveNode("b", registry)];
  await Promise.all([a.node.start(), b.node.start()]);
  const bots = ["Ann", "Bo"].map((name) => new Bot(a.wsUrl, { name, mode: "idle" }));
  const [ann, bo] = bots;
  try {
    await until(
      "both in a/hub",
      () => bots.every((x) => x.client.runtime.instanceId === "a/hub"),
      10_000,
    );
    for (const x of bots) Object.assign(a.ship(x), HUB.portals[0]);
    const inB = (x: Bot) => x.client.runtime.instanceId.startsWith("b/dungeon-");
    await until("both in a dungeon on B", () => bots.every(inB), 10_000);
    const first = ann.client.runtime.instanceId;
    assert.equal(bo.client.runtime.instanceId, first);
    await until("the boss", () => b.server.instances.get(first)?.world.stage === "boss", 10_000);

    // Ann falls first and goes home to A; then Bo falls: the wipe.
    const boss = b.server.instances.get(first)!.world.boss!.def;
    Object.assign(b.ship(ann), { x: boss.x, y: boss.y, iframeTicks: 0 });
    await until("Ann home in a/hub", () => ann.client.runtime.instanceId === "a/hub", 10_000);
    Object.assign(b.ship(bo), { x: boss.x, y: boss.y, iframeTicks: 0 });
    await until("Ann's results, on A", () => ann.log.results.length === 1, 10_000);
    assert.equal(bo.log.results.length, 1);
    assert.deepEqual(ann.log.results[0].rows.map((r) => r.name).sort(), ["Ann", "Bo"]);

    ann.client.runtime.choose(Choice.Again);
    await until(
      "Ann in the crew's dungeon",
      () => inB(ann) && ann.client.runtime.instanceId !== first,
      10_000,
    );
    assert.equal(ann.log.enters.at(-1)?.reason, EnterReason.Retry);
    const again = ann.client.runtime.instanceId;
    assert.equal(b.server.instances.get(again)?.reservedFor, first);

    // Bo saw the results on B, then went home to A: the offer follows him there.
    await until("Bo home in a/hub", () => bo.client.runtime.instanceId === "a/hub", 10_000);
    bo.client.runtime.choose(Choice.Again);
    await until("Bo with Ann", () => bo.client.runtime.instanceId === again, 10_000);
    assert.equal(bo.log.results.length, 1, "one results screen");
    assert.equal(b.server.instances.get(again)?.size, 2);
  } finally {
    for (const x of bots) await x.stop();
    await a.stop();
    await b.stop();
    await registry.close();
  }
});
