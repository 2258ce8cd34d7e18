/**
 * The shapes of shipped content: the simulation's defs (sim/types.ts) plus how each
 * thing looks and what it is called. Looks use the renderer's small vocabulary of
 * shapes and CSS colours, so a new boss, enemy, bullet or world is data only: the
 * client draws whatever the registry (content/registry.ts) holds.
 * Imports only sim/ types.
 */
import type { BossDef, EnemyDef, WorldDef } from "../sim/mod.ts";

/** A CSS colour: `#rrggbb`, or `rgba(…)`/`hsla(…)` where a layer needs transparency. */
export type Color = string;

// ---------------------------------------------------------------- bullets

/**
 * How one layer outlines a bullet (see client/bullet_layer.ts). "dot" is an
 * axis-aligned square: at core size (a few pixels) it reads as a bright point and
 * rasterises far faster than a circle; "bolt" is a streak behind a shot.
 */
export type BulletShape = "bolt" | "circle" | "needle" | "block" | "dot";

/** One fill (a stroke for bolts) of a bullet: shape, colour, size relative to its radius. */
export interface BulletLayer {
  readonly shape: BulletShape;
  readonly color: Color;
  /** Times the radius (for bolts: the stroke width in px). */
  readonly scale: number;
}

/** A bullet kind: what `BulletSpec.kind` names. Its id is its place in CONTENT.bulletKinds. */
export interface BulletKindDef {
  readonly id: number;
  readonly name: string;
  /** Layers drawn in order (halo, body, core). */
  readonly layers: readonly BulletLayer[];
  /** Layers for another player's shots of this kind, when they should read differently. */
  readonly allyLayers?: readonly BulletLayer[];
  /** Draw order between kinds: higher is drawn later, on top. */
  readonly z: number;
}

// ---------------------------------------------------------------- enemies and bosses

/** Which way a body's shape points. */
export type Facing = "target" | "down";

/** How a trash enemy is drawn. */
export type EnemyLook =
  & { readonly fill: Color; readonly stroke: Color }
  & (
    /** A star of `points` tips, radii as multiples of the body radius, turning at `spinRadPerS`. */
    | {
      readonly shape: "star";
      readonly points: number;
      readonly outer: number;
      readonly inner: number;
      readonly spinRadPerS: number;
    }
    /** A regular polygon facing its target, with a gun barrel when `barrel`. */
    | { readonly shape: "polygon"; readonly sides: number; readonly barrel: boolean }
    /** A barbed arrowhead pointed at its prey. */
    | { readonly shape: "arrow" }
  );

/** A trash enemy: its rules, name and look. */
export interface EnemyContent extends EnemyDef {
  readonly look: EnemyLook;
}

/** How a boss is drawn: a star body, a turning core and an eye, coloured by phase. */
export interface BossLook {
  /** One colour per phase (the body's outline, the glow, the HUD bar and phase name). */
  readonly phaseColors: readonly Color[];
  readonly fill: Color;
  /** A star of `points` tips with inner radius `inner` × the outer one. */
  readonly body: { readonly points: number; readonly inner: number; readonly spinRadPerS: number };
  /** A polygon at the centre: `sides`, size as a fraction of the radius, its own spin. */
  readonly core: { readonly sides: number; readonly scale: number; readonly spinRadPerS: number };
  /** An eye that follows the local ship. */
  readonly eye: boolean;
}

/** What the game says about a boss. */
export interface BossWords {
  /** Shown while the last wave is cleared and the boss is on its way. */
  readonly stirs: string;
  /** Toast when it appears. */
  readonly awakens: string;
  /** The banner when it falls. */
  readonly defeated: { readonly title: string; readonly sub: string };
}

/** A boss: its phases (each with a name), its look and its words. */
export interface BossContent extends BossDef {
  readonly look: BossLook;
  readonly words: BossWords;
}

// ---------------------------------------------------------------- worlds

/** A portal: where it stands, where it leads (a world's key) and how it reads. */
export interface PortalContent {
  readonly x: number;
  readonly y: number;
  readonly radiusPx: number;
  /** The key of the world it leads to. */
  readonly to: string;
  /** Written under it. */
  readonly label: string;
  /** Hue of its glow, 0–360. */
  readonly hue: number;
}

/** Colours of a world's floor, grid, border and walls. */
export interface WorldLook {
  readonly floor: Color;
  readonly grid: Color;
  readonly border: Color;
  readonly wallFill: Color;
  readonly wallStroke: Color;
  readonly wallInner: Color;
}

/** What the game says in a world. */
export interface WorldWords {
  /** The stage line under the world's name (hubs; dungeons show their waves). */
  readonly stage?: string;
  /** Toast on arrival through a portal (dungeons). */
  readonly arrival?: string;
  /** Footer of the controls help (hubs). */
  readonly help?: string;
  /** The banner when the local player dies here (dungeons). */
  readonly death?: { readonly title: string; readonly sub: string };
}

/** A world as shipped: a unique key, its portals, its boss, look and words. */
export interface WorldContent extends WorldDef {
  /** Stable name: portals and transfers name worlds by key; the wire by index. */
  readonly key: string;
  readonly portals: readonly PortalContent[];
  readonly boss?: BossContent;
  readonly look: WorldLook;
  readonly words: WorldWords;
}

// ---------------------------------------------------------------- the game

/** How ships are drawn. */
export interface ShipLook {
  readonly self: Color;
  /** Other players' colours, picked by id. */
  readonly allies: readonly Color[];
}

/** The game's own words: the connect screen. */
export interface GameWords {
  readonly title: string;
  readonly kicker: string;
  readonly lede: string;
}

/** Everything the game ships, indexed the way the wire names it. */
export interface Content {
  readonly game: GameWords;
  /** The key of the world players arrive in and return to. */
  readonly home: string;
  /** Every world; a world's wire id is its index. */
  readonly worlds: readonly WorldContent[];
  /** Every boss; `BossDef.id` is its index. */
  readonly bosses: readonly BossContent[];
  /** Every trash kind; `EnemyDef.id` is its index. */
  readonly enemies: readonly EnemyContent[];
  /** Every bullet kind; `BulletSpec.kind` is its index. */
  readonly bulletKinds: readonly BulletKindDef[];
  readonly ships: ShipLook;
}
