/**
 * Encodes and decodes every message of net/wire/protocol.ts. Decoding validates types,
 * lengths and ranges and throws CodecError with a clear message; the server turns
 * that into a close of the offending connection and nothing else.
 */
import { Decoder, Encoder } from "cbor-x";
import {
  ANGLE_UNITS,
  BUTTON_MASK,
  type InputFrame,
  MOVE_UNITS,
  type Mutable,
} from "../../sim/mod.ts";
import { ByteReader, ByteWriter, CodecError, copyBytes } from "./bytes.ts";
import { messageBytes } from "./slab.ts";
import { cborHead, readCborHead } from "./frames.ts";
import { packRecords, tableLayout, unpackRecords, writeRecord } from "./fields.ts";
import {
  BULLET_STATE,
  type Choice,
  ClientKind,
  type ClientMessage,
  EnterReason,
  type EventDef,
  type EventField,
  type EventName,
  EVENTS,
  type EventsMsg,
  type HitRecord,
  INPUT_FRAME,
  type NetEvent,
  NoticeCode,
  type Outcome,
  PROTOCOL_VERSION,
  ServerKind,
  type ServerMessage,
  type SnapshotWireMsg,
} from "./protocol.ts";
import { decodeVolleys, VolleyDictionary, writeVolleys } from "./volley_codec.ts";
import { LIMITS, MAX_INPUT_FRAMES_PER_MESSAGE } from "../../content/net_tuning.ts";

export { CodecError } from "./bytes.ts";

const MAX_ENTER_REASON = Math.max(...Object.values(EnterReason));
const MAX_NOTICE_CODE = Math.max(...Object.values(NoticeCode));
/** Longest resume token: a short JSON payload and a 128-bit tag, base64url. */
const MAX_TOKEN_CHARS = 192;
const ENCODER_OPTIONS = { useRecords: false, tagUint8Array: false, variableMapSize: true };
const MAX_UINT32 = 0xffffffff;
/** A transfer ticket's longest spelling. */
export const MAX_TICKET_CHARS = 400;
/** A picture older than this is sent as this (the server's limit is far lower). */
const MAX_VIEW_LAG = 255;
/** Lateness reported to a client is capped here: later than that is a stall, not a lead. */
const MAX_LATE_TICKS = 255;
/** The most slack a snapshot reports (one more is its wire value; 0 means none). */
const MAX_SLACK_TICKS = 254;

/**
 * Decodes CBOR with a decoder of its own: record definitions a hostile peer might
 * send can never leak into another connection's decoding.
 */
export class MessageDecoder {
  readonly #cbor = new Decoder({ useRecords: false, mapsAsObjects: true });
  /** The volley headers this connection's stream has carried (reset by every Enter). */
  readonly volleys = new VolleyDictionary();
  /** The input frames this decoder lends out, when it reuses them (else undefined). */
  readonly inputFrames: InputFramePool | undefined;

  /**
   * `reuseInputFrames`: an Input message's frames are this decoder's own objects, valid
   * until its next decode, instead of new ones each time (a busy server decodes eight
   * frames in each of fifteen messages a second from every client, and copies each
   * into its input queue at once).
   */
  constructor(opts: { reuseInputFrames?: boolean } = {}) {
    this.inputFrames = opts.reuseInputFrames ? new InputFramePool() : undefined;
  }

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
      const newest = frames[frames.length - 1]?.tick;
      const packed = packInputFrames(frames);
      return enc.encodeValue(
        msg.snapshotAck === undefined
          ? [msg.kind, newest, packed]
          : msg.snapshotsHeld === undefined
          ? [msg.kind, newest, packed, newest - msg.snapshotAck]
          : [msg.kind, newest, packed, newest - msg.snapshotAck, msg.snapshotsHeld],
      );
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

/** Change bits of an input frame after the first: which fields differ from the frame before. */
const FrameChange = { Move: 1, Aim: 2, Buttons: 4, ViewLag: 8 } as const;
const FRAME_CHANGE_MASK = 15;

/** Reused by every input message (written, then copied out). */
const INPUT_WRITER = new ByteWriter(64);

/**
 * Consecutive frames, oldest first. The first is whole (moveX i8, moveY i8, aim u16,
 * buttons u8); each later one is a change byte and only what changed (move i8 i8, aim
 * as a signed varint of the shortest turn, buttons u8): a held key costs 1 byte a tick.
 */
function packInputFrames(frames: readonly InputFrame[]): Uint8Array {
  if (frames.length < 1 || frames.length > MAX_INPUT_FRAMES_PER_MESSAGE) {
    throw new CodecError(`Cannot encode input: ${frames.length} frames`);
  }
  const w = INPUT_WRITER.reset();
  const lag = (f: InputFrame) => Math.min(f.viewLag ?? 0, MAX_VIEW_LAG);
  writeRecord(w, INPUT_FRAME, {
    record: { ...frames[0], viewLag: lag(frames[0]) },
    what: "input frame",
  });
  for (let i = 1; i < frames.length; i++) {
    const f = frames[i];
    const p = frames[i - 1];
    if (f.tick !== p.tick + 1) {
      throw new CodecError("Cannot encode input: frames are not consecutive ticks");
    }
    const move = f.moveX !== p.moveX || f.moveY !== p.moveY;
    const aim = f.aim !== p.aim;
    const buttons = f.buttons !== p.buttons;
    const viewLag = lag(f) !== lag(p);
    w.u8(
      (move ? FrameChange.Move : 0) | (aim ? FrameChange.Aim : 0) |
        (buttons ? FrameChange.Buttons : 0) | (viewLag ? FrameChange.ViewLag : 0),
    );
    if (move) {
      w.i8(f.moveX);
      w.i8(f.moveY);
    }
    // The shortest way round: a small turn is 1–2 bytes whichever way it wraps.
    if (aim) w.varint(((f.aim - p.aim + 0x18000) & 0xffff) - 0x8000);
    if (buttons) w.u8(f.buttons);
    if (viewLag) w.u8(lag(f));
  }
  return w.bytes();
}

/** A blank input frame, to be filled in. */
function blankInputFrame(): Mutable<InputFrame> {
  return { tick: 0, moveX: 0, moveY: 0, aim: 0, buttons: 0, viewLag: 0 };
}

/** The input frames a reusing decoder fills: the same objects, message after message. */
export class InputFramePool {
  readonly #frames = Array.from({ length: MAX_INPUT_FRAMES_PER_MESSAGE }, blankInputFrame);
  /** `lists[n]`: the first n frames, the array an n-frame message is given. */
  readonly #lists = Array.from(
    { length: MAX_INPUT_FRAMES_PER_MESSAGE + 1 },
    (_, n) => this.#frames.slice(0, n),
  );

  /** The k-th frame (k < MAX_INPUT_FRAMES_PER_MESSAGE). */
  frame(k: number): Mutable<InputFrame> {
    return this.#frames[k];
  }

  /** The first `n` frames as one array. */
  list(n: number): Mutable<InputFrame>[] {
    return this.#lists[n];
  }
}

/**
 * The first frame's fields as INPUT_FRAME has them, read by hand in `unpackInputFrames`
 * (every client sends 15 input messages a second: a table walk with a reader object was a
 * few per cent of a loaded server). A change to the table fails here, at load, until the
 * reader follows it.
 */
const INPUT_FRAME_LAYOUT = "moveX:i8 moveY:i8 aim:u16 buttons:u8 viewLag:u8";
/** The first frame's bytes (what INPUT_FRAME_LAYOUT takes). */
const INPUT_FRAME_BYTES = 6;
if (tableLayout(INPUT_FRAME) !== INPUT_FRAME_LAYOUT) {
  throw new Error(
    `unpackInputFrames reads ${INPUT_FRAME_LAYOUT}; INPUT_FRAME is ${tableLayout(INPUT_FRAME)}`,
  );
}

function truncatedInput(at: number): never {
  fail("input frames", `truncated at byte ${at}`);
}

/** A signed byte. */
function i8At(b: Uint8Array, at: number): number {
  return (b[at] << 24) >> 24;
}

function unpackInputFrames(
  packed: Uint8Array,
  opts: { newest: number; pool: InputFramePool | undefined },
): InputFrame[] {
  const { newest, pool } = opts;
  const end = packed.byteLength;
  if (end < INPUT_FRAME_BYTES) truncatedInput(end);
  // Ticks are known once the frames are counted: set in place then (one object a frame,
  // or the pool's own).
  const frames: Mutable<InputFrame>[] | undefined = pool ? undefined : [];
  let count = 0;
  let moveX = i8At(packed, 0);
  let moveY = i8At(packed, 1);
  let aim = packed[2] | (packed[3] << 8);
  let buttons = packed[4];
  let viewLag = packed[5];
  let at = INPUT_FRAME_BYTES;
  for (;;) {
    if (Math.abs(moveX) > MOVE_UNITS || Math.abs(moveY) > MOVE_UNITS) {
      fail("input frame", `move (${moveX}, ${moveY}) is outside ±${MOVE_UNITS}`);
    }
    if ((buttons & ~BUTTON_MASK) !== 0) fail("input frame", `unknown button bits ${buttons}`);
    const f = pool ? pool.frame(count) : blankInputFrame();
    f.moveX = moveX;
    f.moveY = moveY;
    f.aim = aim;
    f.buttons = buttons;
    f.viewLag = viewLag;
    frames?.push(f);
    count++;
    if (at >= end) break;
    if (count >= MAX_INPUT_FRAMES_PER_MESSAGE) {
      fail("input frames", `more than ${MAX_INPUT_FRAMES_PER_MESSAGE} frames`);
    }
    const change = packed[at++];
    if ((change & ~FRAME_CHANGE_MASK) !== 0) fail("input frame", `unknown change bits ${change}`);
    if (change & FrameChange.Move) {
      if (at + 2 > end) truncatedInput(at);
      moveX = i8At(packed, at);
      moveY = i8At(packed, at + 1);
      at += 2;
    }
    if (change & FrameChange.Aim) {
      // A zigzag varint (ByteWriter.varint): a turn of at most half a circle each way.
      let z = 0;
      for (let shift = 1, i = 0;; i++, shift *= 128) {
        if (i === 5) fail("input frames", "varint longer than 5 bytes");
        if (at >= end) truncatedInput(at);
        const b = packed[at++];
        z += (b & 0x7f) * shift;
        if ((b & 0x80) === 0) break;
      }
      const delta = z % 2 === 1 ? -(z + 1) / 2 : z / 2;
      if (delta < -0x8000 || delta > 0x7fff) fail("input frame", `aim turn ${delta} out of range`);
      aim = (aim + delta + 0x10000) & 0xffff;
    }
    if (change & FrameChange.Buttons) {
      if (at >= end) truncatedInput(at);
      buttons = packed[at++];
    }
    if (change & FrameChange.ViewLag) {
      if (at >= end) truncatedInput(at);
      viewLag = packed[at++];
    }
  }
  const oldest = newest - (count - 1);
  if (oldest < 0) fail("input", `tick ${newest} is too small for ${count} frames`);
  const out = frames ?? pool!.list(count);
  for (let i = 0; i < count; i++) out[i].tick = oldest + i;
  return out;
}

/** An Input message from its items, held to the same rules whichever reader found them. */
function inputMessage(
  newest: number,
  packed: Uint8Array,
  more: {
    readonly age: unknown;
    readonly held: unknown;
    readonly pool: InputFramePool | undefined;
  },
): ClientMessage {
  const kind = ClientKind.Input;
  const frames = unpackInputFrames(packed, { newest, pool: more.pool });
  if (more.age === undefined) return { kind, frames };
  // Sent as an age from the newest frame's tick: 1 byte instead of 5.
  const snapshotAck = newest - int(more.age, "snapshot ack age", newest - MAX_UINT32, newest);
  if (more.held === undefined) return { kind, frames, snapshotAck };
  return { kind, frames, snapshotAck, snapshotsHeld: int(more.held, "snapshots held", 0, 255) };
}

/** The unsigned integer of at most 4 bytes whose head is at `at` (`cborHead.next` is past it), or -1. */
function smallUint(data: Uint8Array, at: number): number {
  return readCborHead(data, at) === 0 && cborHead.next - at <= 5 ? cborHead.arg : -1;
}

/**
 * An Input message read by hand: the array cbor-x would build (and a Buffer for its
 * frames) is a good part of what a busy server allocates, every client sending 15 of
 * them a second. Only the plain shape (an array of 3–5 whose kind is Input, unsigned
 * integers, a byte string, nothing after) is read here; anything else is `undefined`, and
 * the general path reads it and says what is wrong with it.
 */
function decodeInputQuick(
  data: Uint8Array,
  pool: InputFramePool | undefined,
): ClientMessage | undefined {
  const head = data[0];
  if (head < 0x83 || head > 0x85 || data[1] !== ClientKind.Input) return undefined;
  const items = head - 0x80;
  const newest = smallUint(data, 2);
  if (newest < 0 || readCborHead(data, cborHead.next) !== 2) return undefined;
  const start = cborHead.next;
  let at = start + cborHead.arg;
  if (at > data.byteLength) return undefined;
  const packed = data.subarray(start, at);
  // Then the snapshot ack's age and the snapshots held, when the array has room for them.
  const age = items >= 4 ? smallUint(data, at) : undefined;
  if (age === -1) return undefined;
  if (age !== undefined) at = cborHead.next;
  const held = items === 5 ? smallUint(data, at) : undefined;
  if (held === -1) return undefined;
  if (held !== undefined) at = cborHead.next;
  if (at !== data.byteLength) return undefined;
  return inputMessage(newest, packed, { age, held, pool });
}

/** Decodes and validates one client frame. */
export function decodeClientMessage(dec: MessageDecoder, data: Uint8Array): ClientMessage {
  // The largest frame any state allows; the server holds each state to its own cap first.
  if (data.byteLength > LIMITS.maxHelloBytes) {
    fail("client message", `${data.byteLength} bytes exceeds ${LIMITS.maxHelloBytes}`);
  }
  const quick = decodeInputQuick(data, dec.inputFrames);
  if (quick) return quick;
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
        : text(raw[4], "hello resume", MAX_TOKEN_CHARS);
      const ticket = raw[5] === undefined
        ? undefined
        : text(raw[5], "hello ticket", MAX_TICKET_CHARS);
      return ticket === undefined
        ? { kind, version, name, content, resume }
        : { kind, version, name, content, resume, ticket };
    }
    case ClientKind.Input: {
      array(raw, "input", 3, 5);
      const newest = int(raw[1], "input tick", 0, MAX_UINT32);
      return inputMessage(newest, bytes(raw[2], "input frames"), {
        age: raw[3],
        held: raw[4],
        pool: dec.inputFrames,
      });
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

/** Reused by every batch of hits (written, then copied out). */
const HITS_WRITER = new ByteWriter(256);

/** Hits as varints: uid as a delta from the previous hit's, so a batch costs ~4 bytes a hit. */
function writeHits(hits: readonly HitRecord[]): ByteWriter {
  const w = HITS_WRITER.reset();
  let prevUid = 0;
  for (const h of hits) {
    w.varint(h.uid - prevUid);
    prevUid = h.uid;
    w.u8(h.target);
    w.varuint(h.targetId);
    w.varuint(Math.round(h.damage * 100));
  }
  return w;
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

/** A small event's field as errors name it ("playerHit hp"). */
function fieldLabel(at: { readonly type: string; readonly name: string }): string {
  return `${at.type} ${at.name}`;
}

/**
 * One field of a small event, checked. Its label in errors is put together only for an
 * error: every event of every batch passes here.
 */
function eventFieldToWire(
  field: EventField,
  value: unknown,
  at: { readonly type: string; readonly name: string },
): number | string {
  if ("oneOf" in field) {
    const index = field.oneOf.indexOf(value as string);
    if (index < 0) {
      throw new CodecError(
        `Cannot encode ${fieldLabel(at)}: ${String(value)} is not one of ${field.oneOf}`,
      );
    }
    return index;
  }
  if ("text" in field) {
    if (typeof value !== "string" || value.length > field.text) {
      throw new CodecError(`Cannot encode ${fieldLabel(at)}: not text of at most ${field.text}`);
    }
    return value;
  }
  const [min, max] = field.int;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new CodecError(
      `Cannot encode ${fieldLabel(at)}: ${String(value)} is not an integer in [${min}, ${max}]`,
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
    out.push(eventFieldToWire(field, values[name], { type: event.type, name }));
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

/** Encodes a snapshot for its recipient: its body is already a delta (or whole). */
export function encodeSnapshot(
  enc: MessageEncoder,
  msg: Omit<SnapshotWireMsg, "kind">,
): Uint8Array {
  const tick = msg.tick;
  const ackAge = tick - msg.ackTick;
  const late = Math.min(MAX_LATE_TICKS, msg.lateTicks);
  const slack = msg.slackTicks === undefined ? 0 : Math.min(MAX_SLACK_TICKS, msg.slackTicks) + 1;
  const baseAge = msg.baseTick === undefined ? 0 : tick - msg.baseTick;
  const body = msg.body;
  const epoch = msg.epoch;
  // The hottest message there is (one per recipient, 20 a second): written by hand, the
  // very bytes cbor-x writes (tests/net/wire/codec_test.ts compares them), in one buffer,
  // with no list of its fields and no walk over one.
  const size = 2 + intCborBytes(tick) + intCborBytes(ackAge) + intCborBytes(late) +
    intCborBytes(slack) + intCborBytes(baseAge) + (cborHeadBytes(body.byteLength) ?? NaN) +
    body.byteLength + (epoch === undefined ? 0 : intCborBytes(epoch));
  if (Number.isNaN(size)) {
    // An argument past what a head of five bytes holds (a test's, never a server's): cbor-x.
    const fields = [ServerKind.Snapshot, tick, ackAge, late, slack, baseAge, body];
    if (epoch !== undefined) fields.push(epoch);
    return enc.encodeValue(fields);
  }
  const w = CBOR_OUT.start(messageBytes(size));
  w.head(CborMajor.Array, epoch === undefined ? 7 : 8);
  w.int(ServerKind.Snapshot);
  w.int(tick);
  w.int(ackAge);
  w.int(late);
  w.int(slack);
  w.int(baseAge);
  w.bytes(body);
  if (epoch !== undefined) w.int(epoch);
  return w.done();
}

/** CBOR's major types this codec writes by hand. */
const CborMajor = { Uint: 0, NegInt: 1, Bytes: 2, Array: 4 } as const;

/** Bytes of a CBOR head for an argument (undefined: too large for this path). */
function cborHeadBytes(n: number): number | undefined {
  return n < 24 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : n <= MAX_UINT32 ? 5 : undefined;
}

/** Bytes of an integer as CBOR; NaN for a fraction or one beyond ±2³² (cbor-x's to write). */
function intCborBytes(v: number): number {
  if (!Number.isInteger(v)) return NaN;
  return cborHeadBytes(v < 0 ? -1 - v : v) ?? NaN;
}

/**
 * Writes CBOR front to back into a buffer sized beforehand. One serves every hand-written
 * message in turn (`start` gives it the next buffer): nothing is allocated per head.
 */
class CborOut {
  #out: Uint8Array = new Uint8Array(0);
  #at = 0;

  start(out: Uint8Array): this {
    this.#out = out;
    this.#at = 0;
    return this;
  }

  /** The buffer written, let go of (it must be full: its size was counted first). */
  done(): Uint8Array {
    const out = this.#out;
    this.#out = EMPTY_BYTES;
    return out;
  }

  head(major: number, n: number): void {
    const out = this.#out;
    const at = this.#at;
    const m = major << 5;
    if (n < 24) {
      out[at] = m | n;
      this.#at = at + 1;
    } else if (n < 0x100) {
      out[at] = m | 24;
      out[at + 1] = n;
      this.#at = at + 2;
    } else if (n < 0x10000) {
      out[at] = m | 25;
      out[at + 1] = n >> 8;
      out[at + 2] = n & 0xff;
      this.#at = at + 3;
    } else {
      out[at] = m | 26;
      out[at + 1] = (n >>> 24) & 0xff;
      out[at + 2] = (n >>> 16) & 0xff;
      out[at + 3] = (n >>> 8) & 0xff;
      out[at + 4] = n & 0xff;
      this.#at = at + 5;
    }
  }

  int(v: number): void {
    if (v < 0) this.head(CborMajor.NegInt, -1 - v);
    else this.head(CborMajor.Uint, v);
  }

  bytes(v: Uint8Array): void {
    this.head(CborMajor.Bytes, v.byteLength);
    this.#at = copyBytes(v, v.byteLength, this.#out, this.#at);
  }

  /** What a ByteWriter holds, as a byte string (copied from it, no view of it made). */
  written(w: ByteWriter): void {
    this.head(CborMajor.Bytes, w.length);
    this.#at = w.copyInto(this.#out, this.#at);
  }
}

const EMPTY_BYTES = new Uint8Array(0);
const CBOR_OUT = new CborOut();

/** What the hand-written CBOR path takes: integers, byte strings, and arrays of them. */
type PlainCbor = number | Uint8Array | readonly PlainCbor[];

/** Bytes `v` takes as CBOR, or undefined when it holds anything but PlainCbor within range. */
function plainCborSize(v: unknown): number | undefined {
  if (typeof v === "number") {
    const n = intCborBytes(v);
    return Number.isNaN(n) ? undefined : n;
  }
  if (v instanceof Uint8Array) {
    const head = cborHeadBytes(v.byteLength);
    return head === undefined ? undefined : head + v.byteLength;
  }
  if (!Array.isArray(v)) return undefined;
  let size = cborHeadBytes(v.length);
  if (size === undefined) return undefined;
  for (const item of v) {
    const n = plainCborSize(item);
    if (n === undefined) return undefined;
    size += n;
  }
  return size;
}

function writePlainCbor(w: CborOut, v: PlainCbor): void {
  if (typeof v === "number") w.int(v);
  else if (v instanceof Uint8Array) w.bytes(v);
  else {
    w.head(CborMajor.Array, v.length);
    for (const item of v) writePlainCbor(w, item);
  }
}

/**
 * Every dungeon's every batch: written by hand (unless an event carries text), the very
 * bytes cbor-x writes (tests/net/wire/codec_test.ts compares them), the volleys and hits
 * copied straight from their writers into the message, with no copy of either on the way
 * and no list of the message's fields.
 */
function encodeEvents(
  enc: MessageEncoder,
  msg: EventsMsg,
  volleys: VolleyDictionary | undefined,
): Uint8Array {
  // The dictionary learns from what it writes: the volleys are written once, here.
  const vw = writeVolleys(msg.volleys, msg.tick, volleys);
  const hw = writeHits(msg.hits);
  const events = msg.events.map(encodeEvent);
  const eventsSize = plainCborSize(events);
  const size = 1 + intCborBytes(msg.kind) + intCborBytes(msg.tick) +
    (cborHeadBytes(vw.length) ?? NaN) + vw.length + (cborHeadBytes(hw.length) ?? NaN) +
    hw.length + (eventsSize ?? NaN);
  if (Number.isNaN(size)) {
    // Text in an event, or a number past what this path writes: cbor-x.
    return enc.encodeValue([msg.kind, msg.tick, vw.bytes(), hw.bytes(), events]);
  }
  const w = CBOR_OUT.start(messageBytes(size));
  w.head(CborMajor.Array, 5);
  w.int(msg.kind);
  w.int(msg.tick);
  w.written(vw);
  w.written(hw);
  writePlainCbor(w, events as PlainCbor);
  return w.done();
}

/**
 * Encodes a server message. Events use the instance's volley dictionary when given
 * (the one whose state its members' Enters carried); without one, headers go whole.
 */
export function encodeServerMessage(
  enc: MessageEncoder,
  msg: ServerMessage,
  opts: { volleys?: VolleyDictionary } = {},
): Uint8Array {
  switch (msg.kind) {
    case ServerKind.Welcome:
      return enc.encodeValue([msg.kind, msg.version, msg.playerId, msg.resume, msg.graceMs]);
    case ServerKind.Notice:
      return enc.encodeValue([msg.kind, msg.code, msg.text]);
    case ServerKind.Token:
      return enc.encodeValue([msg.kind, msg.resume]);
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
        msg.volleyDictionary ?? new VolleyDictionary().export(),
      ]);
    case ServerKind.Snapshot:
      return encodeSnapshot(enc, msg);
    case ServerKind.Events:
      return encodeEvents(enc, msg, opts.volleys);
    case ServerKind.Pong:
      return enc.encodeValue([msg.kind, msg.clientTimeMs, msg.tick, msg.heldMs]);
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

function importVolleys(dec: MessageDecoder, state: Uint8Array): Uint8Array {
  dec.volleys.import(state);
  return state;
}

/** Decodes and validates one server frame. */
export function decodeServerMessage(dec: MessageDecoder, data: Uint8Array): ServerMessage {
  const raw = array(dec.decodeValue(data, "server message"), "server message", 1, 9);
  const kind = raw[0];
  switch (kind) {
    case ServerKind.Welcome:
      array(raw, "welcome", 5, 5);
      return {
        kind,
        version: int(raw[1], "welcome version", 0, MAX_UINT32),
        playerId: int(raw[2], "player id", 0, 0xffff),
        resume: text(raw[3], "resume token", MAX_TOKEN_CHARS),
        graceMs: int(raw[4], "grace", 0, MAX_UINT32),
      };
    case ServerKind.Notice:
      array(raw, "notice", 3, 3);
      return {
        kind,
        code: int(raw[1], "notice code", 0, MAX_NOTICE_CODE) as NoticeCode,
        text: text(raw[2], "notice text", 512),
      };
    case ServerKind.Token:
      array(raw, "token", 2, 2);
      return { kind, resume: text(raw[1], "resume token", MAX_TOKEN_CHARS) };
    case ServerKind.Reject:
      array(raw, "reject", 3, 3);
      return {
        kind,
        code: int(raw[1], "reject code", 0, 0xffff),
        reason: text(raw[2], "reason", 512),
      };
    case ServerKind.Enter: {
      array(raw, "enter", 9, 9);
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
        // Side effect on purpose: the stream's volley headers start over from this state.
        volleyDictionary: importVolleys(dec, bytes(raw[8], "volley dictionary")),
      };
    }
    case ServerKind.Snapshot: {
      array(raw, "snapshot", 7, 8);
      const tick = int(raw[1], "snapshot tick", 0, MAX_UINT32);
      const slack = int(raw[4], "snapshot slack", 0, MAX_SLACK_TICKS + 1);
      const baseAge = int(raw[5], "snapshot base age", 0, tick);
      return {
        kind,
        tick,
        ackTick: tick - int(raw[2], "snapshot ack age", tick - MAX_UINT32, tick + 1),
        lateTicks: int(raw[3], "late ticks", 0, MAX_LATE_TICKS),
        ...(slack === 0 ? {} : { slackTicks: slack - 1 }),
        baseTick: baseAge === 0 ? undefined : tick - baseAge,
        body: bytes(raw[6], "snapshot body"),
        ...(raw[7] === undefined ? {} : { epoch: int(raw[7], "snapshot epoch", 0, 255) }),
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
        volleys: decodeVolleys(volleyBytes, tick, dec.volleys),
        hits: unpackHits(hitBytes),
        events,
        bulletBytes: volleyBytes.byteLength + hitBytes.byteLength,
      };
    }
    case ServerKind.Pong:
      array(raw, "pong", 4, 4);
      return {
        kind,
        clientTimeMs: int(raw[1], "pong time", 0, MAX_UINT32),
        tick: int(raw[2], "pong tick", 0, MAX_UINT32),
        heldMs: int(raw[3], "pong held", 0, 0xffff),
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
