/**
 * Emitters: Ring, AimedSpread, WallGap, ArcSweep. Each turns its def, its running
 * state, an origin and a target into volleys. Enemies and bosses both use them.
 * Must not import anything outside sim/.
 */
import type { Volley } from "./bullets.ts";
import { quantizeAngle, quantizePos } from "./grid.ts";
import type { Rng } from "./rng.ts";
import { TICK_S } from "./time.ts";
import type { ArcSweepDef, ArenaDef, EmitterDef, TelegraphDef, WallGapDef } from "./types.ts";

/** The running state of one emitter. */
export interface EmitterState {
  def: EmitterDef;
  /** Ticks until the next shot. */
  cooldownTicks: number;
  shots: number;
  /** ArcSweep: current offset from the centre angle, in radians. */
  sweepRad: number;
  sweepDir: number;
  /** True once the next shot's warning has been given. */
  warned: boolean;
  /** AimedSpread: the aim locked when the warning started, used by the next shot. */
  lockedAimRad: number | undefined;
}

/** A warning an emitter gives before a shot (see TelegraphDef). */
export interface Telegraph {
  readonly style: TelegraphDef["style"];
  /** Aim of the coming shot (line), or the heading a wall will march along (edge). */
  readonly aimRad: number;
  /** Ticks from now until the shot. */
  readonly leadTicks: number;
}

/** Arms an emitter: the first shot comes after its start delay. */
export function armEmitter(def: EmitterDef): EmitterState {
  return {
    def,
    cooldownTicks: def.startDelayTicks ?? 0,
    shots: 0,
    sweepRad: def.type === "arcSweep" && def.arcRad < 2 * Math.PI ? -def.arcRad / 2 : 0,
    sweepDir: 1,
    warned: false,
    lockedAimRad: undefined,
  };
}

/** Where and at whom an emitter fires this tick. */
export interface FireContext {
  readonly tick: number;
  readonly originX: number;
  readonly originY: number;
  /** Nearest target, or undefined when nobody is there to aim at. */
  readonly target: { x: number; y: number } | undefined;
  readonly arena: ArenaDef;
  readonly rng: Rng;
  /** Hands out `count` consecutive bullet uids and returns the first. */
  readonly takeUids: (count: number) => number;
}

/**
 * Called before `tickEmitter` on the same tick: returns the warning of the next shot
 * once it is `leadTicks` away (or at once, when arming left less time than that).
 */
export function telegraphEmitter(state: EmitterState, ctx: FireContext): Telegraph | undefined {
  const def = state.def;
  const t = def.telegraph;
  if (!t || state.warned || state.cooldownTicks > t.leadTicks) return undefined;
  state.warned = true;
  let aimRad = 0;
  if (def.type === "aimedSpread") {
    aimRad = aimAt(ctx);
    state.lockedAimRad = aimRad;
  } else if (def.type === "wallGap") {
    aimRad = wallIsColumns(def, state.shots) ? 0 : Math.PI / 2;
  }
  return { style: t.style, aimRad, leadTicks: state.cooldownTicks };
}

function aimAt(ctx: FireContext): number {
  return ctx.target
    ? Math.atan2(ctx.target.y - ctx.originY, ctx.target.x - ctx.originX)
    : Math.PI / 2;
}

function wallIsColumns(def: WallGapDef, shot: number): boolean {
  return def.orientation === "columns" || (def.orientation === "alternate" && shot % 2 === 1);
}

/** Advances one emitter by a tick; returns the volley it fired, if any. */
export function tickEmitter(state: EmitterState, ctx: FireContext): Volley | undefined {
  const def = state.def;
  if (def.type === "arcSweep") advanceSweep(state, def);
  if (state.cooldownTicks > 0) {
    state.cooldownTicks--;
    return undefined;
  }
  state.cooldownTicks = def.periodTicks - 1;
  const shot = state.shots++;
  const locked = state.lockedAimRad;
  state.warned = false;
  state.lockedAimRad = undefined;
  switch (def.type) {
    case "ring": {
      const step = (2 * Math.PI) / def.count;
      const base = (def.rotateRad ?? 0) * shot;
      return fan(def.count, (i) => base + step * i, def.speedPxPerS, ctx, def.bullet);
    }
    case "aimedSpread": {
      const aim = locked ?? aimAt(ctx);
      const step = def.count > 1 ? def.spreadRad / (def.count - 1) : 0;
      const first = aim - def.spreadRad / 2 * (def.count > 1 ? 1 : 0);
      return fan(def.count, (i) => first + step * i, def.speedPxPerS, ctx, def.bullet);
    }
    case "arcSweep": {
      const arms = def.arms ?? 1;
      const base = def.centerRad + state.sweepRad * def.direction;
      const step = (2 * Math.PI) / arms;
      return fan(arms, (i) => base + step * i, def.speedPxPerS, ctx, def.bullet);
    }
    case "wallGap":
      return wall(def, shot, ctx);
  }
}

function advanceSweep(state: EmitterState, def: ArcSweepDef): void {
  const delta = def.sweepRadPerS * TICK_S;
  if (def.arcRad >= 2 * Math.PI) {
    state.sweepRad = (state.sweepRad + delta) % (2 * Math.PI);
    return;
  }
  // Back and forth across the arc, reflecting at either end.
  const half = def.arcRad / 2;
  let next = state.sweepRad + delta * state.sweepDir;
  // Reflect as often as it takes: a fast sweep over a narrow arc can cross it twice a tick.
  while (next > half || next < -half) {
    if (next > half) {
      next = 2 * half - next;
      state.sweepDir = -1;
    } else {
      next = -2 * half - next;
      state.sweepDir = 1;
    }
  }
  state.sweepRad = next;
}

function fan(
  count: number,
  angleOf: (i: number) => number,
  speedPxPerS: number,
  ctx: FireContext,
  spec: EmitterDef["bullet"],
): Volley {
  const x = quantizePos(ctx.originX);
  const y = quantizePos(ctx.originY);
  const xs: number[] = [];
  const ys: number[] = [];
  const angles: number[] = [];
  for (let i = 0; i < count; i++) {
    xs.push(x);
    ys.push(y);
    angles.push(quantizeAngle(angleOf(i)));
  }
  return {
    birthTick: ctx.tick,
    uid0: ctx.takeUids(count),
    team: 0,
    owner: -1,
    spec,
    speedPxPerS,
    xs,
    ys,
    angles,
  };
}

/** A row (or column) of bullets across the arena, minus one gap of `gapPx`. */
function wall(def: WallGapDef, shot: number, ctx: FireContext): Volley {
  const columns = wallIsColumns(def, shot);
  const span = columns ? ctx.arena.heightPx : ctx.arena.widthPx;
  const r = def.bullet.radiusPx;
  // The gap is the clear space between the edges of the two bullets around it.
  const gapStart = ctx.rng.range(0, span - def.gapPx);
  const gapEnd = gapStart + def.gapPx;
  const xs: number[] = [];
  const ys: number[] = [];
  const angles: number[] = [];
  const heading = quantizeAngle(columns ? 0 : Math.PI / 2);
  for (let along = def.spacingPx / 2; along < span; along += def.spacingPx) {
    if (along + r > gapStart && along - r < gapEnd) continue;
    xs.push(quantizePos(columns ? -r : along));
    ys.push(quantizePos(columns ? along : -r));
    angles.push(heading);
  }
  return {
    birthTick: ctx.tick,
    uid0: ctx.takeUids(angles.length),
    team: 0,
    owner: -1,
    spec: def.bullet,
    speedPxPerS: def.speedPxPerS,
    xs,
    ys,
    angles,
  };
}
