/**
 * `deno task loadtest`: how much one server process holds. The real server
 * (main.ts, BOSS_RUSH=1 so a dungeon opens on the Warden) runs pinned to CPU 0;
 * real WebSocket bots (tools/loadtest_bots.ts) run in another process pinned to
 * CPU 1 (when `taskset` exists): lean ones by default (tools/lean_bot.ts: the same
 * messages on the same sockets, no prediction or bullet replica, so 800 fit on one
 * core), full ClientRuntimes with `--bots=full`. Two phases:
 *
 *  1. crowd: CROWD bots (default 200) in one hub, wandering (the crowd's own target:
 *     200 players in one hub);
 *  2. dungeons: the crowd hangs up, and N dungeons of four bots at the boss fight,
 *     N stepping up (--steps=10,25,50,100,150,200,250,300) until two steps in a
 *     row fail (one can be a neighbour's burst on a shared machine). N dungeons are
 *     4N players, as the capacity goal counts them (200 dungeons, 800 players);
 *     `--crowd-stays` keeps the crowd in the hub beside them (4N + CROWD players).
 *
 * A step's new bots arrive over --stagger seconds (12: about one fight), a batch of whole
 * dungeons a second, so that its dungeons fight out of step, as independent players'
 * do; all at once, they open, fight and end together, and the bullets in flight swing
 * with their common fight (each window's `liveBulletsBySecond` shows the swing).
 *
 * Each window (--window, 10 s) opens once its load has run --settle seconds (30: V8's
 * compiler is busy for about that long after a new load appears, which a server in
 * service is past). A step holds when tick p99 ≤ 8 ms with no late tick over its
 * window. For each phase and step it prints one JSON line: dungeons, players, server CPU
 * ms per tick (and its V8 worker threads' part), the mean tick and its parts (the hub, the
 * dungeons, the connections' flush), tick p50/p99 (the server's last 10 s),
 * late ticks and the stalls they came in (`stalls`: runs of late ticks, by the most any
 * of their ticks started late, and by what the loop did before each: worked, lost its core,
 * or slept past its timer), snapshots/s p5 per client, payload bytes/s down per
 * client, RSS, the malloc it ran on (jemalloc preloaded as deployed, or glibc's with
 * `--malloc=system`), the
 * scheduling its game loop got (`LOOP_PRIORITY`, which it inherits from this process's
 * environment: `LOOP_PRIORITY=normal deno task loadtest` to compare), and the
 * share of the machine's CPU its hypervisor took meanwhile (steal: on a shared host,
 * neighbours slow every figure down by it and more), and the garbage collections in
 * the window (`gc`: the server runs with V8's `--trace-gc`, read by tools/gc_trace.ts;
 * a full collection's pause stops the loop). The last line is the summary, with
 * the largest N that held and whether that meets the goal of 200 dungeons (800 players),
 * what the host gave the server's core just before the first window and just after
 * the last (`host`, tools/host_probe.ts: its compute, and how far its caches reached),
 * and every full collection of the run (`fullCollections`: when, the heap before and
 * after, the pause; how far apart they come is what the old generation's limit decides).
 * Figures depend on the machine and its neighbours: say how busy it was when you
 * quote them.
 */
import { checkArgs, type FlagSpec, flagValue, intIn, positiveInts } from "./args.ts";
import { freePort } from "./redis_server.ts";
import { recordProfile, selfTimes } from "./cpu_profile.ts";
import {
  allocationSites,
  formatSites,
  recordAllocationProfile,
  recordOldGenerationProfile,
} from "./heap_profile.ts";
import { SERVER_V8_FLAGS } from "../net/server/config.ts";
import { type MallocName, mallocOf, SERVER_MALLOC } from "../net/server/malloc.ts";
import { schedPolicyOf } from "../net/server/loop_priority.ts";
import { STALL_VERDICTS, type StallVerdict } from "../net/server/stall_watch.ts";
import { type GcCounts, GcTally } from "./gc_trace.ts";
import type { HostProbe } from "./host_probe.ts";

interface Args {
  readonly crowd: number;
  readonly steps: readonly number[];
  readonly windowS: number;
  /**
   * Seconds the load runs before each window. A new load keeps V8's compiler busy for
   * tens of seconds (functions reach optimisation, deoptimise on a case not seen before,
   * are compiled again), on the thread that shares the server's core: a server in
   * service is past that, so a window measures after it.
   */
  readonly settleS: number;
  /** Lean bots (tools/lean_bot.ts: the same wire, 800 on a core) or full ClientRuntimes. */
  readonly lean: boolean;
  /** Where to write a CPU profile of the server for each window (its top functions go to stderr). */
  readonly profileDir: string | undefined;
  /**
   * Where to write, for each window, what the server allocated that no scavenge collected,
   * by allocation stack (tools/heap_profile.ts; the top stacks go to stderr).
   */
  readonly heapProfileDir: string | undefined;
  /** Where to write, for each window, all the server allocated, by allocation stack. */
  readonly allocationProfileDir: string | undefined;
  /** More V8 flags for the server (`--server-v8=--trace-gc-nvp,…`); its traces go to stderr. */
  readonly serverV8: string | undefined;
  /**
   * The server's malloc: SERVER_MALLOC preloaded, as every launch of the server does
   * (net/server/malloc.ts), or `--malloc=system` for glibc's, to compare.
   */
  readonly malloc: "jemalloc" | "system";
  /** The crowd stays in the hub through the dungeon ladder (by default it hangs up first). */
  readonly crowdStays: boolean;
  /**
   * Seconds over which a step's new dungeon bots arrive, a batch of whole dungeons a
   * second: dungeons that opened together fight in step (the same phase, the same dense
   * pattern, the same end, and the same again), so the server's load would swing with
   * their common fight instead of holding at its mean, as independent players' dungeons
   * do. 0: every bot of a step at once.
   */
  readonly staggerS: number;
}

/** The flags `deno task loadtest` takes (any other is refused, with the usage line). */
const FLAGS: FlagSpec = {
  values: [
    "crowd",
    "steps",
    "window",
    "settle",
    "bots",
    "profile",
    "heap-profile",
    "allocation-profile",
    "server-v8",
    "malloc",
    "stagger",
  ],
  switches: ["crowd-stays"],
};

function parseArgs(argv: readonly string[]): Args {
  const get = (name: string) => flagValue(argv, name);
  return {
    crowd: intIn("crowd", get("crowd") ?? "200", 0, 10_000),
    steps: positiveInts("steps", get("steps") ?? "10,25,50,100,150,200,250,300"),
    windowS: intIn("window", get("window") ?? "10", 1, 3600),
    settleS: intIn("settle", get("settle") ?? "30", 0, 3600),
    lean: botsArg(get("bots") ?? "lean") === "lean",
    profileDir: get("profile"),
    heapProfileDir: get("heap-profile"),
    allocationProfileDir: get("allocation-profile"),
    serverV8: get("server-v8"),
    malloc: mallocArg(get("malloc") ?? "jemalloc"),
    crowdStays: argv.includes("--crowd-stays"),
    staggerS: intIn("stagger", get("stagger") ?? String(DEFAULT_STAGGER_S), 0, 600),
  };
}

/**
 * `dungeons` split into batches a second apart over `seconds` (one batch a second, at
 * most one per dungeon), as even as whole dungeons allow; one batch when `seconds` is 0.
 */
export function staggerBatches(dungeons: number, seconds: number): number[] {
  const n = Math.max(1, Math.min(seconds, dungeons));
  return Array.from(
    { length: n },
    (_, b) => Math.round((dungeons * (b + 1)) / n) - Math.round((dungeons * b) / n),
  );
}

/** `--bots=`: lean or full; anything else is a typo, not a default. */
function botsArg(value: string): "lean" | "full" {
  if (value === "lean" || value === "full") return value;
  throw new Error(`--bots=${value}: expected lean or full`);
}

/** `--malloc=`: jemalloc (as deployed) or system; anything else is a typo, not a default. */
function mallocArg(value: string): Args["malloc"] {
  if (value === "jemalloc" || value === "system") return value;
  throw new Error(`--malloc=${value}: expected jemalloc or system`);
}

const P99_LIMIT_MS = 8;
/** About one fight of four lean bots at the Warden, start to end, in these runs. */
const DEFAULT_STAGGER_S = 12;
/** The capacity goal: this many dungeons of four players at the boss, in one process. */
const GOAL_DUNGEONS = 200;
const CLK_TCK = 100;

/** One measured window. */
export interface StepResult {
  phase: "crowd" | "dungeons";
  /** The ladder's N: dungeons of four bots asked for (0 in the crowd's window). */
  step: number;
  /**
   * Dungeon instances open at the end of the window: more than `step`, as runs end and
   * new ones fill (their bots die, walk back from the hub, wait for a crew).
   */
  dungeons: number;
  players: number;
  serverCpuMsPerTick: number;
  /** Of that, V8's worker threads (the collector's helpers, the optimising compiler). */
  v8WorkerCpuMsPerTick: number;
  /** Mean tick over the window: the game's own work, without the I/O between ticks. */
  tickMeanMs: number;
  /**
   * That mean by part (`bh_tick_seconds_total`): stepping the hub (the crowd, and the bots
   * on their way between runs), stepping the dungeons, flushing the connections.
   */
  tickPartsMs: { hub: number; dungeons: number; flush: number };
  /**
   * Bullets in flight in all the server's instances, on average over the window's ticks
   * (`bh_bullet_ticks_total`): the fights' load, to tell a heavier load from a slower host.
   */
  liveBullets: number;
  /**
   * The least and most bullets in flight on average over any one second of the window:
   * far apart, the fights swing together (dungeons that opened together; see --stagger).
   */
  liveBulletsBySecond: { min: number; max: number };
  tickP50Ms: number;
  tickP99Ms: number;
  lateTicks: number;
  /**
   * The stalls those late ticks came in (a stop of the loop, and the catching up after
   * it: net/server/scheduler.ts), by the most any of their ticks started late. Many short ones
   * are a loop with too little time to spare; a few long ones, pauses. `verdicts`: what the
   * loop's thread did before each began (net/server/stall_watch.ts): worked, lost its core
   * (preempted), or slept past its timer (the host).
   */
  stalls: {
    count: number;
    worstLateMs: Record<string, number>;
    verdicts: Record<StallVerdict, number>;
  };
  snapshotsPerSecP5: number;
  /**
   * Snapshots the server skipped in the window because a client's socket still held
   * bytes from an earlier turn of its loop (`bh_snapshots_skipped_total`): clients not
   * taking what they were sent, here the bots falling behind.
   */
  snapshotsSkipped: number;
  downBytesPerSecPerClient: { mean: number; p95: number };
  rssMb: number;
  /** The malloc the server ran on, read from its memory map ("unknown": no /proc). */
  malloc: MallocName;
  /** The scheduling of the server's game loop thread, read from /proc (LOOP_PRIORITY). */
  loopPriority: "realtime" | "normal" | "unknown";
  botsAtBoss: number;
  botLoopWorstGapMs: number;
  /** Snapshots (since the start) whose delta named a baseline the bot did not hold. */
  snapshotsWithoutBaseline: number;
  /** The machine's 1-minute load average at the end of the window (2 = both cores busy). */
  loadAverage1m: number;
  /** The share of the machine's CPU the hypervisor took during the window, % (null: unknown). */
  stealPercent: number | null;
  /**
   * The server's garbage collections in the window, from V8's `--trace-gc` (the load
   * test always asks for it): a full collection's pause stops the loop for its length.
   */
  gc: GcCounts;
  holds: boolean;
}

function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** True when processes can be pinned to a core each (`taskset`, two cores or more). */
export async function hasTaskset(): Promise<boolean> {
  try {
    const out = await new Deno.Command("taskset", { args: ["-c", "0", "true"] }).output();
    return out.success && navigator.hardwareConcurrency >= 2;
  } catch {
    return false;
  }
}

/** `deno ARGS`, pinned to CPU `pin` when given. */
export function command(
  pin: string | undefined,
  args: string[],
): { cmd: string; args: string[] } {
  return pin
    ? { cmd: "taskset", args: ["-c", pin, Deno.execPath(), ...args] }
    : { cmd: Deno.execPath(), args };
}

/** utime + stime from a /proc `stat` line, ms. */
function statCpuMs(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) / CLK_TCK) * 1000;
}

/** utime + stime of a process, ms. */
export async function cpuMs(pid: number): Promise<number> {
  return statCpuMs(await Deno.readTextFile(`/proc/${pid}/stat`));
}

/**
 * utime + stime of a process's V8 worker threads ("V8 DefaultWorker": the collector's
 * helpers and the optimising compiler), ms. On the one core the server is pinned to,
 * their time is taken from the main thread, often in the middle of a tick.
 */
export async function v8WorkerCpuMs(pid: number): Promise<number> {
  let ms = 0;
  try {
    for await (const task of Deno.readDir(`/proc/${pid}/task`)) {
      const stat = await Deno.readTextFile(`/proc/${pid}/task/${task.name}/stat`).catch(() => "");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (name.startsWith("V8 ")) ms += statCpuMs(stat);
    }
  } catch {
    // The process is gone (the window's figures say so elsewhere).
  }
  return ms;
}

/** The machine's CPU time so far, in ticks: all of it, and what the hypervisor took (steal). */
async function machineCpu(): Promise<{ total: number; steal: number } | undefined> {
  try {
    const line = (await Deno.readTextFile("/proc/stat")).split("\n")[0];
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    return { total: ticks.reduce((a, b) => a + b, 0), steal: ticks[7] ?? 0 };
  } catch {
    return undefined;
  }
}

/**
 * The share of the machine's CPU time the hypervisor took between two readings, in
 * percent (null where /proc/stat does not say): a virtual machine's neighbours show here,
 * and every figure measured while it is high is slower than the code.
 */
function stealPercent(
  before: { total: number; steal: number } | undefined,
  after: { total: number; steal: number } | undefined,
): number | null {
  if (!before || !after || after.total <= before.total) return null;
  return Math.round((1000 * (after.steal - before.steal)) / (after.total - before.total)) / 10;
}

/** The scheduling policy of a process's main thread (the game loop's), from /proc. */
async function loopPriorityOf(pid: number): Promise<StepResult["loopPriority"]> {
  try {
    const policy = schedPolicyOf(await Deno.readTextFile(`/proc/${pid}/stat`));
    return policy === 1 || policy === 2 ? "realtime" : policy === 0 ? "normal" : "unknown";
  } catch {
    return "unknown";
  }
}

async function rssMb(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 102.4) / 10;
}

/** Reads the server's metrics that matter here. */
async function serverFigures(base: string) {
  const health = await (await fetch(`${base}/healthz`)).json();
  return { ticks: health.ticks as number, ...await metricsOf(base) };
}

/** The server's /metrics figures alone (one request). */
async function metricsOf(base: string) {
  return metricFigures(await (await fetch(`${base}/metrics`)).text());
}

/**
 * The bullets in flight on average over each whole second of the next `seconds`
 * (read from the server's /metrics once a second: the one request it needs, as the
 * server being measured answers it). A read that fails ends it with what it has: the
 * window's own reads say what became of the server.
 */
async function sampleBulletsPerSecond(base: string, seconds: number): Promise<number[]> {
  const out: number[] = [];
  try {
    let last = await metricsOf(base);
    for (let k = 1; k < seconds; k++) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = await metricsOf(base);
      const ticks = now.tickCount - last.tickCount;
      if (ticks > 0) out.push(Math.round((now.bulletTicks - last.bulletTicks) / ticks));
      last = now;
    }
  } catch {
    // The server went away mid-window.
  }
  return out;
}

/** The least and the most of `xs` (zeros when empty). */
export function spread(xs: readonly number[]): { min: number; max: number } {
  return xs.length === 0 ? { min: 0, max: 0 } : { min: Math.min(...xs), max: Math.max(...xs) };
}

/** The figures a window compares, read from the server's /metrics text. */
export function metricFigures(text: string) {
  const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
  return {
    late: value(/^bh_ticks_late_total\{[^}]*\} (\S+)$/m),
    p50Ms: value(/^bh_tick_recent_seconds\{[^}]*quantile="0.5"\} (\S+)$/m) * 1000,
    p99Ms: value(/^bh_tick_recent_seconds\{[^}]*quantile="0.99"\} (\S+)$/m) * 1000,
    dungeons: value(/^bh_instances\{[^}]*kind="dungeon"\} (\S+)$/m),
    players: value(/^bh_players\{[^}]*\} (\S+)$/m),
    tickSumS: value(/^bh_tick_duration_seconds_sum\{[^}]*\} (\S+)$/m),
    tickPartS: {
      hub: value(/^bh_tick_seconds_total\{[^}]*part="hub"[^}]*\} (\S+)$/m),
      dungeons: value(/^bh_tick_seconds_total\{[^}]*part="dungeon"[^}]*\} (\S+)$/m),
      flush: value(/^bh_tick_seconds_total\{[^}]*part="flush"[^}]*\} (\S+)$/m),
    },
    tickCount: value(/^bh_tick_duration_seconds_count\{[^}]*\} (\S+)$/m),
    bulletTicks: value(/^bh_bullet_ticks_total\{[^}]*\} (\S+)$/m),
    snapshotsSkipped: value(/^bh_snapshots_skipped_total\{[^}]*\} (\S+)$/m),
    // Cumulative, by upper bound in seconds ("+Inf" last).
    stallBuckets: [...text.matchAll(/^bh_loop_stalls_seconds_bucket\{[^}]*le="([^"]+)"\} (\S+)$/gm)]
      .map((m) => ({ le: m[1], count: Number(m[2]) })),
    stallVerdicts: Object.fromEntries(
      STALL_VERDICTS.map((v) => [
        v,
        value(
          new RegExp(`^bh_loop_stall_verdicts_total\\{[^}]*verdict="${v}"[^}]*\\} (\\S+)$`, "m"),
        ),
      ]),
    ) as Record<StallVerdict, number>,
  };
}

/** The stalls by verdict between two readings. */
export function verdictsBetween(
  before: Record<StallVerdict, number>,
  after: Record<StallVerdict, number>,
): Record<StallVerdict, number> {
  return Object.fromEntries(STALL_VERDICTS.map((v) => [v, after[v] - before[v]])) as Record<
    StallVerdict,
    number
  >;
}

/** The mean tick's parts between two readings of the server's figures, ms a tick. */
export function perTickMs(
  before: { tickCount: number; tickPartS: { hub: number; dungeons: number; flush: number } },
  after: { tickCount: number; tickPartS: { hub: number; dungeons: number; flush: number } },
): { hub: number; dungeons: number; flush: number } {
  const ticks = after.tickCount - before.tickCount;
  const ms = (k: "hub" | "dungeons" | "flush") =>
    msPerTick(after.tickPartS[k] - before.tickPartS[k], ticks);
  return { hub: ms("hub"), dungeons: ms("dungeons"), flush: ms("flush") };
}

/** `seconds` of tick time over `ticks` ticks, as ms a tick (two decimals). */
function msPerTick(seconds: number, ticks: number): number {
  return Math.round((seconds / Math.max(1, ticks)) * 100_000) / 100;
}

/**
 * The stalls between two readings of the loop's histogram, by the most any of their
 * ticks started late (ms, at most; "more" past the last bound): not cumulative.
 */
export function stallsBetween(
  before: readonly { le: string; count: number }[],
  after: readonly { le: string; count: number }[],
): { count: number; worstLateMs: Record<string, number> } {
  const worstLateMs: Record<string, number> = {};
  let below = 0;
  for (const { le, count } of after) {
    const cumulative = count - (before.find((b) => b.le === le)?.count ?? 0);
    worstLateMs[le === "+Inf" ? "more" : String(Math.round(Number(le) * 1000))] = cumulative -
      below;
    below = cumulative;
  }
  return { count: below, worstLateMs };
}

/** The bots' process: commands in, one report line out per request. */
class BotProcess {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: string[] = [];
  #wake: (() => void) | undefined;

  constructor(pin: string | undefined) {
    const { cmd, args } = command(pin, [
      "run",
      "-A",
      new URL("./loadtest_bots.ts", import.meta.url).pathname,
    ]);
    const child = new Deno.Command(cmd, {
      args,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    })
      .spawn();
    this.child = child;
    this.#writer = child.stdin.getWriter();
    (async () => {
      const decoder = new TextDecoder();
      let rest = "";
      for await (const chunk of child.stdout) {
        const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
        rest = lines.pop() ?? "";
        this.#lines.push(...lines.filter((l) => l.startsWith("{")));
        this.#wake?.();
      }
    })();
  }

  async send(cmd: unknown): Promise<void> {
    await this.#writer.write(new TextEncoder().encode(JSON.stringify(cmd) + "\n"));
  }

  // deno-lint-ignore no-explicit-any
  async report(): Promise<any> {
    await this.send({ report: true });
    while (this.#lines.length === 0) await new Promise<void>((r) => this.#wake = r);
    return JSON.parse(this.#lines.shift()!);
  }

  async stop(): Promise<void> {
    await this.send({ stop: true }).catch(() => {});
    await this.child.status;
  }
}

async function waitUntil(what: string, cond: () => Promise<boolean>, timeoutMs: number) {
  const start = performance.now();
  while (!(await cond())) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * What the host gives CPU `pin` now (tools/host_probe.ts, in its own process on that
 * core, about a second), or null when the probe could not run.
 */
async function hostProbe(pin: string | undefined): Promise<HostProbe | null> {
  const { cmd, args } = command(pin, [
    "run",
    "-A",
    new URL("./host_probe.ts", import.meta.url).pathname,
  ]);
  try {
    const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "null" }).output();
    return out.success ? JSON.parse(new TextDecoder().decode(out.stdout)) as HostProbe : null;
  } catch {
    return null;
  }
}

/** Runs the whole load test; prints one JSON line per window and the summary last. */
export async function runLoadtest(args: Args): Promise<unknown> {
  const pinned = await hasTaskset();
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const profiles = [args.profileDir, args.heapProfileDir, args.allocationProfileDir];
  if (profiles.filter((p) => p !== undefined).length > 1) {
    throw new Error(
      "--profile, --heap-profile, --allocation-profile: one at a time (each samples the whole window)",
    );
  }
  const inspect = profiles.some((p) => p !== undefined) ? `127.0.0.1:${freePort()}` : undefined;
  // On the server's core while it is still idle: what the neighbours leave it.
  const hostBefore = await hostProbe(pinned ? "0" : undefined);
  // The inspector's sampler runs at normal priority: beside a loop at real-time priority
  // it only gets the core while the loop sleeps, and the profile is nearly all "(idle)".
  if (inspect && Deno.env.get("LOOP_PRIORITY") !== "normal") {
    console.error("loadtest: a profile runs the server at LOOP_PRIORITY=normal (a sampler cannot");
    console.error("  interrupt a real-time loop); its figures are not the shipped configuration's");
  }
  const { cmd, args: serverArgs } = command(pinned ? "0" : undefined, [
    "run",
    "-A",
    // As `deno task start` and deploy/ run it (docs/CAPACITY.md), and traced: a
    // line per collection (a dozen a second at 800 players), counted by the GcTally below.
    `--v8-flags=${SERVER_V8_FLAGS},--trace-gc${args.serverV8 ? `,${args.serverV8}` : ""}`,
    ...(inspect ? [`--inspect=${inspect}`] : []),
    new URL("../main.ts", import.meta.url).pathname,
  ]);
  const server = new Deno.Command(cmd, {
    args: serverArgs,
    env: {
      HOST: "127.0.0.1",
      PORT: String(port),
      LOG_LEVEL: "warn",
      BOSS_RUSH: "1",
      // The SIGTERM at the end stops it at once, whatever a bot left behind.
      DRAIN_SECONDS: "0",
      MAX_CONNECTIONS: "10000",
      // Every bot comes from 127.0.0.1: lift the per-address caps (the front door's TCP
      // cap, the game's connection cap and its connect rate), not the front door itself.
      MAX_CONNECTIONS_PER_IP: "10000",
      MAX_HTTP_CONNECTIONS_PER_IP: "100000",
      CONNECT_BURST_PER_IP: "100000",
      CONNECTS_PER_SEC_PER_IP: "100000",
      HUB_CAPACITY: "10000",
      // As every launch of the server does (or not at all: `--malloc=system`, whatever this
      // process was started with); each result says what it got (mallocOf).
      LD_PRELOAD: args.malloc === "jemalloc" ? SERVER_MALLOC : "",
      ...(inspect ? { LOOP_PRIORITY: "normal" } : {}),
    },
    // V8's traces go to stdout: the collections are counted; with flags of one's own, the
    // rest (what those flags trace) is passed on to stderr.
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const gc = new GcTally();
  void (async () => {
    const passOn = args.serverV8 ? (line: string) => console.error(line) : undefined;
    for await (const text of server.stdout.pipeThrough(new TextDecoderStream())) {
      gc.feed(text, passOn);
    }
  })();
  const bots = new BotProcess(pinned ? "1" : undefined);
  const results: StepResult[] = [];
  try {
    let exited = false;
    server.status.then((s) => {
      exited = true;
      if (!s.success) console.error(`loadtest: the server exited with ${s.code}`);
    });
    await waitUntil("the server", async () => {
      // A server that never came up (a bad flag, a taken port) ends the test at once.
      if (exited) throw new Error("the server exited before it answered");
      try {
        return (await fetch(`${base}/healthz`)).ok;
      } catch {
        return false;
      }
    }, 60_000);
    const url = `ws://127.0.0.1:${port}/ws`;
    await bots.report(); // starts the bots' first window

    const measure = async (phase: StepResult["phase"], step: number): Promise<StepResult> => {
      await new Promise((r) => setTimeout(r, args.settleS * 1000));
      await bots.report(); // opens the window
      const before = await serverFigures(base);
      const cpuBefore = await cpuMs(server.pid);
      const workerBefore = await v8WorkerCpuMs(server.pid);
      const machineBefore = await machineCpu();
      const gcBefore = gc.mark();
      const window = new Promise((r) => setTimeout(r, args.windowS * 1000));
      const bulletSeconds = sampleBulletsPerSecond(base, args.windowS);
      const heapDir = args.heapProfileDir ?? args.allocationProfileDir;
      if (inspect && heapDir) {
        const seconds = args.windowS - 1;
        const all = args.allocationProfileDir !== undefined;
        const record = all ? recordAllocationProfile : recordOldGenerationProfile;
        const profile = await record(inspect, { seconds });
        const report = formatSites(allocationSites(profile), {
          seconds,
          young: all ? "kept" : "dropped",
        });
        const name = `${heapDir}/${phase}-${results.length}.txt`;
        await Deno.mkdir(heapDir, { recursive: true });
        await Deno.writeTextFile(name, report + "\n");
        console.error(
          `loadtest: ${name}, the server's allocation${
            all ? "" : " that reached its old generation"
          }:`,
        );
        console.error(report.split("\n").slice(0, 16).join("\n"));
      }
      if (inspect && args.profileDir) {
        const profile = await recordProfile(inspect, { seconds: args.windowS - 1 });
        const name = `${args.profileDir}/${phase}-${results.length}.cpuprofile`;
        await Deno.mkdir(args.profileDir, { recursive: true });
        await Deno.writeTextFile(name, JSON.stringify(profile));
        console.error(`loadtest: ${name}, the server's top functions by self time:`);
        for (const f of selfTimes(profile).slice(0, 25)) {
          console.error(`  ${(f.selfShare * 100).toFixed(1).padStart(5)} %  ${f.where}`);
        }
      }
      await window;
      const bot = await bots.report();
      const after = await serverFigures(base);
      const cpuAfter = await cpuMs(server.pid);
      const workerAfter = await v8WorkerCpuMs(server.pid);
      const machineAfter = await machineCpu();
      const ticks = Math.max(1, after.ticks - before.ticks);
      const snaps = [...bot.crowdSnapsPerSec, ...bot.dungeonSnapsPerSec];
      const down = phase === "crowd" ? bot.crowdBytesPerSec : bot.dungeonBytesPerSec;
      const r: StepResult = {
        phase,
        step,
        dungeons: after.dungeons,
        players: after.players,
        serverCpuMsPerTick: Math.round(((cpuAfter - cpuBefore) / ticks) * 100) / 100,
        v8WorkerCpuMsPerTick: Math.round(((workerAfter - workerBefore) / ticks) * 100) / 100,
        tickMeanMs: msPerTick(after.tickSumS - before.tickSumS, after.tickCount - before.tickCount),
        tickPartsMs: perTickMs(before, after),
        liveBullets: Math.round(
          (after.bulletTicks - before.bulletTicks) /
            Math.max(1, after.tickCount - before.tickCount),
        ),
        liveBulletsBySecond: spread(await bulletSeconds),
        tickP50Ms: Math.round(after.p50Ms * 100) / 100,
        tickP99Ms: Math.round(after.p99Ms * 100) / 100,
        lateTicks: after.late - before.late,
        stalls: {
          ...stallsBetween(before.stallBuckets, after.stallBuckets),
          verdicts: verdictsBetween(before.stallVerdicts, after.stallVerdicts),
        },
        snapshotsPerSecP5: percentile(snaps, 0.05),
        snapshotsSkipped: after.snapshotsSkipped - before.snapshotsSkipped,
        downBytesPerSecPerClient: {
          mean: Math.round(
            down.reduce((a: number, b: number) => a + b, 0) / Math.max(1, down.length),
          ),
          p95: percentile(down, 0.95),
        },
        rssMb: await rssMb(server.pid),
        malloc: mallocOf(server.pid),
        loopPriority: await loopPriorityOf(server.pid),
        botsAtBoss: bot.atBoss,
        botLoopWorstGapMs: bot.botLoopWorstGapMs,
        snapshotsWithoutBaseline: bot.snapshotsWithoutBaseline ?? 0,
        loadAverage1m: Deno.loadavg()[0],
        stealPercent: stealPercent(machineBefore, machineAfter),
        gc: gc.since(gcBefore),
        holds: after.p99Ms <= P99_LIMIT_MS && after.late - before.late === 0,
      };
      console.log(JSON.stringify(r));
      results.push(r);
      return r;
    };

    if (args.crowd > 0) {
      await bots.send({ add: { url, crowd: args.crowd, lean: args.lean } });
      await waitUntil(
        "the crowd in the hub",
        async () => (await bots.report()).inHub >= args.crowd,
        60_000,
      );
      await measure("crowd", 0);
      if (!args.crowdStays) {
        // The goal counts the dungeons' players alone: the crowd hangs up (a 1000 close
        // ends a session at once) and the ladder starts from an empty server.
        await bots.send({ dismiss: "crowd" });
        await waitUntil(
          "the crowd gone",
          async () => (await serverFigures(base)).players === 0,
          60_000,
        );
      }
    }
    /** A step's new bots, a batch of whole dungeons a second over --stagger seconds. */
    const addDungeonBots = async (count: number) => {
      const batches = staggerBatches(count / 4, args.staggerS);
      for (let b = 0; b < batches.length; b++) {
        if (b > 0) await new Promise((r) => setTimeout(r, 1000));
        await bots.send({ add: { url, dungeon: 4 * batches[b], lean: args.lean } });
      }
    };
    let added = 0;
    let failures = 0;
    for (const n of args.steps.filter((n) => n > 0)) {
      await addDungeonBots(4 * n - added);
      added = 4 * n;
      // Most of them at the boss (a few are always dying, walking back or waiting to fill).
      // deno-lint-ignore no-explicit-any
      let last: any = {};
      try {
        await waitUntil(`${n} dungeons at the boss`, async () => {
          last = await bots.report();
          return last.atBoss >= 0.85 * added;
        }, 120_000);
      } catch (err) {
        // Too slow to even get there: that step does not hold, and the next will not either.
        const { bots: total, atBoss, inHub, closed, closeReasons, updateErrors } = last;
        console.log(JSON.stringify({
          phase: "dungeons",
          target: n,
          error: (err as Error).message,
          bots: { total, atBoss, inHub, closed, closeReasons, updateErrors },
          loadAverage1m: Deno.loadavg()[0],
        }));
        break;
      }
      const r = await measure("dungeons", n);
      // Two failing steps in a row end it: one can be a neighbour's burst on a shared machine.
      failures = r.holds ? 0 : failures + 1;
      if (failures >= 2) break;
    }
  } finally {
    await bots.stop();
    try {
      server.kill("SIGTERM");
    } catch {
      // it already exited (a bad configuration says why on stderr)
    }
    await server.status;
  }
  const hostAfter = await hostProbe(pinned ? "0" : undefined);
  const holding = results.filter((r) => r.phase === "dungeons" && r.holds);
  const largest = holding.at(-1);
  const crowd = results.find((r) => r.phase === "crowd");
  const summary = {
    summary: true,
    pinned,
    bots: args.lean ? "lean" : "full",
    cores: navigator.hardwareConcurrency,
    windowS: args.windowS,
    loadAverage: Deno.loadavg(),
    crowdStays: args.crowd > 0 && args.crowdStays,
    largestHolding: largest
      ? { step: largest.step, dungeons: largest.dungeons, players: largest.players }
      : null,
    // Met by any holding step of at least GOAL_DUNGEONS (beside a crowd that stayed, too:
    // that is more load than the goal's).
    goal: {
      dungeons: GOAL_DUNGEONS,
      players: 4 * GOAL_DUNGEONS,
      met: holding.some((r) => r.step >= GOAL_DUNGEONS),
    },
    crowd: crowd
      ? {
        players: crowd.players,
        downBytesPerSecPerClient: crowd.downBytesPerSecPerClient,
        tickP99Ms: crowd.tickP99Ms,
      }
      : null,
    steps: results.length,
    host: { before: hostBefore, after: hostAfter },
    fullCollections: gc.fullCollections(),
  };
  console.log(JSON.stringify(summary));
  return summary;
}

if (import.meta.main) {
  checkArgs("loadtest", Deno.args, FLAGS);
  let args: Args;
  try {
    args = parseArgs(Deno.args);
  } catch (err) {
    console.error(`loadtest: ${(err as Error).message}`);
    Deno.exit(2);
  }
  await runLoadtest(args);
}
