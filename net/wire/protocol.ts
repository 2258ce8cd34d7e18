/**
 * The one definition of the wire: message kinds, their fields and the protocol
 * version, shared by server, browser and bots. Every message is a CBOR array
 * whose first item is its kind; hot parts are hand-packed byte strings (little-endian)
 * laid out by the field tables below (net/wire/fields.ts packs any of them), and the
 * small events are typed by EVENTS. The TypeScript types of records and events come
 * from those tables, so a field is declared once.
 *
 * Client → server (nothing here can say where a ship is, what it hit, what it
 * took or that an escape finished — see tests/net/wire/protocol_test.ts):
 *
 *   Hello  [1, version:uint, name:text(≤16), content:uint32, resume:text(≤192) | null?,
 *           ticket:text(≤200)?]
 *            content: CONTENT_HASH (content/registry.ts); it must match, as the version must
 *            resume: the token of the session this client had (Welcome, Token) to take it back
 *            ticket: the signed transfer ticket a Transfer handed out (another process's)
 *   Input  [2, newestTick:uint32, frames:bytes, snapshotAckAge:int?, snapshotsHeld:u8?]
 *            consecutive ticks, oldest first; 1–12 frames: a batch over a stream, a batch and
 *            its two predecessors over datagrams. snapshotAckAge (datagrams): newestTick − the
 *            newest snapshot tick received (the input's lead: one byte); snapshotsHeld: bit k set = the one TICKS_PER_SNAPSHOT·(k+1)
 *            ticks before it arrived too (so a loss is told from a snapshot overtaken)
 *            first frame: INPUT_FRAME  moveX:i8 moveY:i8 (hundredths of full speed) aim:u16
 *                         (1/65536 turn) buttons:u8 viewLag:u8 (ticks between the frame and
 *                         the snapshot its enemies were drawn from)
 *            each later:  change:u8 (1 move, 2 aim, 4 buttons, 8 view lag), then what
 *                         changed: moveX:i8 moveY:i8, aimTurn:varint (shortest way round),
 *                         buttons:u8, viewLag:u8
 *   Ping   [3, clientTimeMs:uint32]
 *   Choice [4, choice:u8]  on the results screen: 0 back to the hub, 1 again with this crew
 *
 * What one side sends in one tick leaves as one frame: a CBOR sequence of these
 * messages (net/wire/frames.ts). Snapshots and Input may instead go as datagrams,
 * one message each (WebTransport).
 *
 * Server → client:
 *
 *   Welcome  [11, version:uint, playerId:u16, resume:text, graceMs:uint32]
 *            resume: a signed token that takes this session back over a new connection
 *            (single use; each Welcome and Token brings the next); graceMs: how long the
 *            server keeps a ship whose link dropped
 *   Reject   [12, code:uint, reason:text]                     the socket closes after it
 *   Enter    [13, instanceId:text, worldId:u8, tick:uint32, reason:u8, roster:[[id, name]…],
 *             stage:u8, bullets:bytes(83·n), volleyDictionary:bytes]
 *                                                            a transfer: a server-only decision
 *            bullet: every BULLET_FIELDS entry (sim/bullets.ts) at its array's precision
 *            volleyDictionary: nextUid:u32 next:u8 count:u8,
 *            count × (VOLLEY_HEADER, origins:u8, origins × (x:i16 y:i16))
 *   Snapshot [14, tick:uint32, ackAge:int, lateTicks:u8, slack:u8, baseAge:uint, body:bytes,
 *             epoch:u8?]
 *            ackAge: tick − the recipient's last applied input tick
 *            lateTicks: how late (in ticks) the recipient's latest frame to miss its tick
 *            arrived since its last snapshot
 *            slack: 1 + the least (in ticks) any of its frames that made their tick arrived
 *            early by since its last snapshot, at most 255; 0 when none arrived
 *            baseAge: tick − the baseline's tick, 0 for a whole snapshot
 *            body: stage, wave, players, enemies, boss as changes since the baseline
 *            (net/wire/snapshot_delta.ts); rows are these records in wire units:
 *            player: PLAYER_SNAP  id:u16 x:u16 y:u16 (1/8 px) aim:u8 hp:u8 flags:u8 escape:u8
 *            enemy:  ENEMY_SNAP   id:u16 kind:u8 x:u16 y:u16 (1/8 px) hp:u16
 *            boss:   bossId hp maxHp phase folding
 *            epoch (datagrams only): Enters sent to the recipient, mod 256
 *   Events   [15, baseTick:uint32, volleys:bytes, hits:bytes, events:[[code, …fields]…]]
 *            one batch per snapshot interval (≤ 3 ticks), flushed early before a transfer
 *            hit: uidDelta:varint target:u8 targetId:varuint damage:varuint (hundredths)
 *            volleys: see net/wire/volley_codec.ts (each record carries its tick − baseTick)
 *            event: EVENTS[name].code, then its fields in table order
 *   Pong     [16, clientTimeMs:uint32, tick:uint32, heldMs:uint16]  held back to ride in the
 *            next frame that goes anyway; the client takes heldMs off the round trip
 *   Results  [17, outcome:u8, worldId:u8, durationTicks:uint32,
 *             rows:[[id, name, damageDealt (hundredths), hitsTaken, grazes, status:u8]…]]
 *            a run ended (cleared or wiped): sent to each of its crew still in it or in the hub
 *   Transfer [18, url:text, ticket:text, reason:u8]
 *            another process hosts the player's next instance: reconnect to url (its /ws)
 *            in the same page and say hello with the ticket; this socket then closes (4011)
 *   Notice   [19, code:u8, text:text]   something the player should know: NoticeCode
 *   Token    [20, resume:text]          a fresh resume token (the last one is about to expire)
 */
import {
  BULLET_FIELD_NAMES,
  BULLET_FIELDS,
  type BulletField,
  type BulletState,
  ESCAPE_CANCEL_REASONS,
  type InputFrame,
  POS_UNITS_PER_PX,
  TELEGRAPH_SOURCES,
  TELEGRAPH_STYLES,
  type Volley,
} from "../../sim/mod.ts";
import type { RecordTable, WireField, WireRecord, WireType } from "./fields.ts";

/** Bumped on any change to the wire; a mismatched hello is rejected. */
export const PROTOCOL_VERSION = 8;

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
  Transfer: 18,
  Notice: 19,
  Token: 20,
} as const;
export type ServerKind = (typeof ServerKind)[keyof typeof ServerKind];

/** Which transport carries a connection. */
export type TransportKind = "websocket" | "webtransport";

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
  /** Back in the same instance after a dropped connection (session resume). */
  Resume: 7,
  /** The instance it was in failed on the server and was closed: safe in the hub. */
  Evacuated: 8,
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
  /** Its player's link is down; the ship waits, untouchable, for a resume. */
  Away: 64,
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
  /** The server hit a bug handling this client's message (WebSocket's "internal error"). */
  ServerError: 1011,
  /** After a Transfer: the player continues on another process. */
  Transferred: 4011,
  /** A hello's transfer ticket is forged, expired, used or meant for another process. */
  BadTicket: 4012,
  /** A player who said hello and then sent nothing for the idle timeout. */
  IdleTimeout: 4013,
  /** Too many bytes queued for a client that is not reading. */
  Backlogged: 4014,
} as const;
export type CloseCode = (typeof CloseCode)[keyof typeof CloseCode];

// ---------------------------------------------------------------- records

/** One input frame after its tick (the tick is implied by its place in the message). */
export const INPUT_FRAME = {
  /** Hundredths of full speed. */
  moveX: { type: "i8" },
  moveY: { type: "i8" },
  /** 1/65536 turn. */
  aim: { type: "u16" },
  buttons: { type: "u8" },
  /** How old the picture of the enemies was: the server judges by it, up to its limit. */
  viewLag: { type: "u8" },
} as const satisfies Record<Exclude<keyof InputFrame, "tick">, WireField>;

/** One ship in a snapshot. */
export const PLAYER_SNAP = {
  id: { type: "u16" },
  x: { type: "u16", per: POS_UNITS_PER_PX },
  y: { type: "u16", per: POS_UNITS_PER_PX },
  /** 1/256 turn. */
  aim: { type: "u8" },
  hp: { type: "u8" },
  /** PlayerFlag bits. */
  flags: { type: "u8" },
  /** Escape channel progress, 0–255. */
  escape: { type: "u8" },
} as const satisfies RecordTable;

/** One trash enemy in a snapshot. */
export const ENEMY_SNAP = {
  id: { type: "u16" },
  /** Its EnemyDef's id. */
  kind: { type: "u8" },
  x: { type: "u16", per: POS_UNITS_PER_PX },
  y: { type: "u16", per: POS_UNITS_PER_PX },
  /** Rounded up: a wounded enemy never reads 0. */
  hp: { type: "u16", round: "ceil" },
} as const satisfies RecordTable;

const COLUMN_WIRE_TYPES = new Map<unknown, WireType>([
  [Float64Array, "f64"],
  [Float32Array, "f32"],
  [Int32Array, "i32"],
  [Uint32Array, "u32"],
  [Uint8Array, "u8"],
]);

/**
 * One bullet in flight, for a client arriving mid-fight: every BULLET_FIELDS entry at
 * its array's own precision, so the joiner's copy is bit for bit the server's.
 */
export const BULLET_STATE: { readonly [K in BulletField]: WireField } = Object.fromEntries(
  BULLET_FIELD_NAMES.map((
    name,
  ) => [name, { type: COLUMN_WIRE_TYPES.get(BULLET_FIELDS[name].array)! }]),
) as { [K in BulletField]: WireField };

// ---------------------------------------------------------------- small events

/** A field of a small event: an integer range, one of some names (sent as its index), or text. */
export type EventField =
  | { readonly int: readonly [min: number, max: number] }
  | { readonly oneOf: readonly string[] }
  | { readonly text: number };

/** A small event: its code on the wire and its fields in wire order. */
export interface EventDef {
  readonly code: number;
  readonly fields: readonly (readonly [name: string, field: EventField])[];
}

const U8 = { int: [0, 0xff] } as const;
const U16 = { int: [0, 0xffff] } as const;
const U32 = { int: [0, 0xffffffff] } as const;
const TEAM = { int: [0, 1] } as const;
const NAME = { text: 64 } as const;

/**
 * Every small event an Events message carries. Names match the SimEvent each comes
 * from; bossSpawned and bossDefeated add the tick they happened on, because the
 * replica consumes player shots on the stationary boss from exactly that tick.
 */
export const EVENTS = {
  /** Every bullet of `team` born up to `tick` is gone. */
  bulletsCleared: { code: 1, fields: [["team", TEAM], ["tick", U32]] },
  playerHit: { code: 2, fields: [["playerId", U16], ["hp", U8]] },
  playerDied: { code: 3, fields: [["playerId", U16]] },
  portalEntered: { code: 4, fields: [["playerId", U16], ["portal", U8]] },
  escapeStarted: { code: 5, fields: [["playerId", U16]] },
  escapeCancelled: {
    code: 6,
    fields: [["playerId", U16], ["reason", { oneOf: ESCAPE_CANCEL_REASONS }]],
  },
  escapeCompleted: { code: 7, fields: [["playerId", U16]] },
  waveStarted: { code: 8, fields: [["wave", U8]] },
  enemySpawned: { code: 9, fields: [["enemyId", U16], ["kind", U8]] },
  enemyKilled: { code: 10, fields: [["enemyId", U16]] },
  bossSpawned: { code: 11, fields: [["bossId", U8], ["maxHp", U32], ["tick", U32]] },
  bossPhase: { code: 12, fields: [["phase", U8]] },
  bossDefeated: { code: 13, fields: [["tick", U32]] },
  playerJoined: { code: 14, fields: [["playerId", U16], ["name", NAME]] },
  playerLeft: { code: 15, fields: [["playerId", U16]] },
  /** The run's graze count, at most one per player per batch. */
  graze: { code: 16, fields: [["playerId", U16], ["total", U32]] },
  /** An emitter warns of its next shot: `aim` in angle units, the shot `leadTicks` after `tick`. */
  telegraph: {
    code: 17,
    fields: [
      ["source", { oneOf: TELEGRAPH_SOURCES }],
      ["sourceId", U16],
      ["emitter", U8],
      ["style", { oneOf: TELEGRAPH_STYLES }],
      ["aim", U16],
      ["leadTicks", U16],
      ["tick", U32],
    ],
  },
  /** The portal could not place the player (they stay in the hub): why, for them to read. */
  portalRefused: { code: 18, fields: [["playerId", U16], ["reason", { text: 200 }]] },
} as const satisfies Record<string, EventDef>;

/** The name of a small event. */
export type EventName = keyof typeof EVENTS;

type FieldValue<F> = F extends { readonly oneOf: readonly (infer S)[] } ? S
  : F extends { readonly text: number } ? string
  : number;
type Payload<Fs extends EventDef["fields"]> = {
  readonly [P in Fs[number] as P[0]]: FieldValue<P[1]>;
};
type Flat<T> = { [K in keyof T]: T[K] } & unknown;

/** The small event named `N`, as a typed object. */
export type NetEventOf<N extends EventName> = Flat<
  { readonly type: N } & Payload<(typeof EVENTS)[N]["fields"]>
>;
/** Any small event; `switch (e.type)` narrows it. */
export type NetEvent = { [N in EventName]: NetEventOf<N> }[EventName];

// ---------------------------------------------------------------- messages

/** A player's answer on the results screen. */
export const Choice = { Hub: 0, Again: 1 } as const;
export type Choice = (typeof Choice)[keyof typeof Choice];

/** How a run ended. */
export const Outcome = { Cleared: 0, Wiped: 1 } as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

/** A player's status in a results row. */
export const RunStatusCode = { active: 0, dead: 1, escaped: 2, portal: 3, left: 4 } as const;

export interface HelloMsg {
  readonly kind: typeof ClientKind.Hello;
  readonly version: number;
  readonly name: string;
  /** The hash of the content the client was built with: worlds, bosses and kinds by id. */
  readonly content: number;
  readonly resume?: string;
  /** A transfer ticket from another process's Transfer message. */
  readonly ticket?: string;
}
export interface InputMsg {
  readonly kind: typeof ClientKind.Input;
  /** Consecutive frames, oldest first. */
  readonly frames: readonly InputFrame[];
  /** Over datagrams: the newest snapshot tick the client has received. */
  readonly snapshotAck?: number;
  /** Over datagrams: bit k = the snapshot TICKS_PER_SNAPSHOT·(k+1) ticks before the ack arrived. */
  readonly snapshotsHeld?: number;
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
  /** Takes this session back over a new connection (see Hello.resume). */
  readonly resume: string;
  /** How long a ship whose link dropped waits for its player, in ms. */
  readonly graceMs: number;
}

/**
 * What a Notice tells: a resume that came too late (the run is over) or was refused
 * (the token was forged or already used), or a server about to restart.
 */
export const NoticeCode = { ResumeExpired: 0, ResumeRefused: 1, Draining: 2 } as const;
export type NoticeCode = (typeof NoticeCode)[keyof typeof NoticeCode];

export interface NoticeMsg {
  readonly kind: typeof ServerKind.Notice;
  readonly code: NoticeCode;
  readonly text: string;
}

export interface TokenMsg {
  readonly kind: typeof ServerKind.Token;
  readonly resume: string;
}
export interface RejectMsg {
  readonly kind: typeof ServerKind.Reject;
  readonly code: number;
  readonly reason: string;
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
  /** The instance's volley-header dictionary as it stands (VolleyDictionary.export). */
  readonly volleyDictionary?: Uint8Array;
}
export interface RosterEntry {
  readonly id: number;
  readonly name: string;
}
/** One ship in a snapshot. */
export type PlayerSnap = WireRecord<typeof PLAYER_SNAP>;
/** One trash enemy in a snapshot. */
export type EnemySnap = WireRecord<typeof ENEMY_SNAP>;
export interface BossSnap {
  readonly bossId: number;
  readonly hp: number;
  readonly maxHp: number;
  readonly phase: number;
  readonly folding: boolean;
}
/**
 * A snapshot as it travels: changes since a baseline the recipient holds (or whole).
 * The client's SnapshotHistory turns it back into a SnapshotMsg.
 */
export interface SnapshotWireMsg {
  readonly kind: typeof ServerKind.Snapshot;
  readonly tick: number;
  /** The recipient's last applied input tick, -1 before any. */
  readonly ackTick: number;
  /** As SnapshotMsg.lateTicks: how late this recipient's late frames were, in ticks. */
  readonly lateTicks: number;
  /** As SnapshotMsg.slackTicks: how early this recipient's frames on time were, in ticks. */
  readonly slackTicks?: number;
  /** The tick of the snapshot this one is a delta of; undefined for a whole one. */
  readonly baseTick: number | undefined;
  readonly body: Uint8Array;
  /** Datagrams only: Enters the recipient had been sent (mod 256). */
  readonly epoch?: number;
}
/** A snapshot as the runtime reads it: the whole state at `tick`. */
export interface SnapshotMsg {
  readonly kind: typeof ServerKind.Snapshot;
  readonly tick: number;
  /** The recipient's last applied input tick, -1 before any. */
  readonly ackTick: number;
  /**
   * How late the recipient's frames that missed their tick arrived, in ticks (the most
   * since its previous snapshot; 0: all on time). The client raises its input lead by it.
   */
  readonly lateTicks: number;
  /**
   * How early the recipient's frames that made their tick arrived, in ticks (the least
   * since its previous snapshot; undefined: none arrived). A lead that keeps more than it
   * needs, snapshot after snapshot, can come down by the difference.
   */
  readonly slackTicks?: number;
  readonly stage: number;
  readonly wave: number;
  readonly players: readonly PlayerSnap[];
  readonly enemies: readonly EnemySnap[];
  readonly boss: BossSnap | null;
  /** Datagrams only: Enters the recipient had been sent (mod 256), so none lands in the wrong world. */
  readonly epoch?: number;
}
/** A bullet that died early, and what it struck. */
export interface HitRecord {
  readonly uid: number;
  readonly target: number;
  readonly targetId: number;
  readonly damage: number;
}
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
  /** How long the server held the pong back for a frame that was going anyway. */
  readonly heldMs: number;
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
/** Another process hosts the player's next instance. */
export interface TransferMsg {
  readonly kind: typeof ServerKind.Transfer;
  /** The game socket to reconnect to (ws: or wss:). */
  readonly url: string;
  /** Signed, short-lived and single-use: say it in the hello there. */
  readonly ticket: string;
  readonly reason: EnterReason;
}
/** Everything the server can say. */
export type ServerMessage =
  | WelcomeMsg
  | RejectMsg
  | EnterMsg
  | SnapshotWireMsg
  | EventsMsg
  | PongMsg
  | ResultsMsg
  | TransferMsg
  | NoticeMsg
  | TokenMsg;
