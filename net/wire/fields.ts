/**
 * Field tables: a fixed-size wire record written once as `name → wire type, scale,
 * rounding`, from which its packer, its unpacker, its byte size and its TypeScript
 * type all come (Quake III's netField_t, in TypeScript). A value that does not fit
 * its field is a CodecError naming the record and the field, never a silent wrap.
 */
import { ByteReader, ByteWriter, CodecError } from "./bytes.ts";

/** Fixed-size little-endian number types. */
export type WireType = "u8" | "i8" | "u16" | "i16" | "u32" | "i32" | "f32" | "f64";

/** Size and integer range of each wire type (floats: no range, no rounding). */
export const WIRE_TYPES: Readonly<Record<WireType, { bytes: number; min: number; max: number }>> = {
  u8: { bytes: 1, min: 0, max: 0xff },
  i8: { bytes: 1, min: -0x80, max: 0x7f },
  u16: { bytes: 2, min: 0, max: 0xffff },
  i16: { bytes: 2, min: -0x8000, max: 0x7fff },
  u32: { bytes: 4, min: 0, max: 0xffffffff },
  i32: { bytes: 4, min: -0x80000000, max: 0x7fffffff },
  f32: { bytes: 4, min: -Infinity, max: Infinity },
  f64: { bytes: 8, min: -Infinity, max: Infinity },
};

/** How one number travels. */
export interface WireField {
  readonly type: WireType;
  /** Wire units per unit of the value (8 for a position in 1/8 px); 1 when absent. */
  readonly per?: number;
  /**
   * How a value between two wire units is sent: the nearest (default), the next one
   * up ("ceil": a wounded enemy never reads 0 HP), or not at all ("exact": the value
   * must already be on the grid — anything else is a bug and an error).
   */
  readonly round?: "nearest" | "ceil" | "exact";
}

/** A record: its fields in wire order. */
export type RecordTable = { readonly [name: string]: WireField };

/** The value a table describes: one number per field. */
export type WireRecord<T extends RecordTable> = { readonly [K in keyof T]: number };

/** Bytes one record of `table` takes. */
export function recordBytes(table: RecordTable): number {
  let n = 0;
  for (const f of Object.values(table)) n += WIRE_TYPES[f.type].bytes;
  return n;
}

/**
 * A table's layout as one line, field by field: `name:type`, then `/per` when scaled, `^`
 * rounded up, `=` exact ("x:u16/8 hp:u16^"). A reader written by hand for a hot table
 * checks it at load, so a change to the table fails there until the reader follows.
 */
export function tableLayout(table: RecordTable): string {
  return Object.entries(table).map(([name, f]) =>
    `${name}:${f.type}${f.per === undefined || f.per === 1 ? "" : `/${f.per}`}${
      f.round === "ceil" ? "^" : f.round === "exact" ? "=" : ""
    }`
  ).join(" ");
}

function isFloat(type: WireType): boolean {
  return type === "f32" || type === "f64";
}

/** The wire units `value` becomes in `field`, or CodecError. */
export function toUnits(value: number, field: WireField, what: string): number {
  if (typeof value !== "number" || Number.isNaN(value)) {
    throw new CodecError(`Cannot encode ${what}: ${value} is not a number`);
  }
  if (isFloat(field.type)) return value;
  const scaled = value * (field.per ?? 1);
  const round = field.round ?? "nearest";
  const units = round === "ceil" ? Math.ceil(scaled) : Math.round(scaled);
  if (round === "exact" && units !== scaled) {
    throw new CodecError(
      `Cannot encode ${what}: ${value} is not a multiple of 1/${field.per ?? 1}`,
    );
  }
  const { min, max } = WIRE_TYPES[field.type];
  if (!(units >= min && units <= max)) {
    throw new CodecError(`Cannot encode ${what}: ${value} is outside the ${field.type} field`);
  }
  return units;
}

/** The value `units` stand for in `field`. */
export function fromUnits(units: number, field: WireField): number {
  return field.per === undefined ? units : units / field.per;
}

/** Appends one record. `what` names it in errors ("snapshot player"). */
export function writeRecord<T extends RecordTable>(
  w: ByteWriter,
  table: T,
  opts: { record: WireRecord<T>; what: string },
): void {
  for (const name in table) {
    const field = table[name];
    w[field.type](toUnits(opts.record[name], field, `${opts.what} ${name}`));
  }
}

/** Reads one record. */
export function readRecord<T extends RecordTable>(r: ByteReader, table: T): WireRecord<T> {
  const out: Record<string, number> = {};
  for (const name in table) {
    const field = table[name];
    out[name] = fromUnits(r[field.type](), field);
  }
  return out as WireRecord<T>;
}

/** Packs records back to back. */
export function packRecords<T extends RecordTable>(
  table: T,
  opts: { records: readonly WireRecord<T>[]; what: string },
): Uint8Array {
  const w = new ByteWriter(Math.max(1, opts.records.length * recordBytes(table)));
  for (const record of opts.records) writeRecord(w, table, { record, what: opts.what });
  return w.bytes();
}

/** Unpacks what `packRecords` wrote; the length must be a whole number of records. */
export function unpackRecords<T extends RecordTable>(
  table: T,
  opts: { bytes: Uint8Array; what: string },
): WireRecord<T>[] {
  const size = recordBytes(table);
  if (opts.bytes.byteLength % size !== 0) {
    throw new CodecError(
      `Cannot decode ${opts.what}: ${opts.bytes.byteLength} bytes is not a multiple of ${size}`,
    );
  }
  const r = new ByteReader(opts.bytes, opts.what);
  const out: WireRecord<T>[] = [];
  while (r.remaining > 0) out.push(readRecord(r, table));
  return out;
}
