/** Player movement: the move vector, the arena's edges and its walls. */
import assert from "node:assert/strict";
import { type ArenaDef, movePlayer, type Rect, sanitizeMove, TICK_S } from "../../sim/mod.ts";
import { PLAYER } from "../../content/mod.ts";

const WALL: Rect = { x: 400, y: 300, w: 100, h: 60 };
const ARENA: ArenaDef = { widthPx: 800, heightPx: 600, walls: [WALL], spawnPoints: [] };
const OPEN: ArenaDef = { ...ARENA, walls: [] };
const STEP_PX = PLAYER.speedPxPerS * TICK_S;
const R = PLAYER.radiusPx;

function move(
  from: { x: number; y: number },
  moveX: number,
  moveY: number,
  arena = OPEN,
): { x: number; y: number } {
  const pos = { ...from };
  movePlayer(pos, { moveX, moveY }, { arena, tuning: PLAYER });
  return pos;
}

/** Distance from a point to the nearest point of a rectangle (0 inside it). */
function distanceToRect(p: { x: number; y: number }, r: Rect): number {
  const dx = Math.max(r.x - p.x, 0, p.x - (r.x + r.w));
  const dy = Math.max(r.y - p.y, 0, p.y - (r.y + r.h));
  return Math.hypot(dx, dy);
}

Deno.test("sanitizeMove() keeps full deflection on one axis at length 1", () => {
  assert.deepEqual(sanitizeMove(100, 0), { x: 1, y: 0 });
  assert.deepEqual(sanitizeMove(0, -100), { x: 0, y: -1 });
  assert.deepEqual(sanitizeMove(50, 0), { x: 0.5, y: 0 });
});

Deno.test("sanitizeMove() scales a diagonal back onto the unit circle", () => {
  for (const [mx, my] of [[100, 100], [-100, 100], [100, -100], [-100, -100], [90, 80]]) {
    const v = sanitizeMove(mx, my);
    assert.ok(Math.abs(Math.hypot(v.x, v.y) - 1) < 1e-12, `|(${mx}, ${my})| is 1`);
    assert.equal(Math.sign(v.x), Math.sign(mx));
    assert.equal(Math.sign(v.y), Math.sign(my));
  }
});

Deno.test("sanitizeMove() leaves a vector already inside the disc untouched", () => {
  const v = sanitizeMove(30, -40);
  assert.equal(v.x, 0.3);
  assert.equal(v.y, -0.4);
});

Deno.test("sanitizeMove() clamps out-of-range axes and zeroes non-finite ones", () => {
  const big = sanitizeMove(10_000, 0);
  assert.deepEqual(big, { x: 1, y: 0 });
  const huge = sanitizeMove(1e9, 1e9);
  assert.ok(Math.abs(Math.hypot(huge.x, huge.y) - 1) < 1e-12);
  assert.deepEqual(sanitizeMove(NaN, 100), { x: 0, y: 0 });
  assert.deepEqual(sanitizeMove(100, NaN), { x: 0, y: 0 });
});

Deno.test("movePlayer() moves a diagonal 100,100 exactly speed*dt, no faster than straight", () => {
  const from = { x: 300, y: 300 };
  const diagonal = move(from, 100, 100);
  const straight = move(from, 100, 0);
  const dDiagonal = Math.hypot(diagonal.x - from.x, diagonal.y - from.y);
  assert.ok(Math.abs(dDiagonal - STEP_PX) < 1e-9, `diagonal moved ${dDiagonal} px`);
  assert.equal(straight.x - from.x, STEP_PX);
  assert.equal(straight.y, from.y);
  assert.ok(Math.abs(diagonal.x - diagonal.y) < 1e-12, "both axes move equally");
});

Deno.test("movePlayer() cannot buy extra speed with out-of-range move units", () => {
  const from = { x: 300, y: 300 };
  const cheat = move(from, 5000, 5000);
  assert.ok(Math.hypot(cheat.x - from.x, cheat.y - from.y) <= STEP_PX + 1e-9);
});

Deno.test("movePlayer() with a neutral stick stays put", () => {
  assert.deepEqual(move({ x: 123, y: 456 }, 0, 0), { x: 123, y: 456 });
});

Deno.test("movePlayer() keeps the whole ship inside the arena bounds", () => {
  assert.deepEqual(move({ x: R + 1, y: 300 }, -100, 0), { x: R, y: 300 });
  assert.deepEqual(move({ x: 300, y: R + 1 }, 0, -100), { x: 300, y: R });
  assert.deepEqual(move({ x: OPEN.widthPx - R - 1, y: 300 }, 100, 0), {
    x: OPEN.widthPx - R,
    y: 300,
  });
  assert.deepEqual(move({ x: 300, y: OPEN.heightPx - R - 1 }, 0, 100), {
    x: 300,
    y: OPEN.heightPx - R,
  });
});

Deno.test("movePlayer() pinned into a corner for a long time never leaves the arena", () => {
  const pos = { x: 400, y: 300 };
  for (let t = 0; t < 600; t++) {
    movePlayer(pos, { moveX: 100, moveY: 100 }, { arena: OPEN, tuning: PLAYER });
    assert.ok(pos.x >= R && pos.x <= OPEN.widthPx - R);
    assert.ok(pos.y >= R && pos.y <= OPEN.heightPx - R);
  }
  assert.deepEqual(pos, { x: OPEN.widthPx - R, y: OPEN.heightPx - R });
});

Deno.test("movePlayer() pushes a ship that walks into a wall back out to touching distance", () => {
  const pos = { x: WALL.x - R - 1, y: WALL.y + WALL.h / 2 };
  for (let t = 0; t < 30; t++) {
    movePlayer(pos, { moveX: 100, moveY: 0 }, { arena: ARENA, tuning: PLAYER });
    assert.ok(distanceToRect(pos, WALL) >= R - 1e-9, `tick ${t}: ship overlaps the wall`);
  }
  assert.equal(pos.x, WALL.x - R);
  assert.equal(pos.y, WALL.y + WALL.h / 2);
});

Deno.test("movePlayer() slides along a wall when moving diagonally into it", () => {
  const pos = { x: WALL.x + 20, y: WALL.y - R };
  movePlayer(pos, { moveX: 100, moveY: 100 }, { arena: ARENA, tuning: PLAYER });
  assert.ok(pos.x > WALL.x + 20, "the along-wall component survives");
  assert.equal(pos.y, WALL.y - R);
});

Deno.test("movePlayer() pushes a ship out of a wall corner along the diagonal", () => {
  const corner = { x: WALL.x + WALL.w, y: WALL.y + WALL.h };
  const pos = { x: corner.x + 3, y: corner.y + 4 };
  movePlayer(pos, { moveX: 0, moveY: 0 }, { arena: ARENA, tuning: PLAYER });
  assert.ok(Math.abs(Math.hypot(pos.x - corner.x, pos.y - corner.y) - R) < 1e-9);
  assert.ok(Math.abs((pos.y - corner.y) / (pos.x - corner.x) - 4 / 3) < 1e-9);
});

Deno.test("movePlayer() ejects a ship whose centre is inside a wall through the nearest side", () => {
  const nearTop = { x: WALL.x + 50, y: WALL.y + 5 };
  movePlayer(nearTop, { moveX: 0, moveY: 0 }, { arena: ARENA, tuning: PLAYER });
  assert.deepEqual(nearTop, { x: WALL.x + 50, y: WALL.y - R });

  const nearRight = { x: WALL.x + WALL.w - 3, y: WALL.y + 30 };
  movePlayer(nearRight, { moveX: 0, moveY: 0 }, { arena: ARENA, tuning: PLAYER });
  assert.deepEqual(nearRight, { x: WALL.x + WALL.w + R, y: WALL.y + 30 });
});
