/**
 * BulletPool: every live bullet as parallel typed arrays, live slots [0, count),
 * swap-remove on death. `spawnVolley` and `stepBullets` are the one definition of
 * how a bullet is born and flies; the server and every client replica call them,
 * so a bullet that expires or leaves the arena dies on both sides with no traffic.
 * Must not import anything outside sim/.
 */
import type { ArenaDef, BulletSpec } from "./types.ts";
import { angleFromUnits, POS_UNITS_PER_PX } from "./grid.ts";
import { outsideSpan } from "./geometry.ts";
import { TICK_S } from "./time.ts";

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

/** The typed-array kinds a bullet field may be stored in. */
type ColumnType =
  | Float64ArrayConstructor
  | Float32ArrayConstructor
  | Int32ArrayConstructor
  | Uint32ArrayConstructor
  | Uint8ArrayConstructor;

/**
 * One field of the bullet record: how it is stored and what a bullet is born with,
 * either the same for every bullet of a volley (`shared`) or per bullet (`each`).
 * A volley carries everything either needs, so a replica spawns what the server did.
 */
type FieldDef =
  | { readonly array: ColumnType; readonly shared: (volley: Volley) => number }
  | { readonly array: ColumnType; readonly each: (volley: Volley, b: number) => number };

/**
 * The bullet record, one entry per field: the one table behind the pool's arrays
 * (allocate, grow, swap-remove), `spawnVolley`, the Enter message's full state for a
 * joiner (net/wire packs each field at its array's precision) and the replica. A new
 * field is one line here and one in `spawnVolley` (tests/sim/bullets_test.ts fails
 * without it); tests/net/wire/tables_test.ts then proves it survives the wire.
 */
export const BULLET_FIELDS = {
  uid: { array: Uint32Array, each: (v, b) => (v.uid0 + b) >>> 0 },
  x: { array: Float64Array, each: (v, b) => v.xs[b] / POS_UNITS_PER_PX },
  y: { array: Float64Array, each: (v, b) => v.ys[b] / POS_UNITS_PER_PX },
  /** Unit heading. */
  dirX: { array: Float64Array, each: (v, b) => Math.cos(angleFromUnits(v.angles[b])) },
  dirY: { array: Float64Array, each: (v, b) => Math.sin(angleFromUnits(v.angles[b])) },
  /** Speed in px per tick. */
  speed: { array: Float64Array, shared: (v) => v.speedPxPerS * TICK_S },
  /** Speed change in px per tick per tick. */
  accel: { array: Float64Array, shared: (v) => v.spec.accelPxPerS2 * TICK_S * TICK_S },
  /** Heading rotation per tick, as cos/sin (1, 0 when straight). */
  turnCos: { array: Float64Array, shared: (v) => Math.cos(v.spec.turnRadPerS * TICK_S) },
  turnSin: { array: Float64Array, shared: (v) => Math.sin(v.spec.turnRadPerS * TICK_S) },
  radius: { array: Float32Array, shared: (v) => v.spec.radiusPx },
  ttl: { array: Int32Array, shared: (v) => v.spec.ttlTicks },
  kind: { array: Uint8Array, shared: (v) => v.spec.kind },
  team: { array: Uint8Array, shared: (v) => v.team },
  damage: { array: Uint8Array, shared: (v) => v.spec.damage },
  /** Owning player id for player bullets, -1 otherwise. */
  owner: { array: Int32Array, shared: (v) => v.owner },
} as const satisfies Record<string, FieldDef>;

/** The name of a bullet field. */
export type BulletField = keyof typeof BULLET_FIELDS;
/** Every bullet field, in table order (the order Enter packs them in). */
export const BULLET_FIELD_NAMES = Object.keys(BULLET_FIELDS) as readonly BulletField[];

/** One array per field, typed as the table says. */
type BulletColumns = {
  -readonly [K in BulletField]: InstanceType<(typeof BULLET_FIELDS)[K]["array"]>;
};
type Column = Float64Array | Float32Array | Int32Array | Uint32Array | Uint8Array;

/** One bullet's every field, as numbers (a joiner's copy of a bullet in flight). */
export type BulletState = { readonly [K in BulletField]: number };

// The class gets one typed array property per table field (declared by this merge).
export interface BulletPool extends BulletColumns {}

/**
 * Struct-of-arrays bullet storage (one array per BULLET_FIELDS entry); grows by doubling.
 * Every array is a view into one ArrayBuffer, so a pool is one block (10.6 KB at the
 * default capacity) rather than fifteen allocations of ~42 KB in all: a server makes one
 * per dungeon, and steps hundreds a tick, each cold in the caches when its turn comes.
 * `deno task pool-bench` measured a pool made in 11 µs instead of 25–28, and stepped a few
 * per cent faster a bullet.
 */
export class BulletPool {
  count = 0;
  capacity: number;
  /**
   * The same arrays as the named properties, grouped by element type so that each
   * copy loop in `remove` (the hot one) touches one kind of array only.
   */
  #f64: Float64Array[] = [];
  #f32: Float32Array[] = [];
  #i32: Int32Array[] = [];
  #u32: Uint32Array[] = [];
  #u8: Uint8Array[] = [];

  constructor(capacity = 128) {
    this.capacity = capacity;
    this.#allocate(capacity);
  }

  /** Doubles every array, keeping live slots. */
  grow(): void {
    const old = BULLET_FIELD_NAMES.map((name): Column => this[name]);
    this.capacity *= 2;
    this.#allocate(this.capacity);
    BULLET_FIELD_NAMES.forEach((name, k) => this[name].set(old[k].subarray(0, this.count)));
  }

  /** Points every named array at its region (8-byte aligned) of one new block. */
  #allocate(capacity: number): void {
    const end = (at: number, name: BulletField) =>
      (at + BULLET_FIELDS[name].array.BYTES_PER_ELEMENT * capacity + 7) & ~7;
    const block = new ArrayBuffer(BULLET_FIELD_NAMES.reduce(end, 0));
    const columns = this as unknown as Record<BulletField, Column>;
    let at = 0;
    for (const name of BULLET_FIELD_NAMES) {
      columns[name] = new BULLET_FIELDS[name].array(block, at, capacity);
      at = end(at, name);
    }
    this.#regroup();
  }

  #regroup(): void {
    this.#f64 = [];
    this.#f32 = [];
    this.#i32 = [];
    this.#u32 = [];
    this.#u8 = [];
    for (const name of BULLET_FIELD_NAMES) {
      const c = this[name];
      if (c instanceof Float64Array) this.#f64.push(c);
      else if (c instanceof Float32Array) this.#f32.push(c);
      else if (c instanceof Int32Array) this.#i32.push(c);
      else if (c instanceof Uint32Array) this.#u32.push(c);
      else this.#u8.push(c);
    }
  }

  /** Frees slot `i` by moving the last live bullet into it. */
  remove(i: number): void {
    const last = --this.count;
    if (i === last) return;
    for (const c of this.#f64) c[i] = c[last];
    for (const c of this.#f32) c[i] = c[last];
    for (const c of this.#i32) c[i] = c[last];
    for (const c of this.#u32) c[i] = c[last];
    for (const c of this.#u8) c[i] = c[last];
  }

  /** Appends one bullet with every field given (a joiner's copy of a bullet in flight). */
  add(state: BulletState): void {
    if (this.count === this.capacity) this.grow();
    const i = this.count++;
    for (const name of BULLET_FIELD_NAMES) this[name][i] = state[name];
  }

  /** Every field of the bullet in slot `i`. */
  stateAt(i: number): BulletState {
    const out = {} as Record<BulletField, number>;
    for (const name of BULLET_FIELD_NAMES) out[name] = this[name][i];
    return out;
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

/**
 * Adds every bullet of `volley` to the pool, exactly as born on `volley.birthTick`: each
 * field as BULLET_FIELDS defines it. The fields are named one by one rather than walked
 * as a table: a walk reaches each column and rule through a lookup by name and a call V8
 * cannot inline, fifteen of them a volley, and in a loaded server those lookups' caches
 * are cold at every spawn (its share of the tick was five times a small server's). A field
 * added to the table and not here fails tests/sim/bullets_test.ts.
 */
export function spawnVolley(pool: BulletPool, volley: Volley): void {
  const n = volley.angles.length;
  const from = pool.count;
  while (pool.capacity < from + n) pool.grow();
  pool.count = from + n;
  const F = BULLET_FIELDS;
  // The shared fields once, then every field of a bullet in one pass: most volleys are a
  // ship's single shot, where a fill per column was ten builtin calls for one bullet.
  const speed = F.speed.shared(volley);
  const accel = F.accel.shared(volley);
  const turnCos = F.turnCos.shared(volley);
  const turnSin = F.turnSin.shared(volley);
  const radius = F.radius.shared(volley);
  const ttl = F.ttl.shared(volley);
  const kind = F.kind.shared(volley);
  const team = F.team.shared(volley);
  const damage = F.damage.shared(volley);
  const owner = F.owner.shared(volley);
  for (let b = 0; b < n; b++) {
    const i = from + b;
    pool.uid[i] = F.uid.each(volley, b);
    pool.x[i] = F.x.each(volley, b);
    pool.y[i] = F.y.each(volley, b);
    pool.dirX[i] = F.dirX.each(volley, b);
    pool.dirY[i] = F.dirY.each(volley, b);
    pool.speed[i] = speed;
    pool.accel[i] = accel;
    pool.turnCos[i] = turnCos;
    pool.turnSin[i] = turnSin;
    pool.radius[i] = radius;
    pool.ttl[i] = ttl;
    pool.kind[i] = kind;
    pool.team[i] = team;
    pool.damage[i] = damage;
    pool.owner[i] = owner;
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
  // No walls: a band nothing is inside (every bullet is outside [-Infinity, -Infinity]).
  if (walls.length === 0) wy0 = wy1 = -Infinity;
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
    // Outside the box's rows, or its columns (four comparisons here were a fifth of this
    // loop's time: which one decided changed from bullet to bullet).
    if (outsideSpan(py, wy0, wy1) || outsideSpan(px, wx0, wx1)) continue;
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
