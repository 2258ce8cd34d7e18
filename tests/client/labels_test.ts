/** Labels drawn on the canvas: portal labels wrap when short of room, name tags do not cover each other. */
import assert from "node:assert/strict";
import { stackTags, wrapWords } from "../../client/draw_world.ts";
import { HUB } from "../../content/mod.ts";

/** The baselines of placed tags. */
const ysOf = (places: readonly { y: number }[]) => places.map((p) => p.y);

/** A context whose font is 7 px a character: enough of measureText for wrapping. */
const ctx = {
  measureText: (text: string) => ({ width: text.length * 7 }),
} as unknown as CanvasRenderingContext2D;

Deno.test("wrapWords() keeps a label that fits on one line", () => {
  assert.deepEqual(wrapWords(ctx, "The Fold — walk in", 18 * 7), ["The Fold — walk in"]);
});

Deno.test("wrapWords() breaks a long label at spaces into lines that fit", () => {
  const label = HUB.portals[1].label;
  const maxPx = 12 * 7;
  const lines = wrapWords(ctx, label, maxPx);
  assert.ok(lines.length > 1, `${label} should wrap`);
  assert.equal(lines.join(" "), label);
  for (const line of lines) assert.ok(line.length * 7 <= maxPx, `"${line}" is too wide`);
});

Deno.test("wrapWords() evens the lines out rather than leave a word alone", () => {
  // Greedy at 15 characters gives "The Fold — walk" / "in"; two lines of at most 9 do.
  assert.deepEqual(wrapWords(ctx, "The Fold — walk in", 15 * 7), ["The Fold", "— walk in"]);
});

Deno.test("wrapWords() keeps a word longer than the room on a line of its own", () => {
  assert.deepEqual(wrapWords(ctx, "a Cathedralesque b", 5 * 7), ["a", "Cathedralesque", "b"]);
});

Deno.test("stackTags() lifts a tag that would cover an earlier one, and leaves apart ones alone", () => {
  const ys = ysOf(stackTags([
    { x: 100, y: 200, w: 60 }, // your own: stays
    { x: 120, y: 204, w: 60 }, // overlaps it: just above it
    { x: 300, y: 200, w: 60 }, // far away: stays
    { x: 110, y: 200, w: 60 }, // overlaps the first, then the second: above both
  ], 14));
  assert.deepEqual(ys, [200, 186, 200, 172]);
});

Deno.test("stackTags() climbs at most three lines", () => {
  const ys = ysOf(stackTags(Array.from({ length: 6 }, () => ({ x: 0, y: 100, w: 40 })), 10));
  assert.deepEqual(ys, [100, 90, 80, 70, 70, 70]);
});

Deno.test("stackTags() lifts a tag that only touches another: two names never read as one", () => {
  assert.deepEqual(ysOf(stackTags([{ x: 0, y: 50, w: 40 }, { x: 40, y: 50, w: 40 }], 14)), [
    50,
    36,
  ]);
  assert.deepEqual(ysOf(stackTags([{ x: 0, y: 50, w: 40 }, { x: 50, y: 50, w: 40 }], 14)), [
    50,
    50,
  ]);
});

// Ships' bodies on screen (their radius and margin, 20 px each way): yours at (100, 200), a
// crewmate's 30 px below it, whose tag (24 px above its ship) would sit on yours, and a
// third ship 58 px below that.
const box = (x: number, y: number) => ({ x: x - 20, y: y - 20, w: 40, h: 40 });
const YOUR_SHIP = box(100, 200);
const CREW_SHIP = box(100, 230);
const THIRD_SHIP = box(100, 288);
const BODIES = [YOUR_SHIP, CREW_SHIP, THIRD_SHIP];
const yours = { x: 100, y: 176, w: 40, below: 234, body: YOUR_SHIP };
const crew = { x: 100, y: 206, w: 60, below: 264, body: CREW_SHIP };
const third = { x: 100, y: 264, w: 60, below: 322, body: THIRD_SHIP };
const AROUND_YOU = { bodies: BODIES, keepClear: YOUR_SHIP };

Deno.test("stackTags() moves a crewmate's tag that would cover your ship to below theirs", () => {
  assert.deepEqual(stackTags([yours, crew], 14, AROUND_YOU), [
    { y: 176, faded: false },
    { y: 264, faded: false },
  ]);
  // Without the ships' bodies, it stays above its own.
  assert.deepEqual(ysOf(stackTags([yours, crew], 14)), [176, 206]);
});

Deno.test("stackTags() fades a tag over your ship when below its own is taken too", () => {
  assert.deepEqual(stackTags([yours, third, crew], 14, AROUND_YOU), [
    { y: 176, faded: false },
    { y: 264, faded: false },
    { y: 206, faded: true },
  ]);
});

Deno.test("stackTags() moves your own tag off a crewmate's ship, to below yours", () => {
  // You are the lower ship now: your tag would sit on the crewmate above you.
  const you = { ...crew, w: 40 };
  const above = { ...yours, w: 60 };
  assert.deepEqual(stackTags([you, above], 14, { bodies: BODIES, keepClear: CREW_SHIP }), [
    { y: 264, faded: false },
    { y: 176, faded: false },
  ]);
});

Deno.test("stackTags() leaves a tag over a crewmate's ship, not faded, when it has nowhere else", () => {
  // The third ship's tag is placed first and takes the spot below the crewmate's ship.
  assert.deepEqual(stackTags([third, crew], 14, { bodies: BODIES }), [
    { y: 264, faded: false },
    { y: 206, faded: false },
  ]);
});

Deno.test("stackTags() leaves tags clear of every other ship where they are", () => {
  const far = { x: 300, y: 206, w: 60, below: 264, body: box(300, 230) };
  assert.deepEqual(stackTags([yours, far], 14, { ...AROUND_YOU, bodies: [...BODIES, far.body] }), [
    { y: 176, faded: false },
    { y: 206, faded: false },
  ]);
});
