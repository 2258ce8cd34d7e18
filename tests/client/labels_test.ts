/** wrapWords(): portal labels wrap at word breaks when the room between portals is short. */
import assert from "node:assert/strict";
import { wrapWords } from "../../client/draw_world.ts";
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

Deno.test("wrapWords() keeps a word longer than the room on a line of its own", () => {
  assert.deepEqual(wrapWords(ctx, "a Cathedralesque b", 5 * 7), ["a", "Cathedralesque", "b"]);
});
