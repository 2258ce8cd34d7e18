/** The hub and the dungeons: arenas, portals, waves, bosses, looks and words. Data only. */
import { type SpawnDef, ticks } from "../sim/mod.ts";
import type { WorldContent, WorldLook } from "./types.ts";
import { CHASER, GUNNER, SPINNER } from "./enemies.ts";
import { PLAYER } from "./player.ts";
import { WARDEN } from "./warden.ts";

/** Walls as every world draws them. */
const WALLS = { wallFill: "#1c2142", wallStroke: "#5661a8", wallInner: "rgba(120,135,220,0.25)" };

/** The lobby: a calm room with a portal to each dungeon. */
export const HUB = {
  key: "hub",
  kind: "hub",
  name: "The Hub",
  look: {
    floor: "#0e1224",
    grid: "rgba(110,140,255,0.07)",
    border: "#2c3770",
    ...WALLS,
  } satisfies WorldLook,
  words: {
    stage: "Safe room · two portals: the Fold and the Sunken Choir",
    help: "Walk into a portal to enter its dungeon.",
  },
  arena: {
    widthPx: 960,
    heightPx: 720,
    walls: [
      { x: 180, y: 150, w: 60, h: 60 },
      { x: 720, y: 150, w: 60, h: 60 },
      { x: 180, y: 510, w: 60, h: 60 },
      { x: 720, y: 510, w: 60, h: 60 },
    ],
    spawnPoints: [
      { x: 400, y: 600 },
      { x: 560, y: 600 },
      { x: 320, y: 560 },
      { x: 640, y: 560 },
      { x: 480, y: 640 },
    ],
  },
  player: PLAYER,
  portals: [
    { x: 340, y: 260, radiusPx: 40, to: "fold", label: "The Fold — walk in", hue: 255 },
    { x: 620, y: 260, radiusPx: 40, to: "choir", label: "The Sunken Choir — walk in", hue: 165 },
  ],
  waves: [],
  waveDelayTicks: 0,
} as const satisfies WorldContent;

const at = (enemy: SpawnDef["enemy"], x: number, y: number): SpawnDef => ({ enemy, x, y });

/** The Fold: two trash waves, then the Warden, in one 1280×960 arena. */
export const FOLD = {
  key: "fold",
  kind: "dungeon",
  name: "The Fold",
  look: {
    floor: "#120d1f",
    grid: "rgba(200,110,255,0.07)",
    border: "#4a2b6e",
    ...WALLS,
  } satisfies WorldLook,
  words: {
    arrival: "The Fold — clear the waves, then face the Warden",
    death: {
      title: "You fell — returning to the hub",
      sub: "The Fold keeps what it takes. Your crew fights on.",
    },
  },
  portals: [],
  arena: {
    widthPx: 1280,
    heightPx: 960,
    walls: [
      { x: 250, y: 560, w: 70, h: 70 },
      { x: 960, y: 560, w: 70, h: 70 },
    ],
    spawnPoints: [
      { x: 560, y: 860 },
      { x: 720, y: 860 },
      { x: 480, y: 880 },
      { x: 800, y: 880 },
    ],
  },
  player: PLAYER,
  waves: [
    [
      at(SPINNER, 320, 260),
      at(SPINNER, 640, 200),
      at(SPINNER, 960, 260),
      at(CHASER, 160, 420),
      at(CHASER, 1120, 420),
      at(CHASER, 420, 120),
      at(CHASER, 860, 120),
    ],
    [
      at(GUNNER, 300, 240),
      at(GUNNER, 640, 180),
      at(GUNNER, 980, 240),
      at(SPINNER, 460, 360),
      at(SPINNER, 820, 360),
      at(CHASER, 140, 200),
      at(CHASER, 1140, 200),
      at(CHASER, 300, 440),
      at(CHASER, 980, 440),
    ],
  ],
  waveDelayTicks: ticks(2),
  boss: WARDEN,
} as const satisfies WorldContent;
