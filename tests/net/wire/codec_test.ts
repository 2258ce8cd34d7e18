/** Round trips for every message kind, and the decoder's refusals. */
import assert from "node:assert/strict";
import { Decoder, Encoder } from "cbor-x";
import { NEEDLE, ORB, PLAYER, SPIRAL, WALL_BLOCK } from "../../../content/mod.ts";
import { MAX_INPUT_FRAMES_PER_MESSAGE } from "../../../content/net_tuning.ts";
import {
  CodecError,
  decodeClientMessage,
  decodeServerMessage,
  encodeClientMessage,
  encodeServerMessage,
  encodeSnapshot,
  MessageDecoder,
  MessageEncoder,
} from "../../../net/wire/codec.ts";
import {
  Choice,
  ClientKind,
  type ClientMessage,
  EnterReason,
  NoticeCode,
  Outcome,
  PROTOCOL_VERSION,
  RunStatusCode,
  ServerKind,
  type ServerMessage,
} from "../../../net/wire/protocol.ts";
import { Rng, Team, type Volley } from "../../../sim/mod.ts";
import { ByteReader } from "../../../net/wire/bytes.ts";
import { readRecord } from "../../../net/wire/fields.ts";
import { INPUT_FRAME } from "../../../net/wire/protocol.ts";

const enc = new MessageEncoder();
const dec = () => new MessageDecoder();

function clientRoundTrip(msg: ClientMessage): ClientMessage {
  return decodeClientMessage(dec(), encodeClientMessage(enc, msg));
}

function serverRoundTrip(msg: ServerMessage): ServerMessage {
  return decodeServerMessage(dec(), encodeServerMessage(enc, msg));
}

/** The same items in an indefinite-length array: only the general reader (cbor-x) reads that. */
const general = (b: Uint8Array) => Uint8Array.from([0x9f, ...b.subarray(1), 0xff]);

/** `n` consecutive input frames of random values, the last on tick `newest`. */
function randomFrames(int: (lo: number, hi: number) => number, at: { n: number; newest: number }) {
  const { n, newest } = at;
  return Array.from({ length: n }, (_, k) => ({
    tick: newest - n + 1 + k,
    moveX: int(-100, 100),
    moveY: int(-100, 100),
    aim: int(0, 65535),
    buttons: int(0, 7),
    viewLag: int(0, 20),
  }));
}

Deno.test("hello round-trips with and without a resume token", () => {
  const a = {
    kind: ClientKind.Hello,
    version: PROTOCOL_VERSION,
    name: "Ada",
    content: 0xdeadbeef,
  } as const;
  assert.deepEqual(clientRoundTrip(a), { ...a, resume: undefined });
  const b = { ...a, resume: "tok" } as const;
  assert.deepEqual(clientRoundTrip(b), b);
});

Deno.test("input round-trips three consecutive frames in 6 bytes each", () => {
  const frames = [
    { tick: 41, moveX: -100, moveY: 0, aim: 0, buttons: 0, viewLag: 0 },
    { tick: 42, moveX: 71, moveY: -71, aim: 65535, buttons: 1, viewLag: 17 },
    { tick: 43, moveX: 0, moveY: 100, aim: 16384, buttons: 7, viewLag: 255 },
  ];
  const bytes = encodeClientMessage(enc, { kind: ClientKind.Input, frames });
  assert.ok(bytes.byteLength <= 25, `input message is ${bytes.byteLength} bytes`);
  assert.deepEqual(decodeClientMessage(dec(), bytes), { kind: ClientKind.Input, frames });
});

Deno.test("an input read by hand is what the general reader makes of the same message, broken or not", () => {
  // Each message is read both ways (by hand, and by cbor-x as `general` rewrites it) and
  // must come out the same, or fail both ways.
  const outcome = (b: Uint8Array) => {
    try {
      return decodeClientMessage(dec(), b);
    } catch (err) {
      assert.ok(err instanceof CodecError, String(err));
      return "refused";
    }
  };
  const noGeneralReader = {
    decodeValue: () => assert.fail("the general reader was asked"),
  } as unknown as MessageDecoder;
  const rng = new Rng(7);
  const int = (lo: number, hi: number) => lo + Math.floor(rng.next() * (hi - lo + 1));
  let refused = 0;
  for (let i = 0; i < 3000; i++) {
    const n = 1 + int(0, 7);
    const newest = rng.next() < 0.3 ? int(n - 1, 40) : int(n - 1, 2 ** 32 - 1);
    const frames = randomFrames(int, { n, newest });
    const ack = rng.next() < 0.5 ? undefined : newest - int(0, Math.min(newest, 300));
    const held = ack === undefined || rng.next() < 0.5 ? undefined : int(1, 8);
    const bytes = encodeClientMessage(enc, {
      kind: ClientKind.Input,
      frames,
      snapshotAck: ack,
      snapshotsHeld: held,
    });
    assert.ok(bytes[0] >= 0x83 && bytes[0] <= 0x85 && bytes[1] === ClientKind.Input);
    assert.deepEqual(outcome(bytes), outcome(general(bytes)), `message ${i}`);
    // Every input a client writes is read by hand: the general reader is never asked.
    assert.deepEqual(decodeClientMessage(noGeneralReader, bytes), outcome(bytes));
    // A message cut short is refused (its array still counts the items it lost).
    assert.equal(outcome(bytes.subarray(0, int(1, bytes.length - 1))), "refused");
    // Broken copies: a byte or two after the array's head changed.
    const broken = bytes.slice();
    for (let k = int(1, 2); k > 0; k--) broken[int(1, broken.length - 1)] = int(0, 255);
    const quick = outcome(broken);
    assert.deepEqual(quick, outcome(general(broken)), `broken message ${i}`);
    if (quick === "refused") refused++;
  }
  assert.ok(refused > 500, `${refused} broken messages refused`);
});

/**
 * Input frames as the table and a reader object read them (what unpackInputFrames did
 * before it read by hand): the reference the hand reader is held to. Undefined: refused.
 */
function referenceFrames(packed: Uint8Array): number[][] | undefined {
  try {
    const r = new ByteReader(packed, "input frames");
    let f = readRecord(r, INPUT_FRAME);
    const out = [[f.moveX, f.moveY, f.aim, f.buttons, f.viewLag]];
    while (r.remaining > 0) {
      const change = r.u8();
      if (change & ~15) return undefined;
      const moveX = change & 1 ? r.i8() : f.moveX;
      const moveY = change & 1 ? r.i8() : f.moveY;
      const turn = change & 2 ? r.varint() : 0;
      if (turn < -0x8000 || turn > 0x7fff) return undefined;
      f = {
        moveX,
        moveY,
        aim: (f.aim + turn + 0x10000) & 0xffff,
        buttons: change & 4 ? r.u8() : f.buttons,
        viewLag: change & 8 ? r.u8() : f.viewLag,
      };
      out.push([f.moveX, f.moveY, f.aim, f.buttons, f.viewLag]);
    }
    const bad = out.some(([x, y, , buttons]) =>
      Math.abs(x) > 100 || Math.abs(y) > 100 || buttons > 7
    );
    return bad || out.length > MAX_INPUT_FRAMES_PER_MESSAGE ? undefined : out;
  } catch {
    return undefined;
  }
}

Deno.test("input frames read by hand are what the table's reader makes of them, whole, broken or cut short", () => {
  const cbor = new Encoder({ useRecords: false });
  const rng = new Rng(23);
  const int = (lo: number, hi: number) => lo + Math.floor(rng.next() * (hi - lo + 1));
  const read = (packed: Uint8Array) => {
    try {
      const msg = decodeClientMessage(dec(), cbor.encode([ClientKind.Input, 1000, packed]));
      assert.ok(msg.kind === ClientKind.Input);
      return msg.frames.map((f) => [f.moveX, f.moveY, f.aim, f.buttons, f.viewLag]);
    } catch (err) {
      assert.ok(err instanceof CodecError, String(err));
      return undefined;
    }
  };
  let refused = 0;
  for (let i = 0; i < 3000; i++) {
    const n = 1 + int(0, MAX_INPUT_FRAMES_PER_MESSAGE - 1);
    const frames = randomFrames(int, { n, newest: 1000 });
    // Small turns too: a varint of one byte as well as of three.
    if (rng.next() < 0.5) frames.forEach((f, k) => f.aim = (k * int(0, 60)) & 0xffff);
    const bytes = encodeClientMessage(enc, { kind: ClientKind.Input, frames });
    const packed = (new Decoder({ useRecords: false }).decode(bytes) as unknown[])[2] as Uint8Array;
    const whole = read(packed);
    assert.deepEqual(whole, frames.map((f) => [f.moveX, f.moveY, f.aim, f.buttons, f.viewLag]));
    assert.deepEqual(whole, referenceFrames(packed), `message ${i}`);
    const cut = packed.subarray(0, int(0, packed.length - 1));
    assert.deepEqual(read(cut), referenceFrames(cut), `message ${i} cut to ${cut.length}`);
    const broken = packed.slice();
    for (let k = int(1, 3); k > 0; k--) broken[int(0, broken.length - 1)] = int(0, 255);
    const got = read(broken);
    assert.deepEqual(got, referenceFrames(broken), `broken message ${i}`);
    if (got === undefined) refused++;
  }
  assert.ok(refused > 300, `${refused} broken payloads refused`);
});

Deno.test("a decoder that reuses input frames reads every message as a new decoder does", () => {
  const lender = new MessageDecoder({ reuseInputFrames: true });
  const rng = new Rng(11);
  const int = (lo: number, hi: number) => lo + Math.floor(rng.next() * (hi - lo + 1));
  let first: unknown;
  for (let i = 0; i < 500; i++) {
    // Every count a message may carry, read by hand and by the general reader.
    const n = 1 + (i % MAX_INPUT_FRAMES_PER_MESSAGE);
    const newest = int(n - 1, 100_000);
    const frames = randomFrames(int, { n, newest });
    const bytes = encodeClientMessage(enc, { kind: ClientKind.Input, frames });
    for (const b of [bytes, general(bytes)]) {
      const msg = decodeClientMessage(lender, b);
      assert.deepEqual(msg, decodeClientMessage(dec(), b), `message ${i}`);
      assert.ok(msg.kind === ClientKind.Input);
      // The same objects each time: lent until the next decode, never made anew.
      first ??= msg.frames[0];
      assert.equal(msg.frames[0], first);
    }
    // A message refused halfway leaves the next one whole.
    assert.throws(() => decodeClientMessage(lender, bytes.subarray(0, bytes.length - 1)));
  }
});

Deno.test("a hello of another protocol version decodes to its version alone, whatever follows", () => {
  // The server must be able to answer "reload the page" to any older or newer client.
  const cbor = new Encoder({ useRecords: false, tagUint8Array: false });
  for (const raw of [[1, 1, "Ada"], [1, PROTOCOL_VERSION + 1, { odd: true }, "x", 5], [1, 0]]) {
    const msg = decodeClientMessage(dec(), cbor.encode(raw));
    assert.equal(msg.kind, ClientKind.Hello);
    if (msg.kind === ClientKind.Hello) assert.equal(msg.version, raw[1]);
  }
});

Deno.test("ping round-trips", () => {
  const msg = { kind: ClientKind.Ping, clientTimeMs: 123456 } as const;
  assert.deepEqual(clientRoundTrip(msg), msg);
});

Deno.test("encodeClientMessage() refuses a server decision dressed as a client message", () => {
  const forged = {
    kind: 9,
    instanceId: "hub",
    reason: EnterReason.Escape,
  } as unknown as ClientMessage;
  assert.throws(() => encodeClientMessage(enc, forged), CodecError);
  // No server kind shares a number with a client kind, so none can be encoded as one.
  for (const kind of Object.values(ServerKind)) {
    const forgedServer = { kind, instanceId: "hub", reason: 2 } as unknown as ClientMessage;
    assert.throws(() => encodeClientMessage(enc, forgedServer), /not a client kind/);
  }
});

Deno.test("welcome, reject, pong, notice and token round-trip", () => {
  const token = `${"A".repeat(150)}.${"B".repeat(22)}`;
  for (
    const msg of [
      { kind: ServerKind.Welcome, version: 1, playerId: 65535, resume: token, graceMs: 15000 },
      { kind: ServerKind.Reject, code: 4001, reason: "protocol version 0 is not supported" },
      { kind: ServerKind.Pong, clientTimeMs: 99, tick: 1234567, heldMs: 17 },
      { kind: ServerKind.Notice, code: NoticeCode.ResumeExpired, text: "the run went on" },
      { kind: ServerKind.Notice, code: NoticeCode.Draining, text: "restarting in 300 s" },
      { kind: ServerKind.Token, resume: token },
    ] as ServerMessage[]
  ) assert.deepEqual(serverRoundTrip(msg), msg);
  const d = new MessageDecoder();
  assert.throws(
    () => decodeServerMessage(d, enc.encodeValue([ServerKind.Notice, 99, "what"])),
    /notice code/,
  );
  assert.throws(
    () => decodeServerMessage(d, enc.encodeValue([ServerKind.Token, "x".repeat(193)])),
    /resume token/,
  );
  assert.throws(
    () => decodeServerMessage(d, enc.encodeValue([ServerKind.Welcome, 1, 2])),
    /welcome/,
  );
});

Deno.test("a hello carries a resume token of up to 192 characters", () => {
  const d = new MessageDecoder();
  const resume = "t".repeat(192);
  const hello: ClientMessage = {
    kind: ClientKind.Hello,
    version: PROTOCOL_VERSION,
    name: "Ada",
    content: 7,
    resume,
  };
  const back = decodeClientMessage(d, encodeClientMessage(enc, hello));
  assert.ok(back.kind === ClientKind.Hello && back.resume === resume);
  assert.throws(
    () => decodeClientMessage(d, encodeClientMessage(enc, { ...hello, resume: resume + "t" })),
    /hello resume/,
  );
});

Deno.test("enter round-trips the roster and every bullet's full state", () => {
  const msg: ServerMessage = {
    kind: ServerKind.Enter,
    instanceId: "dungeon-3",
    worldId: 1,
    tick: 5000,
    reason: EnterReason.Portal,
    roster: [{ id: 1, name: "Ada" }, { id: 2, name: "Bo" }],
    stage: 1,
    bullets: [{
      uid: 77,
      x: 100.125,
      y: 200.5,
      dirX: Math.SQRT1_2,
      dirY: -Math.SQRT1_2,
      speed: 2.3333333333333335,
      accel: 0.025,
      turnCos: Math.cos(0.01),
      turnSin: Math.sin(0.01),
      radius: 7,
      ttl: 300,
      kind: 1,
      team: 0,
      damage: 1,
      owner: -1,
    }],
    volleyDictionary: new Uint8Array([0, 0, 0, 0, 0, 0]),
  };
  const back = serverRoundTrip(msg);
  assert.ok(back.kind === ServerKind.Enter);
  assert.deepEqual({ ...back, volleyDictionary: [...back.volleyDictionary!] }, {
    ...msg,
    volleyDictionary: [0, 0, 0, 0, 0, 0],
  });
});

function volley(over: Partial<Volley>): Volley {
  return {
    birthTick: 10,
    uid0: 500,
    team: Team.Enemy,
    owner: -1,
    spec: ORB,
    speedPxPerS: 140,
    xs: [5120, 5120, 5120],
    ys: [1120, 1120, 1120],
    angles: [0, 21845, 43690],
    ...over,
  };
}

Deno.test("events round-trip fan, line, scattered and player-shot volleys bit for bit", () => {
  const volleys: Volley[] = [
    volley({}),
    volley({
      uid0: 503,
      spec: WALL_BLOCK,
      speedPxPerS: 110,
      xs: [144, 432],
      ys: [-72, -72],
      angles: [16384, 16384],
    }),
    volley({ uid0: 505, spec: SPIRAL, speedPxPerS: 40, xs: [1, 2], ys: [3, 4], angles: [5, 6] }),
    volley({
      uid0: 9000,
      team: Team.Player,
      owner: 4,
      spec: PLAYER.shot,
      speedPxPerS: PLAYER.shotSpeedPxPerS,
      xs: [800],
      ys: [7000],
      angles: [49152],
    }),
    volley({ uid0: 9001, spec: NEEDLE, speedPxPerS: 220, xs: [8], ys: [8], angles: [100] }),
  ];
  const msg: ServerMessage = {
    kind: ServerKind.Events,
    tick: 10,
    volleys,
    hits: [{ uid: 42, target: 2, targetId: 0, damage: 1.25 }],
    events: [
      { type: "playerHit", playerId: 3, hp: 4 },
      { type: "playerJoined", playerId: 5, name: "Zoë" },
      { type: "escapeCancelled", playerId: 5, reason: "died" },
      { type: "bossSpawned", bossId: 0, maxHp: 1300, tick: 9 },
    ],
  };
  const back = serverRoundTrip(msg);
  assert.equal(back.kind, ServerKind.Events);
  if (back.kind !== ServerKind.Events) return;
  assert.deepEqual(back.hits, msg.hits);
  assert.deepEqual(back.events, msg.events);
  assert.equal(back.volleys.length, volleys.length);
  for (const [i, v] of volleys.entries()) {
    const b: Volley = back.volleys[i];
    assert.deepEqual(
      { ...b, spec: { ...b.spec } },
      { ...v, spec: { ...v.spec } },
      `volley ${i} survives the wire exactly`,
    );
  }
});

Deno.test("a player shot costs under 10 bytes on the wire and a ring of 16 under 4 per bullet", () => {
  const shot = volley({
    team: Team.Player,
    owner: 1,
    spec: PLAYER.shot,
    speedPxPerS: PLAYER.shotSpeedPxPerS,
    xs: [1],
    ys: [1],
    angles: [1],
  });
  const ring = volley({
    uid0: 501,
    xs: Array(16).fill(5120),
    ys: Array(16).fill(1120),
    angles: Array.from({ length: 16 }, (_, i) => i * 4096),
  });
  const one = (vs: Volley[]) =>
    encodeServerMessage(enc, {
      kind: ServerKind.Events,
      tick: 1,
      volleys: vs,
      hits: [],
      events: [],
    })
      .byteLength;
  const empty = one([]);
  assert.ok(one([shot]) - empty <= 13, `player shot: ${one([shot]) - empty} bytes`);
  assert.ok((one([ring]) - empty) / 16 < 4, `ring: ${(one([ring]) - empty) / 16} bytes/bullet`);
});

Deno.test("choice round-trips both answers", () => {
  for (const choice of [Choice.Hub, Choice.Again]) {
    assert.deepEqual(clientRoundTrip({ kind: ClientKind.Choice, choice }), {
      kind: ClientKind.Choice,
      choice,
    });
  }
});

Deno.test("results round-trip every row, damage to the hundredth", () => {
  const msg: ServerMessage = {
    kind: ServerKind.Results,
    outcome: Outcome.Wiped,
    worldId: 1,
    durationTicks: 12_345,
    rows: [
      { id: 3, name: "Ann", damageDealt: 123.75, hitsTaken: 5, grazes: 41, status: 1 },
      { id: 9, name: "Bo", damageDealt: 0, hitsTaken: 0, grazes: 0, status: RunStatusCode.left },
    ],
  };
  assert.deepEqual(serverRoundTrip(msg), msg);
  const cbor = new Encoder({ useRecords: false, tagUint8Array: false });
  assert.throws(
    () => decodeServerMessage(dec(), cbor.encode([17, 5, 1, 10, []])),
    /outcome/,
  );
  assert.throws(
    () => decodeServerMessage(dec(), cbor.encode([17, 0, 1, 10, [[1, "A", -1, 0, 0, 0]]])),
    /results damage/,
  );
});

Deno.test("the decoder refuses garbage, truncation, wrong types, bad ranges and unknown kinds", () => {
  const cbor = new Encoder({ useRecords: false, tagUint8Array: false });
  const cases: [string, Uint8Array, RegExp][] = [
    ["garbage", new Uint8Array([0xff, 0x00, 0x13, 0x37]), /Cannot decode/],
    [
      "truncated",
      encodeClientMessage(enc, {
        kind: ClientKind.Hello,
        version: PROTOCOL_VERSION,
        name: "Ada",
        content: 1,
      }).slice(0, 4),
      /Cannot decode/,
    ],
    ["not an array", cbor.encode({ kind: 1 }), /expected an array/],
    ["unknown kind", cbor.encode([99]), /unknown kind/],
    ["string kind", cbor.encode(["1", 1, "x"]), /unknown kind/],
    ["hello version text", cbor.encode([1, "1", "Ada"]), /hello version/],
    ["hello name number", cbor.encode([1, PROTOCOL_VERSION, 5, 1]), /hello name/],
    ["hello without content", cbor.encode([1, PROTOCOL_VERSION, "Ada"]), /hello: 3 items/],
    ["hello content text", cbor.encode([1, PROTOCOL_VERSION, "Ada", "x"]), /hello content/],
    ["hello content negative", cbor.encode([1, PROTOCOL_VERSION, "Ada", -1]), /hello content/],
    ["input NaN tick", cbor.encode([2, NaN, new Uint8Array(6)]), /input tick/],
    ["input Infinity tick", cbor.encode([2, Infinity, new Uint8Array(6)]), /input tick/],
    ["input huge tick", cbor.encode([2, 2 ** 40, new Uint8Array(6)]), /input tick/],
    ["input frames not bytes", cbor.encode([2, 5, [1, 2, 3, 4, 5, 6]]), /expected bytes/],
    ["input frames empty", cbor.encode([2, 5, new Uint8Array(0)]), /truncated/],
    [
      "input frame cut short",
      cbor.encode([2, 5, new Uint8Array([0, 0, 0, 0, 0, 0, 1, 5])]),
      /trunc/,
    ],
    ["input 13 frames", cbor.encode([2, 50, new Uint8Array(18)]), /more than 12 frames/],
    [
      "input unknown change bits",
      cbor.encode([2, 5, new Uint8Array([0, 0, 0, 0, 0, 0, 16])]),
      /change/,
    ],
    [
      "input later move out of range",
      cbor.encode([2, 5, new Uint8Array([0, 0, 0, 0, 0, 0, 1, 0, 101])]),
      /outside/,
    ],
    ["input snapshot ack text", cbor.encode([2, 5, new Uint8Array(6), "9"]), /snapshot ack/],
    [
      "input move out of range",
      cbor.encode([2, 5, new Uint8Array([127, 0, 0, 0, 0, 0])]),
      /outside/,
    ],
    ["input unknown button", cbor.encode([2, 5, new Uint8Array([0, 0, 0, 0, 8, 0])]), /button/],
    ["input tick underflow", cbor.encode([2, 1, new Uint8Array(17)]), /too small/],
    ["ping negative", cbor.encode([3, -1]), /ping time/],
    ["choice out of range", cbor.encode([4, 2]), /choice/],
    ["choice text", cbor.encode([4, "again"]), /choice/],
    ["extra fields", cbor.encode([3, 1, 2]), /items/],
    ["oversized", new Uint8Array(4096), /exceeds/],
  ];
  for (const [what, bytes, pattern] of cases) {
    assert.throws(() => decodeClientMessage(dec(), bytes), (err: unknown) => {
      assert.ok(err instanceof CodecError, `${what}: CodecError`);
      assert.match((err as Error).message, pattern, what);
      return true;
    });
  }
});

Deno.test("the server-message decoder refuses a truncated volley record", () => {
  const msg: ServerMessage = {
    kind: ServerKind.Events,
    tick: 1,
    volleys: [volley({})],
    hits: [],
    events: [],
  };
  const cbor = new Encoder({ useRecords: false, tagUint8Array: false });
  const good = decodeServerMessage(dec(), encodeServerMessage(enc, msg));
  assert.equal(good.kind, ServerKind.Events);
  // Explicit uid 1, a new header (entry 0), then one byte of its ten.
  const raw = [
    ServerKind.Events,
    1,
    new Uint8Array([0x40, 1, 0, 0, 0, 0, 1]),
    new Uint8Array(0),
    [],
  ];
  assert.throws(() => decodeServerMessage(dec(), cbor.encode(raw)), /truncated/);
});

Deno.test("small events decode to typed objects and refuse a wrong shape, range or name", () => {
  const cbor = new Encoder({ useRecords: false, tagUint8Array: false });
  const events = (list: unknown[]) =>
    cbor.encode([ServerKind.Events, 1, new Uint8Array(0), new Uint8Array(0), list]);
  const good = decodeServerMessage(dec(), events([[6, 3, 1], [11, 0, 400, 77]]));
  assert.equal(good.kind, ServerKind.Events);
  if (good.kind === ServerKind.Events) {
    assert.deepEqual(good.events, [
      { type: "escapeCancelled", playerId: 3, reason: "released" },
      { type: "bossSpawned", bossId: 0, maxHp: 400, tick: 77 },
    ]);
  }
  const cases: [string, unknown[], RegExp][] = [
    ["unknown code", [99, 1], /unknown code 99/],
    ["missing field", [2, 3], /playerHit: 2 items, expected 3/],
    ["extra field", [3, 3, 4], /playerDied: 3 items, expected 2/],
    ["hp out of range", [2, 3, 256], /playerHit hp: 256 is outside/],
    ["reason out of range", [6, 3, 3], /escapeCancelled reason/],
    ["name not text", [14, 3, 5], /playerJoined name: expected text/],
    ["id not integer", [3, 1.5], /playerDied playerId: expected an integer/],
  ];
  for (const [what, event, pattern] of cases) {
    assert.throws(() => decodeServerMessage(dec(), events([event])), pattern, what);
  }
  assert.throws(
    () =>
      encodeServerMessage(enc, {
        kind: ServerKind.Events,
        tick: 1,
        volleys: [],
        hits: [],
        events: [{ type: "playerHit", playerId: 1, hp: -1 }],
      }),
    /Cannot encode playerHit hp: -1 is not an integer in \[0, 255\]/,
  );
});

Deno.test("an Events batch written by hand is byte for byte what cbor-x writes, at every size", () => {
  const cbor = new Encoder({ useRecords: false, tagUint8Array: false, variableMapSize: true });
  const plain = new Decoder({ useRecords: false });
  const rng = new Rng(9);
  const edges = [0, 1, 23, 24, 255, 256, 65535, 65536, 0xffffffff];
  const edge = (max: number) => Math.min(max, edges[Math.floor(rng.next() * edges.length)]);
  // Counts that cross the CBOR head boundaries of the event list and of the packed hits.
  for (const count of [0, 1, 23, 24, 25, 255, 256, 300]) {
    const events = Array.from(
      { length: count },
      (_, i) =>
        i % 3 === 0
          ? { type: "graze" as const, playerId: edge(65535), total: edge(0xffffffff) }
          : i % 3 === 1
          ? { type: "bossSpawned" as const, bossId: edge(255), maxHp: edge(0xffffffff), tick: i }
          : { type: "playerHit" as const, playerId: edge(65535), hp: edge(255) },
    );
    const hits = Array.from({ length: count }, (_, i) => ({
      uid: 100_000 + 3 * i,
      target: i % 3,
      targetId: edge(65535),
      damage: 1,
    }));
    for (const withText of [false, true]) {
      const tick = edge(0xffffffff - 1);
      const msg: ServerMessage = {
        kind: ServerKind.Events,
        tick,
        volleys: count > 0
          ? [volley({ birthTick: tick, uid0: 7, xs: [1], ys: [2], angles: [3] })]
          : [],
        hits,
        // Text goes through cbor-x itself: the same bytes either way.
        events: withText ? [...events, { type: "playerJoined", playerId: 1, name: "Zoë" }] : events,
      };
      const bytes = encodeServerMessage(enc, msg);
      assert.deepEqual(
        [...bytes],
        [...cbor.encode(plain.decode(bytes))],
        `${count} events${withText ? " and a name" : ""}`,
      );
      const back = decodeServerMessage(dec(), bytes);
      assert.ok(back.kind === ServerKind.Events);
      assert.deepEqual(back.events, msg.events);
      assert.equal(back.hits.length, count);
    }
  }
});

Deno.test("a snapshot written by hand is byte for byte what cbor-x writes, and decodes the same", () => {
  const cbor = new Encoder({ useRecords: false, tagUint8Array: false, variableMapSize: true });
  const rng = new Rng(5);
  // Arguments at and across every CBOR size boundary, both signs (ackTick may lead the tick).
  const edges = [0, 1, 23, 24, 255, 256, 65535, 65536, 0xffffffff - 70000];
  const pick = () => edges[Math.floor(rng.next() * edges.length)] + Math.floor(rng.next() * 3);
  for (let i = 0; i < 500; i++) {
    const tick = pick();
    const body = new Uint8Array([0, 23, 24, 255].includes(i % 300) ? i % 300 : pick() % 300)
      .map((_, k) => (k * 37 + i) & 0xff);
    const msg = {
      tick,
      ackTick: tick - (rng.next() < 0.5 ? pick() : -pick()),
      lateTicks: Math.floor(rng.next() * 300),
      slackTicks: rng.next() < 0.3 ? undefined : Math.floor(rng.next() * 300),
      baseTick: rng.next() < 0.3 ? undefined : tick - (pick() % 100),
      body,
      epoch: rng.next() < 0.5 ? undefined : Math.floor(rng.next() * 256),
    };
    const fields: unknown[] = [
      ServerKind.Snapshot,
      msg.tick,
      msg.tick - msg.ackTick,
      Math.min(255, msg.lateTicks),
      // 0: no frame arrived; else one more than the slack, at most 254.
      msg.slackTicks === undefined ? 0 : Math.min(254, msg.slackTicks) + 1,
      msg.baseTick === undefined ? 0 : msg.tick - msg.baseTick,
      msg.body,
    ];
    if (msg.epoch !== undefined) fields.push(msg.epoch);
    assert.deepEqual([...encodeSnapshot(enc, msg)], [...cbor.encode(fields)], `case ${i}`);
    // The decoder's own ranges are narrower (ack and base ages): a plausible one decodes.
    const plausible = {
      ...msg,
      ackTick: Math.max(-1, tick - 1 - (pick() % 200)),
      baseTick: msg.baseTick === undefined || tick < 3 ? undefined : tick - 3,
    };
    const back = decodeServerMessage(dec(), encodeSnapshot(enc, plausible));
    assert.ok(back.kind === ServerKind.Snapshot);
    assert.deepEqual(
      [back.tick, back.ackTick, back.baseTick, back.epoch],
      [tick, plausible.ackTick, plausible.baseTick, msg.epoch],
    );
    assert.equal(
      back.slackTicks,
      msg.slackTicks === undefined ? undefined : Math.min(254, msg.slackTicks),
    );
    assert.equal(back.lateTicks, Math.min(255, msg.lateTicks));
    assert.deepEqual([...back.body], [...body]);
  }
});

Deno.test("an input datagram's snapshot ack travels as its age from the newest frame: one byte", () => {
  const enc = new MessageEncoder();
  const frame = { moveX: 0, moveY: 0, aim: 0, buttons: 0, viewLag: 0 };
  const input = (tick: number, snapshotAck: number) => ({
    kind: ClientKind.Input,
    frames: [{ ...frame, tick }],
    snapshotAck,
    snapshotsHeld: 0xff,
  } as const);
  const near = encodeClientMessage(enc, input(100_000, 99_991));
  const plain = encodeClientMessage(enc, { ...input(100_000, 0), snapshotAck: undefined });
  // kind, tick, frames as before; then the age (9) and the held bits (0xff: 2 bytes).
  assert.equal(near.byteLength - plain.byteLength, 1 + 2);
  for (const [tick, ack] of [[100_000, 99_991], [5, 0], [0xffffffff, 3], [40, 52]]) {
    const back = decodeClientMessage(
      new MessageDecoder(),
      encodeClientMessage(enc, input(tick, ack)),
    );
    assert.ok(back.kind === ClientKind.Input);
    assert.equal(back.snapshotAck, ack, `tick ${tick}, ack ${ack}`);
  }
  // An age that would put the ack outside 0…2³²−1 is refused. (The frames: bytes 4–9 of
  // [0x85, kind, tick, 0x46 (6 bytes follow), frame, age, held].)
  const frames = encodeClientMessage(enc, input(5, 0)).subarray(4, 10);
  const bad = new Encoder({ useRecords: false }).encode([ClientKind.Input, 5, frames, 6]);
  assert.throws(() => decodeClientMessage(new MessageDecoder(), bad), /snapshot ack age/);
});
