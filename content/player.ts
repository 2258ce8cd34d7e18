/** The player ship's numbers (DESIGN.md "Game feel"). Data only. */
import { type PlayerTuning, ticks } from "../sim/mod.ts";
import { PLAYER_SHOT } from "./bullets.ts";

/** The ship every player flies. */
export const PLAYER = {
  radiusPx: 10,
  speedPxPerS: 240,
  focusSpeedPxPerS: 110,
  grazeBandPx: 22,
  maxHp: 5,
  iframeTicks: ticks(1),
  fireCooldownTicks: ticks(0.1),
  shotSpeedPxPerS: 700,
  shot: PLAYER_SHOT,
  escapeTicks: ticks(3),
} as const satisfies PlayerTuning;
