/**
 * Canvas drawing of everything but bullets: floor, walls, portal, ships, enemies,
 * the boss and hit flashes. Free functions over a context that already holds the
 * world transform; a handful of actors, so per-actor save/restore is fine here.
 */
import { BOSSES, ENEMIES, PLAYER } from "../content/mod.ts";
import { PlayerFlag } from "../net/wire/mod.ts";
import { HitTarget, type WorldDef } from "../sim/mod.ts";
import type { ViewRect } from "./bullet_layer.ts";
import type { EnemyView, HitFlash, Scene, ShipView } from "./scene.ts";

const TAU = Math.PI * 2;
const GRID_PX = 40;
/** How long a struck target glows, in ms. */
export const FLASH_MS = 160;

/** Colours of the Warden by phase: each phase reads at a glance. */
export const PHASE_COLORS = ["#3fd6c8", "#f2b53a", "#e8509e", "#ff4a3d"] as const;
/** Ship colours of other players, picked by id. */
const ALLY_COLORS = ["#ffd166", "#b48cff", "#7dff8a", "#ff8fab", "#8fd3ff"] as const;
const SELF_COLOR = "#5ff4ff";

/** Floor, grid, border and walls. */
export function drawArena(
  ctx: CanvasRenderingContext2D,
  world: WorldDef,
  view: ViewRect,
): void {
  const { widthPx: w, heightPx: h } = world.arena;
  ctx.fillStyle = world.kind === "hub" ? "#0e1224" : "#120d1f";
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
  ctx.strokeStyle = world.kind === "hub" ? "rgba(110,140,255,0.07)" : "rgba(200,110,255,0.07)";
  ctx.lineWidth = 1;
  ctx.stroke();

  ctx.strokeStyle = world.kind === "hub" ? "#2c3770" : "#4a2b6e";
  ctx.lineWidth = 4;
  ctx.strokeRect(-2, -2, w + 4, h + 4);

  ctx.beginPath();
  for (const r of world.arena.walls) ctx.rect(r.x, r.y, r.w, r.h);
  ctx.fillStyle = "#1c2142";
  ctx.fill();
  ctx.strokeStyle = "#5661a8";
  ctx.lineWidth = 2;
  ctx.stroke();
  ctx.beginPath();
  for (const r of world.arena.walls) ctx.rect(r.x + 6, r.y + 6, r.w - 12, r.h - 12);
  ctx.strokeStyle = "rgba(120,135,220,0.25)";
  ctx.lineWidth = 1;
  ctx.stroke();
}

/** The hub portal: a glow, counter-rotating arcs and orbiting motes. */
export function drawPortal(
  ctx: CanvasRenderingContext2D,
  portal: { x: number; y: number; radiusPx: number },
  nowMs: number,
): void {
  const { x, y, radiusPx: r } = portal;
  const t = nowMs / 1000;
  const pulse = 1 + 0.06 * Math.sin(t * 2.4);
  const glow = ctx.createRadialGradient(x, y, 0, x, y, r * 2 * pulse);
  glow.addColorStop(0, "rgba(190,150,255,0.75)");
  glow.addColorStop(0.45, "rgba(110,70,240,0.35)");
  glow.addColorStop(1, "rgba(60,20,160,0)");
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
    ctx.strokeStyle = `hsla(${255 + k * 18},95%,${78 - k * 8}%,0.9)`;
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
  ctx.fillStyle = "#e7dcff";
  ctx.fill();
}

/** A trash enemy by kind, with its HP bar. */
export function drawEnemy(
  ctx: CanvasRenderingContext2D,
  e: EnemyView,
  opts: { nowMs: number; aimAt: { x: number; y: number } | undefined },
): void {
  const def = ENEMIES[e.kind];
  const r = def?.radiusPx ?? 14;
  const face = opts.aimAt ? Math.atan2(opts.aimAt.y - e.y, opts.aimAt.x - e.x) : Math.PI / 2;
  ctx.save();
  ctx.translate(e.x, e.y);
  ctx.beginPath();
  switch (e.kind) {
    case 0: { // spinner: a turning four-armed star
      ctx.rotate(opts.nowMs / 350 + e.id);
      for (let k = 0; k < 8; k++) {
        const rr = k % 2 === 0 ? r * 1.15 : r * 0.45;
        const a = (k * TAU) / 8;
        if (k === 0) ctx.moveTo(Math.cos(a) * rr, Math.sin(a) * rr);
        else ctx.lineTo(Math.cos(a) * rr, Math.sin(a) * rr);
      }
      ctx.closePath();
      ctx.fillStyle = "#ff9a3c";
      ctx.strokeStyle = "#ffe0b8";
      break;
    }
    case 1: { // gunner: a hexagon with a barrel on its target
      ctx.rotate(face);
      for (let k = 0; k < 6; k++) {
        const a = (k * TAU) / 6;
        if (k === 0) ctx.moveTo(Math.cos(a) * r, Math.sin(a) * r);
        else ctx.lineTo(Math.cos(a) * r, Math.sin(a) * r);
      }
      ctx.closePath();
      ctx.rect(r * 0.6, -3.5, r * 0.9, 7);
      ctx.fillStyle = "#a35cff";
      ctx.strokeStyle = "#e3ccff";
      break;
    }
    default: { // chaser: a barbed arrowhead pointed at its prey
      ctx.rotate(face);
      ctx.moveTo(r * 1.4, 0);
      ctx.lineTo(-r * 0.4, r);
      ctx.lineTo(-r, r * 0.35);
      ctx.lineTo(-r * 0.55, 0);
      ctx.lineTo(-r, -r * 0.35);
      ctx.lineTo(-r * 0.4, -r);
      ctx.closePath();
      ctx.fillStyle = "#ff4d5e";
      ctx.strokeStyle = "#ffc2c8";
      break;
    }
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

/** The Warden: large, stationary, coloured by phase, pulsing while it folds. */
export function drawBoss(
  ctx: CanvasRenderingContext2D,
  boss: NonNullable<Scene["boss"]>,
  opts: { nowMs: number; lookAt: { x: number; y: number } | undefined },
): void {
  const def = BOSSES[boss.bossId];
  if (!def) return;
  const { x, y } = def;
  const t = opts.nowMs / 1000;
  const color = PHASE_COLORS[boss.phase % PHASE_COLORS.length];
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
  ctx.rotate(t * 0.25);
  ctx.beginPath();
  // A sixteen-point folded star: alternating radii read as creases.
  for (let k = 0; k < 16; k++) {
    const rr = k % 2 === 0 ? r : r * 0.8;
    const a = (k * TAU) / 16;
    if (k === 0) ctx.moveTo(Math.cos(a) * rr, Math.sin(a) * rr);
    else ctx.lineTo(Math.cos(a) * rr, Math.sin(a) * rr);
  }
  ctx.closePath();
  ctx.fillStyle = "#1a1030";
  ctx.fill();
  ctx.strokeStyle = color;
  ctx.lineWidth = 4;
  ctx.stroke();
  ctx.rotate(-t * 0.7);
  ctx.beginPath();
  ctx.rect(-r * 0.45, -r * 0.45, r * 0.9, r * 0.9);
  ctx.fillStyle = hexAlpha(color, 0.35);
  ctx.fill();
  ctx.strokeStyle = color;
  ctx.lineWidth = 2;
  ctx.stroke();
  ctx.restore();

  // The eye follows the local ship.
  const look = opts.lookAt ? Math.atan2(opts.lookAt.y - y, opts.lookAt.x - x) : Math.PI / 2;
  ctx.beginPath();
  ctx.arc(x, y, r * 0.24, 0, TAU);
  ctx.fillStyle = "#fff";
  ctx.fill();
  ctx.beginPath();
  ctx.arc(x + Math.cos(look) * r * 0.1, y + Math.sin(look) * r * 0.1, r * 0.11, 0, TAU);
  ctx.fillStyle = "#120a20";
  ctx.fill();

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

/** A ship turned to its aim; faded when dead or escaped, blinking while invulnerable. */
export function drawShip(
  ctx: CanvasRenderingContext2D,
  ship: ShipView,
  opts: { self: boolean; nowMs: number },
): void {
  const active = (ship.flags & PlayerFlag.Active) !== 0;
  let alpha = active ? 1 : 0.3;
  if (active && (ship.flags & PlayerFlag.Invulnerable) !== 0) {
    alpha = Math.floor(opts.nowMs / 90) % 2 === 0 ? 0.35 : 0.9;
  }
  const color = opts.self ? SELF_COLOR : ALLY_COLORS[ship.id % ALLY_COLORS.length];
  ctx.globalAlpha = alpha;
  if (opts.self) {
    ctx.beginPath();
    ctx.arc(ship.x, ship.y, 21, 0, TAU);
    ctx.strokeStyle = "rgba(95,244,255,0.35)";
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

/** The local ship's hitbox, on top of the bullets: what actually gets hit. */
export function drawHitbox(ctx: CanvasRenderingContext2D, ship: ShipView): void {
  ctx.beginPath();
  ctx.arc(ship.x, ship.y, PLAYER.radiusPx * 0.45, 0, TAU);
  ctx.fillStyle = "#ffffff";
  ctx.fill();
  ctx.strokeStyle = SELF_COLOR;
  ctx.lineWidth = 1.5;
  ctx.stroke();
}

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
  const portal = scene.world.portal;
  if (portal) {
    const at = toScreen(portal.x, portal.y + portal.radiusPx * 2);
    ctx.font = "600 13px system-ui, sans-serif";
    ctx.fillStyle = "rgba(225,210,255,0.85)";
    ctx.fillText("PORTAL — walk in", at.x, at.y + 14);
  }
  ctx.font = "600 12px system-ui, sans-serif";
  const selfId = scene.self?.id ?? 0;
  const ships = scene.self ? [...scene.others, scene.self] : scene.others;
  for (const s of ships) {
    const dim = (s.flags & PlayerFlag.Active) === 0;
    const tag = (s.flags & PlayerFlag.Dead) !== 0
      ? `${s.name} (down)`
      : (s.flags & PlayerFlag.Escaped) !== 0
      ? `${s.name} (escaped)`
      : s.name;
    const at = toScreen(s.x, s.y);
    ctx.globalAlpha = dim ? 0.45 : 1;
    ctx.strokeText(tag, at.x, at.y - 24);
    ctx.fillStyle = s.id === selfId ? SELF_COLOR : "#f0eefc";
    ctx.fillText(tag, at.x, at.y - 24);
  }
  ctx.globalAlpha = 1;
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
    const def = scene.boss ? BOSSES[scene.boss.bossId] : undefined;
    return def && { x: def.x, y: def.y, r: def.radiusPx };
  }
  if (f.target === HitTarget.Enemy) {
    const e = scene.enemies.find((e) => e.id === f.targetId);
    return e && { x: e.x, y: e.y, r: ENEMIES[e.kind]?.radiusPx ?? 14 };
  }
  const p = scene.self?.id === f.targetId
    ? scene.self
    : scene.others.find((p) => p.id === f.targetId);
  return p && { x: p.x, y: p.y, r: PLAYER.radiusPx * 2 };
}

/** `#rrggbb` with an alpha, as rgba(). */
function hexAlpha(hex: string, alpha: number): string {
  const v = parseInt(hex.slice(1), 16);
  return `rgba(${v >> 16},${(v >> 8) & 255},${v & 255},${alpha})`;
}
