/**
 * Bullet looks and flight specs. `kind` indexes the renderer's styles.
 * Data only.
 */
import { type BulletSpec, ticks } from "../sim/mod.ts";

/** Renderer style per bullet kind. */
export const BulletKind = {
  PlayerShot: 0,
  Orb: 1,
  Needle: 2,
  Wall: 3,
  Spiral: 4,
  Curl: 5,
} as const;

/** The player's own shot. */
export const PLAYER_SHOT = {
  kind: BulletKind.PlayerShot,
  radiusPx: 4,
  ttlTicks: ticks(1.2),
  damage: 1,
  accelPxPerS2: 0,
  turnRadPerS: 0,
} as const satisfies BulletSpec;

/** A slow round bullet for rings. */
export const ORB = {
  kind: BulletKind.Orb,
  radiusPx: 7,
  ttlTicks: ticks(9),
  damage: 1,
  accelPxPerS2: 0,
  turnRadPerS: 0,
} as const satisfies BulletSpec;

/** A small fast bullet for aimed spreads. */
export const NEEDLE = {
  kind: BulletKind.Needle,
  radiusPx: 5,
  ttlTicks: ticks(6),
  damage: 1,
  accelPxPerS2: 0,
  turnRadPerS: 0,
} as const satisfies BulletSpec;

/** A block of a marching wall. */
export const WALL_BLOCK = {
  kind: BulletKind.Wall,
  radiusPx: 9,
  ttlTicks: ticks(12),
  damage: 1,
  accelPxPerS2: 0,
  turnRadPerS: 0,
} as const satisfies BulletSpec;

/** A ring bullet that curls as it flies. */
export const CURL = {
  kind: BulletKind.Curl,
  radiusPx: 6,
  ttlTicks: ticks(9),
  damage: 1,
  accelPxPerS2: 0,
  turnRadPerS: 0.35,
} as const satisfies BulletSpec;

/** A spiral bullet that starts slow and speeds up. */
export const SPIRAL = {
  kind: BulletKind.Spiral,
  radiusPx: 6,
  ttlTicks: ticks(7),
  damage: 1,
  accelPxPerS2: 90,
  turnRadPerS: 0,
} as const satisfies BulletSpec;
