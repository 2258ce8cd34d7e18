/**
 * Attack warnings: how long before a shot each kind of pattern announces itself.
 * Emitters opt in with `telegraph:`; dense streams (sweeps) stay unannounced. Data only.
 */
import { type TelegraphDef, ticks } from "../sim/mod.ts";

/** A line along an aimed spread; the aim locks when the line appears. */
export const AIM_LINE = { style: "line", leadTicks: ticks(0.5) } as const satisfies TelegraphDef;
/** A quick aim line for fast spreads that fire often. */
export const QUICK_AIM_LINE = {
  style: "line",
  leadTicks: ticks(0.4),
} as const satisfies TelegraphDef;
/** A flash on the emitter before a ring. */
export const RING_FLASH = { style: "flash", leadTicks: ticks(0.4) } as const satisfies TelegraphDef;
/** A glow along the edge a wall will march in from. */
export const WALL_EDGE = { style: "edge", leadTicks: ticks(0.8) } as const satisfies TelegraphDef;
