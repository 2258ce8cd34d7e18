/** Emitters: the shape of each pattern, and when it fires. */
import assert from "node:assert/strict";
import {
  ANGLE_UNITS,
  type ArcSweepDef,
  type ArenaDef,
  armEmitter,
  type BulletSpec,
  type EmitterDef,
  type EmitterState,
  type FireContext,
  POS_UNITS_PER_PX,
  quantizeAngle,
  type RingDef,
  Rng,
  TICK_S,
  tickEmitter,
  type Volley,
  type WallGapDef,
} from "../../sim/mod.ts";

const DEG = Math.PI / 180;
const ARENA: ArenaDef = { widthPx: 1280, heightPx: 960, walls: [], spawnPoints: [] };
const SPEC: BulletSpec = {
  kind: 1,
  radiusPx: 9,
  ttlTicks: 600,
  damage: 1,
  accelPxPerS2: 0,
  turnRadPerS: 0,
};
/** One angle unit, in radians: the quantization every angle suffers. */
const UNIT_RAD = (2 * Math.PI) / ANGLE_UNITS;

/** Drives one emitter tick by tick, the way the world does. */
class Harness {
  readonly state: EmitterState;
  readonly rng: Rng;
  readonly origin = { x: 640, y: 200 };
  target: { x: number; y: number } | undefined;
  tick = 0;
  #nextUid = 1;

  constructor(def: EmitterDef, opts: { seed?: number; target?: { x: number; y: number } } = {}) {
    this.state = armEmitter(def);
    this.rng = new Rng(opts.seed ?? 1);
    this.target = opts.target;
  }

  /** One tick; the volley fired, if any. */
  step(): Volley | undefined {
    const ctx: FireContext = {
      tick: this.tick++,
      originX: this.origin.x,
      originY: this.origin.y,
      target: this.target,
      arena: ARENA,
      rng: this.rng,
      takeUids: (count) => {
        const first = this.#nextUid;
        this.#nextUid += count;
        return first;
      },
    };
    return tickEmitter(this.state, ctx);
  }

  /** Steps until the next volley (at most `limit` ticks). */
  nextVolley(limit = 10_000): Volley {
    for (let i = 0; i < limit; i++) {
      const v = this.step();
      if (v) return v;
    }
    throw new Error(`No volley within ${limit} ticks`);
  }
}

/** Signed difference b - a of two angles in units, folded into (-half turn, half turn]. */
function unitDelta(a: number, b: number): number {
  let d = (b - a) % ANGLE_UNITS;
  if (d > ANGLE_UNITS / 2) d -= ANGLE_UNITS;
  if (d <= -ANGLE_UNITS / 2) d += ANGLE_UNITS;
  return d;
}

/** Radians from angle units, folded around `nearRad`. */
function radNear(units: number, nearRad: number): number {
  return nearRad + unitDelta(quantizeAngle(nearRad), units) * UNIT_RAD;
}

function closeRad(actual: number, expected: number, tolRad = 1.5 * UNIT_RAD): void {
  assert.ok(Math.abs(actual - expected) <= tolRad, `${actual} rad is not ${expected} rad`);
}

const RING: RingDef = {
  type: "ring",
  count: 12,
  rotateRad: 5 * DEG,
  speedPxPerS: 120,
  periodTicks: 30,
  bullet: SPEC,
};

Deno.test("ring fires `count` bullets from the origin with consecutive uids", () => {
  const h = new Harness(RING);
  const v = h.nextVolley();
  assert.equal(v.angles.length, RING.count);
  assert.equal(v.xs.length, RING.count);
  assert.equal(v.ys.length, RING.count);
  for (let i = 0; i < RING.count; i++) {
    assert.equal(v.xs[i], h.origin.x * POS_UNITS_PER_PX);
    assert.equal(v.ys[i], h.origin.y * POS_UNITS_PER_PX);
  }
  assert.equal(v.uid0, 1);
  assert.equal(h.nextVolley().uid0, 1 + RING.count);
  assert.equal(v.team, 0);
  assert.equal(v.owner, -1);
  assert.equal(v.spec, SPEC);
  assert.equal(v.speedPxPerS, RING.speedPxPerS);
});

Deno.test("ring spaces its bullets evenly around the whole circle", () => {
  const v = new Harness(RING).nextVolley();
  const stepUnits = ANGLE_UNITS / RING.count;
  for (let i = 0; i < RING.count; i++) {
    const next = v.angles[(i + 1) % RING.count];
    assert.ok(Math.abs(unitDelta(v.angles[i], next) - stepUnits) <= 1, `gap after bullet ${i}`);
  }
  assert.equal(new Set(v.angles).size, RING.count);
});

Deno.test("ring turns by rotateRad on every shot", () => {
  const h = new Harness(RING);
  const shots = [h.nextVolley(), h.nextVolley(), h.nextVolley(), h.nextVolley()];
  for (let s = 0; s < shots.length; s++) {
    closeRad(radNear(shots[s].angles[0], 0), RING.rotateRad! * s);
  }
  const still = new Harness({ ...RING, rotateRad: undefined });
  assert.deepEqual(still.nextVolley().angles, still.nextVolley().angles);
});

Deno.test("aimedSpread centres its fan on the target with the configured spread", () => {
  const def: EmitterDef = {
    type: "aimedSpread",
    count: 5,
    spreadRad: 12 * DEG,
    speedPxPerS: 200,
    periodTicks: 20,
    bullet: SPEC,
  };
  for (const target of [{ x: 900, y: 500 }, { x: 100, y: 250 }, { x: 640, y: 800 }]) {
    const h: Harness = new Harness(def, { target });
    const v = h.nextVolley();
    const aim = Math.atan2(target.y - h.origin.y, target.x - h.origin.x);
    const rads = v.angles.map((a) => radNear(a, aim));
    assert.equal(rads.length, 5);
    closeRad(rads[2], aim);
    closeRad((rads[0] + rads[4]) / 2, aim);
    closeRad(rads[4] - rads[0], def.spreadRad, 2 * UNIT_RAD);
    for (let i = 1; i < 5; i++) closeRad(rads[i] - rads[i - 1], def.spreadRad / 4, 2 * UNIT_RAD);
  }
});

Deno.test("aimedSpread follows a moving target from one shot to the next", () => {
  const def: EmitterDef = {
    type: "aimedSpread",
    count: 1,
    spreadRad: 0,
    speedPxPerS: 200,
    periodTicks: 10,
    bullet: SPEC,
  };
  const h = new Harness(def, { target: { x: 1000, y: 200 } });
  assert.equal(h.nextVolley().angles[0], quantizeAngle(0));
  h.target = { x: 640, y: 900 };
  assert.equal(h.nextVolley().angles[0], quantizeAngle(Math.PI / 2));
});

Deno.test("aimedSpread with nobody to aim at fires straight down", () => {
  const def: EmitterDef = {
    type: "aimedSpread",
    count: 3,
    spreadRad: 10 * DEG,
    speedPxPerS: 200,
    periodTicks: 10,
    bullet: SPEC,
  };
  const v = new Harness(def).nextVolley();
  closeRad(radNear(v.angles[1], Math.PI / 2), Math.PI / 2);
});

const WALL: WallGapDef = {
  type: "wallGap",
  orientation: "rows",
  gapPx: 120,
  spacingPx: 36,
  speedPxPerS: 110,
  periodTicks: 1,
  bullet: SPEC,
};

/**
 * The widest stretch along the wall free of any bullet circle, counting the arena
 * edges as ends: the room a ship has to slip through.
 */
function widestGapPx(along: number[], r: number, spanPx: number): number {
  const sorted = [...along].sort((a, b) => a - b);
  let best = sorted[0] - r; // from the arena edge to the first bullet
  for (let i = 1; i < sorted.length; i++) {
    best = Math.max(best, sorted[i] - r - (sorted[i - 1] + r));
  }
  return Math.max(best, spanPx - (sorted[sorted.length - 1] + r));
}

Deno.test("wallGap rows leave a gap at least gapPx wide between bullet edges", () => {
  const r = WALL.bullet.radiusPx;
  for (const seed of [1, 2, 3, 42, 1234]) {
    const h = new Harness(WALL, { seed });
    for (let shot = 0; shot < 40; shot++) {
      const v = h.nextVolley();
      const xs = v.xs.map((x) => x / POS_UNITS_PER_PX);
      const gap = widestGapPx(xs, r, ARENA.widthPx);
      assert.ok(gap >= WALL.gapPx, `seed ${seed} shot ${shot}: widest gap ${gap} px`);
      // One gap, not a sparse wall: every other gap is the plain spacing.
      const sorted = [...xs].sort((a, b) => a - b);
      let wide = 0;
      for (let i = 1; i < sorted.length; i++) {
        if (sorted[i] - sorted[i - 1] > WALL.spacingPx + 1e-9) wide++;
      }
      assert.ok(wide <= 1, `seed ${seed} shot ${shot}: ${wide} holes`);
    }
  }
});

Deno.test("wallGap puts its gap in different places from shot to shot", () => {
  const h = new Harness(WALL, { seed: 7 });
  const gapStarts = new Set<number>();
  for (let shot = 0; shot < 20; shot++) {
    const present = new Set(h.nextVolley().xs.map((x) => x / POS_UNITS_PER_PX));
    // The first grid slot the wall leaves empty.
    let slot = WALL.spacingPx / 2;
    while (present.has(slot)) slot += WALL.spacingPx;
    gapStarts.add(slot);
  }
  assert.ok(gapStarts.size > 5, `the gap sat in only ${gapStarts.size} places`);
});

Deno.test("wallGap rows start above the top edge, spread across the width and march down", () => {
  const r = WALL.bullet.radiusPx;
  const v = new Harness(WALL).nextVolley();
  const down = quantizeAngle(Math.PI / 2);
  for (let i = 0; i < v.angles.length; i++) {
    assert.equal(v.ys[i], -r * POS_UNITS_PER_PX);
    assert.equal(v.angles[i], down);
    const x = v.xs[i] / POS_UNITS_PER_PX;
    assert.ok(x > 0 && x < ARENA.widthPx);
    assert.equal((x - WALL.spacingPx / 2) % WALL.spacingPx, 0, "bullets sit on the spacing grid");
  }
  const slots = Math.ceil((ARENA.widthPx - WALL.spacingPx / 2) / WALL.spacingPx);
  assert.ok(v.angles.length < slots && v.angles.length >= slots - 5);
});

Deno.test("wallGap columns start left of the left edge, spread down the height and march right", () => {
  const r = WALL.bullet.radiusPx;
  const h = new Harness({ ...WALL, orientation: "columns" });
  for (let shot = 0; shot < 10; shot++) {
    const v = h.nextVolley();
    for (let i = 0; i < v.angles.length; i++) {
      assert.equal(v.xs[i], -r * POS_UNITS_PER_PX);
      assert.equal(v.angles[i], 0);
    }
    const ys = v.ys.map((y) => y / POS_UNITS_PER_PX);
    assert.ok(ys.every((y) => y > 0 && y < ARENA.heightPx));
    assert.ok(widestGapPx(ys, r, ARENA.heightPx) >= WALL.gapPx);
  }
});

Deno.test("wallGap alternate switches rows, columns, rows, … on every shot", () => {
  const r = WALL.bullet.radiusPx;
  const h = new Harness({ ...WALL, orientation: "alternate" });
  for (let shot = 0; shot < 6; shot++) {
    const v = h.nextVolley();
    const rows = shot % 2 === 0;
    for (let i = 0; i < v.angles.length; i++) {
      assert.equal(v.angles[i], quantizeAngle(rows ? Math.PI / 2 : 0), `shot ${shot}`);
      assert.equal(rows ? v.ys[i] : v.xs[i], -r * POS_UNITS_PER_PX);
    }
    const along = (rows ? v.xs : v.ys).map((p) => p / POS_UNITS_PER_PX);
    assert.ok(widestGapPx(along, r, rows ? ARENA.widthPx : ARENA.heightPx) >= WALL.gapPx);
  }
});

Deno.test("wallGap draws the gap from the world's rng, so a seed replays the same walls", () => {
  const a = new Harness(WALL, { seed: 99 });
  const b = new Harness(WALL, { seed: 99 });
  for (let shot = 0; shot < 10; shot++) assert.deepEqual(a.nextVolley().xs, b.nextVolley().xs);
  assert.equal(a.rng.state, b.rng.state);
});

const SWEEP: ArcSweepDef = {
  type: "arcSweep",
  arcRad: 120 * DEG,
  centerRad: 90 * DEG,
  sweepRadPerS: 60 * DEG,
  direction: 1,
  speedPxPerS: 170,
  periodTicks: 1,
  bullet: SPEC,
};

/** Offsets from the centre angle, in radians, of the first bullet of `shots` volleys. */
function sweepOffsets(def: ArcSweepDef, shots: number): number[] {
  const h = new Harness(def);
  const out: number[] = [];
  for (let s = 0; s < shots; s++) {
    out.push(radNear(h.nextVolley().angles[0], def.centerRad) - def.centerRad);
  }
  return out;
}

Deno.test("arcSweep stays within its arc and reaches both ends", () => {
  const half = SWEEP.arcRad / 2;
  const perShot = SWEEP.sweepRadPerS * TICK_S * SWEEP.periodTicks;
  for (const direction of [1, -1] as const) {
    // Two and a half sweeps across the arc.
    const offsets = sweepOffsets({ ...SWEEP, direction }, Math.ceil(5 * half / perShot));
    for (const o of offsets) assert.ok(Math.abs(o) <= half + UNIT_RAD, `offset ${o} rad`);
    assert.ok(Math.min(...offsets) <= -half + perShot, `direction ${direction}: low end`);
    assert.ok(Math.max(...offsets) >= half - perShot, `direction ${direction}: high end`);
  }
});

Deno.test("arcSweep goes back and forth, one step per tick", () => {
  const perShot = SWEEP.sweepRadPerS * TICK_S;
  const offsets = sweepOffsets(SWEEP, 300);
  let reversals = 0;
  let sense = 0;
  for (let i = 1; i < offsets.length; i++) {
    const d = offsets[i] - offsets[i - 1];
    assert.ok(Math.abs(d) <= perShot + 2 * UNIT_RAD, `step ${i} moved ${d} rad`);
    if (d === 0) continue;
    if (sense !== 0 && Math.sign(d) !== sense) reversals++;
    sense = Math.sign(d);
  }
  // 300 ticks at 1°/tick over a 120° arc: reflections at +60°, -60°, +60°.
  assert.equal(reversals, 2);
});

Deno.test("arcSweep direction -1 mirrors direction 1 about the centre", () => {
  const up = sweepOffsets(SWEEP, 200);
  const down = sweepOffsets({ ...SWEEP, direction: -1 }, 200);
  for (let i = 0; i < up.length; i++) closeRad(down[i], -up[i], 2 * UNIT_RAD);
});

Deno.test("arcSweep with an arc of a full turn or more keeps turning one way", () => {
  for (const arcRad of [2 * Math.PI, 3 * Math.PI]) {
    const def: ArcSweepDef = {
      ...SWEEP,
      arcRad,
      centerRad: 0,
      sweepRadPerS: 90 * DEG,
      periodTicks: 3,
    };
    const perShot = def.sweepRadPerS * TICK_S * def.periodTicks;
    const h = new Harness(def);
    let turned = 0;
    let prev = h.nextVolley().angles[0];
    // Enough shots for more than two whole turns.
    for (let s = 0; s < Math.ceil((4.5 * Math.PI) / perShot); s++) {
      const next = h.nextVolley().angles[0];
      const d = unitDelta(prev, next) * UNIT_RAD;
      closeRad(d, perShot, 2 * UNIT_RAD);
      turned += d;
      prev = next;
    }
    assert.ok(turned > 4 * Math.PI, `turned only ${turned} rad`);
  }
});

Deno.test("arcSweep with arms fires that many streams evenly around the circle", () => {
  const v = new Harness({ ...SWEEP, arcRad: 2 * Math.PI, arms: 3 }).nextVolley();
  assert.equal(v.angles.length, 3);
  for (let i = 0; i < 3; i++) {
    assert.ok(Math.abs(unitDelta(v.angles[i], v.angles[(i + 1) % 3]) - ANGLE_UNITS / 3) <= 1);
  }
});

Deno.test("an emitter waits startDelayTicks, then fires once every periodTicks", () => {
  const defs: EmitterDef[] = [
    { ...RING, periodTicks: 7, startDelayTicks: 11 },
    { ...WALL, periodTicks: 13, startDelayTicks: 4 },
    { ...SWEEP, periodTicks: 5, startDelayTicks: 9 },
    {
      type: "aimedSpread",
      count: 3,
      spreadRad: 0.2,
      speedPxPerS: 200,
      periodTicks: 20,
      startDelayTicks: 0,
      bullet: SPEC,
    },
  ];
  for (const def of defs) {
    const h = new Harness(def, { target: { x: 0, y: 0 } });
    const fired: number[] = [];
    for (let t = 0; t < 100; t++) if (h.step()) fired.push(t);
    const delay = def.startDelayTicks ?? 0;
    const expected: number[] = [];
    for (let t = delay; t < 100; t += def.periodTicks) expected.push(t);
    assert.deepEqual(fired, expected, def.type);
  }
});

Deno.test("an emitter without startDelayTicks fires on the tick it is armed", () => {
  const h = new Harness({ ...RING, periodTicks: 30 });
  assert.ok(h.step());
  for (let t = 1; t < 30; t++) assert.equal(h.step(), undefined);
  assert.ok(h.step());
});

Deno.test("every emitted volley is stamped with the tick it was fired on", () => {
  const h = new Harness({ ...RING, periodTicks: 4, startDelayTicks: 2 });
  for (let t = 0; t < 20; t++) {
    const v = h.step();
    if (v) assert.equal(v.birthTick, t);
  }
});
