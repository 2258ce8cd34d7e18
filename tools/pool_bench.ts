/**
 * The bullet pool as a loaded server holds it: many pools, each cold in the caches when
 * its turn comes. `deno task pool-bench` prints one JSON line:
 *
 * - `constructUs`: one `new BulletPool()` (a dungeon's, made as a run starts), µs;
 * - `stepNsPerBullet`: `stepBullets` over `--pools` pools of about `--live` bullets each
 *   (200 × ~80: a loaded server's dungeons at the boss), with `--clear-mb` of other memory
 *   walked between ticks so each tick starts as a server's does, ns a bullet stepped.
 *
 * Medians over rounds and ticks; the CPU is shared, so compare runs in interleaved pairs
 * (the old layout: `git checkout REV -- sim/bullets.ts`, run, restore).
 *
 *   deno task pool-bench [--pools=200] [--live=80] [--ticks=2000] [--clear-mb=8]
 */
import { BulletPool, spawnVolley, stepBullets, type Volley } from "../sim/bullets.ts";
import { Rng } from "../sim/mod.ts";
import { CURL, FOLD, NEEDLE, ORB, PLAYER_SHOT, SPIRAL } from "../content/mod.ts";
import { checkArgs, flagValue, intIn } from "./args.ts";

/** What one run measured. */
export interface PoolFigures {
  pools: number;
  liveMean: number;
  ticks: number;
  clearMb: number;
  constructUs: number;
  stepNsPerBullet: number;
}

const SPECS = [PLAYER_SHOT, ORB, NEEDLE, CURL, SPIRAL];

/** A ring or spread of 6–15 bullets from a random point of the Fold's arena. */
function volley(rng: Rng, opts: { tick: number; uid0: number }): Volley {
  const n = 6 + Math.floor(rng.next() * 10);
  const { widthPx, heightPx } = FOLD.arena;
  const x = Math.round((100 + rng.next() * (widthPx - 200)) * 8);
  const y = Math.round((100 + rng.next() * (heightPx - 200)) * 8);
  const a0 = Math.floor(rng.next() * 65536);
  return {
    birthTick: opts.tick,
    uid0: opts.uid0,
    team: rng.next() < 0.3 ? 1 : 2,
    owner: -1,
    spec: SPECS[Math.floor(rng.next() * SPECS.length)],
    speedPxPerS: 60 + rng.next() * 180,
    xs: new Array(n).fill(x),
    ys: new Array(n).fill(y),
    angles: Array.from({ length: n }, (_, b) => (a0 + Math.floor((b * 65536) / n)) % 65536),
  };
}

/** Median of `xs` (sorted in place). */
function median(xs: number[]): number {
  xs.sort((a, b) => a - b);
  return xs.length === 0 ? 0 : xs[Math.floor(xs.length / 2)];
}

/** Times pool construction, then `ticks` ticks of stepping `pools` pools kept near `live`. */
export function measurePools(
  opts: { pools: number; live: number; ticks: number; clearMb: number },
): PoolFigures {
  // Construction: rounds of 500, the pools kept a while as a server keeps its dungeons'.
  const kept: BulletPool[] = [];
  const rounds: number[] = [];
  for (let r = 0; r < 9; r++) {
    const t0 = performance.now();
    for (let i = 0; i < 500; i++) kept[i % 200] = new BulletPool();
    rounds.push(((performance.now() - t0) * 1000) / 500);
  }
  const rng = new Rng(7);
  const pools = Array.from({ length: opts.pools }, () => new BulletPool());
  const clear = new Float64Array((opts.clearMb * 1024 * 1024) / 8);
  const perBullet: number[] = [];
  let uid = 1;
  let liveSum = 0;
  const warmup = Math.min(300, opts.ticks);
  for (let t = -warmup; t < opts.ticks; t++) {
    for (let i = 0; i < clear.length; i += 8) clear[i] += 1;
    let live = 0;
    for (const pool of pools) live += pool.count;
    const t0 = performance.now();
    for (const pool of pools) stepBullets(pool, FOLD.arena);
    const ms = performance.now() - t0;
    if (t >= 0 && live > 0) {
      perBullet.push((ms * 1e6) / live);
      liveSum += live;
    }
    for (const pool of pools) {
      while (pool.count < opts.live && rng.next() < 0.5) {
        const v = volley(rng, { tick: t, uid0: uid });
        uid += v.angles.length;
        spawnVolley(pool, v);
      }
    }
  }
  return {
    pools: opts.pools,
    liveMean: Math.round(liveSum / Math.max(1, perBullet.length) / opts.pools),
    ticks: opts.ticks,
    clearMb: opts.clearMb,
    constructUs: Math.round(median(rounds) * 100) / 100,
    stepNsPerBullet: Math.round(median(perBullet) * 100) / 100,
  };
}

if (import.meta.main) {
  checkArgs("pool-bench", Deno.args, { values: ["pools", "live", "ticks", "clear-mb"] });
  const get = (name: string, fallback: number, max: number, min = 1) => {
    const raw = flagValue(Deno.args, name);
    return raw === undefined ? fallback : intIn(name, raw, min, max);
  };
  try {
    console.log(JSON.stringify(measurePools({
      pools: get("pools", 200, 100_000),
      live: get("live", 80, 100_000),
      ticks: get("ticks", 2000, 1_000_000),
      clearMb: get("clear-mb", 8, 4096, 0),
    })));
  } catch (err) {
    console.error(`pool-bench: ${(err as Error).message}`);
    Deno.exit(2);
  }
}
