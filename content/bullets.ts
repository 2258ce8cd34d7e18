/**
 * Bullet kinds (their looks) and flight specs. A spec's `kind` is its kind's index
 * in BULLET_KINDS. Data only.
 */
import { type BulletSpec, ticks } from "../sim/mod.ts";
import type { BulletKindDef, BulletLayer, Color } from "./types.ts";

/** Bullet kind ids: each one's place in BULLET_KINDS. */
export const BulletKind = {
  PlayerShot: 0,
  Orb: 1,
  Needle: 2,
  Wall: 3,
  Spiral: 4,
  Curl: 5,
  Note: 6,
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

/** A gold note: the Sunken Choir's round bullet. */
export const NOTE = {
  kind: BulletKind.Note,
  radiusPx: 6.5,
  ttlTicks: ticks(9),
  damage: 1,
  accelPxPerS2: 0,
  turnRadPerS: 0,
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

/** A streak of `widthPx`, for shots. */
function bolt(color: Color, widthPx: number): BulletLayer {
  return { shape: "bolt", color, scale: widthPx };
}

/** A round enemy bullet: a soft halo so it reads against the floor, a body, a white core. */
function round(halo: Color, body: Color, core: Color): readonly BulletLayer[] {
  return [
    { shape: "circle", color: halo, scale: 1.55 },
    { shape: "circle", color: body, scale: 1 },
    { shape: "dot", color: core, scale: 0.45 },
  ];
}

/**
 * Every bullet kind, indexed by id. Enemy bullets draw above shots (`z`): they are what
 * kills you. The hitbox is the body (scale 1); the core is where the eye goes.
 */
export const BULLET_KINDS = [
  {
    id: BulletKind.PlayerShot,
    name: "Shot",
    layers: [bolt("rgba(90,245,255,0.75)", 6.5), bolt("#ffffff", 2.5)],
    allyLayers: [bolt("rgba(120,170,255,0.6)", 4), bolt("#dbe6ff", 1.5)],
    z: 0,
  },
  {
    id: BulletKind.Orb,
    name: "Orb",
    layers: round("rgba(255,70,150,0.3)", "#ff4f9e", "#fff0f6"),
    z: 5,
  },
  {
    id: BulletKind.Needle,
    name: "Needle",
    layers: [
      { shape: "needle", color: "rgba(255,170,60,0.35)", scale: 1.5 },
      { shape: "needle", color: "#ffb347", scale: 1 },
      { shape: "needle", color: "#fff6e0", scale: 0.45 },
    ],
    z: 6,
  },
  {
    id: BulletKind.Wall,
    name: "Wall block",
    layers: [
      { shape: "block", color: "rgba(140,110,255,0.35)", scale: 1.35 },
      { shape: "block", color: "#8f74ff", scale: 1 },
      { shape: "dot", color: "#e6e0ff", scale: 0.45 },
    ],
    z: 2,
  },
  {
    id: BulletKind.Spiral,
    name: "Spiral",
    layers: round("rgba(80,255,170,0.3)", "#3dffa8", "#f2fff8"),
    z: 3,
  },
  {
    id: BulletKind.Curl,
    name: "Curl",
    layers: round("rgba(190,110,255,0.3)", "#c06bff", "#fbf2ff"),
    z: 4,
  },
  {
    id: BulletKind.Note,
    name: "Note",
    layers: round("rgba(255,200,80,0.3)", "#ffc24a", "#fffaf0"),
    z: 7,
  },
] as const satisfies readonly BulletKindDef[];
