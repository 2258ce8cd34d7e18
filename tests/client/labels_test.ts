/** Labels drawn on the canvas: portal labels wrap when short of room, name tags do not cover each other. */
import assert from "node:assert/strict";
import { stackTags, wrapWords } from "../../client/draw_world.ts";
import { HUB } from "../../content/mod.ts";

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
  const ys = stackTags([
    { x: 100, y: 200, w: 60 }, // your own: stays
    { x: 120, y: 204, w: 60 }, // overlaps it: just above it
    { x: 300, y: 200, w: 60 }, // far away: stays
    { x: 110, y: 200, w: 60 }, // overlaps the first, then the second: above both
  ], 14);
  assert.deepEqual(ys, [200, 186, 200, 172]);
});

Deno.test("stackTags() climbs at most three lines", () => {
  const ys = stackTags(Array.from({ length: 6 }, () => ({ x: 0, y: 100, w: 40 })), 10);
  assert.deepEqual(ys, [100, 90, 80, 70, 70, 70]);
});

Deno.test("stackTags() lifts a tag that only touches another: two names never read as one", () => {
  assert.deepEqual(stackTags([{ x: 0, y: 50, w: 40 }, { x: 40, y: 50, w: 40 }], 14), [50, 36]);
  assert.deepEqual(stackTags([{ x: 0, y: 50, w: 40 }, { x: 50, y: 50, w: 40 }], 14), [50, 50]);
});
