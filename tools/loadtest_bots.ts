/**
 * The load test's bots, in a process of their own (tools/loadtest.ts starts it,
 * pinned to the other core when it can). Each bot is a real ClientRuntime on a
 * real WebSocket: it predicts, keeps the bullet replica and sends input every
 * tick like a browser, but steers by a cheap rule instead of the dodging pilot,
 * so a thousand fit on one core. Commands arrive on stdin, one JSON object a line:
 *
 *   {"add": {"url": "ws://…/ws", "dungeon": 100, "crowd": 0}}   more bots
 *   {"dismiss": "crowd"}                                         the crowd hangs up (1000)
 *   {"report": true}                                             one report line
 *   {"stop": true}                                               close all, exit
 *
 * Each report is one JSON line on stdout: counts by where the bots are, and per
 * bot the snapshots and bytes received since the last report.
 */
import { connectClient, type WsClient } from "../net/client/mod.ts";
import { CONTENT, type WorldContent } from "../content/mod.ts";
import { Button, quantizeAngle } from "../sim/mod.ts";
import { LeanBot, type Steer } from "./lean_bot.ts";

type Role = "dungeon" | "crowd";

/** What the report needs of a bot, full or lean. */
interface BotLink {
  readonly snapshotsTotal: number;
  readonly bytesInTotal: number;
  /** Where it is: "hub", "boss", "waiting" (a dungeon before its boss), or a phase. */
  readonly where: string;
  /** Why it closed, once it has. */
  readonly closeReason?: string;
  /** The first message it could not read, if any. */
  readonly error?: string;
  /** Deltas that named a baseline it did not hold (lean bots count them). */
  readonly withoutBaseline?: number;
  update(nowMs: number): void;
  close(): void;
  readonly closed: Promise<unknown>;
}

interface LoadBot {
  readonly role: Role;
  readonly link: BotLink;
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
  /** Errors thrown while a bot prepared its input, by message. */
  updateErrors: {} as Record<string, number>,
};

/** What the steering rule needs to know, from a full runtime or a lean bot alike. */
interface View {
  readonly world: WorldContent;
  readonly x: number;
  readonly y: number;
  /** The boss is up (aim at it), or not (aim straight up). */
  readonly boss: boolean;
}

/** The cheap rule every bot steers by, full or lean. */
function decide(role: Role, opts: { view: View; tick: number; seed: number }) {
  const { view, tick, seed } = opts;
  const world = view.world;
  const { widthPx, heightPx } = world.arena;
  if (world.kind === "hub") {
    // Dungeon bots walk into the portal; the crowd wanders the lower hub, away from it.
    const portal = world.portals?.[0];
    const goal = role === "dungeon" && portal ? portal : {
      x: widthPx / 2 + 0.4 * widthPx * Math.cos(tick / 97 + seed),
      y: heightPx * 0.8 + 0.1 * heightPx * Math.sin(tick / 131 + seed * 1.7),
    };
    return steer(view, goal, 0);
  }
  // The fight: circle low in the arena, aim at the boss (or up), fire.
  const def = view.boss && world.boss ? CONTENT.bosses[world.boss.id] : undefined;
  const goal = {
    x: widthPx / 2 + 360 * Math.cos(tick / 70 + seed),
    y: heightPx * 0.78 + 60 * Math.sin(tick / 45 + seed),
  };
  const aimAt = def ?? { x: view.x, y: 0 };
  // quantizeAngle keeps it in [0, 65536): a hand-rounded 65536 is a frame the codec refuses.
  const aim = quantizeAngle(Math.atan2(aimAt.y - view.y, aimAt.x - view.x));
  return steer(view, goal, aim, Button.Fire);
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

/** A full ClientRuntime bot, as the browser runs one. */
function fullBot(url: string, opts: { role: Role; name: string; seed: number }): BotLink {
  const client: WsClient = connectClient(url, { name: opts.name, now: () => performance.now() });
  const rt = client.runtime;
  const idle = { moveX: 0, moveY: 0, aim: 0, buttons: 0 };
  return {
    get snapshotsTotal() {
      return rt.snapshotsTotal;
    },
    get bytesInTotal() {
      return rt.bytesInTotal;
    },
    get where() {
      if (rt.phase !== "playing") return rt.phase;
      return rt.world?.kind === "dungeon" ? (rt.boss() ? "boss" : "waiting") : "hub";
    },
    update: (nowMs) =>
      rt.update(nowMs, (tick) => {
        const world = rt.world;
        const self = rt.selfView();
        if (!world || !self) return idle;
        const view = {
          world,
          x: self.x,
          y: self.y,
          boss: rt.boss() !== undefined,
        };
        return decide(opts.role, { view, tick, seed: opts.seed });
      }),
    close: () => client.close(1000, "load test over"),
    closed: client.closed,
  };
}

/** A lean bot (tools/lean_bot.ts): the same wire, no prediction or replica. */
function leanBot(url: string, opts: { role: Role; name: string; seed: number }): BotLink {
  const steerLean: Steer = (v) =>
    decide(opts.role, {
      view: { world: CONTENT.worlds[v.worldId], x: v.x, y: v.y, boss: v.boss },
      tick: v.tick,
      seed: opts.seed,
    });
  const bot = new LeanBot(url, { name: opts.name, steer: steerLean });
  return {
    get snapshotsTotal() {
      return bot.snapshots;
    },
    get bytesInTotal() {
      return bot.bytesIn;
    },
    get where() {
      const p = bot.phase;
      return p === "dungeon" ? "waiting" : p;
    },
    get closeReason() {
      return bot.closeReason;
    },
    get error() {
      return bot.error;
    },
    get withoutBaseline() {
      return bot.withoutBaseline;
    },
    update: (nowMs) => bot.update(nowMs),
    close: () => bot.close(),
    closed: bot.closed,
  };
}

function add(url: string, opts: { role: Role; n: number; lean: boolean }): void {
  for (let i = 0; i < opts.n; i++) {
    const n = state.nextName++;
    const name = `${opts.role === "dungeon" ? "d" : "c"}${n}`;
    const seed = n * 0.37;
    const make = opts.lean ? leanBot : fullBot;
    bots.push({
      role: opts.role,
      link: make(url, { role: opts.role, name, seed }),
      seed,
      snapshotsAt: 0,
      bytesAt: 0,
    });
  }
}

/**
 * Every bot of `role` hangs up (a 1000 close: the server ends its session at once) and
 * leaves the reports.
 */
function dismiss(role: Role): void {
  for (let i = bots.length - 1; i >= 0; i--) {
    if (bots[i].role !== role) continue;
    bots[i].link.close();
    bots.splice(i, 1);
  }
}

function report(): void {
  const now = performance.now();
  const seconds = (now - state.lastReportMs) / 1000;
  state.lastReportMs = now;
  const per = bots.map((b) => {
    const link = b.link;
    const snaps = link.snapshotsTotal - b.snapshotsAt;
    const bytes = link.bytesInTotal - b.bytesAt;
    b.snapshotsAt = link.snapshotsTotal;
    b.bytesAt = link.bytesInTotal;
    const where = link.where;
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
    closeReasons: closeReasons(),
    updateErrors: state.updateErrors,
    snapshotsWithoutBaseline: bots.reduce((sum, b) => sum + (b.link.withoutBaseline ?? 0), 0),
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

/** How many bots closed for each reason, or could not read a message (lean bots know). */
function closeReasons(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const b of bots) {
    for (const why of [b.link.closeReason, b.link.error && `unreadable: ${b.link.error}`]) {
      if (why) out[why] = (out[why] ?? 0) + 1;
    }
  }
  return out;
}

function round(v: number): number {
  return Math.round(v * 10) / 10;
}

// One loop for every bot: 8 ms, as the browser client's timer.
const loop = setInterval(() => {
  const now = performance.now();
  state.worstGapMs = Math.max(state.worstGapMs, now - state.lastLoopMs);
  state.lastLoopMs = now;
  for (const b of bots) {
    try {
      b.link.update(now);
    } catch (err) {
      // One bot's bug must not stop the others sending (the server would close them all idle).
      state.updateErrors[(err as Error).message] =
        (state.updateErrors[(err as Error).message] ?? 0) + 1;
    }
  }
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
      const lean = cmd.add.lean === true;
      add(cmd.add.url, { role: "dungeon", n: cmd.add.dungeon ?? 0, lean });
      add(cmd.add.url, { role: "crowd", n: cmd.add.crowd ?? 0, lean });
    }
    if (cmd.dismiss === "crowd" || cmd.dismiss === "dungeon") dismiss(cmd.dismiss);
    if (cmd.report) report();
    if (cmd.stop) {
      clearInterval(loop);
      for (const b of bots) b.link.close();
      await Promise.race([
        Promise.all(bots.map((b) => b.link.closed)),
        new Promise((r) => setTimeout(r, 3000)),
      ]);
      Deno.exit(0);
    }
  }
}
