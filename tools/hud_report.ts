/**
 * What the page's HUD looks like, measured in the page: every visible HUD box
 * (panels, toasts, hints, buttons, the thumbsticks' hints) against every other that is not its ancestor,
 * against the arena and the window, and text cut off. Runs inside the page through
 * `page.evaluate(hudReport)` (it must not close over anything); used by the layout
 * test and the player's tour.
 */
import type { Renderer } from "../client/renderer.ts";

/** What the page reports about its HUD boxes. */
export interface HudReport {
  readonly collisions: string[];
  readonly onArena: string[];
  readonly offScreen: string[];
  readonly clipped: string[];
  readonly arena: { x: number; y: number; w: number; h: number };
  readonly mode: string;
  readonly texts: string;
}

/** Runs in the page (needs `__bh.renderer`); see the module comment. */
export function hudReport(): HudReport {
  const bh = (globalThis as unknown as { __bh: { renderer: Renderer | undefined } }).__bh;
  const layout = bh.renderer!.layout!;
  const a = layout.arena;
  const boxes = [
    ...document.querySelectorAll<HTMLElement>(
      ".hud .panel, .hud .toast, .hud .escape-hint, .hud .hud-btn, .hud .graze, .stick-hint",
    ),
  ].filter((el) => el.getClientRects().length > 0 && el.getBoundingClientRect().width > 0);
  const name = (el: HTMLElement) =>
    `${el.className.split(" ").slice(0, 2).join(".")}${
      el.dataset.testid ? `#${el.dataset.testid}` : ""
    }`;
  const overlap = (r: DOMRect, s: { x: number; y: number; w: number; h: number }) =>
    r.left < s.x + s.w - 0.5 && s.x < r.right - 0.5 && r.top < s.y + s.h - 0.5 &&
    s.y < r.bottom - 0.5;
  const rect = (r: DOMRect) => ({ x: r.left, y: r.top, w: r.width, h: r.height });
  const collisions: string[] = [];
  const onArena: string[] = [];
  const offScreen: string[] = [];
  const clipped: string[] = [];
  for (let i = 0; i < boxes.length; i++) {
    const r = boxes[i].getBoundingClientRect();
    if (overlap(r, a)) onArena.push(name(boxes[i]));
    if (
      r.left < -0.5 || r.top < -0.5 || r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5
    ) {
      offScreen.push(name(boxes[i]));
    }
    if (boxes[i].scrollWidth > boxes[i].clientWidth + 1) clipped.push(name(boxes[i]));
    for (let j = i + 1; j < boxes.length; j++) {
      if (boxes[i].contains(boxes[j]) || boxes[j].contains(boxes[i])) continue;
      if (overlap(r, rect(boxes[j].getBoundingClientRect()))) {
        collisions.push(`${name(boxes[i])} × ${name(boxes[j])}`);
      }
    }
  }
  // Text cut with an ellipsis inside a box (a name, a boss's or world's name) counts as clipped too.
  for (
    const el of document.querySelectorAll<HTMLElement>(
      ".hud .pname, .hud .boss-name, .hud .world-name",
    )
  ) {
    if (el.scrollWidth > el.clientWidth + 1) clipped.push(name(el));
  }
  // The region each HUD column or band may use must itself be inside the window.
  for (const el of document.querySelectorAll<HTMLElement>(".hud [data-hud-region]")) {
    const r = el.getBoundingClientRect();
    if (r.bottom > innerHeight + 0.5 || r.right > innerWidth + 0.5) offScreen.push("region");
  }
  return {
    collisions,
    onArena,
    offScreen,
    clipped,
    arena: { x: a.x, y: a.y, w: a.w, h: a.h },
    mode: layout.mode,
    texts: document.querySelector(".hud")?.textContent ?? "",
  };
}
