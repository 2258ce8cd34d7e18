/**
 * The one definition of the wire: message kinds, their fields and the protocol
 * version, shared by server, browser and bots. Every message is a CBOR array
 * whose first item is its kind; hot parts are hand-packed byte strings (little-endian).
 *
 * Client → server (nothing here can say where a ship is, what it hit, what it
 * took or that an escape finished — see tests/net/wire/protocol_test.ts):
 *
 *   Hello  [1, version:uint, name:text(≤16), resume:text?]
 *   Input  [2, newestTick:uint32, frames:bytes(5·n, n = 1..3)]  oldest first, consecutive ticks
 *            frame: moveX:i8 moveY:i8 (hundredths of full speed) aim:u16 (1/65536 turn) buttons:u8
 *   Ping   [3, clientTimeMs:uint32]
 *   Choice [4, choice:u8]  on the results screen: 0 back to the hub, 1 again with this crew
 *
 * Server → client:
 *
 *   Welcome  [11, version:uint, playerId:u16]
 *   Reject   [12, code:uint, reason:text]                     the socket closes after it
 *   Enter    [13, instanceId:text, worldId:u8, tick:uint32, reason:u8, roster:[[id, name]…],
 *             stage:u8, bullets:bytes(83·n)]                 a transfer: a server-only decision
 *   Snapshot [14, tick:uint32, ackTick:int, stage:u8, wave:u8, players:bytes(10·n),
 *             enemies:bytes(9·n), boss:[bossId, hp, maxHp, phase, folding] | null]
 *            player: id:u16 x:u16 y:u16 (1/8 px) aim:u8 hp:u8 flags:u8 escape:u8 (/255)
 *            enemy:  id:u16 kind:u8 x:u16 y:u16 (1/8 px) hp:u16
 *   Events   [15, baseTick:uint32, volleys:bytes, hits:bytes, events:[[code, …fields]…]]
 *            one batch per snapshot interval (≤ 3 ticks), flushed early before a transfer
 *            hit: uidDelta:varint target:u8 targetId:varuint damage:varuint (hundredths)
 *            volleys: see net/volley_codec.ts (each record carries its tick − baseTick)
 *   Pong     [16, clientTimeMs:uint32, tick:uint32]
 *   Results  [17, outcome:u8, worldId:u8, durationTicks:uint32,
 *             rows:[[id, name, damageDealt (hundredths), hitsTaken, grazes, status:u8]…]]
 *            a run ended (cleared or wiped): sent to each of its crew still in it or in the hub
 */
import type { InputFrame, Volley } from "../../sim/mod.ts";

/** Bumped on any change to the wire; a mismatched hello is rejected. */
export const PROTOCOL_VERSION = 2;

/** Kinds of client → server messages. */
export const ClientKind = { Hello: 1, Input: 2, Ping: 3, Choice: 4 } as const;
export type ClientKind = (typeof ClientKind)[keyof typeof ClientKind];

/**
 * Kinds of server → client messages. They share no number with a client kind, so
 * a server decision can never be mistaken for (or encoded as) something a client says.
 */
export const ServerKind = {
  Welcome: 11,
  Reject: 12,
  Enter: 13,
  Snapshot: 14,
  Events: 15,
  Pong: 16,
  Results: 17,
} as const;
export type ServerKind = (typeof ServerKind)[keyof typeof ServerKind];

/** Why a client entered an instance. */
export const EnterReason = {
  Join: 0,
  Portal: 1,
  Escape: 2,
  Death: 3,
  Cleared: 4,
  /** "Again with this crew": a new dungeon for the same party. */
  Retry: 5,
  /** "Back to hub" from the results screen. */
  Return: 6,
} as const;
export type EnterReason = (typeof EnterReason)[keyof typeof EnterReason];

/** Where a world's fight stands, on the wire. */
export const StageCode = { hub: 0, waves: 1, boss: 2, cleared: 3 } as const;

/** Player flag bits in a snapshot. */
export const PlayerFlag = {
  Active: 1,
  Dead: 2,
  Escaped: 4,
  Invulnerable: 8,
  Firing: 16,
  Channelling: 32,
} as const;

/** WebSocket close codes (4000–4999 are the application's) with their meaning. */
export const CloseCode = {
  BadMessage: 4000,
  VersionMismatch: 4001,
  HandshakeTimeout: 4002,
  RateLimited: 4003,
  FrameTooLarge: 4004,
  ServerFull: 4005,
  BadName: 4006,
  OriginRefused: 4007,
  TooManyFromIp: 4008,
  ServerRestarting: 4009,
  Replaced: 4010,
} as const;
export type CloseCode = (typeof CloseCode)[keyof typeof CloseCode];

/**
 * Codes of the small events carried in an Events message. Fields follow the code;
 * BossSpawned and BossDefeated end with the tick they happened on, because the
 * replica consumes player shots on the stationary boss from exactly that tick.
 */
export const EventCode = {
  /** [code, team, tick]: every bullet of the team born up to tick is gone. */
  BulletsCleared: 1,
  PlayerHit: 2,
  PlayerDied: 3,
  PortalEntered: 4,
  EscapeStarted: 5,
  EscapeCancelled: 6,
  EscapeCompleted: 7,
  WaveStarted: 8,
  EnemySpawned: 9,
  EnemyKilled: 10,
  BossSpawned: 11,
  BossPhase: 12,
  BossDefeated: 13,
  PlayerJoined: 14,
  PlayerLeft: 15,
  /** [code, playerId, total]: the run's graze count, at most one per player per batch. */
  Graze: 16,
  /** [code, source (TelegraphSource), sourceId, emitter, style (TelegraphStyle), aim:u16, leadTicks, tick] */
  Telegraph: 17,
} as const;

/** Who gives a telegraph. */
export const TelegraphSource = { enemy: 0, boss: 1 } as const;
/** Telegraph styles on the wire. */
export const TelegraphStyle = { line: 0, flash: 1, edge: 2 } as const;

/** A player's answer on the results screen. */
export const Choice = { Hub: 0, Again: 1 } as const;
export type Choice = (typeof Choice)[keyof typeof Choice];

/** How a run ended. */
export const Outcome = { Cleared: 0, Wiped: 1 } as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

/** A player's status in a results row. */
export const RunStatusCode = { active: 0, dead: 1, escaped: 2, portal: 3, left: 4 } as const;

/** Escape cancel reasons on the wire. */
export const EscapeCancelCode = { damage: 0, released: 1, died: 2 } as const;

export interface HelloMsg {
  readonly kind: typeof ClientKind.Hello;
  readonly version: number;
  readonly name: string;
  readonly resume?: string;
}
export interface InputMsg {
  readonly kind: typeof ClientKind.Input;
  /** Consecutive frames, oldest first. */
  readonly frames: readonly InputFrame[];
}
export interface PingMsg {
  readonly kind: typeof ClientKind.Ping;
  readonly clientTimeMs: number;
}
export interface ChoiceMsg {
  readonly kind: typeof ClientKind.Choice;
  readonly choice: Choice;
}
/** Everything a client can say. */
export type ClientMessage = HelloMsg | InputMsg | PingMsg | ChoiceMsg;

export interface WelcomeMsg {
  readonly kind: typeof ServerKind.Welcome;
  readonly version: number;
  readonly playerId: number;
}
export interface RejectMsg {
  readonly kind: typeof ServerKind.Reject;
  readonly code: number;
  readonly reason: string;
}
/** The state of one bullet in flight, for a client arriving mid-fight. */
export interface BulletState {
  readonly uid: number;
  readonly x: number;
  readonly y: number;
  readonly dirX: number;
  readonly dirY: number;
  readonly speed: number;
  readonly accel: number;
  readonly turnCos: number;
  readonly turnSin: number;
  readonly radius: number;
  readonly ttl: number;
  readonly kind: number;
  readonly team: number;
  readonly damage: number;
  readonly owner: number;
}
export interface EnterMsg {
  readonly kind: typeof ServerKind.Enter;
  readonly instanceId: string;
  readonly worldId: number;
  readonly tick: number;
  readonly reason: EnterReason;
  readonly roster: readonly RosterEntry[];
  readonly stage: number;
  readonly bullets: readonly BulletState[];
}
export interface RosterEntry {
  readonly id: number;
  readonly name: string;
}
export interface PlayerSnap {
  readonly id: number;
  readonly x: number;
  readonly y: number;
  /** Aim in 1/256 turn. */
  readonly aim: number;
  readonly hp: number;
  readonly flags: number;
  /** Escape channel progress, 0–255. */
  readonly escape: number;
}
export interface EnemySnap {
  readonly id: number;
  readonly kind: number;
  readonly x: number;
  readonly y: number;
  readonly hp: number;
}
export interface BossSnap {
  readonly bossId: number;
  readonly hp: number;
  readonly maxHp: number;
  readonly phase: number;
  readonly folding: boolean;
}
export interface SnapshotMsg {
  readonly kind: typeof ServerKind.Snapshot;
  readonly tick: number;
  /** The recipient's last applied input tick, -1 before any. */
  readonly ackTick: number;
  readonly stage: number;
  readonly wave: number;
  readonly players: readonly PlayerSnap[];
  readonly enemies: readonly EnemySnap[];
  readonly boss: BossSnap | null;
}
/** A bullet that died early, and what it struck. */
export interface HitRecord {
  readonly uid: number;
  readonly target: number;
  readonly targetId: number;
  readonly damage: number;
}
/** A small event: its code and integer or text fields. */
export type NetEvent = readonly [number, ...(number | string)[]];
export interface EventsMsg {
  readonly kind: typeof ServerKind.Events;
  /** The first tick of the batch; volleys carry their own birth ticks. */
  readonly tick: number;
  readonly volleys: readonly Volley[];
  readonly hits: readonly HitRecord[];
  readonly events: readonly NetEvent[];
  /** Set by the decoder: bytes the volleys and hits took on the wire (for traffic figures). */
  readonly bulletBytes?: number;
}
export interface PongMsg {
  readonly kind: typeof ServerKind.Pong;
  readonly clientTimeMs: number;
  readonly tick: number;
}
/** One player's line on the results screen. */
export interface ResultsRow {
  readonly id: number;
  readonly name: string;
  readonly damageDealt: number;
  readonly hitsTaken: number;
  readonly grazes: number;
  /** A RunStatusCode. */
  readonly status: number;
}
export interface ResultsMsg {
  readonly kind: typeof ServerKind.Results;
  readonly outcome: Outcome;
  readonly worldId: number;
  readonly durationTicks: number;
  readonly rows: readonly ResultsRow[];
}
/** Everything the server can say. */
export type ServerMessage =
  | WelcomeMsg
  | RejectMsg
  | EnterMsg
  | SnapshotMsg
  | EventsMsg
  | PongMsg
  | ResultsMsg;
