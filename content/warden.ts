/**
 * The Warden of the Fold: stationary at the top centre, four phases, built only
 * from emitters. Data only: the simulation knows nothing about this boss.
 */
import { ticks } from "../sim/mod.ts";
import type { BossContent } from "./types.ts";
import { CURL, NEEDLE, ORB, SPIRAL, WALL_BLOCK } from "./bullets.ts";
import { AIM_LINE, QUICK_AIM_LINE, RING_FLASH, WALL_EDGE } from "./telegraphs.ts";

const DEG = Math.PI / 180;

/** The Fold's boss. */
export const WARDEN = {
  id: 0,
  name: "The Warden of the Fold",
  look: {
    // Each phase reads at a glance: teal, amber, magenta, red.
    phaseColors: ["#3fd6c8", "#f2b53a", "#e8509e", "#ff4a3d"],
    fill: "#1a1030",
    // A sixteen-point folded star: alternating radii read as creases.
    body: { points: 8, inner: 0.8, spinRadPerS: 0.25 },
    core: { sides: 4, scale: 0.64, spinRadPerS: -0.45 },
    eye: true,
  },
  words: {
    stirs: "The Warden stirs…",
    awakens: "The Warden of the Fold awakens",
    defeated: {
      title: "Dungeon cleared!",
      sub: "The Warden of the Fold is undone.",
    },
  },
  x: 640,
  y: 140,
  radiusPx: 48,
  baseHp: 400,
  hpPerExtraPlayer: 0.75,
  contactDamage: 1,
  foldTicks: ticks(1.2),
  phases: [
    {
      name: "Vigil",
      fromHpFrac: 1,
      damageTakenMult: 1,
      emitters: [
        {
          type: "ring",
          telegraph: RING_FLASH,
          count: 16,
          rotateRad: 7.5 * DEG,
          speedPxPerS: 140,
          periodTicks: ticks(0.9),
          bullet: ORB,
        },
        {
          type: "aimedSpread",
          telegraph: AIM_LINE,
          count: 5,
          spreadRad: 12 * DEG,
          speedPxPerS: 220,
          periodTicks: ticks(1.6),
          startDelayTicks: ticks(0.5),
          bullet: NEEDLE,
        },
      ],
    },
    {
      name: "Crease",
      fromHpFrac: 0.75,
      damageTakenMult: 1,
      emitters: [
        {
          type: "arcSweep",
          arcRad: 120 * DEG,
          centerRad: 90 * DEG,
          sweepRadPerS: 60 * DEG,
          direction: 1,
          speedPxPerS: 170,
          periodTicks: ticks(0.1),
          bullet: NEEDLE,
        },
        {
          type: "arcSweep",
          arcRad: 120 * DEG,
          centerRad: 90 * DEG,
          sweepRadPerS: 60 * DEG,
          direction: -1,
          speedPxPerS: 170,
          periodTicks: ticks(0.1),
          bullet: NEEDLE,
        },
        {
          type: "ring",
          telegraph: RING_FLASH,
          count: 20,
          rotateRad: 4 * DEG,
          speedPxPerS: 120,
          periodTicks: ticks(1.2),
          startDelayTicks: ticks(0.6),
          bullet: CURL,
        },
      ],
    },
    {
      name: "Fold",
      fromHpFrac: 0.5,
      damageTakenMult: 0.9,
      emitters: [
        {
          type: "wallGap",
          telegraph: WALL_EDGE,
          orientation: "rows",
          gapPx: 120,
          spacingPx: 36,
          speedPxPerS: 110,
          periodTicks: ticks(2.2),
          bullet: WALL_BLOCK,
        },
        {
          type: "aimedSpread",
          telegraph: QUICK_AIM_LINE,
          count: 3,
          spreadRad: 10 * DEG,
          speedPxPerS: 300,
          periodTicks: ticks(1),
          startDelayTicks: ticks(0.4),
          bullet: NEEDLE,
        },
      ],
    },
    {
      name: "Unfolding",
      fromHpFrac: 0.25,
      damageTakenMult: 1.25,
      emitters: [
        {
          type: "wallGap",
          telegraph: WALL_EDGE,
          orientation: "alternate",
          gapPx: 100,
          spacingPx: 36,
          speedPxPerS: 110,
          periodTicks: ticks(1.6),
          bullet: WALL_BLOCK,
        },
        {
          type: "arcSweep",
          arcRad: 2 * Math.PI,
          centerRad: 0,
          sweepRadPerS: 50 * DEG,
          direction: 1,
          arms: 3,
          speedPxPerS: 40,
          periodTicks: ticks(0.15),
          bullet: SPIRAL,
        },
        {
          type: "ring",
          telegraph: RING_FLASH,
          count: 24,
          rotateRad: 5 * DEG,
          speedPxPerS: 130,
          periodTicks: ticks(1.4),
          startDelayTicks: ticks(0.7),
          bullet: ORB,
        },
      ],
    },
  ],
} as const satisfies BossContent;
