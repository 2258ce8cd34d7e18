/** Trash enemies: a ring spinner, an aimed-spread gunner and a chaser. Data only. */
import { ticks } from "../sim/mod.ts";
import type { EnemyContent } from "./types.ts";
import { NEEDLE, ORB } from "./bullets.ts";
import { AIM_LINE, RING_FLASH } from "./telegraphs.ts";

/** Drifts slowly and throws a ring of 8 every 1.5 s. */
export const SPINNER = {
  id: 0,
  name: "Spinner",
  look: {
    shape: "star",
    points: 4,
    outer: 1.15,
    inner: 0.45,
    spinRadPerS: 2.86,
    fill: "#ff9a3c",
    stroke: "#ffe0b8",
  },
  hp: 12,
  radiusPx: 16,
  contactDamage: 1,
  movement: { type: "drift", speedPxPerS: 40 },
  emitters: [{
    type: "ring",
    telegraph: RING_FLASH,
    count: 8,
    rotateRad: Math.PI / 16,
    speedPxPerS: 120,
    periodTicks: ticks(1.5),
    startDelayTicks: ticks(0.8),
    bullet: ORB,
  }],
} as const satisfies EnemyContent;

/** Keeps about 250 px away and fires a spread of 3 over 15° every 1.2 s. */
export const GUNNER = {
  id: 1,
  name: "Gunner",
  look: { shape: "polygon", sides: 6, barrel: true, fill: "#a35cff", stroke: "#e3ccff" },
  hp: 16,
  radiusPx: 15,
  contactDamage: 1,
  movement: { type: "keepDistance", speedPxPerS: 90, distancePx: 250 },
  emitters: [{
    type: "aimedSpread",
    telegraph: AIM_LINE,
    count: 3,
    spreadRad: (15 * Math.PI) / 180,
    speedPxPerS: 200,
    periodTicks: ticks(1.2),
    startDelayTicks: ticks(1),
    bullet: NEEDLE,
  }],
} as const satisfies EnemyContent;

/** Runs at the nearest player; hurts on contact. */
export const CHASER = {
  id: 2,
  name: "Chaser",
  look: { shape: "arrow", fill: "#ff4d5e", stroke: "#ffc2c8" },
  hp: 8,
  radiusPx: 12,
  contactDamage: 1,
  movement: { type: "chase", speedPxPerS: 150 },
  emitters: [],
} as const satisfies EnemyContent;
