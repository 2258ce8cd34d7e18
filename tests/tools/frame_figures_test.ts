import assert from "node:assert/strict";
import { frameFigures, type FrameInterval, SHOT_MARGIN_MS } from "../../tools/frame_figures.ts";

/** Frames of `ms` each from t = 0, with the given intervals replaced (by index). */
function frames(count: number, ms: number, long: Record<number, number> = {}): FrameInterval[] {
  const out: FrameInterval[] = [];
  let t = 0;
  for (let i = 0; i < count; i++) {
    const dt = long[i] ?? ms;
    out.push([t, dt]);
    t += dt;
  }
  return out;
}

Deno.test("frameFigures: a long frame during a screenshot is the screenshot's, one elsewhere counts", () => {
  // 100 frames of 16 ms; frame 10 (from 160 ms) and frame 60 (from 1,024 ms) take 80 ms.
  const f = frames(100, 16, { 10: 80, 60: 80 });
  const shotAt = f[10][0] + 30;
  const figures = frameFigures(f, [[shotAt, shotAt + 10]]);
  assert.equal(figures.over50, 1, "the long frame away from the screenshot is counted");
  assert.equal(figures.atScreenshots, 1, "the one under the screenshot is set apart");
  assert.equal(figures.frames, 98, "the first interval starts the count; one went to the shot");
  assert.equal(figures.max, 80);
  assert.equal(figures.p50, 16);
});

Deno.test("frameFigures: the margin takes in a frame that ends just before a screenshot starts", () => {
  const f = frames(50, 16, { 20: 70 });
  const end = f[20][0] + 70;
  const near = frameFigures(f, [[end + SHOT_MARGIN_MS - 1, end + 200]]);
  assert.equal(near.over50, 0);
  assert.ok(near.atScreenshots >= 1);
  const far = frameFigures(f, [[end + SHOT_MARGIN_MS + 50, end + 200]]);
  assert.equal(far.over50, 1, "a screenshot further off leaves the long frame counted");
});

Deno.test("frameFigures: without screenshots every interval after the first is measured", () => {
  const figures = frameFigures(frames(10, 17, { 5: 60 }), []);
  assert.deepEqual(figures, { p50: 17, p95: 60, max: 60, over50: 1, frames: 9, atScreenshots: 0 });
});
