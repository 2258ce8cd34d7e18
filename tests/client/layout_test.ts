/** computeLayout(): the whole arena on screen, the HUD's room beside or around it, never on it. */
import assert from "node:assert/strict";
import { computeLayout, EDGE_MARGIN_PX, rectsOverlap } from "../../client/layout.ts";
import { FOLD, HUB } from "../../content/mod.ts";

const SIZES = [
  [390, 844],
  [844, 390],
  [768, 1024],
  [1024, 768],
  [1280, 800],
  [1920, 1080],
  [360, 640],
] as const;

for (const world of [HUB, FOLD]) {
  const arenaW = world.arena.widthPx;
  const arenaH = world.arena.heightPx;
  Deno.test(`${world.name}: the arena fits whole at every size, with the HUD's room kept free`, () => {
    for (const [w, h] of SIZES) {
      for (const touch of [false, true]) {
        const l = computeLayout({ w, h }, { arenaW, arenaH, touch });
        const at = `${w}×${h}${touch ? " touch" : ""}`;
        const a = l.arena;
        assert.ok(a.x >= 0 && a.y >= 0 && a.x + a.w <= w + 1e-9 && a.y + a.h <= h + 1e-9, at);
        // The rectangle is the arena plus its margin at the layout's scale.
        assert.ok(Math.abs(a.w - (arenaW + 2 * EDGE_MARGIN_PX) * l.scale) < 1e-6, at);
        assert.ok(Math.abs(a.h - (arenaH + 2 * EDGE_MARGIN_PX) * l.scale) < 1e-6, at);
        if (l.mode === "wide") {
          const left = { x: 0, y: 0, w: l.columnPx, h };
          const right = { x: w - l.columnPx, y: 0, w: l.columnPx, h };
          assert.ok(!rectsOverlap(a, left) && !rectsOverlap(a, right), `${at}: columns free`);
        } else {
          assert.ok(!rectsOverlap(a, { x: 0, y: 0, w, h: l.topPx }), `${at}: top band free`);
          assert.ok(h - (a.y + a.h) >= (touch ? 220 : 72) - 1e-9, `${at}: room below`);
        }
      }
    }
  });
}

Deno.test("portrait puts the HUD in bands and the arena across the whole width", () => {
  for (const [w, h] of [[390, 844], [768, 1024], [360, 640]] as const) {
    const l = computeLayout({ w, h }, {
      arenaW: FOLD.arena.widthPx,
      arenaH: FOLD.arena.heightPx,
      touch: true,
    });
    assert.equal(l.mode, "tall", `${w}×${h}`);
    assert.ok(Math.abs(l.arena.w - w) < 1e-6, `${w}×${h}: whole width`);
  }
});

Deno.test("landscape puts the HUD in side columns", () => {
  for (const [w, h] of [[844, 390], [1280, 800], [1920, 1080]] as const) {
    const l = computeLayout({ w, h }, {
      arenaW: FOLD.arena.widthPx,
      arenaH: FOLD.arena.heightPx,
      touch: false,
    });
    assert.equal(l.mode, "wide", `${w}×${h}`);
    assert.ok(l.columnPx >= 168);
  }
});

Deno.test("a small arena on a big screen stops at the zoom limit, centred", () => {
  const l = computeLayout({ w: 3840, h: 2160 }, { arenaW: 400, arenaH: 300, touch: false });
  assert.equal(l.scale, 1.6);
  assert.ok(Math.abs(l.arena.x + l.arena.w / 2 - 1920) < 1e-6);
});

Deno.test("rectsOverlap() counts shared area only, not touching edges", () => {
  assert.equal(rectsOverlap({ x: 0, y: 0, w: 10, h: 10 }, { x: 10, y: 0, w: 5, h: 5 }), false);
  assert.equal(rectsOverlap({ x: 0, y: 0, w: 10, h: 10 }, { x: 9, y: 9, w: 5, h: 5 }), true);
});
