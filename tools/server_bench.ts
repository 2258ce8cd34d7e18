/**
 * The server's own cost, in process: `deno task server-bench`. The real GameServer
 * (BOSS_RUSH worlds, as `deno task loadtest` runs it) on a ManualClock, with every
 * player on a real WebSocketTransport over a socket that only counts what it is
 * given, and every input arriving as the browser sends it over WebSocket (one Input
 * message per 4 ticks, through the real codec and Connection.receive). What is on
 * the clock is exactly what the server process spends in JavaScript per tick (the
 * input audit, every instance's step, snapshots, events, frames); what is not is
 * the kernel's and the runtime's socket work, and the bots (which read the server's
 * world to steer, and cost nothing on the wire). `deno task loadtest` measures the
 * whole process, sockets included.
 *
 *   deno task server-bench [--crowd=200] [--dungeons=0,25,100,200] [--ticks=600] [--json] [--parts]
 *
 * Prints, per scenario, the server's ms per tick (median and p99 over `--ticks` ticks,
 * after a warm-up), ms per dungeon-tick, snapshots and bytes out per client per second,
 * and the machine's load average: the CPU is shared, so quote it with the figures.
 * `--parts` adds where a dungeon's step goes, part by part, in µs per dungeon step
 * (tools/step_parts.ts: each part carries one clock read, `lapUs`, so compare parts with
 * parts of a run with `--parts`, not its totals with a run without).
 */
import process from "node:process";
// The modules the server process loads (main.ts), loaded here too: an object literal in any
// of them shares V8's hidden classes with the game's own literals of the same keys, field
// representations included (CAPACITY, 2026-12-05), so the bench's objects get the shapes
// the server's get.
import "../net/server/mod.ts";
import "../net/server/registry/mod.ts";
import "../net/wire/mod.ts";
import "../net/link/mod.ts";
import "../routes/app.ts";
import { ManualClock } from "../net/server/scheduler.ts";
import { GameServer } from "../net/server/server.ts";
import { type SocketLike, WebSocketTransport } from "../net/server/transport.ts";
import type { Connection } from "../net/server/connection.ts";
import { encodeClientMessage, MessageEncoder } from "../net/wire/codec.ts";
import { ClientKind, PROTOCOL_VERSION } from "../net/wire/protocol.ts";
import { BOSS_RUSH_DELAY_TICKS, INPUT_SENDING } from "../content/net_tuning.ts";
import { CONTENT, CONTENT_HASH } from "../content/mod.ts";
import { Button, type InputFrame, quantizeAngle, TICK_MS } from "../sim/mod.ts";
import { flagValue } from "./args.ts";
import { lapCostUs, StepParts } from "./step_parts.ts";

interface Args {
  readonly crowd: number;
  readonly dungeons: readonly number[];
  readonly ticks: number;
  readonly json: boolean;
  readonly parts: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  const get = (name: string) => flagValue(argv, name);
  return {
    crowd: Number(get("crowd") ?? 200),
    dungeons: (get("dungeons") ?? "0,25,100,200").split(",").map(Number),
    ticks: Number(get("ticks") ?? 600),
    json: argv.includes("--json"),
    parts: argv.includes("--parts"),
  };
}

/**
 * A socket that takes every frame at once and counts it. It takes a tick's messages as
 * parts, as the front door's sockets do (no array joining them), so the bench pays what
 * the server does for each frame.
 */
class CountingSocket implements SocketLike {
  readyState = 1;
  readonly bufferedAmount = 0;
  frames = 0;
  bytes = 0;

  send(data: Uint8Array): void {
    this.frames++;
    this.bytes += data.byteLength;
  }

  sendParts(parts: readonly Uint8Array[], count: number): void {
    this.frames++;
    for (let i = 0; i < count; i++) this.bytes += parts[i].byteLength;
  }

  close(): void {
    this.readyState = 3;
  }
}

type Role = "crowd" | "dungeon";

interface BenchClient {
  readonly role: Role;
  readonly socket: CountingSocket;
  readonly conn: Connection;
  readonly seed: number;
  readonly frames: InputFrame[];
  /** The instance its pending frames were stamped for (each world counts its own ticks). */
  instanceId: string | undefined;
}

/** One scenario's figures. */
export interface BenchResult {
  crowd: number;
  dungeons: number;
  players: number;
  ticks: number;
  /** The process's CPU per tick (all its threads: the collector's helpers too). */
  cpuMsPerTick: { median: number; p99: number; mean: number };
  /** Wall-clock per tick: CPU plus whatever preempted us. */
  wallMsPerTick: { median: number; p99: number; mean: number };
  /** Mean CPU per tick divided by the dungeons at the boss (a crowd's share included). */
  cpuMsPerDungeonTick: number | null;
  framesPerSecPerClient: number;
  downBytesPerSecPerClient: number;
  /** The server's verdicts on the bots' input frames: all "queued" means they really play. */
  inputVerdicts: Record<string, number>;
  loadAverage1m: number;
  /** With `--parts`: µs per dungeon step of each part, in the order they run. */
  partsUsPerDungeonStep?: Record<string, number>;
  /** With `--parts`: what one lap (a clock read) costs, µs; each part carries about one. */
  lapUs?: number;
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

const round = (v: number, places = 3) => Math.round(v * 10 ** places) / 10 ** places;

/** Runs one scenario: `crowd` players wandering the hub and `dungeons` × 4 at the boss. */
export function runScenario(
  opts: { crowd: number; dungeons: number; ticks: number; parts?: boolean },
): BenchResult {
  const clock = new ManualClock();
  const parts = opts.parts ? new StepParts() : undefined;
  if (parts) parts.counting = false;
  const server = new GameServer({
    clock,
    stepProbe: parts && ((kind) => parts.probeFor(kind)),
    seed: 7,
    worldDef: (kind, _id, world) =>
      kind === "dungeon" ? { ...world, waves: [], waveDelayTicks: BOSS_RUSH_DELAY_TICKS } : world,
    limits: {
      maxConnections: 100_000,
      maxConnectionsPerIp: 10_000,
      connectBurstPerIp: 1_000_000,
      connectsPerSecPerIp: 1_000_000,
      hubCapacity: 10_000,
    },
  });
  const encoder = new MessageEncoder();
  const clients: BenchClient[] = [];
  const add = (role: Role, n: number) => {
    for (let i = 0; i < n; i++) {
      const socket = new CountingSocket();
      const conn = server.open(new WebSocketTransport(socket, server.scheduler.stats), "10.9.0.1");
      conn.receive(encodeClientMessage(encoder, {
        kind: ClientKind.Hello,
        version: PROTOCOL_VERSION,
        name: `${role[0]}${clients.length + 1}`,
        content: CONTENT_HASH,
      }));
      clients.push({
        role,
        socket,
        conn,
        seed: clients.length * 0.37,
        frames: [],
        instanceId: undefined,
      });
    }
  };
  /**
   * Every client's input for this tick, encoded as the browser does over WebSocket (a
   * message per batch, leading the server so a batch's oldest frame arrives before its
   * tick runs). Encoding is the bots' work: it stays off the clock.
   */
  const inputsFor = (tick: number): [Connection, Uint8Array][] => {
    const batch = INPUT_SENDING.reliable.batchTicks;
    const out: [Connection, Uint8Array][] = [];
    for (const c of clients) {
      const instance = c.conn.instance;
      if (!instance) continue;
      // A transfer: the new world counts its own ticks (a dungeon starts at 0).
      if (instance.id !== c.instanceId) {
        c.instanceId = instance.id;
        c.frames.length = 0;
      }
      const worldTick = instance.world.tick;
      c.frames.push({ tick: worldTick + batch + 1, ...steer(c, tick) });
      if (c.frames.length < batch) continue;
      out.push([
        c.conn,
        encodeClientMessage(encoder, { kind: ClientKind.Input, frames: c.frames }),
      ]);
      c.frames.length = 0;
    }
    return out;
  };
  const steer = (c: BenchClient, tick: number) => {
    const instance = c.conn.instance;
    const ship = instance?.world.players.get(c.conn.playerId);
    if (!instance || !ship) return { moveX: 0, moveY: 0, aim: 0, buttons: 0 };
    const world = instance.world;
    const { widthPx, heightPx } = world.def.arena;
    if (world.def.kind === "hub") {
      const portal = world.def.portals?.[0];
      const goal = c.role === "dungeon" && portal ? portal : {
        x: widthPx / 2 + 0.4 * widthPx * Math.cos(tick / 97 + c.seed),
        y: heightPx * 0.8 + 0.1 * heightPx * Math.sin(tick / 131 + c.seed * 1.7),
      };
      return { ...toward(ship, goal), aim: 0, buttons: 0 };
    }
    const goal = {
      x: widthPx / 2 + 360 * Math.cos(tick / 70 + c.seed),
      y: heightPx * 0.78 + 60 * Math.sin(tick / 45 + c.seed),
    };
    const boss = world.boss ? CONTENT.bosses[world.boss.def.id] : undefined;
    const at = boss ?? { x: ship.x, y: 0 };
    const aim = quantizeAngle(Math.atan2(at.y - ship.y, at.x - ship.x));
    return { ...toward(ship, goal), aim, buttons: Button.Fire };
  };
  /**
   * One tick: the inputs that arrived since the last one, then the tick. Returns its CPU
   * ms (the process's, from getrusage: a neighbour preempting us does not count) and its
   * wall-clock ms (which does).
   */
  const tick = (): { cpuMs: number; wallMs: number } => {
    const inputs = inputsFor(server.scheduler.stats.ticks);
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (const [conn, data] of inputs) conn.receive(data);
    parts?.start();
    clock.advance(TICK_MS);
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    return { cpuMs: (used.user + used.system) / 1000, wallMs };
  };
  const atBoss = () => {
    let n = 0;
    for (const inst of server.instances.values()) if (inst.world.boss) n++;
    return n;
  };

  add("crowd", opts.crowd);
  add("dungeon", 4 * opts.dungeons);
  server.start();
  // Into the dungeons and up to the boss (the portal walk, the fill-up wait, the boss's arrival).
  for (let i = 0; i < 1200 && atBoss() < opts.dungeons; i++) tick();
  for (let i = 0; i < 120; i++) tick(); // warm-up: the JIT, the first volleys
  const framesBefore = clients.map((c) => c.socket.frames);
  const bytesBefore = clients.map((c) => c.socket.bytes);
  const cpu: number[] = [];
  const wall: number[] = [];
  if (parts) parts.counting = true;
  for (let i = 0; i < opts.ticks; i++) {
    const t = tick();
    cpu.push(t.cpuMs);
    wall.push(t.wallMs);
  }
  const seconds = (opts.ticks * TICK_MS) / 1000;
  const perClient = (now: (c: BenchClient) => number, before: number[]) =>
    clients.reduce((sum, c, i) => sum + now(c) - before[i], 0) / clients.length / seconds;
  const dungeonsAtBoss = atBoss();
  const players = clients.length;
  server.shutdown("bench over");
  const stats = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    return {
      median: round(percentile(sorted, 0.5)),
      p99: round(percentile(sorted, 0.99)),
      mean: round(mean),
    };
  };
  const cpuStats = stats(cpu);
  return {
    crowd: opts.crowd,
    dungeons: dungeonsAtBoss,
    players,
    ticks: opts.ticks,
    cpuMsPerTick: cpuStats,
    wallMsPerTick: stats(wall),
    cpuMsPerDungeonTick: dungeonsAtBoss > 0 ? round(cpuStats.mean / dungeonsAtBoss, 4) : null,
    framesPerSecPerClient: round(perClient((c) => c.socket.frames, framesBefore), 1),
    downBytesPerSecPerClient: Math.round(perClient((c) => c.socket.bytes, bytesBefore)),
    inputVerdicts: Object.fromEntries(
      Object.entries(server.counters.inputVerdicts).filter(([, n]) => n > 0),
    ),
    loadAverage1m: round(Deno.loadavg()[0], 2),
    ...(parts ? { partsUsPerDungeonStep: parts.perStepUs(), lapUs: lapCostUs() } : {}),
  };
}

function toward(from: { x: number; y: number }, to: { x: number; y: number }) {
  const dx = to.x - from.x;
  const dy = to.y - from.y;
  const d = Math.hypot(dx, dy);
  if (d < 4) return { moveX: 0, moveY: 0 };
  return { moveX: Math.round((dx / d) * 100), moveY: Math.round((dy / d) * 100) };
}

if (import.meta.main) {
  const args = parseArgs(Deno.args);
  for (const dungeons of args.dungeons) {
    const r = runScenario({ crowd: args.crowd, dungeons, ticks: args.ticks, parts: args.parts });
    if (args.json) {
      console.log(JSON.stringify(r));
      continue;
    }
    console.log(
      `crowd ${r.crowd}, ${r.dungeons} dungeons at the boss (${r.players} players): ` +
        `CPU ${r.cpuMsPerTick.median} ms/tick median, p99 ${r.cpuMsPerTick.p99}, ` +
        `mean ${r.cpuMsPerTick.mean}` +
        (r.cpuMsPerDungeonTick === null ? "" : ` (${r.cpuMsPerDungeonTick} ms/dungeon-tick)`) +
        `; wall median ${r.wallMsPerTick.median}, p99 ${r.wallMsPerTick.p99}` +
        `; per client ${r.framesPerSecPerClient} frames/s, ${r.downBytesPerSecPerClient} B/s down` +
        `; input ${JSON.stringify(r.inputVerdicts)} (load ${r.loadAverage1m})`,
    );
    if (r.partsUsPerDungeonStep) {
      console.log(
        `  µs per dungeon step: ${
          Object.entries(r.partsUsPerDungeonStep).map(([k, v]) => `${k} ${v}`).join(", ")
        } (a lap ${r.lapUs} µs, in each)`,
      );
    }
  }
}
