/** BulletPool, spawnVolley, stepBullets and fastForward: how bullets are born, fly and die. */
import assert from "node:assert/strict";
import {
  angleFromUnits,
  type ArenaDef,
  BULLET_FIELD_NAMES,
  BULLET_FIELDS,
  BulletPool,
  type BulletSpec,
  fastForward,
  POS_UNITS_PER_PX,
  quantizeAngle,
  quantizePos,
  spawnVolley,
  stepBullets,
  TICK_S,
  type Volley,
} from "../../sim/mod.ts";

const ARENA: ArenaDef = {
  widthPx: 800,
  heightPx: 600,
  walls: [{ x: 500, y: 250, w: 40, h: 100 }],
  spawnPoints: [],
};
const SPEC: BulletSpec = {
  kind: 1,
  radiusPx: 6,
  ttlTicks: 300,
  damage: 1,
  accelPxPerS2: 0,
  turnRadPerS: 0,
};

/** A volley of bullets from (x, y) px at the given headings (radians). */
function volley(
  at: { x: number; y: number },
  headingsRad: number[],
  opts: Partial<Omit<Volley, "xs" | "ys" | "angles">> = {},
): Volley {
  return {
    birthTick: 0,
    uid0: 1,
    team: 0,
    owner: -1,
    spec: SPEC,
    speedPxPerS: 120,
    ...opts,
    xs: headingsRad.map(() => quantizePos(at.x)),
    ys: headingsRad.map(() => quantizePos(at.y)),
    angles: headingsRad.map(quantizeAngle),
  };
}

/** Every live bullet keyed by uid, with every field that decides its future. */
function snapshot(pool: BulletPool): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (let i = 0; i < pool.count; i++) {
    out.set(pool.uid[i], [
      pool.x[i],
      pool.y[i],
      pool.dirX[i],
      pool.dirY[i],
      pool.speed[i],
      pool.accel[i],
      pool.turnCos[i],
      pool.turnSin[i],
      pool.radius[i],
      pool.ttl[i],
      pool.kind[i],
      pool.team[i],
      pool.damage[i],
      pool.owner[i],
    ]);
  }
  return out;
}

Deno.test("spawnVolley() places each bullet on its wire position, heading and spec", () => {
  const pool = new BulletPool();
  const v = volley({ x: 100.3, y: 200.7 }, [0, Math.PI / 2], {
    uid0: 40,
    team: 1,
    owner: 7,
    speedPxPerS: 600,
  });
  spawnVolley(pool, v);
  assert.equal(pool.count, 2);
  for (let i = 0; i < 2; i++) {
    assert.equal(pool.x[i], v.xs[i] / POS_UNITS_PER_PX);
    assert.equal(pool.y[i], v.ys[i] / POS_UNITS_PER_PX);
    assert.equal(pool.uid[i], 40 + i);
    assert.equal(pool.speed[i], 600 * TICK_S);
    assert.equal(pool.ttl[i], SPEC.ttlTicks);
    assert.equal(pool.radius[i], SPEC.radiusPx);
    assert.equal(pool.team[i], 1);
    assert.equal(pool.owner[i], 7);
    const heading = angleFromUnits(v.angles[i]);
    assert.equal(pool.dirX[i], Math.cos(heading));
    assert.equal(pool.dirY[i], Math.sin(heading));
  }
  assert.equal(pool.x[0], 100.25, "positions sit on the 1/8 px wire grid");
});

Deno.test("spawnVolley() gives every field of BULLET_FIELDS what the table says", () => {
  // Room for both volleys (a growth would zero the slots): a stale 99 in every slot the
  // second volley takes, so a field the spawn forgot keeps it and fails.
  const pool = new BulletPool(8);
  for (const name of BULLET_FIELD_NAMES) pool[name].fill(99);
  spawnVolley(pool, volley({ x: 10, y: 20 }, [0.5]));
  const v = volley({ x: 300.6, y: 41.2 }, [0.1, 2.2, 4.4, 5.9, 1.3], {
    uid0: 0xffff_fffe,
    team: 2,
    owner: 12,
    speedPxPerS: 333,
    spec: { kind: 3, radiusPx: 4.5, ttlTicks: 77, damage: 2, accelPxPerS2: -40, turnRadPerS: 1.7 },
  });
  spawnVolley(pool, v);
  assert.equal(pool.count, 6);
  for (const name of BULLET_FIELD_NAMES) {
    const field:
      & { array: { of(n: number): ArrayLike<number> } }
      & (
        | { shared: (v: Volley) => number }
        | { each: (v: Volley, b: number) => number }
      ) = BULLET_FIELDS[name];
    for (let b = 0; b < 5; b++) {
      const value = "shared" in field ? field.shared(v) : field.each(v, b);
      // At the column's own precision (a radius in single precision, a uid wrapped).
      assert.equal(pool[name][1 + b], field.array.of(value)[0], `${name} of bullet ${b}`);
    }
  }
});

Deno.test("stepBullets() moves a straight bullet speed*dt per tick along its heading", () => {
  const pool = new BulletPool();
  spawnVolley(pool, volley({ x: 100, y: 100 }, [0]));
  for (let t = 1; t <= 10; t++) {
    stepBullets(pool, ARENA);
    assert.ok(Math.abs(pool.x[0] - (100 + t * 120 * TICK_S)) < 1e-9);
    assert.equal(pool.y[0], 100);
  }
});

Deno.test("stepBullets() frees a bullet on its ttlTicks-th step, not before", () => {
  const pool = new BulletPool();
  const spec = { ...SPEC, ttlTicks: 25 };
  spawnVolley(pool, volley({ x: 100, y: 300 }, [0], { spec, speedPxPerS: 10 }));
  for (let t = 1; t < spec.ttlTicks; t++) {
    stepBullets(pool, ARENA);
    assert.equal(pool.count, 1, `alive after ${t} steps`);
    assert.equal(pool.ttl[0], spec.ttlTicks - t);
  }
  stepBullets(pool, ARENA);
  assert.equal(pool.count, 0);
});

Deno.test("stepBullets() frees a bullet once it is wholly outside the arena", () => {
  const pool = new BulletPool();
  // 10 px per tick to the left from x = 15: the edge of a 6 px bullet leaves at x < -6.
  spawnVolley(pool, volley({ x: 15, y: 300 }, [Math.PI], { speedPxPerS: 600 }));
  stepBullets(pool, ARENA); // x = 5
  stepBullets(pool, ARENA); // x = -5, still overlapping the edge
  assert.equal(pool.count, 1);
  stepBullets(pool, ARENA); // x = -15
  assert.equal(pool.count, 0);
  for (
    const [at, heading] of [[{ x: 790, y: 300 }, 0], [{ x: 400, y: 5 }, -Math.PI / 2], [
      { x: 400, y: 595 },
      Math.PI / 2,
    ]] as const
  ) {
    spawnVolley(pool, volley(at, [heading], { speedPxPerS: 600 }));
    for (let t = 0; t < 3; t++) stepBullets(pool, ARENA);
    assert.equal(pool.count, 0, `leaving from ${JSON.stringify(at)}`);
  }
});

Deno.test("stepBullets() frees a bullet whose centre enters a wall", () => {
  const pool = new BulletPool();
  const wall = ARENA.walls[0];
  spawnVolley(pool, volley({ x: wall.x - 25, y: wall.y + 50 }, [0], { speedPxPerS: 600 }));
  spawnVolley(pool, volley({ x: wall.x - 25, y: wall.y - 20 }, [0], { speedPxPerS: 600, uid0: 2 }));
  stepBullets(pool, ARENA); // 15 px short
  stepBullets(pool, ARENA); // 5 px short
  assert.equal(pool.count, 2);
  stepBullets(pool, ARENA); // 5 px inside
  assert.equal(pool.count, 1);
  assert.equal(pool.uid[0], 2, "the bullet above the wall flies on");
});

Deno.test("stepBullets() frees a bullet on a wall's very edge, and passes one a grid step off it", () => {
  const wall = ARENA.walls[0];
  const right = 0;
  const down = Math.PI / 2;
  const fly = (at: { x: number; y: number }, heading: number) => {
    const pool = new BulletPool();
    spawnVolley(pool, volley(at, [heading], { speedPxPerS: 600 }));
    for (let t = 0; t < 4 && pool.count > 0; t++) stepBullets(pool, ARENA);
    return pool.count === 0 ? "struck" : `flew on at ${pool.x[0]}, ${pool.y[0]}`;
  };
  // Along the top and bottom edges, and down the left and right ones: on the edge is in.
  assert.equal(fly({ x: wall.x - 25, y: wall.y }, right), "struck", "top edge");
  assert.equal(fly({ x: wall.x - 25, y: wall.y + wall.h }, right), "struck", "bottom edge");
  assert.equal(fly({ x: wall.x, y: wall.y - 25 }, down), "struck", "left edge");
  assert.equal(fly({ x: wall.x + wall.w, y: wall.y - 25 }, down), "struck", "right edge");
  // One grid step (1/8 px) outside each edge: clear of it.
  const step = 1 / POS_UNITS_PER_PX;
  assert.match(fly({ x: wall.x - 25, y: wall.y - step }, right), /^flew on/, "above the top");
  assert.match(fly({ x: wall.x - 25, y: wall.y + wall.h + step }, right), /^flew on/, "below");
  assert.match(fly({ x: wall.x - step, y: wall.y - 25 }, down), /^flew on/, "left of it");
  assert.match(fly({ x: wall.x + wall.w + step, y: wall.y - 25 }, down), /^flew on/, "right of it");
});

Deno.test("stepBullets() turns a curling bullet by turnRadPerS and keeps its speed", () => {
  const pool = new BulletPool();
  const spec = { ...SPEC, turnRadPerS: 0.9 };
  spawnVolley(pool, volley({ x: 400, y: 300 }, [0.25], { spec, speedPxPerS: 60 }));
  const start = angleFromUnits(quantizeAngle(0.25));
  for (let t = 1; t <= 90; t++) {
    stepBullets(pool, ARENA);
    const heading = Math.atan2(pool.dirY[0], pool.dirX[0]);
    assert.ok(Math.abs(heading - (start + 0.9 * t * TICK_S)) < 1e-9, `tick ${t}`);
    assert.ok(Math.abs(Math.hypot(pool.dirX[0], pool.dirY[0]) - 1) < 1e-12);
    assert.equal(pool.speed[0], 60 * TICK_S);
  }
});

Deno.test("stepBullets() curls a bullet around a circle of radius speed/turn", () => {
  const pool = new BulletPool();
  const turn = Math.PI; // half a turn per second
  const speed = 120;
  spawnVolley(
    pool,
    volley({ x: 400, y: 300 }, [0], { spec: { ...SPEC, turnRadPerS: turn }, speedPxPerS: speed }),
  );
  // Two seconds of flight close the circle (to within the per-tick discretization).
  for (let t = 0; t < 120; t++) stepBullets(pool, ARENA);
  assert.ok(Math.hypot(pool.x[0] - 400, pool.y[0] - 300) < 1, "back where it started");
});

Deno.test("stepBullets() speeds a bullet up by accelPxPerS2, applied before the move", () => {
  const pool = new BulletPool();
  const accel = 90;
  const v0 = 40;
  spawnVolley(
    pool,
    volley({ x: 10, y: 300 }, [0], { spec: { ...SPEC, accelPxPerS2: accel }, speedPxPerS: v0 }),
  );
  const a = accel * TICK_S * TICK_S;
  let x = 10;
  for (let t = 1; t <= 60; t++) {
    stepBullets(pool, ARENA);
    const v = v0 * TICK_S + t * a;
    x += v;
    assert.ok(Math.abs(pool.speed[0] - v) < 1e-12, `tick ${t} speed`);
    assert.ok(Math.abs(pool.x[0] - x) < 1e-9, `tick ${t} position`);
  }
  // After one second it flies at v0 + accel px/s.
  assert.ok(Math.abs(pool.speed[0] / TICK_S - (v0 + accel)) < 1e-9);
});

Deno.test("stepBullets() stops a decelerating bullet at zero speed instead of reversing it", () => {
  const pool = new BulletPool();
  spawnVolley(
    pool,
    volley({ x: 100, y: 300 }, [0], { spec: { ...SPEC, accelPxPerS2: -600 }, speedPxPerS: 60 }),
  );
  for (let t = 0; t < 10; t++) stepBullets(pool, ARENA);
  const restX = pool.x[0];
  assert.equal(pool.speed[0], 0);
  for (let t = 0; t < 30; t++) stepBullets(pool, ARENA);
  assert.equal(pool.x[0], restX);
  assert.ok(restX > 100);
});

Deno.test("BulletPool grows past its capacity and keeps every live bullet", () => {
  const pool = new BulletPool(4);
  const headings = Array.from({ length: 11 }, (_, i) => i * 0.5);
  spawnVolley(pool, volley({ x: 100, y: 100 }, headings.slice(0, 3), { uid0: 1000 }));
  const before = snapshot(pool);
  spawnVolley(
    pool,
    volley({ x: 300, y: 200 }, headings.slice(3), { uid0: 1003, team: 1, owner: 2 }),
  );
  assert.equal(pool.count, 11);
  assert.ok(pool.capacity >= 11);
  const after = snapshot(pool);
  for (const [uid, fields] of before) assert.deepEqual(after.get(uid), fields, `uid ${uid}`);
  for (let uid = 1000; uid < 1011; uid++) assert.ok(after.has(uid));
  // And the grown pool still flies and frees bullets normally.
  for (let t = 0; t < 400; t++) stepBullets(pool, ARENA);
  assert.equal(pool.count, 0);
});

Deno.test("a pool's columns are disjoint views of one block, before and after it grows", () => {
  const pool = new BulletPool(5);
  const check = () => {
    const columns = BULLET_FIELD_NAMES.map((name) => pool[name]);
    const block = columns[0].buffer;
    const spans = columns.map((c) => {
      assert.equal(c.buffer, block, "every column is a view of the same block");
      assert.equal(c.length, pool.capacity);
      return [c.byteOffset, c.byteOffset + c.byteLength];
    }).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) {
      assert.ok(spans[i][0] >= spans[i - 1][1], "no two columns share a byte");
    }
    assert.ok(spans[spans.length - 1][1] <= block.byteLength);
  };
  check();
  spawnVolley(pool, volley({ x: 100, y: 100 }, [0, 1, 2, 3, 4, 5, 6], { uid0: 1 }));
  assert.ok(pool.capacity > 5, "it grew");
  check();
});

Deno.test("remove() swaps the last bullet into the hole with all of its fields", () => {
  const pool = new BulletPool();
  spawnVolley(pool, volley({ x: 100, y: 100 }, [0, 1, 2], { uid0: 1 }));
  spawnVolley(pool, volley({ x: 200, y: 150 }, [3, 4], { uid0: 4, team: 1, owner: 9 }));
  const before = snapshot(pool);
  pool.remove(1); // uid 2
  assert.equal(pool.count, 4);
  assert.equal(pool.uid[1], 5, "the last bullet fills the hole");
  assert.equal(pool.slotOf(2), -1);
  const after = snapshot(pool);
  assert.equal(after.size, 4);
  for (const [uid, fields] of after) assert.deepEqual(fields, before.get(uid), `uid ${uid}`);
  pool.remove(pool.count - 1); // removing the last slot just shrinks
  assert.equal(pool.count, 3);
  assert.deepEqual([pool.slotOf(1), pool.slotOf(5), pool.slotOf(3)], [0, 1, 2]);
});

Deno.test("slotOf() finds every live uid as bullets die in arbitrary order", () => {
  const pool = new BulletPool(8);
  const headings = Array.from({ length: 40 }, (_, i) => i * 0.15);
  spawnVolley(pool, volley({ x: 400, y: 300 }, headings, { uid0: 100 }));
  const alive = new Set(headings.map((_, i) => 100 + i));
  for (const uid of [117, 100, 139, 120, 121, 101, 138, 130]) {
    pool.remove(pool.slotOf(uid));
    alive.delete(uid);
    for (const live of alive) assert.equal(pool.uid[pool.slotOf(live)], live);
    assert.equal(pool.slotOf(uid), -1);
    assert.equal(pool.count, alive.size);
  }
});

Deno.test("clearTeam() frees every bullet of one team and keeps the other", () => {
  const pool = new BulletPool();
  spawnVolley(pool, volley({ x: 100, y: 100 }, [0, 1, 2], { team: 0 }));
  spawnVolley(pool, volley({ x: 100, y: 100 }, [0, 1], { team: 1, owner: 3 }));
  spawnVolley(pool, volley({ x: 100, y: 100 }, [4, 5], { team: 0 }));
  pool.clearTeam(0);
  assert.equal(pool.count, 2);
  for (let i = 0; i < pool.count; i++) assert.equal(pool.team[i], 1);
});

Deno.test("a pool caught up with fastForward() holds exactly the bullets of one stepped from birth", () => {
  const wall = ARENA.walls[0];
  // Volleys born over 60 ticks, arriving 0-20 ticks late, with every way to die.
  const born: Volley[] = [];
  let uid0 = 1;
  for (let t = 0; t < 60; t += 3) {
    const spec: BulletSpec = {
      ...SPEC,
      ttlTicks: 10 + (t % 7) * 5,
      accelPxPerS2: (t % 4) * 40 - 60,
      turnRadPerS: ((t % 5) - 2) * 0.7,
    };
    born.push(
      volley({ x: wall.x - 40, y: wall.y + 10 + t }, [0, 0.3, -0.3, Math.PI], {
        uid0,
        birthTick: t,
        spec,
        speedPxPerS: 150 + t * 5,
      }),
      volley({ x: 20 + t * 7, y: 30 }, Array.from({ length: 8 }, (_, i) => (i * Math.PI) / 4), {
        uid0: uid0 + 4,
        birthTick: t,
        spec,
        speedPxPerS: 200,
        team: t % 2,
        owner: t % 2 ? 1 : -1,
      }),
    );
    uid0 += 12;
  }
  const delayOf = (v: Volley) => (v.birthTick * 7 + v.uid0) % 21;

  const stepped = new BulletPool(16);
  const replica = new BulletPool(16);
  // Uids the replica has heard of: it cannot hold a bullet whose volley is still on the wire.
  const arrived = new Set<number>();
  let deaths = 0;
  let peakReplica = 0;
  for (let tick = 0; tick < 120; tick++) {
    const before = stepped.count;
    stepBullets(stepped, ARENA);
    deaths += before - stepped.count;
    for (const v of born) if (v.birthTick === tick) spawnVolley(stepped, v);

    stepBullets(replica, ARENA);
    for (const v of born) {
      if (v.birthTick + delayOf(v) !== tick) continue;
      const from = replica.count;
      spawnVolley(replica, v);
      fastForward(replica, ARENA, { from, ticks: tick - v.birthTick });
      for (let b = 0; b < v.angles.length; b++) arrived.add(v.uid0 + b);
    }
    const expected = new Map([...snapshot(stepped)].filter(([uid]) => arrived.has(uid)));
    assert.deepEqual(snapshot(replica), expected, `tick ${tick}`);
    peakReplica = Math.max(peakReplica, replica.count);
  }
  assert.ok(deaths > 0 && peakReplica > 0, "the comparison saw live bullets and deaths");
});

Deno.test("fastForward() only advances the new volley, not bullets already in the pool", () => {
  const pool = new BulletPool();
  spawnVolley(pool, volley({ x: 100, y: 100 }, [0]));
  const old = snapshot(pool);
  const from = pool.count;
  spawnVolley(pool, volley({ x: 100, y: 200 }, [0], { uid0: 500 }));
  fastForward(pool, ARENA, { from, ticks: 30 });
  const now = snapshot(pool);
  for (const [uid, fields] of old) assert.deepEqual(now.get(uid), fields);
  assert.ok(Math.abs(now.get(500)![0] - (100 + 30 * 120 * TICK_S)) < 1e-9);
});

Deno.test("fastForward() past a bullet's death leaves the pool without it", () => {
  const pool = new BulletPool();
  spawnVolley(pool, volley({ x: 100, y: 100 }, [0], { spec: { ...SPEC, ttlTicks: 5 } }));
  fastForward(pool, ARENA, { from: 0, ticks: 40 });
  assert.equal(pool.count, 0);
});
