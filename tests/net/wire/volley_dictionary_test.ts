/**
 * The volley-header dictionary: a real boss fight's volleys, batched as an instance
 * batches them, survive one encoder dictionary and one decoder dictionary bit for
 * bit; a header the stream has carried costs a slot number, and a single bullet from
 * the same origin 5 bytes (the uid it starts at is the one the stream expects); a newcomer started from an Enter's export reads on as the
 * members do; more headers than slots recycle the same slots on both sides.
 */
import assert from "node:assert/strict";
import { FOLD } from "../../../content/mod.ts";
import { SimWorld, type Volley, type WorldDef } from "../../../sim/mod.ts";
import { think, viewOfWorld } from "../../../sim/pilot.ts";
import { TICKS_PER_SNAPSHOT } from "../../../content/net_tuning.ts";
import {
  CodecError,
  decodeVolleys,
  encodeVolleys,
  VOLLEY_DICTIONARY_SLOTS,
  VolleyDictionary,
} from "../../../net/wire/mod.ts";

const BOSS_ROOM: WorldDef = { ...FOLD, waves: [], waveDelayTicks: 1 };

/** A boss fight with four pilots: its volleys, grouped in batches as an instance sends them. */
function fightBatches(ticks: number): { baseTick: number; volleys: Volley[] }[] {
  const world = new SimWorld(BOSS_ROOM, { seed: 7 });
  for (let id = 1; id <= 4; id++) world.addPlayer(id, `p${id}`);
  const batches: { baseTick: number; volleys: Volley[] }[] = [];
  for (let t = 0; t < ticks; t++) {
    if (world.tick % TICKS_PER_SNAPSHOT === 0) batches.push({ baseTick: world.tick, volleys: [] });
    const inputs = new Map();
    for (const p of world.players.values()) {
      if (p.status === "active") {
        inputs.set(p.id, think(viewOfWorld(world, p), { tick: world.tick, style: p.id }));
      }
    }
    for (const e of world.step(inputs)) {
      if (e.type === "volley") batches.at(-1)?.volleys.push(e.volley);
    }
  }
  return batches.filter((b) => b.volleys.length > 0);
}

const same = (a: Volley, b: Volley) =>
  assert.deepEqual({ ...b, spec: { ...b.spec } }, { ...a, spec: { ...a.spec } });

Deno.test("a fight's volleys through one dictionary each side arrive bit for bit, for less", () => {
  const batches = fightBatches(2400);
  const enc = new VolleyDictionary();
  const dec = new VolleyDictionary();
  let withDict = 0;
  let without = 0;
  let singles = 0;
  let singleBytes = 0;
  for (const b of batches) {
    // What each enemy single-bullet volley adds to its batch, in the stream as it stands.
    b.volleys.forEach((v, i) => {
      if (v.team !== 0 || v.angles.length !== 1) return;
      const upTo = (n: number) => encodeVolleys(b.volleys.slice(0, n), b.baseTick, cloneOf(enc));
      singles++;
      singleBytes += upTo(i + 1).byteLength - upTo(i).byteLength;
    });
    const bytes = encodeVolleys(b.volleys, b.baseTick, enc);
    withDict += bytes.byteLength;
    without += encodeVolleys(b.volleys, b.baseTick).byteLength;
    const back = decodeVolleys(bytes, b.baseTick, dec);
    assert.equal(back.length, b.volleys.length);
    b.volleys.forEach((v, i) => same(v, back[i]));
  }
  console.log(
    `${batches.length} batches: ${without} B without the dictionary, ${withDict} B with; ` +
      `${singles} single-bullet enemy volleys at ${(singleBytes / singles).toFixed(1)} B each`,
  );
  assert.ok(singles > 50, `the fight fired single-bullet streams (${singles})`);
  assert.ok(withDict < without, "the dictionary saves bytes");
  assert.ok(singleBytes / singles <= 6, "a repeated single bullet costs a few bytes");
});

/** A copy of a dictionary through its export, as a newcomer's Enter carries it. */
function cloneOf(d: VolleyDictionary): VolleyDictionary {
  const c = new VolleyDictionary();
  c.import(d.export());
  return c;
}

Deno.test("a newcomer started from the Enter's export reads on exactly as a member", () => {
  const batches = fightBatches(1800);
  const enc = new VolleyDictionary();
  const member = new VolleyDictionary();
  let newcomer: VolleyDictionary | undefined;
  batches.forEach((b, i) => {
    if (i === Math.floor(batches.length / 2)) newcomer = cloneOf(enc);
    const bytes = encodeVolleys(b.volleys, b.baseTick, enc);
    const a = decodeVolleys(bytes, b.baseTick, member);
    if (newcomer) {
      const c = decodeVolleys(bytes, b.baseTick, newcomer);
      a.forEach((v, k) => same(v, c[k]));
    }
  });
  assert.ok(newcomer, "the newcomer joined mid-fight");
});

Deno.test("more headers than slots: both sides recycle the same slots", () => {
  const enc = new VolleyDictionary();
  const dec = new VolleyDictionary();
  const spec = FOLD.player.shot;
  for (let round = 0; round < 3; round++) {
    for (let k = 0; k < VOLLEY_DICTIONARY_SLOTS + 40; k++) {
      const v: Volley = {
        birthTick: 0,
        uid0: k,
        team: 0,
        owner: -1,
        spec: { ...spec, ttlTicks: 10 + k },
        speedPxPerS: 100,
        xs: [8],
        ys: [16],
        angles: [k * 100],
      };
      same(v, decodeVolleys(encodeVolleys([v], 0, enc), 0, dec)[0]);
    }
  }
});

Deno.test("the decoder refuses an empty slot and an origin it never saw", () => {
  // A fan volley from (0, 0) that defines slot 1 (uid 1: one past the expected 0, zigzag
  // 2; entry 0, the header).
  const define = [0x40, 2, 0, 1, 4, 60, 0, 128, 2, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0];
  const cases: [number[], RegExp][] = [
    [[0x40, 2, 5, 1, 0, 0], /slot 5 is empty/], // entry 5 was never filled
    [[...define, 0x00, 0x81, 1, 0, 0], /no origin 2/], // slot 1 has one origin, not two
    [[...define, 0x01, 0x41, 1, 0, 0, 0, 0], /no origin 1/], // an origin for a line volley
  ];
  for (const [bytes, pattern] of cases) {
    assert.throws(
      () => decodeVolleys(new Uint8Array(bytes), 0, new VolleyDictionary()),
      (err: unknown) => {
        assert.ok(err instanceof CodecError);
        assert.match((err as Error).message, pattern);
        return true;
      },
    );
  }
  // The definition alone decodes: the cases above fail for the reason they name.
  assert.equal(decodeVolleys(new Uint8Array(define), 0, new VolleyDictionary()).length, 1);
});
