/**
 * Canvas drawing of everything but bullets: floor, walls, portals, ships, enemies,
 * the boss and hit flashes, each from its look in the content registry (this file
 * knows shapes, never a particular boss or world). Free functions over a context
 * that already holds the world transform; a handful of actors, so per-actor
 * save/restore is fine here.
 */
import { CONTENT, type EnemyLook, type PortalContent, type WorldContent } from "../content/mod.ts";
import { PlayerFlag } from "../net/wire/mod.ts";
import { HitTarget } from "../sim/mod.ts";
import type { ViewRect } from "./bullet_layer.ts";
import { rectsOverlap, type ScreenRect } from "./layout.ts";
import type { EnemyView, HitFlash, Scene, ShipView } from "./scene.ts";

const TAU = Math.PI * 2;
const GRID_PX = 40;
/** How long a struck target glows, in ms. */
export const FLASH_MS = 160;

/** Radius of an enemy kind the registry does not know (never, with matching content). */
const UNKNOWN_RADIUS_PX = 14;

/** The colour of boss `bossId` in phase `phase`. */
export function phaseColor(bossId: number, phase: number): string {
  const colors = CONTENT.bosses[bossId]?.look.phaseColors ?? ["#ffffff"];
  return colors[Math.min(phase, colors.length - 1)];
}

/** Floor, grid, border and walls. */
export function drawArena(
  ctx: CanvasRenderingContext2D,
  world: WorldContent,
  view: ViewRect,
): void {
  const { widthPx: w, heightPx: h } = world.arena;
  const look = world.look;
  ctx.fillStyle = look.floor;
  ctx.fillRect(0, 0, w, h);
  // One path for the whole grid, limited to what is on screen.
  ctx.beginPath();
  const gx0 = Math.max(0, Math.floor(view.x0 / GRID_PX) * GRID_PX);
  const gx1 = Math.min(w, view.x1);
  const gy0 = Math.max(0, Math.floor(view.y0 / GRID_PX) * GRID_PX);
  const gy1 = Math.min(h, view.y1);
  for (let gx = gx0; gx <= gx1; gx += GRID_PX) {
    ctx.moveTo(gx, Math.max(0, view.y0));
    ctx.lineTo(gx, gy1);
  }
  for (let gy = gy0; gy <= gy1; gy += GRID_PX) {
    ctx.moveTo(Math.max(0, view.x0), gy);
    ctx.lineTo(gx1, gy);
  }
  ctx.strokeStyle = look.grid;
  ctx.lineWidth = 1;
  ctx.stroke();

  ctx.strokeStyle = look.border;
  ctx.lineWidth = 4;
  ctx.strokeRect(-2, -2, w + 4, h + 4);

  ctx.beginPath();
  for (const r of world.arena.walls) ctx.rect(r.x, r.y, r.w, r.h);
  ctx.fillStyle = look.wallFill;
  ctx.fill();
  ctx.strokeStyle = look.wallStroke;
  ctx.lineWidth = 2;
  ctx.stroke();
  ctx.beginPath();
  for (const r of world.arena.walls) ctx.rect(r.x + 6, r.y + 6, r.w - 12, r.h - 12);
  ctx.strokeStyle = look.wallInner;
  ctx.lineWidth = 1;
  ctx.stroke();
}

/** A portal in its hue: a glow, counter-rotating arcs and orbiting motes. */
export function drawPortal(
  ctx: CanvasRenderingContext2D,
  portal: PortalContent,
  nowMs: number,
): void {
  const { x, y, radiusPx: r, hue } = portal;
  const t = nowMs / 1000;
  const pulse = 1 + 0.06 * Math.sin(t * 2.4);
  const glow = ctx.createRadialGradient(x, y, 0, x, y, r * 2 * pulse);
  glow.addColorStop(0, `hsla(${hue + 5},100%,79%,0.75)`);
  glow.addColorStop(0.45, `hsla(${hue},85%,61%,0.35)`);
  glow.addColorStop(1, `hsla(${hue + 2},78%,35%,0)`);
  ctx.fillStyle = glow;
  ctx.beginPath();
  ctx.arc(x, y, r * 2 * pulse, 0, TAU);
  ctx.fill();
  ctx.lineCap = "round";
  for (let k = 0; k < 4; k++) {
    const dir = k % 2 === 0 ? 1 : -1;
    const a = t * (1.3 + k * 0.5) * dir + k;
    ctx.beginPath();
    ctx.arc(x, y, r * (0.35 + 0.2 * k), a, a + Math.PI * 1.25);
    ctx.strokeStyle = `hsla(${hue + k * 18},95%,${78 - k * 8}%,0.9)`;
    ctx.lineWidth = 4 - k * 0.6;
    ctx.stroke();
  }
  ctx.lineCap = "butt";
  ctx.beginPath();
  for (let k = 0; k < 10; k++) {
    const a = t * 0.9 + (k * TAU) / 10;
    const rr = r * (1.1 + 0.15 * Math.sin(t * 3 + k));
    const mx = x + Math.cos(a) * rr;
    const my = y + Math.sin(a) * rr;
    ctx.moveTo(mx + 2, my);
    ctx.arc(mx, my, 2, 0, TAU);
  }
  ctx.fillStyle = `hsl(${hue},100%,93%)`;
  ctx.fill();
}

/** Traces a star of `points` tips (2 × points vertices) around the origin. */
function tracePolygonStar(
  ctx: CanvasRenderingContext2D,
  opts: { points: number; outer: number; inner: number },
): void {
  const n = opts.points * 2;
  for (let k = 0; k < n; k++) {
    const rr = k % 2 === 0 ? opts.outer : opts.inner;
    const a = (k * TAU) / n;
    if (k === 0) ctx.moveTo(Math.cos(a) * rr, Math.sin(a) * rr);
    else ctx.lineTo(Math.cos(a) * rr, Math.sin(a) * rr);
  }
  ctx.closePath();
}

/** Traces a regular polygon of circumradius `r` with a vertex on the +x axis. */
function tracePolygon(ctx: CanvasRenderingContext2D, opts: { sides: number; r: number }): void {
  for (let k = 0; k < opts.sides; k++) {
    const a = (k * TAU) / opts.sides;
    if (k === 0) ctx.moveTo(Math.cos(a) * opts.r, Math.sin(a) * opts.r);
    else ctx.lineTo(Math.cos(a) * opts.r, Math.sin(a) * opts.r);
  }
  ctx.closePath();
}

/** Traces an enemy's body around the origin, turned as its look says. */
function traceEnemy(
  ctx: CanvasRenderingContext2D,
  look: EnemyLook,
  opts: { r: number; spin: number; face: number },
): void {
  switch (look.shape) {
    case "star":
      ctx.rotate(opts.spin);
      tracePolygonStar(ctx, {
        points: look.points,
        outer: opts.r * look.outer,
        inner: opts.r * look.inner,
      });
      return;
    case "polygon":
      ctx.rotate(opts.face);
      tracePolygon(ctx, { sides: look.sides, r: opts.r });
      if (look.barrel) ctx.rect(opts.r * 0.6, -3.5, opts.r * 0.9, 7);
      return;
    case "arrow": {
      // A barbed arrowhead pointed at its prey.
      const r = opts.r;
      ctx.rotate(opts.face);
      ctx.moveTo(r * 1.4, 0);
      ctx.lineTo(-r * 0.4, r);
      ctx.lineTo(-r, r * 0.35);
      ctx.lineTo(-r * 0.55, 0);
      ctx.lineTo(-r, -r * 0.35);
      ctx.lineTo(-r * 0.4, -r);
      ctx.closePath();
      return;
    }
  }
}

/** A trash enemy as its kind looks, with its HP bar. */
export function drawEnemy(
  ctx: CanvasRenderingContext2D,
  e: EnemyView,
  opts: { nowMs: number; aimAt: { x: number; y: number } | undefined },
): void {
  const def = CONTENT.enemies[e.kind];
  const r = def?.radiusPx ?? UNKNOWN_RADIUS_PX;
  const face = opts.aimAt ? Math.atan2(opts.aimAt.y - e.y, opts.aimAt.x - e.x) : Math.PI / 2;
  ctx.save();
  ctx.translate(e.x, e.y);
  ctx.beginPath();
  if (def) {
    const spin = def.look.shape === "star" ? (opts.nowMs / 1000) * def.look.spinRadPerS + e.id : 0;
    traceEnemy(ctx, def.look, { r, spin, face });
    ctx.fillStyle = def.look.fill;
    ctx.strokeStyle = def.look.stroke;
  } else {
    ctx.arc(0, 0, r, 0, TAU);
    ctx.fillStyle = "#888888";
    ctx.strokeStyle = "#ffffff";
  }
  ctx.fill();
  ctx.lineWidth = 2;
  ctx.stroke();
  ctx.restore();
  const maxHp = def?.hp ?? e.hp;
  const frac = maxHp > 0 ? Math.max(0, Math.min(1, e.hp / maxHp)) : 0;
  const bw = r * 2.4;
  const by = e.y - r - 13;
  ctx.fillStyle = "rgba(0,0,0,0.7)";
  ctx.fillRect(e.x - bw / 2 - 1.5, by - 1.5, bw + 3, 8);
  ctx.fillStyle = frac > 0.5 ? "#6dff8e" : frac > 0.25 ? "#ffd54a" : "#ff5a4a";
  ctx.fillRect(e.x - bw / 2, by, bw * frac, 5);
}

/** A boss as its look says: large, stationary, coloured by phase, pulsing while it folds. */
export function drawBoss(
  ctx: CanvasRenderingContext2D,
  boss: NonNullable<Scene["boss"]>,
  opts: { nowMs: number; lookAt: { x: number; y: number } | undefined },
): void {
  const def = CONTENT.bosses[boss.bossId];
  if (!def) return;
  const { x, y, look } = def;
  const t = opts.nowMs / 1000;
  const color = phaseColor(boss.bossId, boss.phase);
  const pulse = boss.folding ? 1 + 0.09 * Math.sin(t * 18) : 1 + 0.025 * Math.sin(t * 2);
  const r = def.radiusPx * pulse;
  // Defeated: a faded husk for the celebration, not a threat.
  ctx.globalAlpha = boss.hp > 0 ? 1 : 0.3;
  const glow = ctx.createRadialGradient(x, y, r * 0.5, x, y, r * 2.2);
  glow.addColorStop(0, hexAlpha(color, boss.folding ? 0.55 : 0.35));
  glow.addColorStop(1, hexAlpha(color, 0));
  ctx.fillStyle = glow;
  ctx.beginPath();
  ctx.arc(x, y, r * 2.2, 0, TAU);
  ctx.fill();

  ctx.save();
  ctx.translate(x, y);
  ctx.rotate(t * look.body.spinRadPerS);
  ctx.beginPath();
  tracePolygonStar(ctx, { points: look.body.points, outer: r, inner: r * look.body.inner });
  ctx.fillStyle = look.fill;
  ctx.fill();
  ctx.strokeStyle = color;
  ctx.lineWidth = 4;
  ctx.stroke();
  ctx.rotate(t * (look.core.spinRadPerS - look.body.spinRadPerS));
  ctx.beginPath();
  tracePolygon(ctx, { sides: look.core.sides, r: r * look.core.scale });
  ctx.fillStyle = hexAlpha(color, 0.35);
  ctx.fill();
  ctx.strokeStyle = color;
  ctx.lineWidth = 2;
  ctx.stroke();
  ctx.restore();

  if (look.eye) {
    // The eye follows the local ship.
    const seen = opts.lookAt ? Math.atan2(opts.lookAt.y - y, opts.lookAt.x - x) : Math.PI / 2;
    ctx.beginPath();
    ctx.arc(x, y, r * 0.24, 0, TAU);
    ctx.fillStyle = "#fff";
    ctx.fill();
    ctx.beginPath();
    ctx.arc(x + Math.cos(seen) * r * 0.1, y + Math.sin(seen) * r * 0.1, r * 0.11, 0, TAU);
    ctx.fillStyle = look.fill;
    ctx.fill();
  }

  ctx.globalAlpha = 1;
  if (boss.folding) {
    const ring = (t * 1.6) % 1;
    ctx.beginPath();
    ctx.arc(x, y, r * (1 + ring * 1.2), 0, TAU);
    ctx.strokeStyle = `rgba(255,255,255,${0.6 * (1 - ring)})`;
    ctx.lineWidth = 3;
    ctx.stroke();
  }
}

/**
 * A ship turned to its aim; faded when dead or escaped, or while its player's link is
 * down (parked, untouchable), blinking while invulnerable.
 */
export function drawShip(
  ctx: CanvasRenderingContext2D,
  ship: ShipView,
  opts: { self: boolean; nowMs: number },
): void {
  // Your own ship is drawn as you fly it: a park the server noted on a late link is not
  // yours to see fade (the reconnecting overlay says when the link is really gone).
  const away = !opts.self && (ship.flags & PlayerFlag.Away) !== 0;
  const active = (ship.flags & PlayerFlag.Active) !== 0 && !away;
  let alpha = active ? 1 : 0.3;
  if (active && (ship.flags & PlayerFlag.Invulnerable) !== 0) {
    alpha = Math.floor(opts.nowMs / 90) % 2 === 0 ? 0.35 : 0.9;
  }
  const ships = CONTENT.ships;
  const color = opts.self ? ships.self : ships.allies[ship.id % ships.allies.length];
  ctx.globalAlpha = alpha;
  if (opts.self) {
    ctx.beginPath();
    ctx.arc(ship.x, ship.y, 21, 0, TAU);
    ctx.strokeStyle = hexAlpha(ships.self, 0.35);
    ctx.lineWidth = 2;
    ctx.stroke();
  }
  ctx.save();
  ctx.translate(ship.x, ship.y);
  ctx.rotate(ship.aimRad);
  ctx.beginPath();
  ctx.moveTo(17, 0);
  ctx.lineTo(-10, 10);
  ctx.lineTo(-5, 0);
  ctx.lineTo(-10, -10);
  ctx.closePath();
  ctx.fillStyle = color;
  ctx.fill();
  ctx.strokeStyle = opts.self ? "#ffffff" : "rgba(255,255,255,0.6)";
  ctx.lineWidth = 1.5;
  ctx.stroke();
  ctx.restore();
  if ((ship.flags & PlayerFlag.Channelling) !== 0) {
    ctx.beginPath();
    ctx.arc(ship.x, ship.y, 26, -Math.PI / 2, -Math.PI / 2 + TAU * ship.escape);
    ctx.strokeStyle = "#ffe066";
    ctx.lineWidth = 3;
    ctx.stroke();
  }
  ctx.globalAlpha = 1;
}

/**
 * The local ship's hitbox, on top of the bullets, at exactly the radius the server
 * judges (the world's player radius, from content): a bullet whose drawn body touches
 * this disc hits, one that stays off it does not. The rim is drawn inside the edge, so
 * its outer border is the edge; the bright core is only where the eye rests.
 */
export function drawHitbox(
  ctx: CanvasRenderingContext2D,
  ship: ShipView,
  world: WorldContent,
): void {
  const r = world.player.radiusPx;
  ctx.beginPath();
  ctx.arc(ship.x, ship.y, r, 0, TAU);
  ctx.fillStyle = "rgba(255,255,255,0.18)";
  ctx.fill();
  ctx.beginPath();
  ctx.arc(ship.x, ship.y, r - HITBOX_RIM_PX / 2, 0, TAU);
  ctx.strokeStyle = "rgba(255,255,255,0.85)";
  ctx.lineWidth = HITBOX_RIM_PX;
  ctx.stroke();
  ctx.beginPath();
  ctx.arc(ship.x, ship.y, HITBOX_CORE_PX, 0, TAU);
  ctx.fillStyle = CONTENT.ships.self;
  ctx.fill();
}

/** Width of the hitbox's rim, inside its edge. */
const HITBOX_RIM_PX = 1.5;
/** Radius of the dot the eye follows, at the hitbox's centre. */
const HITBOX_CORE_PX = 2;

/** A point on screen, in CSS pixels. */
type ToScreen = (x: number, y: number) => { x: number; y: number };

/**
 * Name tags above ships (own tag brighter) and the portal's label. Drawn in screen
 * space so text stays legible at any zoom; the context holds the CSS-pixel transform.
 */
export function drawLabels(
  ctx: CanvasRenderingContext2D,
  scene: Scene,
  toScreen: ToScreen,
): void {
  ctx.textAlign = "center";
  ctx.lineJoin = "round";
  ctx.lineWidth = 3;
  ctx.strokeStyle = "rgba(5,6,14,0.85)";
  const portals = scene.world.portals;
  for (const portal of portals) {
    const at = toScreen(portal.x, portal.y + portal.radiusPx * 2);
    // As wide as the gap to the nearest other portal allows: wrapped on a small screen.
    let roomPx = Infinity;
    for (const other of portals) {
      if (other !== portal) {
        roomPx = Math.min(roomPx, Math.abs(toScreen(other.x, other.y).x - at.x));
      }
    }
    ctx.fillStyle = `hsla(${portal.hue},100%,92%,0.9)`;
    ctx.font = "600 13px system-ui, sans-serif";
    let lines = wrapWords(ctx, portal.label, roomPx - LABEL_GAP_PX);
    if (lines.length > 2) {
      // A smaller font rather than a third line with a word alone on it.
      ctx.font = "600 11px system-ui, sans-serif";
      lines = wrapWords(ctx, portal.label, roomPx - LABEL_GAP_PX);
    }
    lines.forEach((line, k) => {
      ctx.strokeText(line, at.x, at.y + 14 + k * LABEL_LINE_PX);
      ctx.fillText(line, at.x, at.y + 14 + k * LABEL_LINE_PX);
    });
  }
  ctx.font = "600 12px system-ui, sans-serif";
  const selfId = scene.self?.id ?? 0;
  // Your own tag is placed first; a tag that would cover one placed before it moves up.
  const ships = scene.self ? [scene.self, ...scene.others] : scene.others;
  const shipR = scene.world.player.radiusPx;
  const tags = ships.map((s) => {
    const away = s.id !== selfId && (s.flags & PlayerFlag.Away) !== 0;
    const dim = (s.flags & PlayerFlag.Active) === 0 || away;
    const tag = (s.flags & PlayerFlag.Dead) !== 0
      ? `${s.name} (down)`
      : (s.flags & PlayerFlag.Escaped) !== 0
      ? `${s.name} (escaped)`
      : away
      ? `${s.name} (reconnecting…)`
      : s.name;
    const at = toScreen(s.x, s.y);
    const r = toScreen(s.x + shipR, s.y).x - at.x + BODY_MARGIN_PX;
    return {
      s,
      tag,
      dim,
      x: at.x,
      y: at.y - TAG_ABOVE_PX,
      below: at.y + TAG_BELOW_PX,
      body: { x: at.x - r, y: at.y - r, w: 2 * r, h: 2 * r },
      w: ctx.measureText(tag).width,
    };
  });
  // No name over another ship where it can go under its own, and none over yours but faintly.
  const bodies = tags.map((t) => t.body);
  const keepClear = scene.self ? tags[0].body : undefined;
  const places = stackTags(tags, TAG_LINE_PX, { bodies, keepClear });
  tags.forEach(({ s, tag, dim, x }, i) => {
    const { y, faded } = places[i];
    ctx.globalAlpha = faded ? 0.2 : dim ? 0.45 : 1;
    ctx.strokeText(tag, x, y);
    ctx.fillStyle = s.id === selfId ? CONTENT.ships.self : "#f0eefc";
    ctx.fillText(tag, x, y);
  });
  ctx.globalAlpha = 1;
}

/** A name tag's line height in CSS px (12 px text and its outline). */
const TAG_LINE_PX = 14;
/** A tag's baseline above its ship's centre, or, when moved, below it (CSS px). */
const TAG_ABOVE_PX = 24;
const TAG_BELOW_PX = 34;
/** Room kept on each side of a tag, so two names never read as one. */
const TAG_GAP_PX = 3;
/** How many lines a tag may climb to clear the ones before it. */
const TAG_CLIMB_MAX = 3;
/** How far a tag's 12 px text reaches above and below its baseline, in CSS px. */
const TAG_ASCENT_PX = 10;
const TAG_DESCENT_PX = 3;
/** Room kept around a ship's body, beyond its radius, in CSS px. */
const BODY_MARGIN_PX = 4;

/** Where a tag goes: its baseline, and whether it is drawn faint because nowhere was clear. */
export interface TagPlace {
  readonly y: number;
  readonly faded: boolean;
}

/**
 * Places centred tags (`x`, baseline `y`, width `w`, in CSS px) so that none covers one
 * placed before it: each climbs to just above the one it would cover, at most
 * `TAG_CLIMB_MAX` times. A tag that would then cover a ship's `bodies` other than its own
 * (`body`) goes to its `below` baseline instead, under its own ship, when that is clear of
 * tags and ships; otherwise it stays, and if what it covers is `keepClear` (your own ship:
 * the bullets around it are what you dodge) it is drawn faint.
 */
export function stackTags(
  tags: readonly {
    readonly x: number;
    readonly y: number;
    readonly w: number;
    readonly below?: number;
    readonly body?: ScreenRect;
  }[],
  lineH: number,
  opts: { bodies?: readonly ScreenRect[]; keepClear?: ScreenRect } = {},
): TagPlace[] {
  const placed: { x0: number; x1: number; y: number }[] = [];
  const bodies = opts.bodies ?? [];
  /** The rect a tag's text fills with its baseline at `y`. */
  const textAt = (x0: number, x1: number, y: number): ScreenRect => ({
    x: x0,
    y: y - TAG_ASCENT_PX,
    w: x1 - x0,
    h: TAG_ASCENT_PX + TAG_DESCENT_PX,
  });
  const crowded = (x0: number, x1: number, y: number) =>
    placed.find((p) => x0 < p.x1 && p.x0 < x1 && Math.abs(p.y - y) < lineH);
  return tags.map((t) => {
    const x0 = t.x - t.w / 2 - TAG_GAP_PX;
    const x1 = t.x + t.w / 2 + TAG_GAP_PX;
    const onShip = (y: number) => {
      const text = textAt(x0, x1, y);
      return bodies.some((b) => b !== t.body && rectsOverlap(b, text));
    };
    let y = t.y;
    for (let k = 0; k < TAG_CLIMB_MAX; k++) {
      const under = crowded(x0, x1, y);
      if (!under) break;
      y = under.y - lineH;
    }
    let faded = false;
    if (onShip(y)) {
      const below = t.below;
      if (below !== undefined && !onShip(below) && !crowded(x0, x1, below)) y = below;
      else {
        const clear = opts.keepClear;
        faded = clear !== undefined && clear !== t.body && rectsOverlap(clear, textAt(x0, x1, y));
      }
    }
    placed.push({ x0, x1, y });
    return { y, faded };
  });
}

/** Space kept between two portals' labels, and a label's line height, in CSS px. */
const LABEL_GAP_PX = 12;
const LABEL_LINE_PX = 15;

/**
 * `text` in lines no wider than `maxPx` in the context's font (a longer word keeps its
 * line), as few as fit and as even as those allow: no word left alone on the last line
 * when a narrower width gives the same count.
 */
export function wrapWords(ctx: CanvasRenderingContext2D, text: string, maxPx: number): string[] {
  if (ctx.measureText(text).width <= maxPx) return [text];
  const lines = greedyLines(ctx, text, maxPx);
  let lo = 0;
  let hi = maxPx;
  let best = lines;
  // The narrowest width (to a pixel) that still needs no more lines.
  while (hi - lo > 1) {
    const mid = (lo + hi) / 2;
    const tried = greedyLines(ctx, text, mid);
    if (tried.length <= lines.length) [hi, best] = [mid, tried];
    else lo = mid;
  }
  return best;
}

function greedyLines(ctx: CanvasRenderingContext2D, text: string, maxPx: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    const next = line ? `${line} ${word}` : word;
    if (line && ctx.measureText(next).width > maxPx) {
      lines.push(line);
      line = word;
    } else line = next;
  }
  if (line) lines.push(line);
  return lines;
}

/** White bursts on whatever was struck in the last FLASH_MS. */
export function drawFlashes(ctx: CanvasRenderingContext2D, scene: Scene): void {
  for (const f of scene.flashes) {
    const age = (scene.nowMs - f.atMs) / FLASH_MS;
    if (age < 0 || age >= 1) continue;
    const at = flashTarget(scene, f);
    if (!at) continue;
    ctx.beginPath();
    ctx.arc(at.x, at.y, at.r * (0.9 + age * 0.6), 0, TAU);
    ctx.fillStyle = f.target === HitTarget.Player
      ? `rgba(255,80,80,${0.55 * (1 - age)})`
      : `rgba(255,255,255,${0.6 * (1 - age)})`;
    ctx.fill();
  }
}

function flashTarget(scene: Scene, f: HitFlash): { x: number; y: number; r: number } | undefined {
  if (f.target === HitTarget.Boss) {
    const def = scene.boss ? CONTENT.bosses[scene.boss.bossId] : undefined;
    return def && { x: def.x, y: def.y, r: def.radiusPx };
  }
  if (f.target === HitTarget.Enemy) {
    const e = scene.enemies.find((e) => e.id === f.targetId);
    return e && { x: e.x, y: e.y, r: CONTENT.enemies[e.kind]?.radiusPx ?? UNKNOWN_RADIUS_PX };
  }
  const p = scene.self?.id === f.targetId
    ? scene.self
    : scene.others.find((p) => p.id === f.targetId);
  return p && { x: p.x, y: p.y, r: scene.world.player.radiusPx * 2 };
}

/** `#rrggbb` with an alpha, as rgba(). */
function hexAlpha(hex: string, alpha: number): string {
  const v = parseInt(hex.slice(1), 16);
  return `rgba(${v >> 16},${(v >> 8) & 255},${v & 255},${alpha})`;
}
