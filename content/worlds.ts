/** The hub and the dungeon: arenas, spawn points, waves and the boss. Data only. */
import { type SpawnDef, ticks, type WorldDef } from "../sim/mod.ts";
import { CHASER, GUNNER, SPINNER } from "./enemies.ts";
import { PLAYER } from "./player.ts";
import { WARDEN } from "./warden.ts";

/** The lobby: a calm room with the portal at its centre. */
export const HUB = {
  kind: "hub",
  name: "The Hub",
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
  portal: { x: 480, y: 260, radiusPx: 40 },
  waves: [],
  waveDelayTicks: 0,
} as const satisfies WorldDef;

const at = (enemy: SpawnDef["enemy"], x: number, y: number): SpawnDef => ({ enemy, x, y });

/** The Fold: two trash waves, then the Warden, in one 1280×960 arena. */
export const DUNGEON = {
  kind: "dungeon",
  name: "The Fold",
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
} as const satisfies WorldDef;

/** Every world, indexed by id (the wire's world id). */
export const WORLDS: readonly WorldDef[] = [HUB, DUNGEON];
/** Wire ids of the worlds. */
export const WorldId = { Hub: 0, Dungeon: 1 } as const;
