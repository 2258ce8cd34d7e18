/**
 * Canvas drawing of the passing effects: attack warnings (a line along an aimed
 * spread, a flash on a ring's emitter, a glow along the edge a wall marches in
 * from), impact sparks and graze glints, and the focused hitbox with its graze
 * band. Free functions over a context holding the world transform.
 */
import { CONTENT } from "../content/mod.ts";
import type { EmitterDef } from "../sim/mod.ts";
import { SPARK_MS, type TelegraphView } from "./effects.ts";
import type { Scene, ShipView } from "./scene.ts";

const TAU = Math.PI * 2;
/** How far an aim line reaches, in world px: across the arena. */
const LINE_PX = 1400;
const WARN = "255,70,90";

/** The emitter a warning belongs to, and where it stands now. */
function sourceOf(
  scene: Scene,
  t: TelegraphView,
): { x: number; y: number; r: number; def: EmitterDef | undefined } | undefined {
  if (t.source === "boss") {
    const def = scene.boss ? CONTENT.bosses[scene.boss.bossId] : undefined;
    if (!def) return undefined;
    return { x: def.x, y: def.y, r: def.radiusPx, def: def.phases[t.phase]?.emitters[t.emitter] };
  }
  const e = scene.enemies.find((e) => e.id === t.sourceId);
  const def = e && CONTENT.enemies[e.kind];
  return e && def && { x: e.x, y: e.y, r: def.radiusPx, def: def.emitters[t.emitter] };
}

/** Every pending warning; each grows stronger as its shot nears. */
export function drawTelegraphs(
  ctx: CanvasRenderingContext2D,
  scene: Scene,
  telegraphs: readonly TelegraphView[],
): void {
  const tick = scene.tick ?? 0;
  const { widthPx: w, heightPx: h } = scene.world.arena;
  if (telegraphs.length === 0) return;
  // Warnings stay inside the arena: a line running off the edge says nothing.
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, 0, w, h);
  ctx.clip();
  for (const t of telegraphs) {
    const left = t.fireTick - tick;
    if (left < 0 || left > t.leadTicks + 1) continue;
    const p = 1 - left / Math.max(1, t.leadTicks); // 0 → 1 as the shot nears
    if (t.style === "edge") {
      // Walls march in from the top (rows) or the left (columns).
      const rows = Math.abs(t.aimRad - Math.PI / 2) < 0.1;
      const depth = 26 + 20 * p;
      const g = rows
        ? ctx.createLinearGradient(0, 0, 0, depth)
        : ctx.createLinearGradient(0, 0, depth, 0);
      g.addColorStop(0, `rgba(${WARN},${0.25 + 0.5 * p})`);
      g.addColorStop(1, `rgba(${WARN},0)`);
      ctx.fillStyle = g;
      if (rows) ctx.fillRect(0, 0, w, depth);
      else ctx.fillRect(0, 0, depth, h);
      continue;
    }
    const src = sourceOf(scene, t);
    if (!src) continue;
    if (t.style === "flash") {
      const r = src.r * (1.15 + 0.5 * p);
      ctx.beginPath();
      ctx.arc(src.x, src.y, r, 0, TAU);
      ctx.strokeStyle = `rgba(255,235,150,${0.25 + 0.6 * p})`;
      ctx.lineWidth = 2 + 3 * p;
      ctx.stroke();
      continue;
    }
    // Line: along the locked aim, fanned over the spread when there is one.
    const spread = src.def?.type === "aimedSpread" ? src.def.spreadRad : 0;
    const count = src.def?.type === "aimedSpread" ? src.def.count : 1;
    ctx.beginPath();
    for (let k = 0; k < count; k++) {
      const a = t.aimRad + (count > 1 ? -spread / 2 + (spread * k) / (count - 1) : 0);
      ctx.moveTo(src.x + Math.cos(a) * src.r, src.y + Math.sin(a) * src.r);
      ctx.lineTo(src.x + Math.cos(a) * LINE_PX, src.y + Math.sin(a) * LINE_PX);
    }
    ctx.strokeStyle = `rgba(${WARN},${0.18 + 0.5 * p})`;
    ctx.lineWidth = 1 + 1.5 * p;
    ctx.setLineDash([10, 8]);
    ctx.stroke();
    ctx.setLineDash([]);
  }
  ctx.restore();
}

/** Impact sparks (white on what you hit, red on you) and graze glints. */
export function drawSparks(ctx: CanvasRenderingContext2D, scene: Scene): void {
  const tuning = scene.world.player;
  for (const s of scene.sparks ?? []) {
    const age = (scene.nowMs - s.atMs) / SPARK_MS[s.kind];
    if (age < 0 || age >= 1) continue;
    const fade = 1 - age;
    if (s.kind === "graze") {
      ctx.beginPath();
      ctx.arc(s.x, s.y, tuning.radiusPx + tuning.grazeBandPx * (0.4 + 0.6 * age), 0, TAU);
      ctx.strokeStyle = `rgba(180,240,255,${0.55 * fade})`;
      ctx.lineWidth = 1.5;
      ctx.stroke();
      continue;
    }
    const r = (s.kind === "hurt" ? 10 : 5) + age * (s.kind === "hurt" ? 26 : 14);
    ctx.beginPath();
    // A four-pointed star: reads as an impact even at small scale.
    for (let k = 0; k < 8; k++) {
      const rr = k % 2 === 0 ? r : r * 0.3;
      const a = (k * TAU) / 8 + age;
      if (k === 0) ctx.moveTo(s.x + Math.cos(a) * rr, s.y + Math.sin(a) * rr);
      else ctx.lineTo(s.x + Math.cos(a) * rr, s.y + Math.sin(a) * rr);
    }
    ctx.closePath();
    ctx.fillStyle = s.kind === "hurt"
      ? `rgba(255,90,90,${0.85 * fade})`
      : `rgba(255,255,255,${0.9 * fade})`;
    ctx.fill();
  }
}

/**
 * In focus: the graze band around the hitbox (this world's ship). The hitbox itself is
 * drawn always, by `drawHitbox`, at exactly the judged radius.
 */
export function drawFocus(
  ctx: CanvasRenderingContext2D,
  ship: ShipView,
  tuning: { readonly radiusPx: number; readonly grazeBandPx: number },
): void {
  ctx.beginPath();
  ctx.arc(ship.x, ship.y, tuning.radiusPx + tuning.grazeBandPx, 0, TAU);
  ctx.strokeStyle = "rgba(150,220,255,0.22)";
  ctx.lineWidth = 1;
  ctx.stroke();
}
