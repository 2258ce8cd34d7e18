/**
 * A crude pilot: aims at the nearest enemy or boss, fires, keeps a fighting
 * distance and sidesteps enemy bullets. Pure: it reads a view of the world and
 * returns one input frame, so headless bots, tests and benchmarks share it.
 * Imports only sim/.
 */
import {
  type ArenaDef,
  type BulletPool,
  Button,
  type InputFrame,
  MOVE_UNITS,
  quantizeAngle,
  Team,
} from "./mod.ts";

/** What the pilot sees. */
export interface BrainView {
  readonly self: { readonly x: number; readonly y: number };
  readonly arena: ArenaDef;
  /** Enemies and the boss, with their radii. */
  readonly targets: readonly { readonly x: number; readonly y: number; readonly r: number }[];
  readonly bullets: BulletPool;
  /** Where to walk when there is nothing to fight (the hub portal, say). */
  readonly goal?: { readonly x: number; readonly y: number };
}

/** What the pilot should do besides fighting. */
export interface BrainOrders {
  readonly tick: number;
  readonly fire?: boolean;
  readonly escape?: boolean;
  /** Preferred distance from the nearest target. */
  readonly rangePx?: number;
  /** Varies range and circling between pilots so a crowd does not fly as one ship. */
  readonly style?: number;
}

const DODGE_RADIUS_PX = 90;

/** One input frame for this tick. */
export function think(view: BrainView, orders: BrainOrders): InputFrame {
  const { self } = view;
  let aimRad = -Math.PI / 2;
  let wantX = 0;
  let wantY = 0;
  let nearest: BrainView["targets"][number] | undefined;
  let bestD2 = Infinity;
  for (const t of view.targets) {
    const d2 = (t.x - self.x) ** 2 + (t.y - self.y) ** 2;
    if (d2 < bestD2) [bestD2, nearest] = [d2, t];
  }
  if (nearest) {
    const dx = nearest.x - self.x;
    const dy = nearest.y - self.y;
    const d = Math.sqrt(bestD2) || 1;
    aimRad = Math.atan2(dy, dx);
    const style = orders.style ?? 0;
    const range = orders.rangePx ?? 300 + (style % 4) * 45;
    const pull = d > range + 40 ? 0.6 : d < range - 40 ? -0.8 : 0;
    wantX += (dx / d) * pull;
    wantY += (dy / d) * pull;
    // Circle slowly, each pilot on its own rhythm, so a crowd does not stack on one spot.
    const circle = 0.25 * Math.sign(Math.sin(orders.tick / (150 + 37 * style) + style));
    wantX += (-dy / d) * circle;
    wantY += (dx / d) * circle;
  } else if (view.goal) {
    const dx = view.goal.x - self.x;
    const dy = view.goal.y - self.y;
    const d = Math.hypot(dx, dy) || 1;
    wantX = dx / d;
    wantY = dy / d;
  }
  // Sidestep: push away from nearby enemy bullets, harder the closer they are,
  // and across their path rather than along it.
  const b = view.bullets;
  let dodgeX = 0;
  let dodgeY = 0;
  for (let i = 0; i < b.count; i++) {
    if (b.team[i] !== Team.Enemy) continue;
    const dx = self.x - b.x[i];
    const dy = self.y - b.y[i];
    const d2 = dx * dx + dy * dy;
    if (d2 > DODGE_RADIUS_PX * DODGE_RADIUS_PX) continue;
    const approaching = dx * b.dirX[i] + dy * b.dirY[i];
    if (approaching < -b.radius[i] - 12) continue; // already past us
    const w = 1 - Math.sqrt(d2) / DODGE_RADIUS_PX;
    const side = -b.dirY[i] * dx + b.dirX[i] * dy >= 0 ? 1 : -1;
    dodgeX += (-b.dirY[i] * side + dx / DODGE_RADIUS_PX) * w * 2;
    dodgeY += (b.dirX[i] * side + dy / DODGE_RADIUS_PX) * w * 2;
  }
  wantX += dodgeX;
  wantY += dodgeY;
  // Keep off the edges, where walls of bullets leave no room.
  const margin = 80;
  if (self.x < margin) wantX += 0.5;
  if (self.x > view.arena.widthPx - margin) wantX -= 0.5;
  if (self.y < margin) wantY += 0.5;
  if (self.y > view.arena.heightPx - margin) wantY -= 0.5;
  const len = Math.hypot(wantX, wantY);
  if (len > 1) [wantX, wantY] = [wantX / len, wantY / len];
  let buttons = 0;
  if (orders.escape) buttons |= Button.Escape;
  else if ((orders.fire ?? true) && nearest) buttons |= Button.Fire;
  return {
    tick: orders.tick,
    moveX: Math.round(wantX * MOVE_UNITS),
    moveY: Math.round(wantY * MOVE_UNITS),
    aim: quantizeAngle(aimRad),
    buttons,
  };
}

/** The brain's view of a server world, as seen by player `id`. */
export function viewOfWorld(
  world: {
    readonly def: {
      readonly arena: ArenaDef;
      readonly portals?: readonly { x: number; y: number }[];
    };
    readonly enemies: readonly { x: number; y: number; def: { radiusPx: number } }[];
    readonly boss?: { def: { x: number; y: number; radiusPx: number } } | undefined;
    readonly bullets: BulletPool;
  },
  self: { x: number; y: number },
): BrainView {
  const targets = world.enemies.map((e) => ({ x: e.x, y: e.y, r: e.def.radiusPx }));
  if (world.boss) {
    targets.push({ x: world.boss.def.x, y: world.boss.def.y, r: world.boss.def.radiusPx });
  }
  return {
    self,
    arena: world.def.arena,
    targets,
    bullets: world.bullets,
    goal: world.def.portals?.[0],
  };
}
