/**
 * Enemies on the present timeline: drawn on the same tick as the local ship and the
 * bullets, run forward from the newest snapshot by the world's own movement rules
 * (sim/player_view.ts), with the local ship along the path the client predicted.
 *
 * The snapshot each tick is drawn from is fixed when that tick's input is sampled, and
 * the frame tells the server how old it was (`viewLag`): the server rebuilds the very
 * same picture to judge contact and shots by it. Imports content/, sim/, net/wire/.
 */
import { CONTENT } from "../../content/mod.ts";
import {
  type ArenaDef,
  type EnemySample,
  otherShips,
  type SeenEnemy,
  type ShipSample,
  type ViewBase,
  viewEnemies,
} from "../../sim/mod.ts";
import { type EnemySnap, PlayerFlag, type SnapshotMsg } from "../wire/protocol.ts";

/** An enemy to draw: its snapshot record, at the position the player sees it. */
export type EnemyOnScreen = EnemySnap & SeenEnemy;

/** Ticks kept for the local ship's path and the bases (longer than any snapshot buffer). */
const KEEP_TICKS = 240;

/** The picture of the enemies, tick by tick. */
export class EnemyView {
  /** The snapshot tick each tick's picture is drawn from. */
  readonly #bases = new Map<number, number>();
  /** The local ship's predicted position at the end of each tick. */
  readonly #path = new Map<number, { x: number; y: number }>();
  readonly #killed = new Set<number>();
  #cache: { tick: number; version: number; enemies: EnemyOnScreen[] } | undefined;
  #version = 0;

  /** Forgets everything (a new instance). */
  reset(): void {
    this.#bases.clear();
    this.#path.clear();
    this.#killed.clear();
    this.#cache = undefined;
    this.#version++;
  }

  /** Tick `tick` is drawn from the snapshot of `baseTick` (fixed when its input is sampled). */
  drawFrom(tick: number, baseTick: number): void {
    this.#bases.set(tick, baseTick);
    this.#bases.delete(tick - KEEP_TICKS);
  }

  /** The local ship ends `tick` at `pos` (as predicted now; a replay may say it again). */
  shipAt(tick: number, pos: { x: number; y: number }): void {
    this.#path.set(tick, { x: pos.x, y: pos.y });
    this.#path.delete(tick - KEEP_TICKS);
    this.#version++;
  }

  /** Where the local ship was predicted to end `tick`, if that is still remembered. */
  shipWas(tick: number): { readonly x: number; readonly y: number } | undefined {
    return this.#path.get(tick);
  }

  /** The server said enemy `id` died: it is no longer drawn. */
  killed(id: number): void {
    this.#killed.add(id);
    this.#version++;
  }

  /** Snapshots changed: pictures drawn from them may too. */
  touched(): void {
    this.#version++;
  }

  /**
   * The enemies as drawn on `tick`, from snapshots oldest first; the local ship is
   * `selfId` (not chased along a path while it is not predicted).
   */
  at(
    tick: number,
    opts: { snaps: readonly SnapshotMsg[]; selfId: number; arena: ArenaDef },
  ): EnemyOnScreen[] {
    const cached = this.#cache;
    if (cached && cached.tick === tick && cached.version === this.#version) return cached.enemies;
    const enemies = this.#compute(tick, opts);
    this.#cache = { tick, version: this.#version, enemies };
    return enemies;
  }

  #compute(
    tick: number,
    opts: { snaps: readonly SnapshotMsg[]; selfId: number; arena: ArenaDef },
  ): EnemyOnScreen[] {
    const { snaps } = opts;
    if (snaps.length === 0) return [];
    const wanted = this.#bases.get(tick);
    let i = snaps.length - 1;
    if (wanted !== undefined) { while (i > 0 && snaps[i].tick > wanted) i--; }
    const base = snaps[i];
    const before = i > 0 ? snaps[i - 1] : undefined;
    const records = new Map(base.enemies.map((e) => [e.id, e]));
    const view: ViewBase = {
      tick: base.tick,
      enemies: samples(base.enemies, this.#killed),
      before: before ? samples(before.enemies, this.#killed) : [],
      others: otherShips(ships(base), {
        before: before ? ships(before) : [],
        selfId: opts.selfId,
        gapTicks: before ? base.tick - before.tick : 0,
      }),
    };
    const seen = viewEnemies(view, {
      ticks: Math.max(0, tick - base.tick),
      arena: opts.arena,
      selfAt: (t) => this.#path.get(t),
    });
    return seen.map((s) => ({ ...records.get(s.id)!, x: s.x, y: s.y }));
  }
}

function ships(snap: SnapshotMsg): ShipSample[] {
  return snap.players.map((p) => ({
    id: p.id,
    x: p.x,
    y: p.y,
    active: (p.flags & PlayerFlag.Active) !== 0,
  }));
}

function samples(enemies: readonly EnemySnap[], killed: ReadonlySet<number>): EnemySample[] {
  const out: EnemySample[] = [];
  for (const e of enemies) {
    const def = CONTENT.enemies[e.kind];
    if (def && !killed.has(e.id)) out.push({ id: e.id, def, x: e.x, y: e.y });
  }
  return out;
}
