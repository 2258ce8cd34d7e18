/**
 * Delta snapshots, in Bitfighter's manner: a snapshot is sent as what changed since a
 * baseline the client is known to hold — the previous one on the ordered stream, the
 * newest it acknowledged over datagrams — or whole when there is none (on join, after
 * a transfer, when the acknowledged one is too old). Deltas are taken in wire units
 * (1/8 px, 1/256 turn…), so the client rebuilds the server's numbers exactly.
 *
 *   body     = sections:u8  (1 stage, 2 wave, 4 players, 8 enemies, 16 boss), then each
 *              present section in that order:
 *   stage    = u8                    wave = u8
 *   entities = changed:bits(one per baseline entity, in id order, ⌈n/8⌉ bytes)
 *              then for each flagged one: mask:u8 (a bit per field after id, table order;
 *                0 = it left) and each masked field as a signed varint of new − old
 *              then added:varuint and each new entity whole (its record table)
 *   boss     = mask:u8 (0x80 = gone; else a bit per field), then the masked fields:
 *              whole (varuint) if there was no boss, else signed varint deltas
 *
 * Pure: no I/O. Used by the server's instances and by the client runtime.
 */
import { ByteReader, ByteWriter, CodecError } from "./bytes.ts";
import { encodeSnapshot, type MessageEncoder } from "./codec.ts";
import {
  type RecordTable,
  tableLayout,
  toUnits,
  WIRE_TYPES,
  type WireField,
  type WireType,
} from "./fields.ts";
import {
  type BossSnap,
  ENEMY_SNAP,
  type EnemySnap,
  PLAYER_SNAP,
  type PlayerSnap,
  type SnapshotMsg,
} from "./protocol.ts";
import { POS_UNITS_PER_PX } from "../../sim/mod.ts";

/** A snapshot in wire units: what deltas are taken between. Rows are fields in table order. */
export interface SnapshotUnits {
  readonly tick: number;
  readonly stage: number;
  readonly wave: number;
  readonly players: readonly (readonly number[])[];
  readonly enemies: readonly (readonly number[])[];
  /** [bossId, hp, maxHp, phase, folding] or null. */
  readonly boss: readonly number[] | null;
}

/** The world state a snapshot carries (no per-recipient fields). */
export type SnapshotState = Omit<
  SnapshotMsg,
  "kind" | "ackTick" | "lateTicks" | "slackTicks" | "epoch"
>;

const Section = { Stage: 1, Wave: 2, Players: 4, Enemies: 8, Boss: 16 } as const;
const SECTION_MASK = 31;
const BOSS_GONE = 0x80;
const BOSS_FIELDS = 5;

const PLAYER_NAMES = Object.keys(PLAYER_SNAP) as (keyof typeof PLAYER_SNAP)[];
const ENEMY_NAMES = Object.keys(ENEMY_SNAP) as (keyof typeof ENEMY_SNAP)[];
/** Fields whose units wrap around (a turn): their delta is the shortest way round. */
const WRAPS: ReadonlySet<string> = new Set(["aim"]);

/**
 * One field of a snapshot row, with what converting it needs read from its table once:
 * a row is converted for every ship and enemy of every snapshot, and looking the scale,
 * the rounding and the range up by name for each field was most of a row's cost.
 */
interface RowField {
  readonly name: string;
  readonly field: WireField;
  /** Its name in errors ("snapshot player x"). */
  readonly what: string;
  readonly per: number;
  readonly ceil: boolean;
  readonly exact: boolean;
  /** A float field: its value goes as it is (toUnits decides). */
  readonly float: boolean;
  readonly min: number;
  readonly max: number;
}

function rowFields(table: RecordTable, what: string): readonly RowField[] {
  return Object.keys(table).map((name) => {
    const field = table[name];
    const { min, max } = WIRE_TYPES[field.type];
    return {
      name,
      field,
      what: `${what} ${name}`,
      per: field.per ?? 1,
      ceil: field.round === "ceil",
      exact: field.round === "exact",
      float: field.type === "f32" || field.type === "f64",
      min,
      max,
    };
  });
}

const PLAYER_ROW = rowFields(PLAYER_SNAP, "snapshot player");
const ENEMY_ROW = rowFields(ENEMY_SNAP, "snapshot enemy");

/**
 * A record's wire units, field by field in table order: exactly what `toUnits` gives,
 * which still decides (and names the field in its error) whenever a value is not a
 * plain number on the grid and in range.
 */
function rowUnits(fields: readonly RowField[], rec: object): number[] {
  const values = rec as Record<string, unknown>;
  const row = new Array<number>(fields.length);
  for (let f = 0; f < fields.length; f++) {
    const d = fields[f];
    const value = values[d.name];
    if (typeof value === "number" && !d.float) {
      const scaled = value * d.per;
      const units = d.ceil ? Math.ceil(scaled) : Math.round(scaled);
      if (units >= d.min && units <= d.max && !(d.exact && units !== scaled)) {
        row[f] = units;
        continue;
      }
    }
    row[f] = toUnits(value as number, d.field, d.what);
  }
  return row;
}

const byId = (a: readonly number[], b: readonly number[]) => a[0] - b[0];

/**
 * Puts wire rows in id order, in place (the order snapshots hold them in). Enemies nearly
 * always are already (kept in the order they came, ids rising); a dungeon's ships are in
 * the order they joined, often not. A few rows are put in order by insertion, in place:
 * `Array.prototype.sort` copies its array whatever it finds.
 */
export function sortRows<T extends readonly number[]>(rows: T[]): T[] {
  for (let i = 1; i < rows.length; i++) {
    if (rows[i - 1][0] <= rows[i][0]) continue;
    if (rows.length > 16) return rows.sort(byId);
    for (let j = i; j < rows.length; j++) {
      const row = rows[j];
      let k = j;
      for (; k > 0 && rows[k - 1][0] > row[0]; k--) rows[k] = rows[k - 1];
      rows[k] = row;
    }
    return rows;
  }
  return rows;
}

/**
 * The two tables as `playerUnits` and `enemyUnits` read them by hand: every ship of every
 * snapshot passes there, and `rowUnits`' lookup of each field by name took ~0.2–0.4 µs a
 * row. A change to a table fails here, at load, until they follow it.
 */
const POS = POS_UNITS_PER_PX;
const PLAYER_ROW_LAYOUT = `id:u16 x:u16/${POS} y:u16/${POS} aim:u8 hp:u8 flags:u8 escape:u8`;
const ENEMY_ROW_LAYOUT = `id:u16 kind:u8 x:u16/${POS} y:u16/${POS} hp:u16^`;
const HAND_READ_ROWS = [[PLAYER_SNAP, PLAYER_ROW_LAYOUT], [ENEMY_SNAP, ENEMY_ROW_LAYOUT]] as const;
for (const [table, layout] of HAND_READ_ROWS) {
  if (tableLayout(table) !== layout) {
    throw new Error(`snapshot rows are read as ${layout}; the table is ${tableLayout(table)}`);
  }
}

/** A value in units, rounded to the nearest (NaN for anything not a number). */
function nearest(value: number, per: number): number {
  return typeof value === "number" ? Math.round(value * per) : NaN;
}

/** Whole units in [0, max]: false for NaN too. */
function inRange(units: number, max: number): boolean {
  return units >= 0 && units <= max;
}

/**
 * One player's snapshot row in wire units (the server rounds here, once). Any value that
 * is not a number in its field's range goes the table's way, which says what is wrong.
 */
export function playerUnits(p: PlayerSnap): number[] {
  const id = nearest(p.id, 1);
  const x = nearest(p.x, POS);
  const y = nearest(p.y, POS);
  const aim = nearest(p.aim, 1);
  const hp = nearest(p.hp, 1);
  const flags = nearest(p.flags, 1);
  const escape = nearest(p.escape, 1);
  if (
    inRange(id, 0xffff) && inRange(x, 0xffff) && inRange(y, 0xffff) && inRange(aim, 0xff) &&
    inRange(hp, 0xff) && inRange(flags, 0xff) && inRange(escape, 0xff)
  ) return [id, x, y, aim, hp, flags, escape];
  return rowUnits(PLAYER_ROW, p);
}

/** One enemy's snapshot row in wire units (as `playerUnits`; its hp rounded up). */
export function enemyUnits(e: EnemySnap): number[] {
  const id = nearest(e.id, 1);
  const kind = nearest(e.kind, 1);
  const x = nearest(e.x, POS);
  const y = nearest(e.y, POS);
  const hp = typeof e.hp === "number" ? Math.ceil(e.hp) : NaN;
  if (
    inRange(id, 0xffff) && inRange(kind, 0xff) && inRange(x, 0xffff) && inRange(y, 0xffff) &&
    inRange(hp, 0xffff)
  ) return [id, kind, x, y, hp];
  return rowUnits(ENEMY_ROW, e);
}

/** The boss's snapshot row: [bossId, hp, maxHp, phase, folding]. */
export function bossUnits(b: BossSnap): number[] {
  return [b.bossId, Math.max(0, Math.ceil(b.hp)), b.maxHp, b.phase, b.folding ? 1 : 0];
}

/**
 * A snapshot from rows already in wire units (playerUnits, enemyUnits), put in id order:
 * the change bits are positional, so both sides must hold a baseline's rows in the same
 * order. The row arrays are copied; the rows themselves are shared (never changed).
 */
export function unitsFromRows(
  s: {
    tick: number;
    stage: number;
    wave: number;
    players: readonly (readonly number[])[];
    enemies: readonly (readonly number[])[];
    boss: readonly number[] | null;
  },
): SnapshotUnits {
  return {
    tick: s.tick,
    stage: s.stage,
    wave: s.wave,
    players: [...s.players].sort(byId),
    enemies: [...s.enemies].sort(byId),
    boss: s.boss,
  };
}

/**
 * `unitsFromRows` for a players list made for this one snapshot (a crowd member's
 * nearest ships): that list is sorted in place and kept, not copied. `enemies` must be
 * in id order already (an instance sorts its list once a tick for all its members).
 */
export function unitsFromOwnRows(
  s: Omit<SnapshotUnits, "players">,
  players: number[][],
): SnapshotUnits {
  // Field by field, in the order every SnapshotUnits is made in: one hidden class for all
  // of them (a spread would put `players` last, a second shape for the encoder to meet).
  return {
    tick: s.tick,
    stage: s.stage,
    wave: s.wave,
    players: sortRows(players),
    enemies: s.enemies,
    boss: s.boss,
  };
}

/**
 * The state in wire units (the server rounds here, once), rows in id order: the change
 * bits are positional, so both sides must hold a baseline's rows in the same order.
 */
export function toSnapshotUnits(s: SnapshotState): SnapshotUnits {
  return unitsFromRows({
    tick: s.tick,
    stage: s.stage,
    wave: s.wave,
    players: s.players.map(playerUnits),
    enemies: s.enemies.map(enemyUnits),
    boss: s.boss ? bossUnits(s.boss) : null,
  });
}

function fromRow<T extends RecordTable>(
  table: T,
  names: readonly string[],
  row: readonly number[],
) {
  const out: Record<string, number> = {};
  names.forEach((n, i) => out[n] = row[i] / (table[n].per ?? 1));
  return out;
}

/** Back from wire units to the snapshot the runtime reads. */
export function fromSnapshotUnits(
  u: SnapshotUnits,
  opts: { ackTick: number; lateTicks?: number; slackTicks?: number; epoch?: number },
): SnapshotMsg {
  const b = u.boss;
  const boss: BossSnap | null = b
    ? { bossId: b[0], hp: b[1], maxHp: b[2], phase: b[3], folding: b[4] === 1 }
    : null;
  return {
    kind: 14,
    tick: u.tick,
    ackTick: opts.ackTick,
    lateTicks: opts.lateTicks ?? 0,
    ...(opts.slackTicks === undefined ? {} : { slackTicks: opts.slackTicks }),
    stage: u.stage,
    wave: u.wave,
    players: u.players.map((r) => fromRow(PLAYER_SNAP, PLAYER_NAMES, r) as PlayerSnap),
    enemies: u.enemies.map((r) => fromRow(ENEMY_SNAP, ENEMY_NAMES, r) as EnemySnap),
    boss,
    ...(opts.epoch === undefined ? {} : { epoch: opts.epoch }),
  };
}

/** The shortest way round a turn of `span` units (a power of two) for a difference `d`. */
function wrapDelta(d: number, span: number): number {
  const half = span / 2;
  // A whole difference within 32 bits: the wrap is a mask (two's complement).
  if ((d | 0) === d && span <= 0x10000) return ((d + half) & (span - 1)) - half;
  return ((((d + half) % span) + span) % span) - half;
}

function applyDelta(name: string, table: RecordTable, a: number, d: number): number {
  const t = WIRE_TYPES[table[name].type];
  const v = WRAPS.has(name) ? (((a + d) % (t.max + 1)) + t.max + 1) % (t.max + 1) : a + d;
  if (v < t.min || v > t.max) {
    throw new CodecError(`Cannot decode snapshot: ${name} ${v} out of range`);
  }
  return v;
}

/** Per field of a table (table order): its wire type, and whether it wraps (a turn). */
function fieldInfo(table: RecordTable, names: readonly string[]) {
  return {
    types: names.map((n) => table[n].type),
    /** The span of units a wrapping field turns through (0: it does not wrap). */
    wrapSpan: names.map((n) => WRAPS.has(n) ? 2 ** (WIRE_TYPES[table[n].type].bytes * 8) : 0),
  };
}

const PLAYER_FIELDS = fieldInfo(PLAYER_SNAP, PLAYER_NAMES);
const ENEMY_FIELDS = fieldInfo(ENEMY_SNAP, ENEMY_NAMES);

/**
 * One entity section: a merge of two id-ordered row lists, written straight into `w`
 * (no per-row arrays or maps: the server runs this for every recipient of every
 * snapshot).
 */
function writeEntities(
  w: ByteWriter,
  opts: {
    fields: { types: readonly WireType[]; wrapSpan: readonly number[] };
    cur: readonly (readonly number[])[];
    base: readonly (readonly number[])[];
  },
): void {
  const { fields, cur, base } = opts;
  const { types, wrapSpan } = fields;
  const n = types.length;
  for (let k = 1; k < cur.length; k++) {
    if (cur[k][0] <= cur[k - 1][0]) {
      throw new CodecError("Cannot encode snapshot: rows out of id order");
    }
  }
  // The change bits come first: reserved here, filled in as the walk finds changes.
  const bitsAt = w.length;
  for (let k = 0; k < Math.ceil(base.length / 8); k++) w.u8(0);
  let j = 0;
  let added = 0;
  let lastId = -1;
  for (let i = 0; i < base.length; i++) {
    const old = base[i];
    if (old[0] <= lastId) throw new CodecError("Cannot encode snapshot: rows out of id order");
    lastId = old[0];
    while (j < cur.length && cur[j][0] < old[0]) {
      j++;
      added++;
    }
    const row = j < cur.length && cur[j][0] === old[0] ? cur[j] : undefined;
    if (!row) {
      w.setU8(bitsAt + (i >> 3), w.getU8(bitsAt + (i >> 3)) | (1 << (i & 7)));
      w.u8(0); // it left
      continue;
    }
    j++;
    let mask = 0;
    for (let f = 1; f < n; f++) if (row[f] !== old[f]) mask |= 1 << (f - 1);
    if (mask === 0) continue;
    w.setU8(bitsAt + (i >> 3), w.getU8(bitsAt + (i >> 3)) | (1 << (i & 7)));
    w.u8(mask);
    for (let f = 1; f < n; f++) {
      if (row[f] === old[f]) continue;
      const d = row[f] - old[f];
      w.varint(wrapSpan[f] === 0 ? d : wrapDelta(d, wrapSpan[f]));
    }
  }
  added += cur.length - j;
  w.varuint(added);
  if (added === 0) return;
  // The new ones, whole, in id order: those between the baseline's ids and after them.
  let b = 0;
  for (let k = 0; k < cur.length; k++) {
    const row = cur[k];
    while (b < base.length && base[b][0] < row[0]) b++;
    if (b < base.length && base[b][0] === row[0]) continue;
    for (let f = 0; f < n; f++) writeUnits(w, types[f], row[f]);
  }
}

function writeUnits(w: ByteWriter, type: keyof typeof WIRE_TYPES, v: number): void {
  switch (type) {
    case "u8":
      return w.u8(v);
    case "u16":
      return w.u16(v);
    case "u32":
      return w.u32(v);
    default:
      throw new CodecError(`Cannot encode snapshot field of type ${type}`);
  }
}

function readUnits(r: ByteReader, type: keyof typeof WIRE_TYPES): number {
  switch (type) {
    case "u8":
      return r.u8();
    case "u16":
      return r.u16();
    case "u32":
      return r.u32();
    default:
      throw new CodecError(`Cannot decode snapshot field of type ${type}`);
  }
}

function readEntities(
  r: ByteReader,
  opts: { table: RecordTable; names: readonly string[]; base: readonly (readonly number[])[] },
): number[][] {
  const { table, names, base } = opts;
  const bits: number[] = [];
  for (let i = 0; i < Math.ceil(base.length / 8); i++) bits.push(r.u8());
  const out: number[][] = [];
  base.forEach((old, i) => {
    if ((bits[i >> 3] & (1 << (i & 7))) === 0) {
      out.push([...old]);
      return;
    }
    const mask = r.u8();
    if (mask === 0) return; // it left
    if (mask >> (names.length - 1) !== 0) {
      throw new CodecError(`Cannot decode snapshot: field mask ${mask} has unknown bits`);
    }
    const row = [...old];
    for (let f = 1; f < names.length; f++) {
      if (mask & (1 << (f - 1))) row[f] = applyDelta(names[f], table, old[f], r.varint());
    }
    out.push(row);
  });
  const added = r.varuint();
  if (added > 4096) throw new CodecError(`Cannot decode snapshot: ${added} new entities`);
  for (let k = 0; k < added; k++) out.push(names.map((n) => readUnits(r, table[n].type)));
  return out.sort(byId);
}

function sameRow(a: readonly number[], b: readonly number[]): boolean {
  if (a === b) return true;
  for (let f = 0; f < a.length; f++) if (a[f] !== b[f]) return false;
  return true;
}

function sameRows(a: readonly (readonly number[])[], b: readonly (readonly number[])[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameRow(a[i], b[i])) return false;
  return true;
}

const EMPTY: SnapshotUnits = {
  tick: -1,
  stage: -1,
  wave: -1,
  players: [],
  enemies: [],
  boss: null,
};

/** Reused by every snapshot body (written, then copied out). */
const BODY_WRITER = new ByteWriter(1024);

/** Encodes `cur` as its changes since `base` (everything, when there is no base). */
export function encodeSnapshotBody(
  cur: SnapshotUnits,
  base: SnapshotUnits | undefined,
): Uint8Array {
  const b = base ?? EMPTY;
  const w = BODY_WRITER.reset();
  let sections = 0;
  if (cur.stage !== b.stage) sections |= Section.Stage;
  if (cur.wave !== b.wave) sections |= Section.Wave;
  if (!sameRows(cur.players, b.players)) sections |= Section.Players;
  if (!sameRows(cur.enemies, b.enemies)) sections |= Section.Enemies;
  if (cur.boss === null ? b.boss !== null : b.boss === null || !sameRow(cur.boss, b.boss)) {
    sections |= Section.Boss;
  }
  w.u8(sections);
  if (sections & Section.Stage) w.u8(cur.stage);
  if (sections & Section.Wave) w.u8(cur.wave);
  if (sections & Section.Players) {
    writeEntities(w, { fields: PLAYER_FIELDS, cur: cur.players, base: b.players });
  }
  if (sections & Section.Enemies) {
    writeEntities(w, { fields: ENEMY_FIELDS, cur: cur.enemies, base: b.enemies });
  }
  if (sections & Section.Boss) {
    if (cur.boss === null) {
      w.u8(BOSS_GONE);
    } else {
      const old = b.boss;
      let mask = 0;
      for (let f = 0; f < BOSS_FIELDS; f++) if (!old || old[f] !== cur.boss[f]) mask |= 1 << f;
      w.u8(mask);
      for (let f = 0; f < BOSS_FIELDS; f++) {
        if (!(mask & (1 << f))) continue;
        if (old) w.varint(cur.boss[f] - old[f]);
        else w.varuint(cur.boss[f]);
      }
    }
  }
  return w.bytes();
}

/** Rebuilds the snapshot of `tick` from a body and the baseline it was taken against. */
export function decodeSnapshotBody(
  body: Uint8Array,
  opts: { tick: number; base: SnapshotUnits | undefined },
): SnapshotUnits {
  const b = opts.base ?? EMPTY;
  const r = new ByteReader(body, "snapshot");
  const sections = r.u8();
  if ((sections & ~SECTION_MASK) !== 0) {
    throw new CodecError(`Cannot decode snapshot: unknown sections ${sections}`);
  }
  const stage = sections & Section.Stage ? r.u8() : b.stage;
  const wave = sections & Section.Wave ? r.u8() : b.wave;
  if (stage < 0 || wave < 0) throw new CodecError("Cannot decode snapshot: no stage or wave");
  const players = sections & Section.Players
    ? readEntities(r, { table: PLAYER_SNAP, names: PLAYER_NAMES, base: b.players })
    : b.players;
  const enemies = sections & Section.Enemies
    ? readEntities(r, { table: ENEMY_SNAP, names: ENEMY_NAMES, base: b.enemies })
    : b.enemies;
  let boss = b.boss;
  if (sections & Section.Boss) {
    const mask = r.u8();
    if (mask === BOSS_GONE) {
      boss = null;
    } else {
      if (mask >> BOSS_FIELDS !== 0) throw new CodecError(`Cannot decode snapshot: boss ${mask}`);
      const old = b.boss;
      if (!old && mask !== (1 << BOSS_FIELDS) - 1) {
        throw new CodecError("Cannot decode snapshot: a new boss must come whole");
      }
      const next = old ? [...old] : [0, 0, 0, 0, 0];
      for (let f = 0; f < BOSS_FIELDS; f++) {
        if (mask & (1 << f)) next[f] = old ? old[f] + r.varint() : r.varuint();
      }
      boss = next;
    }
  }
  if (r.remaining !== 0) throw new CodecError("Cannot decode snapshot: trailing bytes");
  return { tick: opts.tick, stage, wave, players, enemies, boss };
}

/** Encodes a snapshot whole (no baseline): what a client gets on joining. */
export function encodeWholeSnapshot(enc: MessageEncoder, msg: SnapshotMsg): Uint8Array {
  return encodeSnapshot(enc, {
    tick: msg.tick,
    ackTick: msg.ackTick,
    lateTicks: msg.lateTicks,
    slackTicks: msg.slackTicks,
    baseTick: undefined,
    body: encodeSnapshotBody(toSnapshotUnits(msg), undefined),
    epoch: msg.epoch,
  });
}

/**
 * The snapshots one side holds as baselines, newest last, by tick: the server's per
 * recipient (what it sent), the client's (what it received).
 */
export class SnapshotHistory {
  readonly #cap: number;
  readonly #items: SnapshotUnits[] = [];

  constructor(cap: number) {
    this.#cap = cap;
  }

  /** The one of `tick`, if still held. */
  get(tick: number): SnapshotUnits | undefined {
    for (let i = this.#items.length - 1; i >= 0; i--) {
      if (this.#items[i].tick === tick) return this.#items[i];
    }
    return undefined;
  }

  get newest(): SnapshotUnits | undefined {
    return this.#items[this.#items.length - 1];
  }

  add(s: SnapshotUnits): void {
    this.#items.push(s);
    if (this.#items.length > this.#cap) this.#items.shift();
  }

  clear(): void {
    this.#items.length = 0;
  }
}
