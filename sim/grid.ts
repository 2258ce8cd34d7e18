/**
 * The grid the server holds every wire-visible number on. Positions travel as 1/8 px,
 * angles as 1/65536 turn, and each bullet-spec number as a multiple of its own quantum
 * within its own range: the server spawns on this grid, so a decoded volley is bit for
 * bit the one it spawned. The codec (net/wire) and the content validation both read
 * these; nobody else defines a scale.
 * Must not import anything outside sim/.
 */

/** Position units per pixel. */
export const POS_UNITS_PER_PX = 8;
/** Angle units per full turn. */
export const ANGLE_UNITS = 65536;

/** A quantity held as a multiple of 1/`per` of its unit, within [min, max]. */
export interface Grid {
  readonly per: number;
  readonly min: number;
  readonly max: number;
  /** What the number measures, for messages ("px/s"). */
  readonly unit: string;
}

/**
 * The grid of every number a volley carries. Ranges are what the wire's fixed-size
 * fields hold (e.g. a position is an i16 of 1/8 px: −4096 … 4095.875 px).
 */
export const GRID = {
  /** Bullet spawn positions; also bounds arena sizes. */
  posPx: { per: POS_UNITS_PER_PX, min: -4096, max: 32767 / POS_UNITS_PER_PX, unit: "px" },
  kind: { per: 1, min: 0, max: 255, unit: "bullet kind" },
  radiusPx: { per: 4, min: 0.25, max: 255 / 4, unit: "px" },
  ttlTicks: { per: 1, min: 1, max: 65535, unit: "ticks" },
  speedPxPerS: { per: 4, min: 0, max: 65535 / 4, unit: "px/s" },
  accelPxPerS2: { per: 1, min: -32768, max: 32767, unit: "px/s²" },
  turnRadPerS: { per: 1000, min: -32.768, max: 32.767, unit: "rad/s" },
  damage: { per: 1, min: 0, max: 255, unit: "HP" },
} as const satisfies Record<string, Grid>;

/** Why `value` is off `grid`, or undefined when it is on it. */
export function offGrid(value: number, grid: Grid): string | undefined {
  if (typeof value !== "number" || !Number.isFinite(value)) return `${value} is not a number`;
  const units = Math.round(value * grid.per);
  if (units / grid.per !== value) {
    const step = grid.per === 1 ? "a whole number" : `a multiple of 1/${grid.per}`;
    return `${value} ${grid.unit} is not ${step} (the wire grid; try ${units / grid.per})`;
  }
  if (value < grid.min || value > grid.max) {
    return `${value} ${grid.unit} is outside [${grid.min}, ${grid.max}]`;
  }
  return undefined;
}

/** The nearest value on `grid` (for content written in other units, e.g. degrees). */
export function snapToGrid(value: number, grid: Grid): number {
  return Math.round(value * grid.per) / grid.per;
}

/** Snaps a position to the wire grid, in wire units. */
export function quantizePos(px: number): number {
  return Math.round(px * POS_UNITS_PER_PX);
}

/** Snaps an angle in radians to wire units in [0, 65536). */
export function quantizeAngle(rad: number): number {
  const turns = rad / (2 * Math.PI);
  const units = Math.round((turns - Math.floor(turns)) * ANGLE_UNITS);
  return units === ANGLE_UNITS ? 0 : units;
}

/** Converts angle wire units back to radians. */
export function angleFromUnits(units: number): number {
  return (units / ANGLE_UNITS) * 2 * Math.PI;
}
