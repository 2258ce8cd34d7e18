/**
 * What a player saw of the enemies: the one definition shared by the client that
 * draws it and the server that judges by it. A client draws enemies on the same tick
 * as its own ship and the bullets (the predicted present), running them forward from
 * the newest snapshot with the world's own movement function: a chaser chases the
 * ship along the path the client predicted, a drifter keeps the heading its last two
 * samples show, a distance-keeper circles the way it was circling. The server, told
 * how old that snapshot was, rebuilds the same picture from its own history and
 * judges contact and shots by it where that favours the player.
 * Must not import anything outside sim/.
 */
import { type EnemyMotion, stepEnemyMotion } from "./enemy_motion.ts";
import { clamp } from "./geometry.ts";
import { POS_UNITS_PER_PX } from "./grid.ts";
import type { ArenaDef, EnemyDef, Mutable } from "./types.ts";

/** An enemy as a snapshot carries it (a position on the wire grid). */
export interface EnemySample {
  readonly id: number;
  readonly def: EnemyDef;
  readonly x: number;
  readonly y: number;
}

/** A ship as a snapshot carries it. */
export interface ShipSample {
  readonly id: number;
  readonly x: number;
  readonly y: number;
  readonly active: boolean;
}

/** Where the picture starts: the newest snapshot a player had, and the one before it. */
export interface ViewBase {
  readonly tick: number;
  readonly enemies: readonly EnemySample[];
  /** The samples the heading is read from (an earlier snapshot); may be empty. */
  readonly before: readonly EnemySample[];
  /**
   * Every other active ship at `tick`, with its velocity in px per tick as the samples
   * show it: enemies may be after them instead, so they are run forward too.
   */
  readonly others: readonly OtherShip[];
}

/** Another ship as the picture carries it: where, and which way it was going. */
export interface OtherShip {
  readonly x: number;
  readonly y: number;
  readonly vx: number;
  readonly vy: number;
}

/** An enemy as the player saw it. */
export interface SeenEnemy {
  readonly id: number;
  readonly x: number;
  readonly y: number;
}

/** A position as a snapshot carries it: on the 1/8 px grid. */
export function onGrid(px: number): number {
  return Math.round(px * POS_UNITS_PER_PX) / POS_UNITS_PER_PX;
}

/**
 * The enemies of `base` as drawn `ticks` later, with the viewer's own ship at
 * `selfAt(t)` on each tick t after the base (undefined: not in the fight).
 */
export function viewEnemies(
  base: ViewBase,
  opts: {
    ticks: number;
    selfAt: (tick: number) => { readonly x: number; readonly y: number } | undefined;
    arena: ArenaDef;
  },
): SeenEnemy[] {
  const out: SeenEnemy[] = [];
  const self0 = opts.selfAt(base.tick);
  const { arena } = opts;
  // Other ships keep going the way they went, inside the arena.
  const others = (k: number) =>
    base.others.map((o) => ({
      x: clamp(o.x + o.vx * k, 0, arena.widthPx),
      y: clamp(o.y + o.vy * k, 0, arena.heightPx),
    }));
  const othersAt = Array.from({ length: opts.ticks + 1 }, (_, k) => others(k));
  for (const e of base.enemies) {
    const prev = base.before.find((b) => b.id === e.id);
    const m = motionOf(e, { prev, target: nearest(e, { self: self0, others: othersAt[0] }) });
    for (let k = 1; k <= opts.ticks; k++) {
      const target = nearest(m, { self: opts.selfAt(base.tick + k), others: othersAt[k] });
      stepEnemyMotion(m, { def: e.def, target, arena });
    }
    out.push({ id: e.id, x: m.x, y: m.y });
  }
  return out;
}

/**
 * The motion state two samples show: a drifter's heading is the way it went, a
 * distance-keeper circles the way it was circling (clockwise when it was not).
 */
function motionOf(
  e: EnemySample,
  opts: { prev: EnemySample | undefined; target: { x: number; y: number } | undefined },
): EnemyMotion {
  const dx = opts.prev ? e.x - opts.prev.x : 0;
  const dy = opts.prev ? e.y - opts.prev.y : 0;
  const len = Math.hypot(dx, dy);
  let strafe = 1;
  if (opts.target && len > 0) {
    const tx = opts.target.x - e.x;
    const ty = opts.target.y - e.y;
    // Circling moves along (−ty, tx) · strafe: the cross product's sign is the strafe.
    if (tx * dy - ty * dx < 0) strafe = -1;
  }
  return {
    x: e.x,
    y: e.y,
    dirX: len > 0 ? dx / len : 0,
    dirY: len > 0 ? dy / len : 0,
    strafe,
  };
}

/** The nearest ship to `at`, as the world's nearestPlayer picks it. */
function nearest(
  at: { x: number; y: number },
  opts: {
    self: { readonly x: number; readonly y: number } | undefined;
    others: readonly { readonly x: number; readonly y: number }[];
  },
): { x: number; y: number } | undefined {
  let best: { x: number; y: number } | undefined;
  let bestD2 = Infinity;
  const consider = (p: { readonly x: number; readonly y: number }) => {
    const d2 = (p.x - at.x) ** 2 + (p.y - at.y) ** 2;
    if (d2 < bestD2) [bestD2, best] = [d2, p];
  };
  if (opts.self) consider(opts.self);
  for (const o of opts.others) consider(o);
  return best;
}

/**
 * One tick of the world as snapshots would carry it, for rebuilding what a player saw.
 * Its arrays and samples are reused when the tick falls out of the history: read it
 * within the tick it was asked for.
 */
interface Moment {
  tick: number;
  readonly enemies: Mutable<EnemySample>[];
  /** Exact positions: a player's own path is what they predicted, not a snapshot. */
  readonly ships: Mutable<ShipSample>[];
}

/**
 * The other active ships of `ships` as a picture carries them: on the snapshot grid,
 * each with the velocity since its sample in `before` (an earlier snapshot, `gapTicks`
 * before; none: standing).
 */
export function otherShips(
  ships: readonly ShipSample[],
  opts: { before: readonly ShipSample[]; selfId: number; gapTicks?: number },
): OtherShip[] {
  const out: OtherShip[] = [];
  for (const s of ships) {
    if (s.id === opts.selfId || !s.active) continue;
    const x = onGrid(s.x);
    const y = onGrid(s.y);
    const b = opts.before.find((p) => p.id === s.id);
    const gap = opts.gapTicks ?? 0;
    const vx = b && gap > 0 ? (x - onGrid(b.x)) / gap : 0;
    const vy = b && gap > 0 ? (y - onGrid(b.y)) / gap : 0;
    out.push({ x, y, vx, vy });
  }
  return out;
}

/**
 * The server's short memory of the fight (enemies on the wire grid, ships exact), and
 * the picture each player saw, rebuilt from it: the base a frame names, run forward
 * with that player's own path. Never reaches further back than `maxRewindTicks`.
 */
export class ViewHistory {
  /** A ring of `#keep` moments; `#newest` is where the last one recorded sits. */
  readonly #moments: Moment[] = [];
  #newest = -1;
  #held = 0;
  readonly #keep: number;
  readonly #gapTicks: number;
  readonly #maxRewindTicks: number;

  /** `gapTicks`: between the two samples a client reads headings from (its snapshot interval). */
  constructor(opts: { maxRewindTicks: number; gapTicks: number }) {
    this.#maxRewindTicks = opts.maxRewindTicks;
    this.#gapTicks = opts.gapTicks;
    this.#keep = opts.maxRewindTicks + opts.gapTicks + 1;
  }

  /** The furthest back a player's view is honoured, in ticks. */
  get maxRewindTicks(): number {
    return this.#maxRewindTicks;
  }

  /**
   * Remembers the end of `tick` (one after the last recorded): the enemies on the
   * snapshot grid, the ships exact. Copied into the slot of the tick that falls out, so
   * a warm history allocates nothing: it lives ~20 ticks, long enough for every young
   * object to outlive a scavenge, and allocating it afresh each tick was a good part of
   * what the garbage collector copied and promoted.
   */
  record(
    tick: number,
    enemies: Iterable<
      { readonly id: number; readonly def: EnemyDef; readonly x: number; readonly y: number }
    >,
    ships: Iterable<
      { readonly id: number; readonly x: number; readonly y: number; readonly status: string }
    >,
  ): void {
    this.#newest = (this.#newest + 1) % this.#keep;
    this.#held = Math.min(this.#held + 1, this.#keep);
    const m = this.#moments[this.#newest] ??= { tick, enemies: [], ships: [] };
    m.tick = tick;
    let n = 0;
    for (const e of enemies) {
      const s = m.enemies[n] ??= { id: e.id, def: e.def, x: 0, y: 0 };
      s.id = e.id;
      s.def = e.def;
      s.x = onGrid(e.x);
      s.y = onGrid(e.y);
      n++;
    }
    // Only when it changed: a length set is a call into the runtime, even to the same value.
    if (m.enemies.length !== n) m.enemies.length = n;
    n = 0;
    for (const p of ships) {
      const s = m.ships[n] ??= { id: p.id, x: 0, y: 0, active: false };
      s.id = p.id;
      s.x = p.x;
      s.y = p.y;
      s.active = p.status === "active";
      n++;
    }
    if (m.ships.length !== n) m.ships.length = n;
  }

  #at(tick: number): Moment | undefined {
    if (this.#held === 0) return undefined;
    const back = this.#moments[this.#newest].tick - tick;
    if (back < 0 || back >= this.#held) return undefined;
    const m = this.#moments[(this.#newest - back + this.#keep) % this.#keep];
    return m.tick === tick ? m : undefined;
  }

  /**
   * What player `id` saw on `tick` (the newest recorded) from a snapshot `lagTicks`
   * older, capped at the rewind limit; undefined when they saw the present.
   */
  seenBy(
    id: number,
    opts: { tick: number; lagTicks: number; arena: ArenaDef },
  ): Map<number, SeenEnemy> | undefined {
    const lag = Math.min(Math.max(0, opts.lagTicks), this.#maxRewindTicks);
    if (lag === 0) return undefined;
    const base = this.#at(opts.tick - lag);
    if (!base) return undefined;
    const before = this.#at(base.tick - this.#gapTicks);
    const others = otherShips(base.ships, {
      before: before?.ships ?? [],
      selfId: id,
      gapTicks: before ? base.tick - before.tick : 0,
    });
    const seen = viewEnemies(
      { tick: base.tick, enemies: base.enemies, before: before?.enemies ?? [], others },
      {
        ticks: lag,
        arena: opts.arena,
        selfAt: (t) => this.#at(t)?.ships.find((s) => s.id === id && s.active),
      },
    );
    return new Map(seen.map((e) => [e.id, e]));
  }
}
