/**
 * Encodes and decodes every message of net/wire/protocol.ts. Decoding validates types,
 * lengths and ranges and throws CodecError with a clear message; the server turns
 * that into a close of the offending connection and nothing else.
 */
import { Decoder, Encoder } from "cbor-x";
import { ANGLE_UNITS, BUTTON_MASK, type InputFrame, MOVE_UNITS } from "../../sim/mod.ts";
import { ByteReader, ByteWriter, CodecError } from "./bytes.ts";
import { packRecords, readRecord, recordBytes, unpackRecords, writeRecord } from "./fields.ts";
import {
  type BossSnap,
  BULLET_STATE,
  type Choice,
  ClientKind,
  type ClientMessage,
  ENEMY_SNAP,
  EnterReason,
  type EventDef,
  type EventField,
  type EventName,
  EVENTS,
  type HitRecord,
  INPUT_FRAME,
  type NetEvent,
  type Outcome,
  PLAYER_SNAP,
  PROTOCOL_VERSION,
  ServerKind,
  type ServerMessage,
  type SnapshotMsg,
} from "./protocol.ts";
import { decodeVolleys, encodeVolleys } from "./volley_codec.ts";
import { INPUT_FRAMES_PER_MESSAGE, LIMITS } from "../../content/net_tuning.ts";

export { CodecError } from "./bytes.ts";

const MAX_ENTER_REASON = Math.max(...Object.values(EnterReason));
const ENCODER_OPTIONS = { useRecords: false, tagUint8Array: false, variableMapSize: true };
const MAX_UINT32 = 0xffffffff;
const FRAME_BYTES = recordBytes(INPUT_FRAME);
/** A transfer ticket's longest spelling. */
export const MAX_TICKET_CHARS = 400;
/** A picture older than this is sent as this (the server's limit is far lower). */
const MAX_VIEW_LAG = 255;
/** Lateness reported to a client is capped here: later than that is a stall, not a lead. */
const MAX_LATE_TICKS = 255;

/**
 * Decodes CBOR with a decoder of its own: record definitions a hostile peer might
 * send can never leak into another connection's decoding.
 */
export class MessageDecoder {
  readonly #cbor = new Decoder({ useRecords: false, mapsAsObjects: true });

  /** Any CBOR value, or CodecError. */
  decodeValue(bytes: Uint8Array, what: string): unknown {
    try {
      return this.#cbor.decode(bytes);
    } catch (err) {
      throw new CodecError(`Cannot decode ${what}: not CBOR (${(err as Error).message})`);
    }
  }
}

/** Encodes messages as CBOR; one per connection or shared, it keeps no state between calls. */
export class MessageEncoder {
  readonly #cbor = new Encoder(ENCODER_OPTIONS);

  encodeValue(value: unknown): Uint8Array {
    return this.#cbor.encode(value);
  }
}

// ---------------------------------------------------------------- validation

function fail(what: string, detail: string): never {
  throw new CodecError(`Cannot decode ${what}: ${detail}`);
}

function int(v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isInteger(v)) {
    fail(what, `expected an integer, got ${show(v)}`);
  }
  if (v < min || v > max) fail(what, `${v} is outside [${min}, ${max}]`);
  return v;
}

function text(v: unknown, what: string, maxLength: number): string {
  if (typeof v !== "string") fail(what, `expected text, got ${show(v)}`);
  if (v.length > maxLength) fail(what, `text longer than ${maxLength}`);
  return v;
}

function bytes(v: unknown, what: string): Uint8Array {
  if (!(v instanceof Uint8Array)) fail(what, `expected bytes, got ${show(v)}`);
  return v;
}

function array(v: unknown, what: string, min: number, max: number): unknown[] {
  if (!Array.isArray(v)) fail(what, `expected an array, got ${show(v)}`);
  if (v.length < min || v.length > max) fail(what, `${v.length} items, expected ${min}–${max}`);
  return v;
}

function show(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (v instanceof Uint8Array) return "bytes";
  return typeof v === "number" ? String(v) : typeof v;
}

// ---------------------------------------------------------------- client → server

/**
 * Encodes a client message. Only client kinds are accepted: a transfer or any
 * other server decision has no client encoding, even with a forged object.
 */
export function encodeClientMessage(enc: MessageEncoder, msg: ClientMessage): Uint8Array {
  switch (msg.kind) {
    case ClientKind.Hello: {
      const head = [msg.kind, msg.version, msg.name, msg.content >>> 0];
      if (msg.ticket !== undefined) {
        return enc.encodeValue([...head, msg.resume ?? null, msg.ticket]);
      }
      return enc.encodeValue(msg.resume === undefined ? head : [...head, msg.resume]);
    }
    case ClientKind.Input: {
      const frames = msg.frames;
      if (frames.length < 1 || frames.length > INPUT_FRAMES_PER_MESSAGE) {
        throw new CodecError(`Cannot encode input: ${frames.length} frames`);
      }
      const w = new ByteWriter(FRAME_BYTES * frames.length);
      for (let i = 0; i < frames.length; i++) {
        const f = frames[i];
        if (i > 0 && f.tick !== frames[i - 1].tick + 1) {
          throw new CodecError("Cannot encode input: frames are not consecutive ticks");
        }
        const record = { ...f, viewLag: Math.min(f.viewLag ?? 0, MAX_VIEW_LAG) };
        writeRecord(w, INPUT_FRAME, { record, what: "input frame" });
      }
      return enc.encodeValue([msg.kind, frames[frames.length - 1].tick, w.bytes()]);
    }
    case ClientKind.Ping:
      return enc.encodeValue([msg.kind, msg.clientTimeMs >>> 0]);
    case ClientKind.Choice:
      return enc.encodeValue([msg.kind, msg.choice]);
    default:
      throw new CodecError(
        `Cannot encode client message kind ${(msg as { kind: unknown }).kind}: not a client kind`,
      );
  }
}

/** Decodes and validates one client frame. */
export function decodeClientMessage(dec: MessageDecoder, data: Uint8Array): ClientMessage {
  // The largest frame any state allows; the server holds each state to its own cap first.
  if (data.byteLength > LIMITS.maxHelloBytes) {
    fail("client message", `${data.byteLength} bytes exceeds ${LIMITS.maxHelloBytes}`);
  }
  const raw = array(dec.decodeValue(data, "client message"), "client message", 1, 6);
  const kind = raw[0];
  switch (kind) {
    case ClientKind.Hello: {
      array(raw, "hello", 2, 6);
      const version = int(raw[1], "hello version", 0, MAX_UINT32);
      // Only the version's place holds across protocol versions: another version's hello is
      // answered with a version mismatch (and "reload the page"), whatever the rest holds.
      if (version !== PROTOCOL_VERSION) return { kind, version, name: "", content: 0 };
      array(raw, "hello", 4, 6);
      // The frame-size cap bounds the name; its rules (and a Reject saying so) are the server's.
      const name = text(raw[2], "hello name", LIMITS.maxClientFrameBytes);
      const content = int(raw[3], "hello content", 0, MAX_UINT32);
      const resume = raw[4] === undefined || (raw[4] === null && raw.length === 6)
        ? undefined
        : text(raw[4], "hello resume", 64);
      const ticket = raw[5] === undefined
        ? undefined
        : text(raw[5], "hello ticket", MAX_TICKET_CHARS);
      return ticket === undefined
        ? { kind, version, name, content, resume }
        : { kind, version, name, content, resume, ticket };
    }
    case ClientKind.Input: {
      array(raw, "input", 3, 3);
      const newest = int(raw[1], "input tick", 0, MAX_UINT32);
      const packed = bytes(raw[2], "input frames");
      const n = packed.byteLength / FRAME_BYTES;
      if (!Number.isInteger(n) || n < 1 || n > INPUT_FRAMES_PER_MESSAGE) {
        fail("input frames", `${packed.byteLength} bytes is not 1–3 frames`);
      }
      if (newest - (n - 1) < 0) fail("input", `tick ${newest} is too small for ${n} frames`);
      const r = new ByteReader(packed, "input frames");
      const frames: InputFrame[] = [];
      for (let i = 0; i < n; i++) {
        const { moveX, moveY, aim, buttons, viewLag } = readRecord(r, INPUT_FRAME);
        if (Math.abs(moveX) > MOVE_UNITS || Math.abs(moveY) > MOVE_UNITS) {
          fail("input frame", `move (${moveX}, ${moveY}) is outside ±${MOVE_UNITS}`);
        }
        if ((buttons & ~BUTTON_MASK) !== 0) fail("input frame", `unknown button bits ${buttons}`);
        frames.push({ tick: newest - (n - 1) + i, moveX, moveY, aim, buttons, viewLag });
      }
      return { kind, frames };
    }
    case ClientKind.Ping: {
      array(raw, "ping", 2, 2);
      return { kind, clientTimeMs: int(raw[1], "ping time", 0, MAX_UINT32) };
    }
    case ClientKind.Choice: {
      array(raw, "choice", 2, 2);
      return { kind, choice: int(raw[1], "choice", 0, 1) as Choice };
    }
    default:
      fail("client message", `unknown kind ${show(kind)}`);
  }
}

// ---------------------------------------------------------------- server → client

/** Hits as varints: uid as a delta from the previous hit's, so a batch costs ~4 bytes a hit. */
function packHits(hits: readonly HitRecord[]): Uint8Array {
  const w = new ByteWriter(hits.length * 5);
  let prevUid = 0;
  for (const h of hits) {
    w.varint(h.uid - prevUid);
    prevUid = h.uid;
    w.u8(h.target);
    w.varuint(h.targetId);
    w.varuint(Math.round(h.damage * 100));
  }
  return w.bytes();
}

function unpackHits(b: Uint8Array): HitRecord[] {
  const r = new ByteReader(b, "hits");
  const out: HitRecord[] = [];
  let uid = 0;
  while (r.remaining > 0) {
    uid += r.varint();
    if (uid < 0 || uid > MAX_UINT32) fail("hits", `uid ${uid} out of range`);
    const target = r.u8();
    if (target > 2) fail("hits", `unknown target ${target}`);
    out.push({ uid, target, targetId: r.varuint(), damage: r.varuint() / 100 });
  }
  return out;
}

// ---------------------------------------------------------------- small events

const EVENT_BY_CODE = new Map<number, readonly [EventName, EventDef]>(
  (Object.entries(EVENTS) as [EventName, EventDef][]).map(([name, def]) => [def.code, [name, def]]),
);

function eventFieldToWire(field: EventField, value: unknown, what: string): number | string {
  if ("oneOf" in field) {
    const index = field.oneOf.indexOf(value as string);
    if (index < 0) {
      throw new CodecError(`Cannot encode ${what}: ${String(value)} is not one of ${field.oneOf}`);
    }
    return index;
  }
  if ("text" in field) {
    if (typeof value !== "string" || value.length > field.text) {
      throw new CodecError(`Cannot encode ${what}: not text of at most ${field.text}`);
    }
    return value;
  }
  const [min, max] = field.int;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new CodecError(
      `Cannot encode ${what}: ${String(value)} is not an integer in [${min}, ${max}]`,
    );
  }
  return value;
}

function eventFieldFromWire(field: EventField, value: unknown, what: string): number | string {
  if ("oneOf" in field) return field.oneOf[int(value, what, 0, field.oneOf.length - 1)];
  if ("text" in field) return text(value, what, field.text);
  return int(value, what, field.int[0], field.int[1]);
}

/** A small event as it travels: its code, then its fields in EVENTS order. */
export function encodeEvent(event: NetEvent): (number | string)[] {
  const def: EventDef = EVENTS[event.type];
  const values = event as unknown as Record<string, unknown>;
  const out: (number | string)[] = [def.code];
  for (const [name, field] of def.fields) {
    out.push(eventFieldToWire(field, values[name], `${event.type} ${name}`));
  }
  return out;
}

/** Validates one small event off the wire. */
export function decodeEvent(raw: unknown): NetEvent {
  const items = array(raw, "event", 1, 16);
  const code = int(items[0], "event code", 0, 255);
  const known = EVENT_BY_CODE.get(code);
  if (!known) fail("event", `unknown code ${code}`);
  const [type, def] = known;
  array(items, type, def.fields.length + 1, def.fields.length + 1);
  const out: Record<string, unknown> = { type };
  def.fields.forEach(([name, field], i) => {
    out[name] = eventFieldFromWire(field, items[i + 1], `${type} ${name}`);
  });
  return out as NetEvent;
}

function bossToWire(b: BossSnap | null): unknown {
  return b === null
    ? null
    : [b.bossId, Math.max(0, Math.ceil(b.hp)), b.maxHp, b.phase, b.folding ? 1 : 0];
}

/** A snapshot with everything but the recipient's ack packed: pack once, address to each. */
export interface PackedSnapshot {
  readonly tick: number;
  readonly stage: number;
  readonly wave: number;
  readonly players: Uint8Array;
  readonly enemies: Uint8Array;
  readonly boss: unknown;
}

/** Packs the part of a snapshot every recipient shares. */
export function packSnapshot(
  msg: Omit<SnapshotMsg, "kind" | "ackTick" | "lateTicks">,
): PackedSnapshot {
  return {
    tick: msg.tick,
    stage: msg.stage,
    wave: msg.wave,
    players: packRecords(PLAYER_SNAP, { records: msg.players, what: "snapshot player" }),
    enemies: packRecords(ENEMY_SNAP, { records: msg.enemies, what: "snapshot enemy" }),
    boss: bossToWire(msg.boss),
  };
}

/** Encodes a packed snapshot for one recipient, with what only it needs to know. */
export function encodeSnapshotFor(
  enc: MessageEncoder,
  packed: PackedSnapshot,
  to: { readonly ackTick: number; readonly lateTicks: number },
): Uint8Array {
  return enc.encodeValue([
    ServerKind.Snapshot,
    packed.tick,
    to.ackTick,
    packed.stage,
    packed.wave,
    packed.players,
    packed.enemies,
    packed.boss,
    Math.min(MAX_LATE_TICKS, to.lateTicks),
  ]);
}

/** Encodes a server message. */
export function encodeServerMessage(enc: MessageEncoder, msg: ServerMessage): Uint8Array {
  switch (msg.kind) {
    case ServerKind.Welcome:
      return enc.encodeValue([msg.kind, msg.version, msg.playerId]);
    case ServerKind.Reject:
      return enc.encodeValue([msg.kind, msg.code, msg.reason]);
    case ServerKind.Enter:
      return enc.encodeValue([
        msg.kind,
        msg.instanceId,
        msg.worldId,
        msg.tick,
        msg.reason,
        msg.roster.map((r) => [r.id, r.name]),
        msg.stage,
        packRecords(BULLET_STATE, { records: msg.bullets, what: "enter bullet" }),
      ]);
    case ServerKind.Snapshot:
      return encodeSnapshotFor(enc, packSnapshot(msg), msg);
    case ServerKind.Events:
      return enc.encodeValue([
        msg.kind,
        msg.tick,
        encodeVolleys(msg.volleys, msg.tick),
        packHits(msg.hits),
        msg.events.map(encodeEvent),
      ]);
    case ServerKind.Pong:
      return enc.encodeValue([msg.kind, msg.clientTimeMs, msg.tick]);
    case ServerKind.Transfer:
      return enc.encodeValue([msg.kind, msg.url, msg.ticket, msg.reason]);
    case ServerKind.Results:
      return enc.encodeValue([
        msg.kind,
        msg.outcome,
        msg.worldId,
        msg.durationTicks,
        msg.rows.map((r) => [
          r.id,
          r.name,
          Math.round(r.damageDealt * 100),
          r.hitsTaken,
          r.grazes,
          r.status,
        ]),
      ]);
  }
}

/** Decodes and validates one server frame. */
export function decodeServerMessage(dec: MessageDecoder, data: Uint8Array): ServerMessage {
  const raw = array(dec.decodeValue(data, "server message"), "server message", 1, 9);
  const kind = raw[0];
  switch (kind) {
    case ServerKind.Welcome:
      array(raw, "welcome", 3, 3);
      return {
        kind,
        version: int(raw[1], "welcome version", 0, MAX_UINT32),
        playerId: int(raw[2], "player id", 0, 0xffff),
      };
    case ServerKind.Reject:
      array(raw, "reject", 3, 3);
      return {
        kind,
        code: int(raw[1], "reject code", 0, 0xffff),
        reason: text(raw[2], "reason", 512),
      };
    case ServerKind.Enter: {
      array(raw, "enter", 8, 8);
      const roster = array(raw[5], "roster", 0, 1024).map((entry) => {
        const e = array(entry, "roster entry", 2, 2);
        return { id: int(e[0], "roster id", 0, 0xffff), name: text(e[1], "roster name", 64) };
      });
      return {
        kind,
        instanceId: text(raw[1], "instance id", 64),
        worldId: int(raw[2], "world id", 0, 255),
        tick: int(raw[3], "enter tick", 0, MAX_UINT32),
        reason: int(raw[4], "enter reason", 0, MAX_ENTER_REASON) as EnterReason,
        roster,
        stage: int(raw[6], "stage", 0, 3),
        bullets: unpackRecords(BULLET_STATE, {
          bytes: bytes(raw[7], "enter bullets"),
          what: "enter bullets",
        }),
      };
    }
    case ServerKind.Snapshot: {
      array(raw, "snapshot", 9, 9);
      let boss: BossSnap | null = null;
      if (raw[7] !== null) {
        const b = array(raw[7], "boss", 5, 5);
        boss = {
          bossId: int(b[0], "boss id", 0, 255),
          hp: int(b[1], "boss hp", 0, MAX_UINT32),
          maxHp: int(b[2], "boss max hp", 0, MAX_UINT32),
          phase: int(b[3], "boss phase", 0, 255),
          folding: int(b[4], "boss folding", 0, 1) === 1,
        };
      }
      return {
        kind,
        tick: int(raw[1], "snapshot tick", 0, MAX_UINT32),
        ackTick: int(raw[2], "ack tick", -1, MAX_UINT32),
        lateTicks: int(raw[8], "late ticks", 0, MAX_LATE_TICKS),
        stage: int(raw[3], "stage", 0, 3),
        wave: int(raw[4], "wave", 0, 255),
        players: unpackRecords(PLAYER_SNAP, {
          bytes: bytes(raw[5], "snapshot players"),
          what: "snapshot players",
        }),
        enemies: unpackRecords(ENEMY_SNAP, {
          bytes: bytes(raw[6], "snapshot enemies"),
          what: "snapshot enemies",
        }),
        boss,
      };
    }
    case ServerKind.Events: {
      array(raw, "events", 5, 5);
      const tick = int(raw[1], "events tick", 0, MAX_UINT32);
      const events = array(raw[4], "event list", 0, 4096).map(decodeEvent);
      const volleyBytes = bytes(raw[2], "volleys");
      const hitBytes = bytes(raw[3], "hits");
      return {
        kind,
        tick,
        volleys: decodeVolleys(volleyBytes, tick),
        hits: unpackHits(hitBytes),
        events,
        bulletBytes: volleyBytes.byteLength + hitBytes.byteLength,
      };
    }
    case ServerKind.Pong:
      array(raw, "pong", 3, 3);
      return {
        kind,
        clientTimeMs: int(raw[1], "pong time", 0, MAX_UINT32),
        tick: int(raw[2], "pong tick", 0, MAX_UINT32),
      };
    case ServerKind.Results: {
      array(raw, "results", 5, 5);
      const rows = array(raw[4], "results rows", 0, 64).map((row) => {
        const r = array(row, "results row", 6, 6);
        return {
          id: int(r[0], "results id", 0, 0xffff),
          name: text(r[1], "results name", 64),
          damageDealt: int(r[2], "results damage", 0, MAX_UINT32) / 100,
          hitsTaken: int(r[3], "results hits", 0, MAX_UINT32),
          grazes: int(r[4], "results grazes", 0, MAX_UINT32),
          status: int(r[5], "results status", 0, 4),
        };
      });
      return {
        kind,
        outcome: int(raw[1], "outcome", 0, 1) as Outcome,
        worldId: int(raw[2], "results world", 0, 255),
        durationTicks: int(raw[3], "results duration", 0, MAX_UINT32),
        rows,
      };
    }
    case ServerKind.Transfer: {
      array(raw, "transfer", 4, 4);
      const url = text(raw[1], "transfer url", 512);
      if (!/^wss?:\/\//.test(url)) fail("transfer url", `${url} is not a ws: or wss: URL`);
      return {
        kind,
        url,
        ticket: text(raw[2], "transfer ticket", MAX_TICKET_CHARS),
        reason: int(raw[3], "transfer reason", 0, MAX_ENTER_REASON) as EnterReason,
      };
    }
    default:
      fail("server message", `unknown kind ${show(kind)}`);
  }
}

/** Angle units (1/65536 turn) to the snapshot's 1/256 turn. */
export function aimToByte(aim: number): number {
  return Math.round((aim / ANGLE_UNITS) * 256) & 0xff;
}
