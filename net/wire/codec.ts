/**
 * Encodes and decodes every message of net/wire/protocol.ts. Decoding validates types,
 * lengths and ranges and throws CodecError with a clear message; the server turns
 * that into a close of the offending connection and nothing else.
 */
import { Decoder, Encoder } from "cbor-x";
import { ANGLE_UNITS, BUTTON_MASK, type InputFrame, MOVE_UNITS } from "../../sim/mod.ts";
import { ByteReader, ByteWriter, CodecError } from "./bytes.ts";
import {
  type BossSnap,
  type BulletState,
  type Choice,
  ClientKind,
  type ClientMessage,
  type EnemySnap,
  type EnterReason,
  type HitRecord,
  type NetEvent,
  type Outcome,
  type PlayerSnap,
  ServerKind,
  type ServerMessage,
  type SnapshotMsg,
} from "./protocol.ts";
import { decodeVolleys, encodeVolleys } from "./volley_codec.ts";
import { INPUT_FRAMES_PER_MESSAGE, LIMITS } from "../../content/net_tuning.ts";

export { CodecError } from "./bytes.ts";

const ENCODER_OPTIONS = { useRecords: false, tagUint8Array: false, variableMapSize: true };
const MAX_UINT32 = 0xffffffff;
const FRAME_BYTES = 5;

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
    case ClientKind.Hello:
      return enc.encodeValue(
        msg.resume === undefined
          ? [msg.kind, msg.version, msg.name]
          : [msg.kind, msg.version, msg.name, msg.resume],
      );
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
        w.i8(f.moveX);
        w.i8(f.moveY);
        w.u16(f.aim);
        w.u8(f.buttons);
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
  if (data.byteLength > LIMITS.maxClientFrameBytes) {
    fail("client message", `${data.byteLength} bytes exceeds ${LIMITS.maxClientFrameBytes}`);
  }
  const raw = array(dec.decodeValue(data, "client message"), "client message", 1, 4);
  const kind = raw[0];
  switch (kind) {
    case ClientKind.Hello: {
      array(raw, "hello", 3, 4);
      const version = int(raw[1], "hello version", 0, MAX_UINT32);
      // The frame-size cap bounds the name; its rules (and a Reject saying so) are the server's.
      const name = text(raw[2], "hello name", LIMITS.maxClientFrameBytes);
      const resume = raw[3] === undefined ? undefined : text(raw[3], "hello resume", 64);
      return { kind, version, name, resume };
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
        const moveX = r.i8();
        const moveY = r.i8();
        const aim = r.u16();
        const buttons = r.u8();
        if (Math.abs(moveX) > MOVE_UNITS || Math.abs(moveY) > MOVE_UNITS) {
          fail("input frame", `move (${moveX}, ${moveY}) is outside ±${MOVE_UNITS}`);
        }
        if ((buttons & ~BUTTON_MASK) !== 0) fail("input frame", `unknown button bits ${buttons}`);
        frames.push({ tick: newest - (n - 1) + i, moveX, moveY, aim, buttons });
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

const POS_SCALE = 8;

function packPlayers(players: readonly PlayerSnap[]): Uint8Array {
  const w = new ByteWriter(players.length * 10);
  for (const p of players) {
    w.u16(p.id);
    w.u16(Math.round(p.x * POS_SCALE));
    w.u16(Math.round(p.y * POS_SCALE));
    w.u8(p.aim);
    w.u8(p.hp);
    w.u8(p.flags);
    w.u8(p.escape);
  }
  return w.bytes();
}

function unpackPlayers(b: Uint8Array): PlayerSnap[] {
  if (b.byteLength % 10 !== 0) fail("snapshot players", `${b.byteLength} bytes`);
  const r = new ByteReader(b, "snapshot players");
  const out: PlayerSnap[] = [];
  while (r.remaining > 0) {
    out.push({
      id: r.u16(),
      x: r.u16() / POS_SCALE,
      y: r.u16() / POS_SCALE,
      aim: r.u8(),
      hp: r.u8(),
      flags: r.u8(),
      escape: r.u8(),
    });
  }
  return out;
}

function packEnemies(enemies: readonly EnemySnap[]): Uint8Array {
  const w = new ByteWriter(enemies.length * 9);
  for (const e of enemies) {
    w.u16(e.id);
    w.u8(e.kind);
    w.u16(Math.round(e.x * POS_SCALE));
    w.u16(Math.round(e.y * POS_SCALE));
    w.u16(Math.max(0, Math.ceil(e.hp)));
  }
  return w.bytes();
}

function unpackEnemies(b: Uint8Array): EnemySnap[] {
  if (b.byteLength % 9 !== 0) fail("snapshot enemies", `${b.byteLength} bytes`);
  const r = new ByteReader(b, "snapshot enemies");
  const out: EnemySnap[] = [];
  while (r.remaining > 0) {
    out.push({
      id: r.u16(),
      kind: r.u8(),
      x: r.u16() / POS_SCALE,
      y: r.u16() / POS_SCALE,
      hp: r.u16(),
    });
  }
  return out;
}

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

const BULLET_STATE_BYTES = 83;

function packBullets(bullets: readonly BulletState[]): Uint8Array {
  const w = new ByteWriter(bullets.length * BULLET_STATE_BYTES);
  for (const b of bullets) {
    w.u32(b.uid);
    for (const v of [b.x, b.y, b.dirX, b.dirY, b.speed, b.accel, b.turnCos, b.turnSin]) w.f64(v);
    w.f32(b.radius);
    w.i32(b.ttl);
    w.u8(b.kind);
    w.u8(b.team);
    w.u8(b.damage);
    w.i32(b.owner);
  }
  return w.bytes();
}

function unpackBullets(b: Uint8Array): BulletState[] {
  if (b.byteLength % BULLET_STATE_BYTES !== 0) fail("enter bullets", `${b.byteLength} bytes`);
  const r = new ByteReader(b, "enter bullets");
  const out: BulletState[] = [];
  while (r.remaining > 0) {
    out.push({
      uid: r.u32(),
      x: r.f64(),
      y: r.f64(),
      dirX: r.f64(),
      dirY: r.f64(),
      speed: r.f64(),
      accel: r.f64(),
      turnCos: r.f64(),
      turnSin: r.f64(),
      radius: r.f32(),
      ttl: r.i32(),
      kind: r.u8(),
      team: r.u8(),
      damage: r.u8(),
      owner: r.i32(),
    });
  }
  return out;
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
export function packSnapshot(msg: Omit<SnapshotMsg, "kind" | "ackTick">): PackedSnapshot {
  return {
    tick: msg.tick,
    stage: msg.stage,
    wave: msg.wave,
    players: packPlayers(msg.players),
    enemies: packEnemies(msg.enemies),
    boss: bossToWire(msg.boss),
  };
}

/** Encodes a packed snapshot for one recipient, with its last applied input tick. */
export function encodeSnapshotFor(
  enc: MessageEncoder,
  packed: PackedSnapshot,
  ackTick: number,
): Uint8Array {
  return enc.encodeValue([
    ServerKind.Snapshot,
    packed.tick,
    ackTick,
    packed.stage,
    packed.wave,
    packed.players,
    packed.enemies,
    packed.boss,
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
        packBullets(msg.bullets),
      ]);
    case ServerKind.Snapshot:
      return encodeSnapshotFor(enc, packSnapshot(msg), msg.ackTick);
    case ServerKind.Events:
      return enc.encodeValue([
        msg.kind,
        msg.tick,
        encodeVolleys(msg.volleys, msg.tick),
        packHits(msg.hits),
        msg.events,
      ]);
    case ServerKind.Pong:
      return enc.encodeValue([msg.kind, msg.clientTimeMs, msg.tick]);
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
  const raw = array(dec.decodeValue(data, "server message"), "server message", 1, 8);
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
        reason: int(raw[4], "enter reason", 0, 6) as EnterReason,
        roster,
        stage: int(raw[6], "stage", 0, 3),
        bullets: unpackBullets(bytes(raw[7], "enter bullets")),
      };
    }
    case ServerKind.Snapshot: {
      array(raw, "snapshot", 8, 8);
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
        stage: int(raw[3], "stage", 0, 3),
        wave: int(raw[4], "wave", 0, 255),
        players: unpackPlayers(bytes(raw[5], "snapshot players")),
        enemies: unpackEnemies(bytes(raw[6], "snapshot enemies")),
        boss,
      };
    }
    case ServerKind.Events: {
      array(raw, "events", 5, 5);
      const tick = int(raw[1], "events tick", 0, MAX_UINT32);
      const events = array(raw[4], "event list", 0, 4096).map((e) => {
        const ev = array(e, "event", 1, 8);
        int(ev[0], "event code", 0, 255);
        for (const f of ev) {
          if (typeof f !== "number" && typeof f !== "string") fail("event", `field ${show(f)}`);
        }
        return ev as unknown as NetEvent;
      });
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
    default:
      fail("server message", `unknown kind ${show(kind)}`);
  }
}

/** Angle units (1/65536 turn) to the snapshot's 1/256 turn. */
export function aimToByte(aim: number): number {
  return Math.round((aim / ANGLE_UNITS) * 256) & 0xff;
}
