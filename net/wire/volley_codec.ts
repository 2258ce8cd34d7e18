/**
 * Hand-packed bullet spawns: the hot path of the event stream. One record per
 * volley (emitter shot); the fields every bullet of the shot shares go once.
 *
 *   flags:u8   bits 0–1 layout, bits 2–5 birth tick − the message's base tick (0–15),
 *              bit 6 explicit uid, bit 7 player team
 *   [uidSkip:varint] only with bit 6: uid0 − the expected uid (signed 32-bit, zigzag);
 *              otherwise uid0 is the expected uid: the previous record's last uid + 1,
 *              across messages (the dictionary carries it), so a stream's first record
 *              in a batch rarely needs one and a gap costs 1–2 bytes, not 4
 *   layout 3 (player shot): owner:varuint x:i16 y:i16 angle:u16   spec and speed are the player's
 *   layouts 0–2: entry:u8, [VOLLEY_HEADER (kind:u8 radius:u8 (1/4 px) ttl:u16 speed:u16
 *                (1/4 px/s) accel:i16 (px/s²) turn:i16 (mrad/s) damage:u8)], count:u8, then
 *     entry: the volley-header dictionary (below). Bits 0–5: 0 = the header follows and
 *            takes the dictionary's next slot; 1–63 = the header in that slot. Bits 6–7
 *            (fan only): 0 = the origin follows; 1–3 = the slot's 1st–3rd most recent
 *            origin (x, y omitted; it becomes the most recent).
 *     0 fan  (one origin):  [x:i16 y:i16], count × angle:u16
 *     1 line (one heading): angle:u16, count × (x:i16 y:i16)
 *     2 full:               count × (x:i16 y:i16 angle:u16)
 * The dictionary lives as long as the ordered stream it travels on: the server keeps one
 * per instance (every member decodes the same Events bytes), the Enter hands a newcomer
 * its state, and both sides fill slots in the same round-robin order and keep each
 * slot's recent origins and the expected uid alike. An ArcSweep's single bullet from
 * the stationary boss then costs 5 bytes instead of 18 (6 after a uid gap).
 *
 * Positions are 1/8 px, angles 1/65536 turn, and every header number is on the sim's
 * GRID: the server spawns on that grid, so a decoded volley is bit for bit the one
 * the server spawned, and an off-grid number is an encoding error, never a rounding.
 */
import { type BulletSpec, GRID, type Grid, Team, type Volley } from "../../sim/mod.ts";
import { PLAYER } from "../../content/mod.ts";
import { ByteReader, ByteWriter, CodecError } from "./bytes.ts";
import { readRecord, type WireField, type WireType, writeRecord } from "./fields.ts";

const Layout = { Fan: 0, Line: 1, Full: 2, PlayerShot: 3 } as const;
const EXPLICIT_UID = 0x40;
const PLAYER_TEAM = 0x80;

/** A header field: exactly on its grid, in a wire type that holds the grid's range. */
function onGrid(type: WireType, grid: Grid): WireField & { readonly grid: Grid } {
  return { type, per: grid.per, round: "exact", grid };
}

/**
 * The numbers every bullet of a volley shares: each field of a BulletSpec (the type
 * check fails when BulletSpec gains a field this table does not carry) and the speed.
 */
export const VOLLEY_HEADER = {
  kind: onGrid("u8", GRID.kind),
  radiusPx: onGrid("u8", GRID.radiusPx),
  ttlTicks: onGrid("u16", GRID.ttlTicks),
  speedPxPerS: onGrid("u16", GRID.speedPxPerS),
  accelPxPerS2: onGrid("i16", GRID.accelPxPerS2),
  turnRadPerS: onGrid("i16", GRID.turnRadPerS),
  damage: onGrid("u8", GRID.damage),
} as const satisfies Record<keyof BulletSpec | "speedPxPerS", WireField>;

type VolleyHeader = ReturnType<typeof readRecord<typeof VOLLEY_HEADER>>;

/** Slots of the volley-header dictionary (entry numbers 1–63). */
export const VOLLEY_DICTIONARY_SLOTS = 63;
/** Recent origins each slot remembers (two sweeps from two muzzles share a header). */
const ORIGINS = 3;
const ENTRY_INDEX = 0x3f;
const ORIGIN_SHIFT = 6;

/**
 * A slot's recent fan-volley origins, most recent first, as x, y pairs in one array
 * made with the slot. Both sides update it for every fan volley, so it is changed in
 * place: an array per origin would live as long as the slot's next few volleys, long
 * enough to reach the old generation, for every client's dictionary.
 */
class RecentOrigins {
  readonly #xy: number[] = new Array<number>(2 * ORIGINS).fill(0);
  #length = 0;

  /** Origins held (0–3). */
  get length(): number {
    return this.#length;
  }

  /** The k-th most recent origin's x (k from 0). */
  x(k: number): number {
    return this.#xy[2 * k];
  }

  /** The k-th most recent origin's y. */
  y(k: number): number {
    return this.#xy[2 * k + 1];
  }

  /** Which recent origin (x, y) is: 1–3, or 0. */
  find(x: number, y: number): number {
    const xy = this.#xy;
    for (let k = 0; k < this.#length; k++) if (xy[2 * k] === x && xy[2 * k + 1] === y) return k + 1;
    return 0;
  }

  /** Makes (x, y) the most recent origin; the oldest of three gives way to a new one. */
  use(x: number, y: number): void {
    const xy = this.#xy;
    const found = this.find(x, y);
    const from = found > 0 ? found - 1 : Math.min(this.#length, ORIGINS - 1);
    if (found === 0 && this.#length < ORIGINS) this.#length++;
    for (let k = from; k > 0; k--) {
      xy[2 * k] = xy[2 * k - 2];
      xy[2 * k + 1] = xy[2 * k - 1];
    }
    xy[0] = x;
    xy[1] = y;
  }
}

/** One slot: a header and the origins of its recent fan volleys. */
interface Slot {
  readonly key: string;
  readonly header: VolleyHeader;
  readonly origins: RecentOrigins;
}

/**
 * The volley headers an ordered stream has carried, by slot. Encoder and decoder hold
 * one each and change them in step, so a slot number stands for a whole header.
 */
export class VolleyDictionary {
  readonly #slots: (Slot | undefined)[] = [];
  readonly #byKey = new Map<string, number>();
  #next = 0;
  /** The uid the stream's next volley is expected to start at (the last one's last + 1). */
  #nextUid = 0;

  /** The uid the next volley record is expected to start at. */
  get nextUid(): number {
    return this.#nextUid;
  }

  /** A record ending with uid `last` went by (both sides, in stream order). */
  followUid(last: number): void {
    this.#nextUid = (last + 1) >>> 0;
  }

  /** The slot (1–127) holding `header`, or 0. */
  find(header: VolleyHeader): number {
    return this.#byKey.get(keyOf(header)) ?? 0;
  }

  /** The header and last origin in `slot`, or CodecError. */
  slot(index: number): Slot {
    const s = this.#slots[index - 1];
    if (!s) throw new CodecError(`Cannot decode volleys: dictionary slot ${index} is empty`);
    return s;
  }

  /** Puts `header` in the next slot (round robin) and returns the slot's number. */
  define(header: VolleyHeader): number {
    const index = this.#next + 1;
    this.#next = (this.#next + 1) % VOLLEY_DICTIONARY_SLOTS;
    const old = this.#slots[index - 1];
    if (old) this.#byKey.delete(old.key);
    const key = keyOf(header);
    this.#slots[index - 1] = { key, header, origins: new RecentOrigins() };
    this.#byKey.set(key, index);
    return index;
  }

  /** Every slot, the next one to fill and the expected uid, for a newcomer's Enter. */
  export(): Uint8Array {
    const w = new ByteWriter(16 + this.#slots.length * 24);
    w.u32(this.#nextUid);
    w.u8(this.#next);
    w.u8(this.#slots.length);
    for (const s of this.#slots) {
      if (!s) throw new CodecError("Cannot encode the volley dictionary: a hole");
      writeRecord(w, VOLLEY_HEADER, { record: s.header, what: "volley dictionary" });
      w.u8(s.origins.length);
      for (let k = 0; k < s.origins.length; k++) {
        w.i16(s.origins.x(k));
        w.i16(s.origins.y(k));
      }
    }
    return w.bytes();
  }

  /** Takes the state an Enter carried (what `export` wrote). */
  import(bytes: Uint8Array): void {
    const r = new ByteReader(bytes, "volley dictionary");
    const nextUid = r.u32();
    const next = r.u8();
    const n = r.u8();
    if (n > VOLLEY_DICTIONARY_SLOTS || next >= VOLLEY_DICTIONARY_SLOTS || next > n) {
      throw new CodecError(`Cannot decode the volley dictionary: ${n} slots, next ${next}`);
    }
    this.#slots.length = 0;
    this.#byKey.clear();
    for (let i = 0; i < n; i++) {
      const header = readRecord(r, VOLLEY_HEADER);
      const count = r.u8();
      if (count > ORIGINS) throw new CodecError(`Cannot decode the volley dictionary: ${count}`);
      const pairs: [number, number][] = [];
      for (let k = 0; k < count; k++) pairs.push([r.i16(), r.i16()]);
      // Oldest first: each use() puts its origin in front.
      const origins = new RecentOrigins();
      for (let k = count - 1; k >= 0; k--) origins.use(pairs[k][0], pairs[k][1]);
      const key = keyOf(header);
      this.#slots.push({ key, header, origins });
      this.#byKey.set(key, i + 1);
    }
    if (r.remaining !== 0) throw new CodecError("Cannot decode the volley dictionary: trailing");
    this.#next = next;
    this.#nextUid = nextUid;
  }
}

function keyOf(h: VolleyHeader): string {
  return `${h.kind},${h.radiusPx},${h.ttlTicks},${h.speedPxPerS},${h.accelPxPerS2},` +
    `${h.turnRadPerS},${h.damage}`;
}

function allEqual(a: readonly number[]): boolean {
  for (let i = 1; i < a.length; i++) if (a[i] !== a[0]) return false;
  return true;
}

/** Largest birth-tick offset a record can carry: a batch spans at most 16 ticks. */
export const MAX_TICK_DELTA = 15;

/** Reused by every batch of volleys (written, then copied out). */
const VOLLEYS_WRITER = new ByteWriter(1024);

/**
 * Packs volleys born on ticks baseTick…baseTick+15, oldest first. With a dictionary,
 * headers it holds go as a slot number (and it learns the new ones); without, each
 * header goes whole (a decoder then learns them all, which is harmless).
 */
export function encodeVolleys(
  volleys: readonly Volley[],
  baseTick: number,
  dict: VolleyDictionary = new VolleyDictionary(),
): Uint8Array {
  return writeVolleys(volleys, baseTick, dict).bytes();
}

/**
 * `encodeVolleys` without the copy: the writer holding the bytes, valid until the next
 * call (an Events message copies them straight into itself).
 */
export function writeVolleys(
  volleys: readonly Volley[],
  baseTick: number,
  dict: VolleyDictionary = new VolleyDictionary(),
): ByteWriter {
  const w = VOLLEYS_WRITER.reset();
  for (const v of volleys) {
    const expectedUid = dict.nextUid;
    const n = v.angles.length;
    const playerShot = v.team === Team.Player && n === 1 && v.spec === PLAYER.shot &&
      v.speedPxPerS === PLAYER.shotSpeedPxPerS;
    const fan = allEqual(v.xs) && allEqual(v.ys);
    const layout = playerShot
      ? Layout.PlayerShot
      : fan
      ? Layout.Fan
      : allEqual(v.angles)
      ? Layout.Line
      : Layout.Full;
    const explicit = v.uid0 !== expectedUid;
    const delta = v.birthTick - baseTick;
    if (!Number.isInteger(delta) || delta < 0 || delta > MAX_TICK_DELTA) {
      throw new CodecError(
        `Cannot encode a volley born on ${v.birthTick} in a batch from ${baseTick}`,
      );
    }
    w.u8(
      layout | (delta << 2) | (explicit ? EXPLICIT_UID : 0) |
        (v.team === Team.Player ? PLAYER_TEAM : 0),
    );
    // The gap as a signed 32-bit difference: uids wrap, and a gap is mostly small.
    if (explicit) w.varint((v.uid0 - expectedUid) | 0);
    dict.followUid(v.uid0 + n - 1);
    if (layout === Layout.PlayerShot) {
      w.varuint(v.owner);
      w.i16(v.xs[0]);
      w.i16(v.ys[0]);
      w.u16(v.angles[0]);
      continue;
    }
    if (n < 1 || n > 255) throw new CodecError(`Cannot encode a volley of ${n} bullets`);
    const header = { ...v.spec, speedPxPerS: v.speedPxPerS };
    let index = dict.find(header);
    const known = index !== 0;
    if (!known) index = dict.define(header);
    const slot = dict.slot(index);
    const origin = layout === Layout.Fan ? slot.origins.find(v.xs[0], v.ys[0]) : 0;
    w.u8((known ? index : 0) | (origin << ORIGIN_SHIFT));
    if (!known) writeRecord(w, VOLLEY_HEADER, { record: header, what: "volley" });
    w.u8(n);
    if (layout === Layout.Fan) {
      if (origin === 0) {
        w.i16(v.xs[0]);
        w.i16(v.ys[0]);
      }
      slot.origins.use(v.xs[0], v.ys[0]);
      for (let i = 0; i < n; i++) w.u16(v.angles[i]);
    } else if (layout === Layout.Line) {
      w.u16(v.angles[0]);
      for (let i = 0; i < n; i++) {
        w.i16(v.xs[i]);
        w.i16(v.ys[i]);
      }
    } else {
      for (let i = 0; i < n; i++) {
        w.i16(v.xs[i]);
        w.i16(v.ys[i]);
        w.u16(v.angles[i]);
      }
    }
  }
  return w;
}

/** Unpacks what `encodeVolleys` wrote for a batch starting at `baseTick`. */
export function decodeVolleys(
  bytes: Uint8Array,
  baseTick: number,
  dict: VolleyDictionary = new VolleyDictionary(),
): Volley[] {
  const r = new ByteReader(bytes, "volleys");
  const out: Volley[] = [];
  while (r.remaining > 0) {
    const flags = r.u8();
    const layout = flags & 0x03;
    const birthTick = baseTick + ((flags >> 2) & 0x0f);
    const skip = flags & EXPLICIT_UID ? r.varint() : 0;
    if (skip < -0x80000000 || skip > 0x7fffffff) {
      throw new CodecError(`Cannot decode volleys: uid skip ${skip} beyond 32 bits`);
    }
    const uid0 = (dict.nextUid + skip) >>> 0;
    const team = flags & PLAYER_TEAM ? Team.Player : Team.Enemy;
    let volley: Volley;
    if (layout === Layout.PlayerShot) {
      const owner = r.varuint();
      const x = r.i16();
      const y = r.i16();
      const angle = r.u16();
      volley = {
        birthTick,
        uid0,
        team,
        owner,
        spec: PLAYER.shot,
        speedPxPerS: PLAYER.shotSpeedPxPerS,
        xs: [x],
        ys: [y],
        angles: [angle],
      };
    } else {
      const entry = r.u8();
      let index = entry & ENTRY_INDEX;
      if (index === 0) index = dict.define(readRecord(r, VOLLEY_HEADER));
      const slot = dict.slot(index);
      const origin = entry >> ORIGIN_SHIFT;
      if (origin > 0 && (layout !== Layout.Fan || origin > slot.origins.length)) {
        throw new CodecError(`Cannot decode volleys: no origin ${origin} to repeat`);
      }
      const { speedPxPerS, ...spec } = slot.header;
      const n = r.u8();
      if (n === 0) throw new CodecError("Cannot decode volleys: empty volley");
      const xs: number[] = [];
      const ys: number[] = [];
      const angles: number[] = [];
      if (layout === Layout.Fan) {
        const x = origin > 0 ? slot.origins.x(origin - 1) : r.i16();
        const y = origin > 0 ? slot.origins.y(origin - 1) : r.i16();
        slot.origins.use(x, y);
        for (let i = 0; i < n; i++) {
          xs.push(x);
          ys.push(y);
          angles.push(r.u16());
        }
      } else if (layout === Layout.Line) {
        const angle = r.u16();
        for (let i = 0; i < n; i++) {
          xs.push(r.i16());
          ys.push(r.i16());
          angles.push(angle);
        }
      } else {
        for (let i = 0; i < n; i++) {
          xs.push(r.i16());
          ys.push(r.i16());
          angles.push(r.u16());
        }
      }
      volley = {
        birthTick,
        uid0,
        team,
        owner: -1,
        spec,
        speedPxPerS,
        xs,
        ys,
        angles,
      };
    }
    dict.followUid(uid0 + volley.angles.length - 1);
    out.push(volley);
  }
  return out;
}
