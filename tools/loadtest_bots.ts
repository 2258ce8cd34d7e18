/**
 * The load test's bots, in a process of their own (tools/loadtest.ts starts it,
 * pinned to the other core when it can). Each bot is a real ClientRuntime on a
 * real WebSocket: it predicts, keeps the bullet replica and sends input every
 * tick like a browser, but steers by a cheap rule instead of the dodging pilot,
 * so a thousand fit on one core. Commands arrive on stdin, one JSON object a line:
 *
 *   {"add": {"url": "ws://…/ws", "dungeon": 100, "crowd": 0}}   more bots
 *   {"report": true}                                             one report line
 *   {"stop": true}                                               close all, exit
 *
 * Each report is one JSON line on stdout: counts by where the bots are, and per
 * bot the snapshots and bytes received since the last report.
 */
import { connectClient, type WsClient } from "../net/client/mod.ts";
import { CONTENT } from "../content/mod.ts";
import { Button } from "../sim/mod.ts";

type Role = "dungeon" | "crowd";

interface LoadBot {
  readonly role: Role;
  readonly client: WsClient;
  readonly seed: number;
  snapshotsAt: number;
  bytesAt: number;
}

const bots: LoadBot[] = [];
const state = {
  lastReportMs: performance.now(),
  /** Longest gap between two runs of the bots' loop since the last report: the bots' own lag. */
  worstGapMs: 0,
  lastLoopMs: performance.now(),
  nextName: 1,
};

function sample(bot: LoadBot, tick: number) {
  const rt = bot.client.runtime;
  const world = rt.world;
  const self = rt.selfView();
  if (!world || !self) return { moveX: 0, moveY: 0, aim: 0, buttons: 0 };
  if (world.kind === "hub") {
    // Dungeon bots walk into the portal; the crowd wanders the lower hub, away from it.
    const { widthPx, heightPx } = world.arena;
    const portal = world.portals[0];
    const goal = bot.role === "dungeon" && portal ? portal : {
      x: widthPx / 2 + 0.4 * widthPx * Math.cos(tick / 97 + bot.seed),
      y: heightPx * 0.8 + 0.1 * heightPx * Math.sin(tick / 131 + bot.seed * 1.7),
    };
    return steer(self, goal, 0);
  }
  // The fight: circle low in the arena, aim at the boss (or up), fire.
  const boss = rt.boss();
  const def = boss ? CONTENT.bosses[boss.bossId] : undefined;
  const goal = {
    x: world.arena.widthPx / 2 + 360 * Math.cos(tick / 70 + bot.seed),
    y: world.arena.heightPx * 0.78 + 60 * Math.sin(tick / 45 + bot.seed),
  };
  const aimAt = def ?? { x: self.x, y: 0 };
  const aim = Math.round(
    ((Math.atan2(aimAt.y - self.y, aimAt.x - self.x) / (2 * Math.PI)) * 65536 +
      65536) % 65536,
  );
  return steer(self, goal, aim, Button.Fire);
}

function steer(
  from: { x: number; y: number },
  to: { x: number; y: number },
  aim: number,
  buttons = 0,
) {
  const dx = to.x - from.x;
  const dy = to.y - from.y;
  const d = Math.hypot(dx, dy);
  if (d < 4) return { moveX: 0, moveY: 0, aim, buttons };
  return { moveX: Math.round((dx / d) * 100), moveY: Math.round((dy / d) * 100), aim, buttons };
}

function add(url: string, role: Role, n: number): void {
  for (let i = 0; i < n; i++) {
    const n = state.nextName++;
    const client = connectClient(url, {
      name: `${role === "dungeon" ? "d" : "c"}${n}`,
      now: () => performance.now(),
    });
    bots.push({ role, client, seed: n * 0.37, snapshotsAt: 0, bytesAt: 0 });
  }
}

function report(): void {
  const now = performance.now();
  const seconds = (now - state.lastReportMs) / 1000;
  state.lastReportMs = now;
  const per = bots.map((b) => {
    const rt = b.client.runtime;
    const snaps = rt.snapshotsTotal - b.snapshotsAt;
    const bytes = rt.bytesInTotal - b.bytesAt;
    b.snapshotsAt = rt.snapshotsTotal;
    b.bytesAt = rt.bytesInTotal;
    const where = rt.phase !== "playing"
      ? rt.phase
      : rt.world?.kind === "dungeon"
      ? (rt.boss() ? "boss" : "waiting")
      : "hub";
    return { role: b.role, where, snapsPerSec: snaps / seconds, bytesPerSec: bytes / seconds };
  });
  const count = (f: (p: (typeof per)[number]) => boolean) => per.filter(f).length;
  console.log(JSON.stringify({
    seconds,
    bots: bots.length,
    dungeonBots: count((p) => p.role === "dungeon"),
    atBoss: count((p) => p.where === "boss"),
    inHub: count((p) => p.where === "hub"),
    closed: count((p) => p.where === "closed" || p.where === "rejected"),
    // Per bot, for percentiles in the driver: only bots that spent the window playing.
    dungeonSnapsPerSec: per.filter((p) => p.role === "dungeon" && p.where === "boss").map((p) =>
      round(p.snapsPerSec)
    ),
    crowdSnapsPerSec: per.filter((p) => p.role === "crowd" && p.where === "hub").map((p) =>
      round(p.snapsPerSec)
    ),
    crowdBytesPerSec: per.filter((p) => p.role === "crowd" && p.where === "hub").map((p) =>
      Math.round(p.bytesPerSec)
    ),
    dungeonBytesPerSec: per.filter((p) => p.role === "dungeon" && p.where === "boss").map((p) =>
      Math.round(p.bytesPerSec)
    ),
    botLoopWorstGapMs: round(state.worstGapMs),
  }));
  state.worstGapMs = 0;
}

function round(v: number): number {
  return Math.round(v * 10) / 10;
}

// One loop for every bot: 8 ms, as the browser client's timer.
const loop = setInterval(() => {
  const now = performance.now();
  state.worstGapMs = Math.max(state.worstGapMs, now - state.lastLoopMs);
  state.lastLoopMs = now;
  for (const b of bots) b.client.runtime.update(now, (tick) => sample(b, tick));
}, 8);

const decoder = new TextDecoder();
const input = { rest: "" };
for await (const chunk of Deno.stdin.readable) {
  const lines = (input.rest + decoder.decode(chunk, { stream: true })).split("\n");
  input.rest = lines.pop() ?? "";
  for (const line of lines) {
    if (!line.trim()) continue;
    const cmd = JSON.parse(line);
    if (cmd.add) {
      add(cmd.add.url, "dungeon", cmd.add.dungeon ?? 0);
      add(cmd.add.url, "crowd", cmd.add.crowd ?? 0);
    }
    if (cmd.report) report();
    if (cmd.stop) {
      clearInterval(loop);
      for (const b of bots) b.client.close(1000, "load test over");
      await Promise.race([
        Promise.all(bots.map((b) => b.client.closed)),
        new Promise((r) => setTimeout(r, 3000)),
      ]);
      Deno.exit(0);
    }
  }
}
