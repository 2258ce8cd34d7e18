/**
 * BulletPool: every live bullet as parallel typed arrays, live slots [0, count),
 * swap-remove on death. `spawnVolley` and `stepBullets` are the one definition of
 * how a bullet is born and flies; the server and every client replica call them,
 * so a bullet that expires or leaves the arena dies on both sides with no traffic.
 * Must not import anything outside sim/.
 */
import type { ArenaDef, BulletSpec } from "./types.ts";
import { TICK_S } from "./time.ts";

/** Positions travel as 1/8 px, angles as 1/65536 turn: the server spawns on that grid too. */
export const POS_UNITS_PER_PX = 8;
/** Angle units per full turn. */
export const ANGLE_UNITS = 65536;

/** Snaps a position to the wire grid, in wire units. */
export function quantizePos(px: number): number {
  return Math.round(px * POS_UNITS_PER_PX);
}

/** Snaps an angle in radians to wire units in [0, 65536). */
export function quantizeAngle(rad: number): number {
  const turns = rad / (2 * Math.PI);
  const units = Math.round((turns - Math.floor(turns)) * ANGLE_UNITS);
  return units === ANGLE_UNITS ? 0 : units;
}

/** Converts angle wire units back to radians. */
export function angleFromUnits(units: number): number {
  return (units / ANGLE_UNITS) * 2 * Math.PI;
}

/**
 * One emitter shot: the fields every bullet shares once, then per bullet a
 * position (1/8 px units) and a heading (angle units). Uids run uid0, uid0+1, ….
 */
export interface Volley {
  readonly birthTick: number;
  readonly uid0: number;
  readonly team: number;
  /** Player id for player shots, -1 for enemies. */
  readonly owner: number;
  readonly spec: BulletSpec;
  readonly speedPxPerS: number;
  readonly xs: readonly number[];
  readonly ys: readonly number[];
  readonly angles: readonly number[];
}

const FIELDS_F64 = ["x", "y", "dirX", "dirY", "speed", "accel", "turnCos", "turnSin"] as const;

/** Struct-of-arrays bullet storage; grows by doubling when full. */
export class BulletPool {
  count = 0;
  capacity: number;
  x: Float64Array;
  y: Float64Array;
  /** Unit heading. */
  dirX: Float64Array;
  dirY: Float64Array;
  /** Speed in px per tick. */
  speed: Float64Array;
  /** Speed change in px per tick per tick. */
  accel: Float64Array;
  /** Heading rotation per tick, as cos/sin (1, 0 when straight). */
  turnCos: Float64Array;
  turnSin: Float64Array;
  radius: Float32Array;
  ttl: Int32Array;
  uid: Uint32Array;
  kind: Uint8Array;
  team: Uint8Array;
  damage: Uint8Array;
  /** Owning player id for player bullets, -1 otherwise. */
  owner: Int32Array;

  constructor(capacity = 512) {
    this.capacity = capacity;
    this.x = new Float64Array(capacity);
    this.y = new Float64Array(capacity);
    this.dirX = new Float64Array(capacity);
    this.dirY = new Float64Array(capacity);
    this.speed = new Float64Array(capacity);
    this.accel = new Float64Array(capacity);
    this.turnCos = new Float64Array(capacity);
    this.turnSin = new Float64Array(capacity);
    this.radius = new Float32Array(capacity);
    this.ttl = new Int32Array(capacity);
    this.uid = new Uint32Array(capacity);
    this.kind = new Uint8Array(capacity);
    this.team = new Uint8Array(capacity);
    this.damage = new Uint8Array(capacity);
    this.owner = new Int32Array(capacity);
  }

  /** Doubles every array, keeping live slots. */
  grow(): void {
    const capacity = this.capacity * 2;
    for (const f of FIELDS_F64) {
      const next = new Float64Array(capacity);
      next.set(this[f]);
      this[f] = next;
    }
    const radius = new Float32Array(capacity);
    radius.set(this.radius);
    this.radius = radius;
    const ttl = new Int32Array(capacity);
    ttl.set(this.ttl);
    this.ttl = ttl;
    const uid = new Uint32Array(capacity);
    uid.set(this.uid);
    this.uid = uid;
    const kind = new Uint8Array(capacity);
    kind.set(this.kind);
    this.kind = kind;
    const team = new Uint8Array(capacity);
    team.set(this.team);
    this.team = team;
    const damage = new Uint8Array(capacity);
    damage.set(this.damage);
    this.damage = damage;
    const owner = new Int32Array(capacity);
    owner.set(this.owner);
    this.owner = owner;
    this.capacity = capacity;
  }

  /** Frees slot `i` by moving the last live bullet into it. */
  remove(i: number): void {
    const last = --this.count;
    if (i === last) return;
    this.x[i] = this.x[last];
    this.y[i] = this.y[last];
    this.dirX[i] = this.dirX[last];
    this.dirY[i] = this.dirY[last];
    this.speed[i] = this.speed[last];
    this.accel[i] = this.accel[last];
    this.turnCos[i] = this.turnCos[last];
    this.turnSin[i] = this.turnSin[last];
    this.radius[i] = this.radius[last];
    this.ttl[i] = this.ttl[last];
    this.uid[i] = this.uid[last];
    this.kind[i] = this.kind[last];
    this.team[i] = this.team[last];
    this.damage[i] = this.damage[last];
    this.owner[i] = this.owner[last];
  }

  /** Slot of the bullet with `uid`, or -1. Linear: only early deaths look bullets up. */
  slotOf(uid: number): number {
    for (let i = 0; i < this.count; i++) if (this.uid[i] === uid) return i;
    return -1;
  }

  /** Removes every bullet of `team`. */
  clearTeam(team: number): void {
    for (let i = this.count - 1; i >= 0; i--) if (this.team[i] === team) this.remove(i);
  }
}

/** Adds every bullet of `volley` to the pool, exactly as born on `volley.birthTick`. */
export function spawnVolley(pool: BulletPool, volley: Volley): void {
  const { spec } = volley;
  const speed = volley.speedPxPerS * TICK_S;
  const accel = spec.accelPxPerS2 * TICK_S * TICK_S;
  const turn = spec.turnRadPerS * TICK_S;
  const turnCos = Math.cos(turn);
  const turnSin = Math.sin(turn);
  for (let b = 0; b < volley.angles.length; b++) {
    if (pool.count === pool.capacity) pool.grow();
    const i = pool.count++;
    const heading = angleFromUnits(volley.angles[b]);
    pool.x[i] = volley.xs[b] / POS_UNITS_PER_PX;
    pool.y[i] = volley.ys[b] / POS_UNITS_PER_PX;
    pool.dirX[i] = Math.cos(heading);
    pool.dirY[i] = Math.sin(heading);
    pool.speed[i] = speed;
    pool.accel[i] = accel;
    pool.turnCos[i] = turnCos;
    pool.turnSin[i] = turnSin;
    pool.radius[i] = spec.radiusPx;
    pool.ttl[i] = spec.ttlTicks;
    pool.uid[i] = (volley.uid0 + b) >>> 0;
    pool.kind[i] = spec.kind;
    pool.team[i] = volley.team;
    pool.damage[i] = spec.damage;
    pool.owner[i] = volley.owner;
  }
}

/**
 * Advances live bullets in slots [from, count) by one tick and frees the ones that
 * expire, leave the arena or strike a wall. Same code on server and client.
 */
export function stepBullets(pool: BulletPool, arena: ArenaDef, from = 0): void {
  const { x, y, dirX, dirY, speed, accel, turnCos, turnSin, radius, ttl } = pool;
  const walls = arena.walls;
  const maxX = arena.widthPx;
  const maxY = arena.heightPx;
  // One box around every wall: most bullets are outside it and skip the per-wall tests.
  let wx0 = Infinity, wy0 = Infinity, wx1 = -Infinity, wy1 = -Infinity;
  for (const w of walls) {
    wx0 = Math.min(wx0, w.x);
    wy0 = Math.min(wy0, w.y);
    wx1 = Math.max(wx1, w.x + w.w);
    wy1 = Math.max(wy1, w.y + w.h);
  }
  for (let i = pool.count - 1; i >= from; i--) {
    const c = turnCos[i];
    if (c !== 1) {
      const s = turnSin[i];
      const dx = dirX[i];
      dirX[i] = dx * c - dirY[i] * s;
      dirY[i] = dx * s + dirY[i] * c;
    }
    let v = speed[i] + accel[i];
    if (v < 0) v = 0;
    speed[i] = v;
    const px = (x[i] += dirX[i] * v);
    const py = (y[i] += dirY[i] * v);
    const r = radius[i];
    if (--ttl[i] <= 0 || px < -r || py < -r || px > maxX + r || py > maxY + r) {
      pool.remove(i);
      continue;
    }
    if (px < wx0 || px > wx1 || py < wy0 || py > wy1) continue;
    for (let w = 0; w < walls.length; w++) {
      const wall = walls[w];
      if (px >= wall.x && px <= wall.x + wall.w && py >= wall.y && py <= wall.y + wall.h) {
        pool.remove(i);
        break;
      }
    }
  }
}

/**
 * Brings a freshly spawned volley (slots [from, count)) up to date by running the
 * shared integration once per tick of flight: how a client places a bullet that was
 * born on the server while the event was on the wire. `afterStep(k)` runs after the
 * k-th step (1-based), for rules a replica applies every tick.
 */
export function fastForward(
  pool: BulletPool,
  arena: ArenaDef,
  opts: { from: number; ticks: number; afterStep?: (k: number) => void },
): void {
  for (let k = 1; k <= opts.ticks && pool.count > opts.from; k++) {
    stepBullets(pool, arena, opts.from);
    opts.afterStep?.(k);
  }
}
