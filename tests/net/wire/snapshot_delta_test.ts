/**
 * Delta snapshots through the real codec: a whole snapshot and every delta rebuild
 * the server's numbers exactly (1/8 px, 1/256 turn), over random sequences of joins,
 * leaves, moves, wraps and a boss coming and going; what did not change costs
 * nothing; malformed bodies are refused with a CodecError.
 */
import assert from "node:assert/strict";
import {
  CodecError,
  decodeServerMessage,
  encodeSnapshot,
  MessageDecoder,
  MessageEncoder,
} from "../../../net/wire/codec.ts";
import { toUnits } from "../../../net/wire/fields.ts";
import {
  ENEMY_SNAP,
  PLAYER_SNAP,
  ServerKind,
  type SnapshotMsg,
} from "../../../net/wire/protocol.ts";
import {
  decodeSnapshotBody,
  encodeSnapshotBody,
  enemyUnits,
  fromSnapshotUnits,
  playerUnits,
  type SnapshotState,
  type SnapshotUnits,
  sortRows,
  toSnapshotUnits,
} from "../../../net/wire/snapshot_delta.ts";
import { Rng } from "../../../sim/mod.ts";

const enc = new MessageEncoder();
const dec = new MessageDecoder();

/** Sends `cur` against `base` through the codec and rebuilds it as a client would. */
function roundTrip(cur: SnapshotState, base?: SnapshotUnits): { msg: SnapshotMsg; bytes: number } {
  const units = toSnapshotUnits(cur);
  const bytes = encodeSnapshot(enc, {
    tick: cur.tick,
    ackTick: cur.tick - 3,
    lateTicks: 4,
    slackTicks: 6,
    baseTick: base?.tick,
    body: encodeSnapshotBody(units, base),
  });
  const wire = decodeServerMessage(dec, bytes);
  assert.ok(wire.kind === ServerKind.Snapshot);
  assert.equal(wire.baseTick, base?.tick);
  assert.equal(wire.ackTick, cur.tick - 3);
  assert.equal(wire.lateTicks, 4);
  assert.equal(wire.slackTicks, 6);
  const rebuilt = decodeSnapshotBody(wire.body, { tick: wire.tick, base });
  const msg = fromSnapshotUnits(rebuilt, { ackTick: wire.ackTick, lateTicks: wire.lateTicks });
  return { msg, bytes: bytes.byteLength };
}

const FIGHT: SnapshotState = {
  tick: 900,
  stage: 2,
  wave: 2,
  players: [
    { id: 3, x: 640.125, y: 959.875, aim: 200, hp: 4, flags: 9, escape: 128 },
    { id: 7, x: 100, y: 200, aim: 255, hp: 5, flags: 17, escape: 0 },
  ],
  enemies: [{ id: 12, kind: 2, x: 10.5, y: 20.25, hp: 8 }],
  boss: { bossId: 0, hp: 1299, maxHp: 1300, phase: 3, folding: true },
};

Deno.test("a whole snapshot round-trips players, enemies and the boss at 1/8 px", () => {
  const { msg } = roundTrip(FIGHT);
  assert.deepEqual(msg, { kind: ServerKind.Snapshot, ackTick: 897, lateTicks: 4, ...FIGHT });
  const empty = { ...FIGHT, boss: null, enemies: [], players: [] };
  assert.deepEqual(roundTrip(empty).msg, {
    kind: ServerKind.Snapshot,
    ackTick: 897,
    lateTicks: 4,
    ...empty,
  });
});

Deno.test("a delta rebuilds exactly, and what did not change costs nothing", () => {
  const base = toSnapshotUnits(FIGHT);
  const same = roundTrip({ ...FIGHT, tick: 903 }, base);
  assert.deepEqual(same.msg.players, FIGHT.players);
  const whole = roundTrip({ ...FIGHT, tick: 903 }).bytes;
  const moved: SnapshotState = {
    ...FIGHT,
    tick: 903,
    players: [
      { ...FIGHT.players[0], x: 652.125, y: 950 },
      { ...FIGHT.players[1], aim: 3 }, // 255 → 3: four steps the short way round
    ],
    boss: { ...FIGHT.boss!, hp: 1290 },
  };
  const delta = roundTrip(moved, base);
  assert.deepEqual(delta.msg.players, moved.players);
  assert.deepEqual(delta.msg.boss, moved.boss);
  assert.deepEqual(delta.msg.enemies, FIGHT.enemies);
  console.log(
    `whole ${whole} B, unchanged ${same.bytes} B, two ships and the boss ${delta.bytes} B`,
  );
  // 11 B: the head and kind, a 2-byte tick, ack, late, slack, base age, a 2-byte body.
  assert.ok(same.bytes <= 11, `an unchanged snapshot is ${same.bytes} B, message and all`);
  assert.ok(delta.bytes < whole * 0.6, `${delta.bytes} B against ${whole} B whole`);
});

/** A random walk of world states: ships join, leave and move, enemies die, the boss comes and goes. */
function randomStates(seed: number, n: number): SnapshotState[] {
  const rng = new Rng(seed);
  const int = (max: number) => Math.floor(rng.next() * (max + 1));
  let nextId = 1;
  const out: SnapshotState[] = [];
  let s: SnapshotState = { tick: 0, stage: 0, wave: 0, players: [], enemies: [], boss: null };
  for (let i = 0; i < n; i++) {
    const players = s.players.filter(() => rng.next() > 0.05).map((p) =>
      rng.next() < 0.3 ? p : {
        ...p,
        x: Math.max(0, Math.min(8191, p.x + (int(400) - 200) / 8)),
        y: Math.max(0, Math.min(8191, p.y + (int(400) - 200) / 8)),
        aim: int(255),
        hp: int(5),
        flags: int(63),
        escape: rng.next() < 0.9 ? p.escape : int(255),
      }
    );
    while (players.length < 4 && rng.next() < 0.3) {
      players.push({
        id: nextId++,
        x: int(8000),
        y: int(8000) / 8,
        aim: 0,
        hp: 5,
        flags: 1,
        escape: 0,
      });
    }
    const enemies = s.enemies.filter(() => rng.next() > 0.1).map((e) => ({
      ...e,
      x: int(65535) / 8,
      hp: Math.max(0, e.hp - int(3)),
    }));
    while (enemies.length < 9 && rng.next() < 0.3) {
      enemies.push({ id: nextId++, kind: int(2), x: int(800), y: int(600), hp: int(16) });
    }
    const boss = rng.next() < 0.1
      ? null
      : { bossId: 0, hp: int(3000), maxHp: 3000, phase: int(3), folding: rng.next() < 0.2 };
    s = {
      tick: s.tick + 3,
      stage: rng.next() < 0.05 ? int(3) : s.stage,
      wave: rng.next() < 0.05 ? int(3) : s.wave,
      players: rng.next() < 0.1 ? [...players].reverse() : players,
      enemies,
      boss,
    };
    out.push(s);
  }
  return out;
}

Deno.test("chains of deltas over random worlds rebuild every snapshot exactly", () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const states = randomStates(seed, 200);
    // Each side keeps its own baseline, as in real life: the server what it encoded, the
    // client what it rebuilt. Rows that come in another order must not set them apart.
    let serverBase: SnapshotUnits | undefined;
    let clientBase: SnapshotUnits | undefined;
    for (const s of states) {
      const units = toSnapshotUnits(s);
      const body = encodeSnapshotBody(units, serverBase);
      const rebuilt = decodeSnapshotBody(body, { tick: s.tick, base: clientBase });
      const msg = fromSnapshotUnits(rebuilt, { ackTick: 0 });
      const byId = <T extends { id: number }>(rows: readonly T[]) =>
        [...rows].sort((a, b) => a.id - b.id);
      assert.deepEqual(msg.players, byId(s.players), `seed ${seed} tick ${s.tick}`);
      assert.deepEqual(msg.enemies, byId(s.enemies), `seed ${seed} tick ${s.tick}`);
      assert.deepEqual(msg.boss, s.boss);
      assert.equal(msg.stage, s.stage);
      assert.equal(msg.wave, s.wave);
      serverBase = units;
      clientBase = rebuilt;
    }
  }
});

Deno.test("sortRows() puts rows in id order in place, and leaves rows in order as they are", () => {
  const rng = new Rng(5);
  for (let n = 0; n < 40; n++) {
    const ids = Array.from({ length: n }, (_, i) => 3 * i + 1);
    const inOrder = ids.map((id) => [id, n]);
    assert.equal(sortRows(inOrder), inOrder);
    assert.deepEqual(inOrder.map((r) => r[0]), ids);
    const shuffled = [...inOrder].sort(() => rng.next() - 0.5);
    const out = sortRows(shuffled);
    assert.equal(out, shuffled, "in place");
    assert.deepEqual(out.map((r) => r[0]), ids, `${n} rows`);
  }
});

Deno.test("every body is its own bytes: one encoded later does not change one sent before", () => {
  // The encoder reuses one writer; what it returns must be a copy (a body waits in a
  // socket's queue while the next members' bodies are written).
  const states = randomStates(9, 60);
  const bodies = states.map((s) => encodeSnapshotBody(toSnapshotUnits(s), undefined));
  const again = states.map((s) => encodeSnapshotBody(toSnapshotUnits(s), undefined));
  assert.deepEqual(bodies, again);
  states.forEach((s, i) => {
    const msg = fromSnapshotUnits(
      decodeSnapshotBody(bodies[i], { tick: s.tick, base: undefined }),
      { ackTick: 0 },
    );
    assert.equal(msg.players.length, s.players.length, `tick ${s.tick}`);
    assert.equal(msg.enemies.length, s.enemies.length, `tick ${s.tick}`);
  });
});

Deno.test("a snapshot field that cannot hold its value is an encoding error, not a wrap", () => {
  const bad = { ...FIGHT, players: [{ ...FIGHT.players[0], x: 9000 }] };
  assert.throws(() => toSnapshotUnits(bad), /snapshot player x: 9000 is outside the u16/);
});

Deno.test("a row is converted exactly as its table's toUnits converts each field, errors too", () => {
  const rng = new Rng(21);
  // On and off the grid, halves (the rounding's edge), beyond each range, and not numbers.
  const value = (max: number): number => {
    const r = rng.next();
    if (r < 0.03) return NaN;
    if (r < 0.06) return -0.5 - Math.floor(rng.next() * 3);
    if (r < 0.1) return max + 1 + Math.floor(rng.next() * 3);
    const whole = Math.floor(rng.next() * max);
    return r < 0.4 ? whole : r < 0.6 ? whole + 0.5 : whole + rng.next();
  };
  // What the table says, field by field (the error of the first field that fails).
  const byTable = (table: typeof PLAYER_SNAP | typeof ENEMY_SNAP, what: string, rec: object) => {
    const values = rec as Record<string, number>;
    try {
      return Object.entries(table).map(([name, field]) =>
        toUnits(values[name], field, `${what} ${name}`)
      );
    } catch (err) {
      return (err as Error).message;
    }
  };
  const ours = (convert: () => number[]) => {
    try {
      return convert();
    } catch (err) {
      assert.ok(err instanceof CodecError);
      return err.message;
    }
  };
  let errors = 0;
  for (let i = 0; i < 3000; i++) {
    const p = {
      id: Math.floor(rng.next() * 70000),
      x: value(8200),
      y: value(8200),
      aim: value(256),
      hp: value(256),
      flags: Math.floor(rng.next() * 256),
      escape: value(256),
    };
    const e = {
      id: Math.floor(rng.next() * 70000),
      kind: Math.floor(rng.next() * 256),
      x: value(8200),
      y: value(8200),
      hp: value(66000),
    };
    const want = byTable(PLAYER_SNAP, "snapshot player", p);
    assert.deepEqual(ours(() => playerUnits(p)), want, `player ${i}`);
    assert.deepEqual(ours(() => enemyUnits(e)), byTable(ENEMY_SNAP, "snapshot enemy", e));
    if (typeof want === "string") errors++;
  }
  assert.ok(errors > 100 && errors < 2900, `both paths exercised (${errors} errors)`);
});

Deno.test("a malformed snapshot body is refused with a CodecError", () => {
  const base = toSnapshotUnits(FIGHT);
  const cases: [string, Uint8Array, SnapshotUnits | undefined, RegExp][] = [
    ["unknown section", new Uint8Array([0x20]), base, /unknown sections/],
    ["no stage in a whole one", new Uint8Array([0]), undefined, /no stage/],
    ["truncated", new Uint8Array([4, 1]), base, /truncated/],
    ["unknown field bits", new Uint8Array([4, 1, 0x40]), base, /unknown bits/],
    ["trailing bytes", new Uint8Array([0, 9]), base, /trailing/],
    ["a new boss in part", new Uint8Array([3 | 16, 2, 2, 1, 0]), undefined, /whole/],
    [
      "a position out of range",
      new Uint8Array([4, 1, 1, 0xfe, 0xff, 0x07, 0]),
      base,
      /out of range/,
    ],
  ];
  for (const [what, body, b, pattern] of cases) {
    assert.throws(() => decodeSnapshotBody(body, { tick: 903, base: b }), (err: unknown) => {
      assert.ok(err instanceof CodecError, what);
      assert.match((err as Error).message, pattern, what);
      return true;
    });
  }
});

/**
 * The format written the plain way, straight from the grammar in snapshot_delta.ts:
 * change bits by a lookup of every baseline row's id, then the flagged bodies in
 * baseline order, then the new rows whole in the order they come. The server's encoder
 * takes a faster road (one merge walk, nothing allocated per row); the bytes must not
 * differ by one.
 */
function referenceEntities(
  cur: readonly (readonly number[])[],
  base: readonly (readonly number[])[],
  types: readonly ("u8" | "u16")[],
): number[] {
  const out: number[] = [];
  const varuint = (v: number) => {
    while (v >= 0x80) {
      out.push((v & 0x7f) | 0x80);
      v = Math.floor(v / 128);
    }
    out.push(v);
  };
  const now = new Map(cur.map((r) => [r[0], r]));
  const bits = new Array(Math.ceil(base.length / 8)).fill(0);
  const bodies: number[] = [];
  const bodyOut = (v: number) => bodies.push(v);
  base.forEach((old, i) => {
    const row = now.get(old[0]);
    if (!row) {
      bits[i >> 3] |= 1 << (i & 7);
      bodyOut(0);
      return;
    }
    let mask = 0;
    for (let f = 1; f < old.length; f++) if (row[f] !== old[f]) mask |= 1 << (f - 1);
    if (mask === 0) return;
    bits[i >> 3] |= 1 << (i & 7);
    bodyOut(mask);
    for (let f = 1; f < old.length; f++) {
      if (row[f] === old[f]) continue;
      // aim (field 3 of a player row) wraps: the shortest way round a 256-unit turn.
      let d = row[f] - old[f];
      if (types.length === 7 && f === 3) d = ((((d + 128) % 256) + 256) % 256) - 128;
      const z = d < 0 ? -2 * d - 1 : 2 * d;
      let v = z;
      while (v >= 0x80) {
        bodyOut((v & 0x7f) | 0x80);
        v = Math.floor(v / 128);
      }
      bodyOut(v);
    }
  });
  out.push(...bits, ...bodies);
  const known = new Set(base.map((r) => r[0]));
  const added = cur.filter((r) => !known.has(r[0]));
  varuint(added.length);
  for (const row of added) {
    row.forEach((v, f) => types[f] === "u8" ? out.push(v) : out.push(v & 0xff, v >> 8));
  }
  return out;
}

Deno.test("entity deltas are byte for byte the format's, with rows joining between and around old ones", () => {
  const rng = new Rng(11);
  const int = (max: number) => Math.floor(rng.next() * (max + 1));
  const PLAYER_TYPES = ["u16", "u16", "u16", "u8", "u8", "u8", "u8"] as const;
  // Ids drawn from a small pool, so a newcomer lands before, between or after the rows held.
  const randomPlayers = () => {
    const ids = [...new Set(Array.from({ length: int(12) }, () => 1 + int(30)))];
    return ids.map((id) => ({
      id,
      x: int(1000) / 8,
      y: int(1000) / 8,
      aim: int(255),
      hp: int(5),
      flags: int(3),
      escape: 0,
    }));
  };
  let checked = 0;
  let prev = toSnapshotUnits({ ...FIGHT, players: randomPlayers() });
  for (let i = 0; i < 250; i++) {
    // Half the time the next one is a small change of this one, half a different crowd.
    const players = rng.next() < 0.5 ? randomPlayers() : prev.players.filter(() => rng.next() > 0.1)
      .map((r) => ({
        id: r[0],
        x: rng.next() < 0.5 ? r[1] / 8 : int(1000) / 8,
        y: r[2] / 8,
        aim: rng.next() < 0.5 ? r[3] : int(255),
        hp: r[4],
        flags: r[5],
        escape: 0,
      }));
    const cur = toSnapshotUnits({ ...FIGHT, tick: prev.tick + 3, players });
    const body = encodeSnapshotBody(cur, prev);
    // sections (players changed, maybe nothing else) then the player section.
    if (body[0] & 4) {
      const expected = referenceEntities(cur.players, prev.players, PLAYER_TYPES);
      assert.deepEqual([...body.subarray(1, 1 + expected.length)], expected, `step ${i}`);
      checked++;
    }
    assert.deepEqual(decodeSnapshotBody(body, { tick: cur.tick, base: prev }), cur);
    prev = cur;
  }
  assert.ok(checked > 180, `compared ${checked} player sections`);
});
