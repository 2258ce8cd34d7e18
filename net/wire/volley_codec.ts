/**
 * Hand-packed bullet spawns: the hot path of the event stream. One record per
 * volley (emitter shot); the fields every bullet of the shot shares go once.
 *
 *   flags:u8   bits 0–1 layout, bits 2–5 birth tick − the message's base tick (0–15),
 *              bit 6 explicit uid, bit 7 player team
 *   [uid0:u32] only with bit 6; otherwise uid0 follows the previous record's last uid
 *   layout 3 (player shot): owner:varuint x:i16 y:i16 angle:u16   spec and speed are the player's
 *   layouts 0–2: VOLLEY_HEADER (kind:u8 radius:u8 (1/4 px) ttl:u16 speed:u16 (1/4 px/s)
 *                accel:i16 (px/s²) turn:i16 (mrad/s) damage:u8), count:u8, then
 *     0 fan  (one origin):  x:i16 y:i16, count × angle:u16
 *     1 line (one heading): angle:u16, count × (x:i16 y:i16)
 *     2 full:               count × (x:i16 y:i16 angle:u16)
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

function allEqual(a: readonly number[]): boolean {
  for (let i = 1; i < a.length; i++) if (a[i] !== a[0]) return false;
  return true;
}

/** Largest birth-tick offset a record can carry: a batch spans at most 16 ticks. */
export const MAX_TICK_DELTA = 15;

/** Packs volleys born on ticks baseTick…baseTick+15, oldest first. */
export function encodeVolleys(volleys: readonly Volley[], baseTick: number): Uint8Array {
  const w = new ByteWriter(64);
  let expectedUid = -1;
  for (const v of volleys) {
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
    if (explicit) w.u32(v.uid0);
    expectedUid = (v.uid0 + n) >>> 0;
    if (layout === Layout.PlayerShot) {
      w.varuint(v.owner);
      w.i16(v.xs[0]);
      w.i16(v.ys[0]);
      w.u16(v.angles[0]);
      continue;
    }
    if (n < 1 || n > 255) throw new CodecError(`Cannot encode a volley of ${n} bullets`);
    writeRecord(w, VOLLEY_HEADER, {
      record: { ...v.spec, speedPxPerS: v.speedPxPerS },
      what: "volley",
    });
    w.u8(n);
    if (layout === Layout.Fan) {
      w.i16(v.xs[0]);
      w.i16(v.ys[0]);
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
  return w.bytes();
}

/** Unpacks what `encodeVolleys` wrote for a batch starting at `baseTick`. */
export function decodeVolleys(bytes: Uint8Array, baseTick: number): Volley[] {
  const r = new ByteReader(bytes, "volleys");
  const out: Volley[] = [];
  let nextUid = -1;
  while (r.remaining > 0) {
    const flags = r.u8();
    const layout = flags & 0x03;
    const birthTick = baseTick + ((flags >> 2) & 0x0f);
    let uid0 = nextUid;
    if (flags & EXPLICIT_UID) uid0 = r.u32();
    else if (uid0 < 0) throw new CodecError("Cannot decode volleys: first record has no uid");
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
      const { speedPxPerS, ...spec } = readRecord(r, VOLLEY_HEADER);
      const n = r.u8();
      if (n === 0) throw new CodecError("Cannot decode volleys: empty volley");
      const xs: number[] = [];
      const ys: number[] = [];
      const angles: number[] = [];
      if (layout === Layout.Fan) {
        const x = r.i16();
        const y = r.i16();
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
    nextUid = (uid0 + volley.angles.length) >>> 0;
    out.push(volley);
  }
  return out;
}
