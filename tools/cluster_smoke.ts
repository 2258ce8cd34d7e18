/**
 * The cluster smoke run: three game processes sharing a registry (a real
 * redis-server, or with --kv a Deno KV file), and real WebSocket bots.
 *
 *  1. 12 bots join process g1 and gather in its hub (the fullest hub with room);
 *  2. they walk into the portal: parties go to dungeons on the least-loaded
 *     processes, each bot moving to its dungeon's process by a Transfer and a
 *     ticket, in the same client; the dungeons must spread over ≥ 2 processes;
 *  3. one bot escapes and travels back to the hub on g1 it came from; its link drops
 *     and it comes back through g2 (as a load balancer may send it), which hands the
 *     resume over to g1: the same ship, in the same hub;
 *  4. one dungeon process is killed with SIGKILL: its records must leave the
 *     registry within the heartbeat TTL, and its players reconnect to a live hub.
 *
 * Every step is asserted from what the clients and the registry saw. The last
 * line is JSON: processes, dungeonsPerProcess, crossProcessTransfers,
 * expiredAfterKillSeconds (and ok, failures, backend).
 * `deno task cluster-smoke [--kv]`; tests/e2e/cluster_test.ts runs both backends.
 */
import { checkArgs } from "./args.ts";
import { Bot } from "../net/client/mod.ts";
import { EnterReason } from "../net/wire/mod.ts";
import { openStore, Registry } from "../net/server/registry/mod.ts";
import { CLUSTER_TIMING } from "../content/net_tuning.ts";
import { type GameProcess, startCluster } from "./cluster_procs.ts";

/** What one run found. */
export interface ClusterSmokeReport {
  ok: boolean;
  failures: string[];
  steps: string[];
  backend: "redis" | "kv";
  processes: number;
  /** Dungeons each process hosted once every bot was in one (g1, g2, g3). */
  dungeonsPerProcess: number[];
  /** Transfers between processes that bots made (each a reconnect with a ticket). */
  crossProcessTransfers: number;
  /** From SIGKILL until the registry listed neither the process nor its instances. */
  expiredAfterKillSeconds: number;
}

const BOTS = 12;

/**
 * Waits for `cond`. The bots play in real time, so on a busy machine everything is slower:
 * a timeout here guards against a hang, it is not a speed target (each wait is a few
 * times what a quiet machine needs), and its error says where every bot was.
 */
async function waitFor(
  what: string,
  cond: () => boolean | Promise<boolean>,
  opts: { timeoutMs: number; bots?: readonly Bot[] },
) {
  const start = performance.now();
  while (!(await cond())) {
    if (performance.now() - start > opts.timeoutMs) {
      const where = (opts.bots ?? []).map((b) =>
        `${b.name}: ${b.client.runtime.phase} in ${b.client.runtime.instanceId || "nothing"}`
      );
      throw new Error(
        `timed out after ${opts.timeoutMs} ms waiting for ${what} (load ${
          Deno.loadavg().map((l) => l.toFixed(1)).join(" ")
        })${where.length > 0 ? `; ${where.join(", ")}` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The process part of an instance id (`g2/dungeon-x1` → `g2`). */
function processOf(instanceId: string): string {
  return instanceId.split("/")[0];
}

/** Runs the scenario and reports; never throws for a failed step. */
export async function runClusterSmoke(
  opts: { backend?: "redis" | "kv"; log?: (line: string) => void } = {},
): Promise<ClusterSmokeReport> {
  const backend = opts.backend ?? "redis";
  const log = opts.log ?? (() => {});
  const report: ClusterSmokeReport = {
    ok: false,
    failures: [],
    steps: [],
    backend,
    processes: 3,
    dungeonsPerProcess: [],
    crossProcessTransfers: 0,
    expiredAfterKillSeconds: -1,
  };
  const step = (s: string) => {
    report.steps.push(s);
    log(`cluster-smoke: ${s}`);
  };
  const bots: Bot[] = [];
  const cluster = await startCluster({ processes: 3, backend });
  const store = await openStore(cluster.registryUrl, { now: Date.now, prefix: undefined });
  const registry = new Registry(store, { now: Date.now, ...CLUSTER_TIMING });
  const byId = new Map<string, GameProcess>(cluster.procs.map((p) => [p.id, p]));
  try {
    step(`3 processes up on ${backend} (${cluster.procs.map((p) => p.port).join(", ")})`);
    const [g1] = cluster.procs;
    for (let i = 1; i <= BOTS; i++) bots.push(new Bot(g1.wsUrl, { name: `bot${i}`, mode: "idle" }));
    await waitFor(
      "every bot in g1's hub",
      () => bots.every((b) => b.client.runtime.instanceId === "g1/hub"),
      { timeoutMs: 60_000, bots },
    );
    step(`${BOTS} bots gathered in g1/hub`);

    for (const b of bots) b.mode = "portal";
    const inDungeon = (b: Bot) => b.client.runtime.world?.kind === "dungeon";
    await waitFor("every bot in a dungeon", () => bots.every(inDungeon), {
      timeoutMs: 90_000,
      bots,
    });
    // Fighting (and dodging) keeps them alive; a bot that dies returns to its hub anyway.
    for (const b of bots) b.mode = "fight";
    const dungeons = new Set(bots.map((b) => b.client.runtime.instanceId));
    report.dungeonsPerProcess = cluster.procs.map((p) =>
      [...dungeons].filter((d) => processOf(d) === p.id).length
    );
    const hosts = report.dungeonsPerProcess.filter((n) => n > 0).length;
    for (const d of dungeons) {
      const n = bots.filter((b) => b.client.runtime.instanceId === d).length;
      if (n > 4) throw new Error(`${d} holds ${n} players`);
    }
    for (const b of bots) {
      if (b.log.enters.at(-1)?.reason !== EnterReason.Portal) {
        throw new Error(`${b.name} entered its dungeon for reason ${b.log.enters.at(-1)?.reason}`);
      }
    }
    if (hosts < 2) {
      const procs = (await registry.processes()).map((p) =>
        `${p.id}: ${p.players} players, mean tick ${p.tickMeanMs.toFixed(2)} ms`
      );
      throw new Error(`dungeons on ${hosts} process(es): ${[...dungeons]} (${procs.join("; ")})`);
    }
    step(`${dungeons.size} dungeons over ${hosts} processes: ${[...dungeons].join(", ")}`);

    // One bot goes home: hub (g1) → dungeon (elsewhere) → hub (g1) again.
    const traveller = bots.find((b) => processOf(b.client.runtime.instanceId) !== "g1")!;
    traveller.mode = "escape";
    await waitFor(
      `${traveller.name} back in a hub`,
      () => traveller.client.runtime.world?.kind === "hub",
      { timeoutMs: 60_000, bots: [traveller] },
    );
    const path = traveller.log.enters.map((e) => e.instanceId);
    const back = path.at(-1)!;
    if (path[0] !== "g1/hub" || back !== "g1/hub") {
      throw new Error(`${traveller.name} went ${path.join(" → ")}, not g1/hub → … → g1/hub`);
    }
    step(`${traveller.name} travelled ${path.join(" → ")}`);

    // Its link drops, and it comes back through g2 (a load balancer's pick, or a reload):
    // g2 hands the resume over to g1, which holds the session, and the same ship is back.
    const token = traveller.client.runtime.resumeToken!;
    const playerId = traveller.client.runtime.playerId;
    traveller.client.close(4900, "link lost"); // not 1000: the ship waits for a resume
    const returning = new Bot(cluster.procs[1].wsUrl, {
      name: traveller.name,
      mode: "idle",
      resume: token,
    });
    bots.push(returning);
    await waitFor(
      `${traveller.name} resumed on g1 through g2`,
      () => returning.client.runtime.phase === "playing" && returning.log.enters.length > 0,
      { timeoutMs: 20_000, bots: [returning] },
    );
    const resumed = returning.log.enters.at(-1)!;
    if (
      resumed.reason !== EnterReason.Resume || resumed.instanceId !== "g1/hub" ||
      returning.client.runtime.playerId !== playerId || returning.client.runtime.transfers !== 1 ||
      returning.log.notices.length > 0
    ) {
      throw new Error(
        `resume through g2: entered ${resumed.instanceId} (reason ${resumed.reason}) as ` +
          `${returning.client.runtime.playerId} (was ${playerId}) after ` +
          `${returning.client.runtime.transfers} transfer(s); notices ` +
          JSON.stringify(returning.log.notices.map((n) => n.text)),
      );
    }
    step(`${traveller.name}'s resume through g2 was handed to g1: same ship ${playerId} in g1/hub`);

    // Kill a process that hosts dungeons (and none of the hubs the others are in).
    const victimId = cluster.procs.slice(1).map((p) => p.id).find((id) =>
      bots.some((b) => processOf(b.client.runtime.instanceId) === id)
    )!;
    const victim = byId.get(victimId)!;
    const orphans = bots.filter((b) => processOf(b.client.runtime.instanceId) === victimId);
    const killedAt = performance.now();
    await cluster.kill(victim, "SIGKILL");
    await waitFor("the registry to forget the killed process", async () => {
      const procs = await registry.processes();
      const insts = await registry.instances();
      return !procs.some((p) => p.id === victimId) &&
        !insts.some((i) => processOf(i.id) === victimId);
    }, { timeoutMs: CLUSTER_TIMING.heartbeatTtlMs + 5000 });
    report.expiredAfterKillSeconds = Math.round((performance.now() - killedAt) / 100) / 10;
    if (report.expiredAfterKillSeconds * 1000 > CLUSTER_TIMING.heartbeatTtlMs + 1000) {
      throw new Error(`records outlived the TTL: ${report.expiredAfterKillSeconds} s`);
    }
    step(
      `SIGKILL ${victimId}: its records left the registry after ${report.expiredAfterKillSeconds} s`,
    );

    // The orphans' links dropped with their process: each client tries to resume there,
    // finds nobody, goes back to where it first came in and lands in a live hub by itself,
    // told that its run is over.
    for (const b of orphans) b.mode = "idle";
    const rejoined = orphans;
    await waitFor(
      "the orphans in a live hub, by themselves",
      () =>
        rejoined.every((b) =>
          b.client.runtime.world?.kind === "hub" && b.client.runtime.phase === "playing" &&
          processOf(b.client.runtime.instanceId) !== victimId
        ),
      { timeoutMs: 50_000, bots: rejoined },
    );
    const hubs = new Set(rejoined.map((b) => b.client.runtime.instanceId));
    for (const h of hubs) {
      if (processOf(h) === victimId) throw new Error(`an orphan landed on the dead process: ${h}`);
    }
    step(`${orphans.length} players of ${victimId} reconnected to ${[...hubs].join(", ")}`);
    report.crossProcessTransfers = bots.reduce((n, b) => n + b.client.runtime.transfers, 0);
  } catch (err) {
    report.failures.push((err as Error).message);
  } finally {
    for (const b of bots) await b.stop();
    await registry.close();
    await cluster.stop();
  }
  report.ok = report.failures.length === 0;
  return report;
}

if (import.meta.main) {
  checkArgs("cluster-smoke", Deno.args, { switches: ["kv"] });
  const report = await runClusterSmoke({
    backend: Deno.args.includes("--kv") ? "kv" : "redis",
    log: (line) => console.log(line),
  });
  for (const f of report.failures) console.error(`cluster-smoke FAILED: ${f}`);
  const { steps: _steps, ...figures } = report;
  console.log(JSON.stringify(figures));
  Deno.exit(report.ok ? 0 : 1);
}
