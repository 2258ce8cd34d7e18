/**
 * Fault isolation over real sockets: the real app on Deno.serve, the real clock, and
 * three headless bots each in a dungeon of its own; dungeon-2 carries a content bug
 * the codec refuses to encode. That dungeon alone closes: its bot lands in the hub
 * with reason Evacuated, the other two keep getting 20 snapshots a second, the loop
 * keeps 60 ticks a second, and the failure is logged and counted in /metrics.
 */
import assert from "node:assert/strict";
import { FOLD, HUB, SPINNER } from "../../content/mod.ts";
import { SNAPSHOT_HZ } from "../../content/net_tuning.ts";
import { Bot } from "../../net/client/bot.ts";
import { EnterReason } from "../../net/wire/protocol.ts";
import type { WorldDef } from "../../sim/mod.ts";
import { LiveServer } from "../net/_harness.ts";

const BROKEN: WorldDef = {
  ...FOLD,
  waves: [[{
    enemy: { ...SPINNER, emitters: [{ ...SPINNER.emitters[0], speedPxPerS: 120.1 }] },
    x: 640,
    y: 300,
  }]],
  waveDelayTicks: 1,
};
const CALM: WorldDef = { ...FOLD, waveDelayTicks: 1_000_000 };

/** Polls `done` every 20 ms; throws after `ms`. */
async function until(what: string, done: () => boolean, ms: number): Promise<void> {
  const start = performance.now();
  while (!done()) {
    if (performance.now() - start > ms) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

Deno.test("a dungeon that throws closes alone over real sockets; the others keep 60 Hz and 20 snapshots/s", async () => {
  const failures: Record<string, unknown>[] = [];
  await using live = new LiveServer({
    limits: { maxPlayersPerDungeon: 1 },
    worldDef: (kind, id) => kind === "hub" ? HUB : id === "dungeon-2" ? BROKEN : CALM,
    log: (event, fields) => {
      if (event === "instance_failed") failures.push(fields);
    },
  });
  // Arrival times of the snapshots each bot received.
  const snapshots: number[][] = [[], [], []];
  const bots = ["Ann", "Bo", "Cy"].map((name, i) =>
    new Bot(live.url, { name, onSnapshot: () => snapshots[i].push(performance.now()) })
  );
  try {
    await until(
      "three bots in dungeons",
      () => bots.every((b) => b.log.enters.some((e) => e.reason === EnterReason.Portal)),
      15_000,
    );
    const victim = bots.find((b) => b.log.enters.some((e) => e.instanceId === "dungeon-2"));
    assert.ok(victim, "a bot entered dungeon-2");
    const others = bots.filter((b) => b !== victim);
    const stats = live.server.scheduler.stats;
    const start = { atMs: performance.now(), ticks: stats.ticks, late: stats.ticksLate };

    await until(
      "the victim evacuated",
      () => victim.log.enters.at(-1)?.reason === EnterReason.Evacuated,
      5000,
    );
    victim.mode = "idle";
    const evacuatedAt = victim.log.enters.at(-1)!.atMs;
    // A window of at least 2 s around the failure.
    const rest = 2000 - (performance.now() - start.atMs);
    if (rest > 0) await new Promise((r) => setTimeout(r, rest));
    const seconds = (performance.now() - start.atMs) / 1000;
    const ticksPerSec = (stats.ticks - start.ticks) / seconds;
    const rates = bots.map((_, i) => snapshots[i].filter((t) => t >= start.atMs).length / seconds);
    console.log(
      `failure at +${((evacuatedAt - start.atMs) / 1000).toFixed(2)} s; window ${
        seconds.toFixed(1)
      } s: ${ticksPerSec.toFixed(1)} ticks/s, ticksLate ${stats.ticksLate - start.late}; ` +
        `snapshots/s ${bots.map((b, i) => `${b.name} ${rates[i].toFixed(1)}`).join(", ")} ` +
        `(nominal ${SNAPSHOT_HZ}); victim ${victim.name}`,
    );
    assert.ok(ticksPerSec >= 55 && ticksPerSec <= 61, `${ticksPerSec.toFixed(1)} ticks/s`);
    // Late ticks are printed, not asserted: on this shared 2-core machine they track its load.
    for (const [i, b] of bots.entries()) {
      assert.ok(rates[i] >= 15, `${b.name} got ${rates[i].toFixed(1)} snapshots/s`);
      assert.ok(b.client.connected, `${b.name} stays connected`);
    }
    for (const b of others) {
      assert.match(b.client.runtime.instanceId, /^dungeon-[13]$/, `${b.name} still in its dungeon`);
      assert.equal(b.log.enters.at(-1)?.reason, EnterReason.Portal);
    }
    assert.equal(victim.client.runtime.instanceId, "hub");
    assert.equal(failures.length, 1);
    assert.equal(failures[0].instance, "dungeon-2");
    assert.match(String(failures[0].error), /Cannot encode volley speedPxPerS: 120\.1/);

    const metrics = await (await fetch(live.url.replace("ws:", "http:").replace("/ws", "/metrics")))
      .text();
    assert.match(metrics, /^bh_instances_failed_total\{process="single",kind="dungeon"\} 1$/m);
    assert.match(metrics, /^bh_instances\{process="single",kind="dungeon"\} 2$/m);
    assert.match(metrics, /^bh_players\{process="single"\} 3$/m);
  } finally {
    await Promise.all(bots.map((b) => b.stop()));
  }
});
