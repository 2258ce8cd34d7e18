/**
 * Everything a tick decides that anyone outside the world must learn. `SimWorld.step`
 * returns these; the network layer learns about the game only through them.
 * Must not import anything outside sim/.
 */
import type { Volley } from "./bullets.ts";
import type { TelegraphDef } from "./types.ts";

/** What a bullet struck when it died early. */
export const HitTarget = { Player: 0, Enemy: 1, Boss: 2 } as const;
export type HitTarget = (typeof HitTarget)[keyof typeof HitTarget];

/** Who gives a telegraph. */
export const TELEGRAPH_SOURCES = ["enemy", "boss"] as const;

/** Why an escape channel can stop before completing. */
export const ESCAPE_CANCEL_REASONS = ["damage", "released", "died"] as const;
/** Why an escape channel stopped before completing. */
export type EscapeCancelReason = (typeof ESCAPE_CANCEL_REASONS)[number];

/** One thing that happened during a tick. */
export type SimEvent =
  | { readonly type: "volley"; readonly volley: Volley }
  | {
    readonly type: "bulletHit";
    readonly uid: number;
    readonly target: HitTarget;
    /** Player or enemy id; 0 for the boss. */
    readonly targetId: number;
    readonly damage: number;
  }
  | { readonly type: "bulletsCleared"; readonly team: number }
  | { readonly type: "playerHit"; readonly playerId: number; readonly hp: number }
  | { readonly type: "playerDied"; readonly playerId: number }
  /** `portal` is the index of the portal in the world's `portals`. */
  | { readonly type: "portalEntered"; readonly playerId: number; readonly portal: number }
  | { readonly type: "escapeStarted"; readonly playerId: number }
  | {
    readonly type: "escapeCancelled";
    readonly playerId: number;
    readonly reason: EscapeCancelReason;
  }
  | { readonly type: "escapeCompleted"; readonly playerId: number }
  | { readonly type: "waveStarted"; readonly wave: number }
  | { readonly type: "enemySpawned"; readonly enemyId: number; readonly kind: number }
  | { readonly type: "enemyKilled"; readonly enemyId: number }
  | { readonly type: "bossSpawned"; readonly bossId: number; readonly maxHp: number }
  | { readonly type: "bossPhase"; readonly phase: number }
  | { readonly type: "bossDefeated" }
  /** An enemy bullet passed close by the ship without hitting it; `total` is the run's count. */
  | { readonly type: "graze"; readonly playerId: number; readonly total: number }
  /** An emitter warns of its next shot, `leadTicks` from now. */
  | {
    readonly type: "telegraph";
    readonly source: (typeof TELEGRAPH_SOURCES)[number];
    /** Enemy id; 0 for the boss. */
    readonly sourceId: number;
    /** Index into the enemy's (or the current boss phase's) emitter list. */
    readonly emitter: number;
    readonly style: TelegraphDef["style"];
    readonly aimRad: number;
    readonly leadTicks: number;
  };
