/**
 * What the renderer draws in one frame, gathered from the client runtime (or made
 * up by the bench). Keeping the renderer on this small shape lets the bench drive
 * the very same draw code without a server.
 */
import type { ClientRuntime } from "../net/client/mod.ts";
import type { BossSnap } from "../net/wire/mod.ts";
import type { WorldContent } from "../content/mod.ts";
import { angleFromUnits, type BulletPool } from "../sim/mod.ts";
import type { Spark, TelegraphView } from "./effects.ts";

/** A ship to draw. */
export interface ShipView {
  readonly id: number;
  readonly x: number;
  readonly y: number;
  readonly aimRad: number;
  readonly flags: number;
  readonly name: string;
  /** Escape channel progress, 0–1. */
  readonly escape: number;
}

/** A trash enemy to draw. */
export interface EnemyView {
  readonly id: number;
  readonly kind: number;
  readonly x: number;
  readonly y: number;
  readonly hp: number;
}

/** A struck target, for a short flash. */
export interface HitFlash {
  readonly target: number;
  readonly targetId: number;
  readonly atMs: number;
}

/** Everything one frame shows. */
export interface Scene {
  readonly nowMs: number;
  readonly world: WorldContent;
  /** The local ship (predicted), if it is in the world. */
  readonly self: ShipView | undefined;
  readonly others: readonly ShipView[];
  readonly enemies: readonly EnemyView[];
  readonly boss: BossSnap | null;
  readonly bullets: BulletPool;
  /** Other players' shots, on the tick their ships are drawn at (under the bullets). */
  readonly allyShots?: BulletPool;
  readonly flashes: readonly HitFlash[];
  /** The predicted tick the bullets are drawn at (telegraphs count down to it). */
  readonly tick?: number;
  readonly telegraphs?: readonly TelegraphView[];
  readonly sparks?: readonly Spark[];
  /** The local player holds Focus: show the judged hitbox and the graze band. */
  readonly focus?: boolean;
  /** Screen shake now, CSS px. */
  readonly shake?: { readonly x: number; readonly y: number };
}

/** Snapshot aim is a byte (1/256 turn). */
function aimByteToRad(aim: number): number {
  return (aim / 256) * 2 * Math.PI;
}

/** Builds this frame's scene from the runtime; `aimUnits` is the local aim just sampled. */
export function sceneFromRuntime(
  rt: ClientRuntime,
  opts: {
    nowMs: number;
    aimUnits: number;
    flashes: readonly HitFlash[];
    focus: boolean;
    telegraphs: readonly TelegraphView[];
    sparks: readonly Spark[];
    shake: { x: number; y: number };
  },
): Scene | undefined {
  const world = rt.world;
  if (!world) return undefined;
  const view = rt.selfView();
  const snap = rt.selfSnapshot();
  const self: ShipView | undefined = view && {
    id: rt.playerId,
    x: view.x,
    y: view.y,
    // Our own aim from the input just sampled: it answers the mouse before the server does.
    aimRad: angleFromUnits(opts.aimUnits),
    flags: snap?.flags ?? 1,
    name: rt.roster.get(rt.playerId) ?? "",
    escape: (snap?.escape ?? 0) / 255,
  };
  const others = rt.remotePlayers(opts.nowMs).map((p) => ({
    id: p.id,
    x: p.x,
    y: p.y,
    aimRad: aimByteToRad(p.aim),
    flags: p.flags,
    name: rt.roster.get(p.id) ?? `#${p.id}`,
    escape: p.escape / 255,
  }));
  return {
    nowMs: opts.nowMs,
    world,
    self,
    others,
    enemies: rt.enemies(opts.nowMs),
    boss: rt.boss(),
    bullets: rt.replica,
    allyShots: rt.allyShots,
    flashes: opts.flashes,
    tick: rt.replicaTick,
    telegraphs: opts.telegraphs,
    sparks: opts.sparks,
    focus: opts.focus,
    shake: opts.shake,
  };
}
