/**
 * Other players' ships, drawn a little in the past (they cannot hurt you, so the
 * past is safe) and smoothly whatever the link does:
 *
 * - the interpolation delay adapts to measured jitter: the p90 of how late snapshots
 *   arrive against the least-delayed one of the last seconds, plus one snapshot
 *   interval, moved slowly so playback speed never visibly changes;
 * - across a stall (no newer snapshot) a ship is extrapolated from its last velocity
 *   for at most REMOTE_VIEW.maxExtrapolateTicks, then held;
 * - what is drawn follows that target with the target's own motion plus a capped share
 *   of the remaining error, so fresh snapshots after a stall blend in without a jump.
 *   A gap too large to be motion (a transfer, a respawn) snaps.
 *
 * Pure: snapshots and times in, positions out. Imports content/, sim/ and net/wire/.
 */
import { REMOTE_VIEW, TICKS_PER_SNAPSHOT } from "../../content/net_tuning.ts";
import { TICK_MS } from "../../sim/mod.ts";
import type { PlayerSnap, SnapshotMsg } from "../wire/protocol.ts";

interface Shown {
  x: number;
  y: number;
  /** The tick it was drawn at last, to measure the target's own motion since. */
  atTick: number;
  seenAtMs: number;
}

/** Adaptive interpolation, short extrapolation and blending for remote ships. */
export class RemoteView {
  /** Arrival samples: (snapshot tick − arrival ms / tick); the largest is the least delayed. */
  #arrivals: { atMs: number; value: number }[] = [];
  /** The interpolation delay applied now, in ticks behind the least-delayed arrival. */
  #delayTicks: number = REMOTE_VIEW.minDelayTicks;
  #delayAtMs = -Infinity;
  readonly #shown = new Map<number, Shown>();

  /** Forgets every ship and sample (a new instance). */
  reset(): void {
    this.#arrivals = [];
    this.#shown.clear();
    this.#delayAtMs = -Infinity;
  }

  /** Where ship `id` was drawn last (`ships`), if that was within `shownFreshMs` of `nowMs`. */
  lastShown(id: number, nowMs: number): { readonly x: number; readonly y: number } | undefined {
    const s = this.#shown.get(id);
    return s && s.seenAtMs >= nowMs - REMOTE_VIEW.shownFreshMs ? s : undefined;
  }

  /** A snapshot of `tick` arrived at `nowMs`. */
  arrived(tick: number, nowMs: number): void {
    this.#arrivals.push({ atMs: nowMs, value: tick - nowMs / TICK_MS });
    while (this.#arrivals[0].atMs < nowMs - REMOTE_VIEW.jitterWindowMs) this.#arrivals.shift();
  }

  /** The delay the measured jitter asks for, in ticks. */
  wantedDelayTicks(): number {
    const values = this.#arrivals.map((a) => a.value);
    if (values.length < 2) return REMOTE_VIEW.minDelayTicks;
    const best = Math.max(...values);
    const lateness = values.map((v) => best - v).sort((a, b) => a - b);
    const p = lateness[Math.floor(REMOTE_VIEW.jitterQuantile * (lateness.length - 1))];
    return Math.max(REMOTE_VIEW.minDelayTicks, p + TICKS_PER_SNAPSHOT + 1);
  }

  /** The delay applied now, in ticks (it moves toward the wanted one slowly). */
  get delayTicks(): number {
    return this.#delayTicks;
  }

  /** The tick remote ships are drawn at now. */
  renderTick(nowMs: number): number {
    if (this.#arrivals.length === 0) return -Infinity;
    const wanted = this.wantedDelayTicks();
    if (!Number.isFinite(this.#delayAtMs)) this.#delayTicks = wanted;
    const step = REMOTE_VIEW.delaySlewTicksPerSec * Math.max(0, nowMs - this.#delayAtMs) / 1000;
    if (Number.isFinite(step)) {
      this.#delayTicks += Math.max(-step, Math.min(step, wanted - this.#delayTicks));
    }
    this.#delayAtMs = nowMs;
    let best = -Infinity;
    for (const a of this.#arrivals) best = Math.max(best, a.value);
    return best + nowMs / TICK_MS - this.#delayTicks;
  }

  /**
   * Every remote ship to draw at `nowMs` (each snapshot's own ship excluded by `selfId`),
   * from snapshots oldest first.
   */
  ships(
    snaps: readonly SnapshotMsg[],
    opts: { nowMs: number; selfId: number },
  ): (PlayerSnap & { x: number; y: number })[] {
    const newest = snaps[snaps.length - 1];
    if (!newest) return [];
    const at = this.renderTick(opts.nowMs);
    const out: (PlayerSnap & { x: number; y: number })[] = [];
    for (const p of newest.players) {
      if (p.id === opts.selfId) continue;
      const target = sample(snaps, { id: p.id, tick: at });
      if (!target) continue;
      const shown = this.#follow(p.id, { target, atTick: at, snaps, nowMs: opts.nowMs });
      out.push({ ...p, x: shown.x, y: shown.y });
    }
    for (const [id, s] of this.#shown) {
      if (s.seenAtMs < opts.nowMs - REMOTE_VIEW.forgetAfterMs) this.#shown.delete(id);
    }
    return out;
  }

  /** Moves what is drawn of ship `id` with its target's motion, absorbing any jump gently. */
  #follow(
    id: number,
    opts: {
      target: { x: number; y: number };
      atTick: number;
      snaps: readonly SnapshotMsg[];
      nowMs: number;
    },
  ): { x: number; y: number } {
    const { target } = opts;
    const prev = this.#shown.get(id);
    const gap = prev ? Math.hypot(target.x - prev.x, target.y - prev.y) : Infinity;
    if (!prev || gap > REMOTE_VIEW.snapPx) {
      const fresh = { x: target.x, y: target.y, atTick: opts.atTick, seenAtMs: opts.nowMs };
      this.#shown.set(id, fresh);
      return fresh;
    }
    // This frame's motion of the target, judged on today's data; then part of the error.
    const before = sample(opts.snaps, { id, tick: prev.atTick }) ?? target;
    let x = prev.x + (target.x - before.x);
    let y = prev.y + (target.y - before.y);
    const ex = target.x - x;
    const ey = target.y - y;
    const err = Math.hypot(ex, ey);
    const dtMs = Math.max(0, opts.nowMs - prev.seenAtMs);
    if (err > 0) {
      const share = Math.min(
        err * (1 - Math.exp(-dtMs / REMOTE_VIEW.blendTimeMs)),
        (REMOTE_VIEW.maxBlendPxPerSec * dtMs) / 1000,
      );
      x += (ex / err) * share;
      y += (ey / err) * share;
    }
    prev.x = x;
    prev.y = y;
    prev.atTick = opts.atTick;
    prev.seenAtMs = opts.nowMs;
    return prev;
  }
}

/**
 * Ship `id` at `tick`: interpolated between the snapshots around it, or extrapolated
 * from the newest two for at most REMOTE_VIEW.maxExtrapolateTicks past the newest.
 */
export function sample(
  snaps: readonly SnapshotMsg[],
  opts: { id: number; tick: number },
): { x: number; y: number } | undefined {
  let b = -1;
  for (let i = snaps.length - 1; i >= 0; i--) {
    if (snaps[i].players.some((p) => p.id === opts.id)) {
      b = i;
      break;
    }
  }
  if (b < 0) return undefined;
  const pb = snaps[b].players.find((p) => p.id === opts.id)!;
  let a = b - 1;
  while (a >= 0 && !snaps[a].players.some((p) => p.id === opts.id)) a--;
  const pa = a >= 0 ? snaps[a].players.find((p) => p.id === opts.id) : undefined;
  const tb = snaps[b].tick;
  if (opts.tick >= tb) {
    if (!pa) return { x: pb.x, y: pb.y };
    const ta = snaps[a].tick;
    const ahead = Math.min(opts.tick - tb, REMOTE_VIEW.maxExtrapolateTicks);
    return {
      x: pb.x + ((pb.x - pa.x) / (tb - ta)) * ahead,
      y: pb.y + ((pb.y - pa.y) / (tb - ta)) * ahead,
    };
  }
  // Walk back to the pair around `tick`.
  let hi = b;
  let lo = -1;
  for (let i = b - 1; i >= 0; i--) {
    if (!snaps[i].players.some((p) => p.id === opts.id)) continue;
    if (snaps[i].tick <= opts.tick) {
      lo = i;
      break;
    }
    hi = i;
  }
  const ph = snaps[hi].players.find((p) => p.id === opts.id)!;
  if (lo < 0) return { x: ph.x, y: ph.y };
  const pl = snaps[lo].players.find((p) => p.id === opts.id)!;
  const t = (opts.tick - snaps[lo].tick) / (snaps[hi].tick - snaps[lo].tick);
  return { x: pl.x + (ph.x - pl.x) * t, y: pl.y + (ph.y - pl.y) * t };
}
