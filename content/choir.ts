/**
 * The Sunken Choir and its Cantor: a second dungeon, reached by the hub's second
 * portal, made of the same emitters as the Fold (a five-armed spiral, rings sung in
 * canon, a curling fugue, a dense coda) around a boss that stands in the middle of
 * the room. Data only: nothing outside content/ knows it exists.
 */
import { GRID, snapToGrid, type SpawnDef, ticks } from "../sim/mod.ts";
import { CURL, NEEDLE, NOTE, ORB, SPIRAL, WALL_BLOCK } from "./bullets.ts";
import { CHASER, GUNNER, SPINNER } from "./enemies.ts";
import { PLAYER } from "./player.ts";
import { AIM_LINE, QUICK_AIM_LINE, RING_FLASH, WALL_EDGE } from "./telegraphs.ts";
import type { BossContent, WorldContent } from "./types.ts";

const DEG = Math.PI / 180;

/** A curling stream: the turn rate is written in degrees and snapped to the wire grid. */
const HYMN = {
  ...CURL,
  radiusPx: 5.5,
  ttlTicks: ticks(6),
  turnRadPerS: snapToGrid(-25 * DEG, GRID.turnRadPerS),
} as const;

/** The Choir's boss, in the middle of its room. */
export const CANTOR = {
  id: 1,
  name: "The Cantor",
  look: {
    // Gold, green, blue, rose: each verse its own colour.
    phaseColors: ["#ffc24a", "#5fe3a1", "#6fa8ff", "#ff6f91"],
    fill: "#0d1820",
    body: { points: 6, inner: 0.55, spinRadPerS: -0.4 },
    core: { sides: 3, scale: 0.5, spinRadPerS: 0.9 },
    eye: true,
  },
  words: {
    stirs: "The choir falls silent…",
    awakens: "The Cantor lifts its voice",
    defeated: {
      title: "The choir is silent",
      sub: "The Cantor's last note fades.",
    },
  },
  x: 560,
  y: 380,
  radiusPx: 44,
  baseHp: 460,
  hpPerExtraPlayer: 0.75,
  contactDamage: 1,
  foldTicks: ticks(1.4),
  phases: [
    {
      name: "Intonation",
      fromHpFrac: 1,
      damageTakenMult: 1,
      emitters: [
        {
          type: "arcSweep",
          arcRad: 2 * Math.PI,
          centerRad: 0,
          sweepRadPerS: 35 * DEG,
          direction: 1,
          arms: 5,
          speedPxPerS: 130,
          periodTicks: ticks(0.25),
          bullet: NOTE,
        },
        {
          type: "aimedSpread",
          telegraph: AIM_LINE,
          count: 7,
          spreadRad: 40 * DEG,
          speedPxPerS: 180,
          periodTicks: ticks(2),
          startDelayTicks: ticks(1),
          bullet: NEEDLE,
        },
      ],
    },
    {
      name: "Canon",
      fromHpFrac: 0.7,
      damageTakenMult: 1,
      emitters: [
        {
          type: "ring",
          telegraph: RING_FLASH,
          count: 18,
          rotateRad: 6 * DEG,
          speedPxPerS: 110,
          periodTicks: ticks(1.2),
          bullet: NOTE,
        },
        {
          // The second voice: the same ring, turning the other way, faster, half a beat later.
          type: "ring",
          count: 18,
          rotateRad: -6 * DEG,
          speedPxPerS: 150,
          periodTicks: ticks(1.2),
          startDelayTicks: ticks(0.6),
          bullet: ORB,
        },
        {
          type: "wallGap",
          telegraph: WALL_EDGE,
          orientation: "columns",
          gapPx: 140,
          spacingPx: 40,
          speedPxPerS: 100,
          periodTicks: ticks(3.2),
          startDelayTicks: ticks(1.5),
          bullet: WALL_BLOCK,
        },
      ],
    },
    {
      name: "Fugue",
      fromHpFrac: 0.4,
      damageTakenMult: 0.9,
      emitters: [
        {
          type: "arcSweep",
          arcRad: 100 * DEG,
          centerRad: 90 * DEG,
          sweepRadPerS: 80 * DEG,
          direction: 1,
          arms: 2,
          speedPxPerS: 190,
          periodTicks: ticks(0.15),
          bullet: HYMN,
        },
        {
          type: "ring",
          telegraph: RING_FLASH,
          count: 12,
          rotateRad: 15 * DEG,
          speedPxPerS: 40,
          periodTicks: ticks(1.6),
          startDelayTicks: ticks(0.8),
          bullet: SPIRAL,
        },
      ],
    },
    {
      name: "Coda",
      fromHpFrac: 0.15,
      damageTakenMult: 1.25,
      emitters: [
        {
          type: "ring",
          count: 30,
          rotateRad: 3 * DEG,
          speedPxPerS: 95,
          periodTicks: ticks(1.3),
          bullet: NOTE,
        },
        {
          type: "aimedSpread",
          telegraph: QUICK_AIM_LINE,
          count: 3,
          spreadRad: 8 * DEG,
          speedPxPerS: 320,
          periodTicks: ticks(0.9),
          bullet: NEEDLE,
        },
        {
          type: "wallGap",
          telegraph: WALL_EDGE,
          orientation: "alternate",
          gapPx: 120,
          spacingPx: 38,
          speedPxPerS: 115,
          periodTicks: ticks(2.6),
          startDelayTicks: ticks(1.2),
          bullet: WALL_BLOCK,
        },
      ],
    },
  ],
} as const satisfies BossContent;

const at = (enemy: SpawnDef["enemy"], x: number, y: number): SpawnDef => ({ enemy, x, y });

/** The Sunken Choir: two waves among the pews, then the Cantor. */
export const CHOIR = {
  key: "choir",
  kind: "dungeon",
  name: "The Sunken Choir",
  look: {
    floor: "#0a161a",
    grid: "rgba(90,220,200,0.07)",
    border: "#1f5a5a",
    wallFill: "#132629",
    wallStroke: "#3e8c86",
    wallInner: "rgba(120,220,200,0.22)",
  },
  words: {
    arrival: "The Sunken Choir — still the waves, then silence the Cantor",
    death: {
      title: "You fell — returning to the hub",
      sub: "The Choir sings on without you. Your crew fights on.",
    },
  },
  arena: {
    widthPx: 1120,
    heightPx: 960,
    // Four pews to hide behind from the walls that march across.
    walls: [
      { x: 200, y: 620, w: 120, h: 36 },
      { x: 800, y: 620, w: 120, h: 36 },
      { x: 360, y: 200, w: 36, h: 90 },
      { x: 724, y: 200, w: 36, h: 90 },
    ],
    spawnPoints: [
      { x: 480, y: 860 },
      { x: 640, y: 860 },
      { x: 400, y: 880 },
      { x: 720, y: 880 },
    ],
  },
  player: PLAYER,
  portals: [],
  waves: [
    [
      at(SPINNER, 280, 300),
      at(SPINNER, 840, 300),
      at(GUNNER, 560, 180),
      at(GUNNER, 180, 480),
      at(GUNNER, 940, 480),
    ],
    [
      at(SPINNER, 560, 420),
      at(GUNNER, 300, 160),
      at(GUNNER, 820, 160),
      at(CHASER, 120, 240),
      at(CHASER, 1000, 240),
      at(CHASER, 200, 520),
      at(CHASER, 920, 520),
    ],
  ],
  waveDelayTicks: ticks(2),
  boss: CANTOR,
} as const satisfies WorldContent;
