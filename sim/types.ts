/**
 * The shapes of game data: what content/ writes and what the world reads.
 * Everything here is plain data; a new boss or enemy is a value of these types.
 * Must not import anything outside sim/.
 */
import type { Rect } from "./geometry.ts";

/** Which side a bullet hurts. */
export const Team = { Enemy: 0, Player: 1 } as const;
export type Team = (typeof Team)[keyof typeof Team];

/**
 * Button bits of an input frame. Focus slows the ship (the server applies the focus
 * speed; prediction replays the same rule). Bit 4 was Interact, which had no job.
 */
export const Button = { Fire: 1, Escape: 2, Focus: 4 } as const;
/** Every button bit a client may set. */
export const BUTTON_MASK = Button.Fire | Button.Escape | Button.Focus;

/** `T` with its fields writable: storage a hot path fills in place. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * One tick of a player's intent: the only thing a client ever tells the server.
 * `moveX`/`moveY` are integers in [-100, 100] (hundredths of full speed), `aim` an
 * integer in [0, 65536) (a 65536th of a turn), so prediction and server agree exactly.
 */
export interface InputFrame {
  readonly tick: number;
  readonly moveX: number;
  readonly moveY: number;
  readonly aim: number;
  readonly buttons: number;
  /**
   * How many ticks older than `tick` the snapshot was that the client drew enemies
   * from when it sampled this frame (0 or absent: the present). The server judges
   * contact and this player's shots by that picture, never further back than its limit.
   */
  readonly viewLag?: number;
}

/** How every bullet of one emitter looks and flies once spawned. */
export interface BulletSpec {
  /** Look on screen; an index the renderer maps to a style. */
  readonly kind: number;
  readonly radiusPx: number;
  readonly ttlTicks: number;
  /** HP a hit takes (before a boss phase's multiplier). */
  readonly damage: number;
  /** Change of speed along the heading. */
  readonly accelPxPerS2: number;
  /** Heading change; bullets curl when non-zero. */
  readonly turnRadPerS: number;
}

/** How a telegraph is drawn (see TelegraphDef). */
export const TELEGRAPH_STYLES = ["line", "flash", "edge"] as const;

/**
 * A warning drawn before an emitter fires: `line` along an aimed spread (the aim locks
 * when the warning starts, so the shot goes where the line showed), `flash` on the
 * emitter (rings, sweeps), `edge` along the arena edge a wall marches in from.
 */
export interface TelegraphDef {
  readonly style: (typeof TELEGRAPH_STYLES)[number];
  /** Ticks between the warning and the shot. */
  readonly leadTicks: number;
}

interface EmitterCommon {
  readonly bullet: BulletSpec;
  /** Warn before each shot; absent for streams too dense to warn about. */
  readonly telegraph?: TelegraphDef;
  readonly speedPxPerS: number;
  readonly periodTicks: number;
  /** Ticks before the first shot after the emitter is armed. */
  readonly startDelayTicks?: number;
}

/** `count` bullets evenly around a circle, the circle turning by `rotateRad` per shot. */
export interface RingDef extends EmitterCommon {
  readonly type: "ring";
  readonly count: number;
  readonly rotateRad?: number;
}

/** `count` bullets fanned over `spreadRad`, centred on the nearest player. */
export interface AimedSpreadDef extends EmitterCommon {
  readonly type: "aimedSpread";
  readonly count: number;
  readonly spreadRad: number;
}

/**
 * A wall of bullets crossing the arena with one gap of `gapPx` at a random place.
 * `rows` march down from the top edge, `columns` march right from the left edge,
 * `alternate` switches between the two on every shot.
 */
export interface WallGapDef extends EmitterCommon {
  readonly type: "wallGap";
  readonly orientation: "rows" | "columns" | "alternate";
  readonly gapPx: number;
  readonly spacingPx: number;
}

/**
 * A stream aimed along a moving angle: `shotsPerPeriod` bullets every period,
 * sweeping `arcRad` around `centerRad` at `sweepRadPerS` (back and forth; an arc of
 * a full turn or more spins forever). `direction` picks the sense.
 */
export interface ArcSweepDef extends EmitterCommon {
  readonly type: "arcSweep";
  readonly arcRad: number;
  readonly centerRad: number;
  readonly sweepRadPerS: number;
  readonly direction: 1 | -1;
  /** Bullets per shot, evenly around the circle (1 = a single stream). */
  readonly arms?: number;
}

/** Any emitter; trash enemies and bosses share these. */
export type EmitterDef = RingDef | AimedSpreadDef | WallGapDef | ArcSweepDef;

/** How a body moves each tick. */
export type MovementDef =
  | { readonly type: "stationary" }
  | { readonly type: "drift"; readonly speedPxPerS: number }
  | { readonly type: "keepDistance"; readonly speedPxPerS: number; readonly distancePx: number }
  | { readonly type: "chase"; readonly speedPxPerS: number };

/** A trash enemy kind. `id` is its wire index, so keep ids stable and small. */
export interface EnemyDef {
  readonly id: number;
  readonly name: string;
  readonly hp: number;
  readonly radiusPx: number;
  readonly contactDamage: number;
  readonly movement: MovementDef;
  readonly emitters: readonly EmitterDef[];
}

/** One phase of a boss: active from `fromHpFrac` of max HP downwards. */
export interface BossPhaseDef {
  readonly name: string;
  readonly fromHpFrac: number;
  readonly damageTakenMult: number;
  readonly emitters: readonly EmitterDef[];
}

/** A boss as data: adding one needs no change under sim/. */
export interface BossDef {
  readonly id: number;
  readonly name: string;
  readonly x: number;
  readonly y: number;
  readonly radiusPx: number;
  readonly baseHp: number;
  /** Extra HP per additional player, as a fraction of `baseHp`. */
  readonly hpPerExtraPlayer: number;
  readonly contactDamage: number;
  /** Invulnerable pause between phases, so the change reads on screen. */
  readonly foldTicks: number;
  readonly phases: readonly BossPhaseDef[];
}

/** A place enemies appear at the start of a wave. */
export interface SpawnDef {
  readonly enemy: EnemyDef;
  readonly x: number;
  readonly y: number;
}

/** The playing field: bounds are [0, widthPx] × [0, heightPx]. */
export interface ArenaDef {
  readonly widthPx: number;
  readonly heightPx: number;
  readonly walls: readonly Rect[];
  readonly spawnPoints: readonly { x: number; y: number }[];
}

/** The player ship's numbers. */
export interface PlayerTuning {
  readonly radiusPx: number;
  readonly speedPxPerS: number;
  /** Speed while the Focus button is held. */
  readonly focusSpeedPxPerS: number;
  /** Enemy bullets passing within this many px of the hitbox's edge count as a graze. */
  readonly grazeBandPx: number;
  readonly maxHp: number;
  readonly iframeTicks: number;
  readonly fireCooldownTicks: number;
  readonly shotSpeedPxPerS: number;
  readonly shot: BulletSpec;
  readonly escapeTicks: number;
}

/** A circle a ship walks into to leave the world (where it leads is the server's business). */
export interface PortalDef {
  readonly x: number;
  readonly y: number;
  readonly radiusPx: number;
}

/** A complete world: a hub (portals, no fights) or a dungeon (waves, then a boss). */
export interface WorldDef {
  readonly kind: "hub" | "dungeon";
  readonly name: string;
  readonly arena: ArenaDef;
  readonly player: PlayerTuning;
  /** Walked into in a hub; `portalEntered` names the portal by its index here. */
  readonly portals?: readonly PortalDef[];
  readonly waves: readonly (readonly SpawnDef[])[];
  /** Pause before each wave and before the boss. */
  readonly waveDelayTicks: number;
  readonly boss?: BossDef;
}
