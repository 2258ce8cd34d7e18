/**
 * What the host gives this process right now, for reading a capacity figure: the time of
 * a chain of dependent integer operations (compute), and of a dependent load (a pointer
 * chase in a random cycle of cache lines) over working sets of 0.5–64 MB (memory). A
 * loaded server's tick walks several MB of scattered objects, so where the loads go from
 * cache (~10–20 ns) to memory (~100–150 ns) decides much of what a tick costs; on a shared
 * host the neighbours move that point from minute to minute while compute holds steady
 * (docs/CAPACITY.md, "The host's phases"). `deno task loadtest` runs it on the server's
 * core before its first window and after its last; `deno task host-probe` prints one JSON
 * line:
 *
 * - `computeNsPerOp`: the median ns one multiply-add of a dependent chain took;
 * - `sizesMb` and `nsPerLoad`: each working set, and the median ns one dependent load took;
 * - `cacheMb`: the largest working set whose loads take under half what the largest one's
 *   do (those go to memory): what fits in the caches this process gets;
 * - `runtimeNs`: what the runtime charges for three things a server does hundreds of
 *   times a tick: a fresh `new Uint8Array(32)` (`newArray`: Deno keeps no typed array on
 *   V8's heap, so each is a buffer of its own, allocated and later swept), a view of a
 *   buffer that exists (`view`: what `messageBytes` gives, net/wire/slab.ts), and a read
 *   of `performance.now()` (`clock`).
 *
 *   deno task host-probe [--rounds=3]
 */
import { Rng } from "../sim/mod.ts";
import { checkArgs, flagValue, intIn } from "./args.ts";

/** The working sets probed, MB. */
export const PROBE_SIZES_MB = [0.5, 1, 2, 4, 8, 16, 32, 64] as const;

/** One probe's figures. */
export interface HostProbe {
  /** Median ns per multiply-add of a dependent chain (the core's speed, caches aside). */
  computeNsPerOp: number;
  /** The working sets, MB, smallest first. */
  sizesMb: number[];
  /** Median ns per dependent load, one per working set. */
  nsPerLoad: number[];
  /** Largest working set, MB, whose loads take under half the largest one's (0: none). */
  cacheMb: number;
  /** Median ns of a fresh 32-byte array, a 32-byte view of an existing buffer, a clock read. */
  runtimeNs: { newArray: number; view: number; clock: number };
}

/** Int32s in a cache line: the chase touches one line per load. */
const LINE_INTS = 16;
/** Loads timed per working set and round. */
const LOADS = 400_000;
/** Multiply-adds timed per round. */
const OPS = 10_000_000;

/**
 * A random cycle through every cache line of `bytes`: `next[i]` is the index the load at
 * `i` leads to. Random, so neither the prefetcher nor the page order helps.
 */
function chain(bytes: number, rng: Rng): Int32Array {
  const lines = Math.max(2, Math.floor(bytes / (LINE_INTS * 4)));
  const order = new Int32Array(lines);
  for (let i = 0; i < lines; i++) order[i] = i * LINE_INTS;
  for (let i = lines - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    const t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  const next = new Int32Array(lines * LINE_INTS);
  for (let i = 0; i < lines; i++) next[order[i]] = order[(i + 1) % lines];
  return next;
}

/** Where the last probe's chains ended: stored, so the compiler cannot drop them as unused. */
let _lastSink = 0;

/** Follows `loads` links from slot 0; returns where it ended (so the loop is not dead code). */
function chase(next: Int32Array, loads: number): number {
  let p = 0;
  for (let i = 0; i < loads; i++) p = next[p];
  return p;
}

/**
 * The runtime's costs, ns each: a fresh array, a view, a clock read (see `runtimeNs`).
 * Each array is kept a while, as a message is, so none can be optimised away.
 */
function runtimeCosts(ops: number): { newArray: number; view: number; clock: number } {
  const kept: Uint8Array[] = new Array(64);
  const slab = new ArrayBuffer(64 * 1024);
  let sink = 0;
  const time = (make: (i: number) => void) => {
    const t0 = performance.now();
    for (let i = 0; i < ops; i++) make(i);
    return ((performance.now() - t0) * 1e6) / ops;
  };
  const newArray = time((i) => (kept[i & 63] = new Uint8Array(32)));
  const view = time((i) => (kept[i & 63] = new Uint8Array(slab, (i & 1023) * 32, 32)));
  const clock = time(() => (sink += performance.now()));
  _lastSink ^= sink > 0 ? 1 : 0;
  return { newArray, view, clock };
}

/** Runs `ops` multiply-adds, each waiting for the one before (so the time is the core's). */
function compute(ops: number, seed: number): number {
  let x = seed | 0;
  for (let i = 0; i < ops; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
  return x;
}

/**
 * The largest working set whose loads take under half what the largest one's do: the
 * largest set's loads go to memory (100–150 ns on a server), a cache answers in a fraction.
 */
export function cacheMbOf(sizesMb: readonly number[], nsPerLoad: readonly number[]): number {
  const memory = nsPerLoad.at(-1) ?? 0;
  let fits = 0;
  for (let k = 0; k < sizesMb.length && nsPerLoad[k] < memory / 2; k++) fits = sizesMb[k];
  return fits;
}

/**
 * Times the compute chain and every working set `rounds` times (interleaved, so a drift
 * hits them all) and takes medians.
 */
export function probeHost(
  opts: { rounds: number; sizesMb?: readonly number[]; ops?: number },
): HostProbe {
  const ops = opts.ops ?? OPS;
  const sizes = opts.sizesMb ?? PROBE_SIZES_MB;
  const rng = new Rng(1);
  const chains = sizes.map((mb) => chain(mb * 1024 * 1024, rng));
  const samples: number[][] = sizes.map(() => []);
  const computeNs: number[] = [];
  const runtime: { newArray: number[]; view: number[]; clock: number[] } = {
    newArray: [],
    view: [],
    clock: [],
  };
  // Arrays (or clock reads) a round: a hundredth of the multiply-adds, 100,000 by default.
  const runtimeOps = Math.max(1_000, Math.round(ops / 100));
  let sink = compute(ops / 10, 1); // past the compiler's first tiers
  runtimeCosts(runtimeOps);
  for (let r = 0; r < opts.rounds; r++) {
    const costs = runtimeCosts(runtimeOps);
    runtime.newArray.push(costs.newArray);
    runtime.view.push(costs.view);
    runtime.clock.push(costs.clock);
    const c0 = performance.now();
    sink ^= compute(ops, r);
    computeNs.push(((performance.now() - c0) * 1e6) / ops);
    chains.forEach((next, k) => {
      // A first pass brings the set into whatever cache holds it.
      sink ^= chase(next, Math.min(LOADS, next.length / LINE_INTS));
      const t0 = performance.now();
      sink ^= chase(next, LOADS);
      samples[k].push(((performance.now() - t0) * 1e6) / LOADS);
    });
  }
  _lastSink = sink;
  const median = (ns: number[], digits: number) => {
    const sorted = ns.sort((a, b) => a - b);
    return Math.round(sorted[Math.floor(sorted.length / 2)] * 10 ** digits) / 10 ** digits;
  };
  const nsPerLoad = samples.map((ns) => median(ns, 1));
  return {
    computeNsPerOp: median(computeNs, 3),
    sizesMb: [...sizes],
    nsPerLoad,
    cacheMb: cacheMbOf(sizes, nsPerLoad),
    runtimeNs: {
      newArray: median(runtime.newArray, 0),
      view: median(runtime.view, 0),
      clock: median(runtime.clock, 0),
    },
  };
}

if (import.meta.main) {
  checkArgs("host-probe", Deno.args, { values: ["rounds"] });
  const raw = flagValue(Deno.args, "rounds");
  try {
    const rounds = raw === undefined ? 3 : intIn("rounds", raw, 1, 100);
    console.log(JSON.stringify(probeHost({ rounds })));
  } catch (err) {
    console.error(`host-probe: ${(err as Error).message}`);
    Deno.exit(2);
  }
}
