/**
 * The wire decision for every field of the simulation's state, in the spirit of
 * Quake III's netField check: each field either names the wire field that carries it
 * ("PLAYER_SNAP.x", "EVENTS.playerJoined") or says why it stays on the server.
 * tests/net/wire/tables_test.ts compares these tables with live objects, so a field
 * added to the sim without a decision here fails; the type check fails first.
 * (Bullets need no table here: every BULLET_FIELDS entry travels, see protocol.ts.)
 */
import type { BossState, EnemyState, PlayerState, SimWorld } from "../../sim/mod.ts";

/** Where a sim field goes: the wire field that carries it, or why nothing does. */
export type WireDecision = { readonly sent: string } | { readonly serverOnly: string };

/** Every field of a player's ship. */
export const PLAYER_STATE_WIRE = {
  id: { sent: "PLAYER_SNAP.id" },
  name: { sent: "EVENTS.playerJoined" },
  x: { sent: "PLAYER_SNAP.x" },
  y: { sent: "PLAYER_SNAP.y" },
  aim: { sent: "PLAYER_SNAP.aim" },
  hp: { sent: "PLAYER_SNAP.hp" },
  status: { sent: "PLAYER_SNAP.flags" },
  iframeTicks: { sent: "PLAYER_SNAP.flags" },
  fireCooldownTicks: { serverOnly: "the fire rate is the server's rule; shots arrive as volleys" },
  escapeTicks: { sent: "PLAYER_SNAP.escape" },
  buttons: { sent: "PLAYER_SNAP.flags" },
  away: { sent: "PLAYER_SNAP.flags" },
  viewLag: {
    serverOnly: "the client told it (its inputs' viewLag); the server's rewind for its shots",
  },
} as const satisfies Record<keyof PlayerState, WireDecision>;

/** Every field of a trash enemy. */
export const ENEMY_STATE_WIRE = {
  id: { sent: "ENEMY_SNAP.id" },
  def: { sent: "ENEMY_SNAP.kind" },
  x: { sent: "ENEMY_SNAP.x" },
  y: { sent: "ENEMY_SNAP.y" },
  hp: { sent: "ENEMY_SNAP.hp" },
  dirX: { serverOnly: "clients draw enemies from snapshot positions" },
  dirY: { serverOnly: "clients draw enemies from snapshot positions" },
  strafe: { serverOnly: "clients draw enemies from snapshot positions" },
  emitters: { serverOnly: "what an emitter does arrives as volleys" },
} as const satisfies Record<keyof EnemyState, WireDecision>;

/** Every field of the boss. */
export const BOSS_STATE_WIRE = {
  def: { sent: "BossSnap.bossId" },
  maxHp: { sent: "BossSnap.maxHp" },
  hp: { sent: "BossSnap.hp" },
  phase: { sent: "BossSnap.phase" },
  foldTicks: { sent: "BossSnap.folding" },
  emitters: { serverOnly: "what an emitter does arrives as volleys" },
} as const satisfies Record<keyof BossState, WireDecision>;

/** The data fields of `T` (its methods are behaviour, not state). */
type DataKeys<T> = {
  [K in keyof T]: T[K] extends (...args: never[]) => unknown ? never : K;
}[keyof T];

/** Every public field of a world (`acceptsPlayers` is a getter over `stage`). */
export const WORLD_STATE_WIRE = {
  def: { sent: "EnterMsg.worldId" },
  bullets: { sent: "EventsMsg.volleys" },
  players: { sent: "SnapshotMsg.players" },
  enemies: { sent: "SnapshotMsg.enemies" },
  rng: { serverOnly: "outcomes are the server's; clients never roll" },
  boss: { sent: "SnapshotMsg.boss" },
  tick: { sent: "SnapshotMsg.tick" },
  stage: { sent: "SnapshotMsg.stage" },
  wave: { sent: "SnapshotMsg.wave" },
  stats: { sent: "ResultsMsg.rows" },
  stageTicks: { serverOnly: "the next wave's arrival is announced by EVENTS.waveStarted" },
} as const satisfies Record<Exclude<DataKeys<SimWorld>, "acceptsPlayers">, WireDecision>;
