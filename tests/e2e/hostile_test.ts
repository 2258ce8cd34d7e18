/**
 * A hostile client over real WebSockets: the real app on Deno.serve at 127.0.0.1,
 * GameServers on the real clock, an honest ClientRuntime playing in the hub, and
 * 10,000 hostile frames of eight kinds: random garbage, truncated CBOR, wrong
 * types, huge numbers, NaN and Infinity, replayed and future ticks, and floods.
 *
 * Every frame that breaks the codec closes its socket with 4000, so those kinds
 * use one socket per frame, opened one after another (never more than three
 * sockets from 127.0.0.1, under the default per-IP limit of 8). Replays and future
 * ticks are valid messages that the input audit drops without a close; thousands
 * of them on one socket would trip the rate budget first, so phase 1 runs on a
 * server whose message and byte budgets are raised out of the way: there each kind
 * meets its own validation. Floods are phase 2, on a server with the default limits.
 * Throughout, the server must keep ticking at 60 Hz and the honest client must get
 * its snapshots at the normal rate; an error thrown from a socket handler would
 * surface as an uncaught error and fail the test.
 */
import { CONTENT_HASH } from "../../content/mod.ts";
import assert from "node:assert/strict";
import { INPUT_LIMITS, LIMITS, SNAPSHOT_HZ } from "../../content/net_tuning.ts";
import {
  CodecError,
  decodeClientMessage,
  encodeClientMessage,
  MessageDecoder,
  MessageEncoder,
} from "../../net/wire/codec.ts";
import {
  ClientKind,
  type ClientMessage,
  CloseCode,
  PROTOCOL_VERSION,
  ServerKind,
  type SnapshotWireMsg,
} from "../../net/wire/protocol.ts";
import type { InputVerdict } from "../../sim/mod.ts";
import { Rng } from "../../sim/mod.ts";
import { connectClient, type GameClient } from "../../net/client/connect.ts";
import type { GameServer } from "../../net/server/server.ts";
import { frame, LiveServer, LiveSocket, paddedPing } from "../net/_harness.ts";

const TOTAL_FRAMES = 10_000;

/** Hostile frames of each kind. */
const PLAN = {
  garbage: 1000,
  truncated: 1000,
  wrongTypes: 1000,
  hugeNumbers: 1000,
  nanInfinity: 1000,
  replay: 1500,
  future: 1500,
  flood: 2000,
} as const;
type Category = keyof typeof PLAN;

/** Kinds whose every frame must close its socket with BadMessage. */
const CLOSING = ["garbage", "truncated", "wrongTypes", "hugeNumbers", "nanInfinity"] as const;
type ClosingCategory = (typeof CLOSING)[number];

/** Phase 1's budgets: high enough that no hostile kind but a flood can reach them. */
const GENEROUS_RATES = {
  maxMessagesPerSec: 1_000_000,
  maxBytesPerSec: 100_000_000,
  // Thousands of sockets from 127.0.0.1, one after another: past any one address's budget.
  connectBurstPerIp: 1_000_000,
};

/** Shortest window over which the honest client's rates are measured. */
const MIN_WINDOW_MS = 2000;

/** Late ticks allowed per phase: one process runs server and clients on two busy cores. */
const MAX_LATE_TICKS = 3;

const encoder = new MessageEncoder();
const localDecoder = new MessageDecoder();

function int(rng: Rng, below: number): number {
  return Math.floor(rng.next() * below);
}

function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[int(rng, items.length)];
}

/** True when the server's own codec refuses `bytes` (the precondition of a closing kind). */
function refusedByCodec(bytes: Uint8Array): boolean {
  try {
    decodeClientMessage(localDecoder, bytes);
    return false;
  } catch (err) {
    if (err instanceof CodecError) return true;
    throw err;
  }
}

// ---------------------------------------------------------------- hostile frames

/** A random valid message: a hello, an input of 1–3 frames, or a ping. */
function validMessage(rng: Rng): Uint8Array {
  let msg: ClientMessage;
  switch (int(rng, 3)) {
    case 0:
      msg = {
        kind: ClientKind.Hello,
        version: PROTOCOL_VERSION,
        name: `Player ${int(rng, 1e6)}`,
        content: CONTENT_HASH,
      };
      break;
    case 1: {
      const n = 1 + int(rng, 3);
      const oldest = int(rng, 1e6);
      const frames = Array.from({ length: n }, (_, i) =>
        frame(oldest + i, {
          moveX: int(rng, 201) - 100,
          moveY: int(rng, 201) - 100,
          aim: int(rng, 65536),
          buttons: int(rng, 4),
        }));
      msg = { kind: ClientKind.Input, frames };
      break;
    }
    default:
      msg = { kind: ClientKind.Ping, clientTimeMs: int(rng, 2 ** 32) };
  }
  return encodeClientMessage(encoder, msg);
}

const WRONG_TYPES: readonly ((rng: Rng) => unknown)[] = [
  () => [ClientKind.Hello, String(PROTOCOL_VERSION), "Name", CONTENT_HASH],
  (r) => [ClientKind.Hello, PROTOCOL_VERSION, int(r, 1e6), CONTENT_HASH],
  () => [ClientKind.Hello, PROTOCOL_VERSION, { name: "Map" }, CONTENT_HASH],
  () => [ClientKind.Hello, PROTOCOL_VERSION, new Uint8Array([0x41, 0x42]), CONTENT_HASH],
  () => [ClientKind.Hello, PROTOCOL_VERSION, ["Array"], CONTENT_HASH],
  (r) => [ClientKind.Hello, PROTOCOL_VERSION, "Resume", CONTENT_HASH, int(r, 100)],
  () => [ClientKind.Hello, PROTOCOL_VERSION, "Content", String(CONTENT_HASH)],
  (r) => [ClientKind.Input, String(int(r, 1e6)), new Uint8Array(6)],
  (r) => [ClientKind.Input, { tick: int(r, 1e6) }, new Uint8Array(6)],
  (r) => [ClientKind.Input, [int(r, 1e6)], new Uint8Array(6)],
  (r) => [ClientKind.Input, int(r, 1e6), [0, 0, 0, 0, 0]],
  (r) => [ClientKind.Input, int(r, 1e6), "fives"],
  (r) => [ClientKind.Input, int(r, 1e6), { moveX: 1 }],
  (r) => [ClientKind.Input, int(r, 1e6) + 0.5, new Uint8Array(6)],
  () => [ClientKind.Input, null, new Uint8Array(6)],
  () => [ClientKind.Ping, "now"],
  (r) => [ClientKind.Ping, [int(r, 1e6)]],
  (r) => [ClientKind.Ping, { t: int(r, 1e6) }],
  () => [ClientKind.Ping, null],
  () => [ClientKind.Ping, true],
  (r) => [ClientKind.Ping, int(r, 1e6) + 0.25],
  () => ["ping", 5],
  () => [[ClientKind.Ping], 5],
  () => [{ kind: ClientKind.Ping }, 5],
  () => ({ kind: ClientKind.Ping, clientTimeMs: 5 }),
  () => "hello",
  (r) => int(r, 1e6),
  () => new Uint8Array([ClientKind.Ping, 5]),
  () => [],
];

const HUGE: readonly unknown[] = [
  2 ** 53,
  -(2 ** 60),
  1e300,
  -1e300,
  2 ** 32,
  2 ** 64,
  Number.MAX_VALUE,
  -(2 ** 31),
  2n ** 64n - 1n,
  -(2n ** 63n),
  2n ** 100n,
];

/** Numeric slots of each client message, filled with a given value. */
const NUMERIC_SLOTS: readonly ((v: unknown) => unknown)[] = [
  (v) => [ClientKind.Ping, v],
  (v) => [ClientKind.Input, v, new Uint8Array(6)],
  (v) => [ClientKind.Hello, v, "Numbers"],
  (v) => [ClientKind.Hello, PROTOCOL_VERSION, "Numbers", v],
  (v) => [v, 5],
  (v) => [v, PROTOCOL_VERSION, "Numbers"],
];

/** Headers claiming lengths of 2^32 − 1 and 2^64 − 1 in a frame of a few bytes. */
const LENGTH_BOMBS: readonly number[][] = [
  [0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
  [0x9a, 0xff, 0xff, 0xff, 0xff],
  [0x9a, 0x7f, 0xff, 0xff, 0xff],
  [0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
  [0x7a, 0xff, 0xff, 0xff, 0xff],
  [0xbb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
  [0x83, ClientKind.Input, 0x01, 0x5a, 0xff, 0xff, 0xff, 0xff],
  [0x83, ClientKind.Hello, 0x01, 0x7b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
];

/** NaN and ±Infinity as CBOR half, single and double floats (payload and sign bits too). */
const NON_FINITE_FLOATS: readonly number[][] = [
  [0xf9, 0x7e, 0x00],
  [0xf9, 0x7c, 0x00],
  [0xf9, 0xfc, 0x00],
  [0xf9, 0x7e, 0x01],
  [0xfa, 0x7f, 0xc0, 0x00, 0x00],
  [0xfa, 0x7f, 0x80, 0x00, 0x00],
  [0xfa, 0xff, 0x80, 0x00, 0x00],
  [0xfb, 0x7f, 0xf8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
  [0xfb, 0x7f, 0xf8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01],
  [0xfb, 0xff, 0xf8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
  [0xfb, 0x7f, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
  [0xfb, 0xff, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
];

/** Where a raw float goes: each numeric field of each message kind. */
const FLOAT_SLOTS: readonly ((f: number[]) => number[])[] = [
  (f) => [0x82, ClientKind.Ping, ...f],
  (f) => [0x83, ClientKind.Input, ...f, 0x45, 0, 0, 0, 0, 0],
  (f) => [0x83, ClientKind.Hello, ...f, 0x61, 0x41],
  (f) => [0x82, ...f, 0x05],
];

/** One hostile frame of a closing kind; the server's own codec must refuse it. */
function hostileFrame(category: ClosingCategory, rng: Rng): Uint8Array {
  for (;;) {
    let bytes: Uint8Array;
    switch (category) {
      case "garbage":
        bytes = new Uint8Array(1 + int(rng, rng.next() < 0.9 ? 48 : LIMITS.maxClientFrameBytes))
          .map(() => int(rng, 256));
        break;
      case "truncated": {
        const full = validMessage(rng);
        bytes = full.subarray(0, 1 + int(rng, full.byteLength - 1));
        break;
      }
      case "wrongTypes":
        bytes = encoder.encodeValue(pick(rng, WRONG_TYPES)(rng));
        break;
      case "hugeNumbers":
        bytes = rng.next() < 0.2
          ? new Uint8Array(pick(rng, LENGTH_BOMBS))
          : encoder.encodeValue(pick(rng, NUMERIC_SLOTS)(pick(rng, HUGE)));
        break;
      case "nanInfinity":
        bytes = rng.next() < 0.3
          ? encoder.encodeValue(pick(rng, NUMERIC_SLOTS)(pick(rng, [NaN, Infinity, -Infinity])))
          : new Uint8Array(pick(rng, FLOAT_SLOTS)(pick(rng, NON_FINITE_FLOATS)));
        break;
    }
    // Random garbage can, very rarely, spell a valid message: draw again. Other kinds never do.
    if (refusedByCodec(bytes)) return bytes;
    assert.equal(category, "garbage", `a ${category} frame the codec accepts`);
  }
}

// ---------------------------------------------------------------- the honest client

/** An honest player circling in the hub, clear of the portal, updating every ~8 ms. */
class Honest {
  readonly client: GameClient;
  readonly snapshotAtMs: number[] = [];
  readonly errors: Error[] = [];
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(url: string) {
    const now = () => performance.now();
    this.client = connectClient(url, {
      name: "Honest",
      now,
      onError: (err) => this.errors.push(err),
      onSnapshot: () => this.snapshotAtMs.push(now()),
    });
    this.#timer = setInterval(() => {
      this.client.runtime.update(now(), (tick) => ({
        moveX: Math.round(60 * Math.cos(tick / 40)),
        moveY: Math.round(60 * Math.sin(tick / 40)),
        aim: (tick * 300) % 65536,
        buttons: 0,
      }));
    }, 8);
  }

  /** Resolves once the runtime is in the hub and has had a snapshot. */
  async ready(): Promise<void> {
    const start = performance.now();
    while (this.client.runtime.instanceId !== "hub" || this.snapshotAtMs.length === 0) {
      assert.ok(performance.now() - start < 3000, "the honest client joins within 3 s");
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  snapshotsSince(ms: number): number {
    return this.snapshotAtMs.filter((t) => t >= ms).length;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.client.close(1000, "done");
    await this.client.closed;
  }
}

// ---------------------------------------------------------------- measuring

interface Watch {
  readonly startMs: number;
  readonly ticks: number;
  readonly late: number;
  readonly dropped: number;
}

function watch(server: GameServer): Watch {
  const s = server.scheduler.stats;
  return { startMs: performance.now(), ticks: s.ticks, late: s.ticksLate, dropped: s.ticksDropped };
}

/**
 * Waits out the rest of the window, then checks the loop and the honest client's
 * snapshots. Returns what is wrong rather than throwing, so that one run reports
 * every phase.
 */
async function checkHealth(
  what: string,
  server: GameServer,
  honest: Honest,
  w: Watch,
): Promise<string[]> {
  const rest = MIN_WINDOW_MS - (performance.now() - w.startMs);
  if (rest > 0) await new Promise((r) => setTimeout(r, rest));
  const seconds = (performance.now() - w.startMs) / 1000;
  const s = server.scheduler.stats;
  const ticksPerSec = (s.ticks - w.ticks) / seconds;
  const snapshotsPerSec = honest.snapshotsSince(w.startMs) / seconds;
  const late = s.ticksLate - w.late;
  console.log(
    `${what}: ${seconds.toFixed(1)} s, ${ticksPerSec.toFixed(1)} ticks/s, ` +
      `ticksLate ${late}, ticksDropped ${s.ticksDropped - w.dropped}, ` +
      `honest ${snapshotsPerSec.toFixed(1)} snapshots/s (nominal ${SNAPSHOT_HZ}), ` +
      `snapshotsSkipped ${server.counters.snapshotsSkipped}`,
  );
  const problems: string[] = [];
  const expect = (ok: boolean, problem: string) => ok || problems.push(`${what}: ${problem}`);
  expect(ticksPerSec >= 55 && ticksPerSec <= 61, `${ticksPerSec.toFixed(1)} ticks/s`);
  expect(late <= MAX_LATE_TICKS, `${late} late ticks`);
  expect(snapshotsPerSec >= 15, `the honest client got ${snapshotsPerSec.toFixed(1)} snapshots/s`);
  expect(honest.client.connected, "the honest client was disconnected");
  expect(honest.client.runtime.phase === "playing", `honest ${honest.client.runtime.phase}`);
  expect(honest.client.runtime.instanceId === "hub", "the honest client left the hub");
  expect(honest.errors.length === 0, `honest errors ${honest.errors.join("; ")}`);
  return problems;
}

/** A socket that joined the hub and has seen a snapshot; returns that snapshot. */
async function joined(url: string, name: string): Promise<[LiveSocket, SnapshotWireMsg]> {
  const s = new LiveSocket(url);
  await s.opened;
  s.hello(name);
  await s.first(ServerKind.Enter);
  const snap = await s.next(ServerKind.Snapshot);
  assert.ok(snap.kind === ServerKind.Snapshot);
  return [s, snap];
}

/** A ping whose pong proves the server has handled everything sent before it. */
async function roundTrip(s: LiveSocket, id: number): Promise<void> {
  const pong = s.next(ServerKind.Pong);
  s.ws.send(encodeClientMessage(encoder, { kind: ClientKind.Ping, clientTimeMs: id }));
  const msg = await pong;
  assert.ok(msg.kind === ServerKind.Pong && msg.clientTimeMs === id, "the pong for this ping");
}

function verdictDelta(
  server: GameServer,
  before: Record<InputVerdict, number>,
): Record<InputVerdict, number> {
  const now = server.counters.inputVerdicts;
  const out = { ...now };
  for (const k of Object.keys(now) as InputVerdict[]) out[k] = now[k] - before[k];
  return out;
}

// ---------------------------------------------------------------- the test

Deno.test("10,000 hostile frames close only their own sockets while an honest player plays on", async () => {
  assert.equal(Object.values(PLAN).reduce((a, b) => a + b, 0), TOTAL_FRAMES);
  const rng = new Rng(0xbad);
  const tried: Record<string, number> = {};
  const handlerErrors: Record<string, unknown>[] = [];
  const problems: string[] = [];
  const log = (event: string, fields: Record<string, unknown>) => {
    if (event === "handler_error") handlerErrors.push(fields);
  };

  // ---- phase 1: each kind against its own validation
  {
    await using live = new LiveServer({ limits: GENEROUS_RATES, log });
    const server = live.server;
    const honest = new Honest(live.url);
    await honest.ready();
    const w = watch(server);
    const closesBefore = { ...server.counters.closes };

    // The closing kinds, interleaved; every other socket is a player in the hub first.
    const queue: ClosingCategory[] = CLOSING.flatMap((c) => Array(PLAN[c]).fill(c));
    for (let i = queue.length - 1; i > 0; i--) {
      const j = int(rng, i + 1);
      [queue[i], queue[j]] = [queue[j], queue[i]];
    }
    const codes: Record<string, Record<number, number>> = {};
    for (const [i, category] of queue.entries()) {
      const bytes = hostileFrame(category, rng);
      const s = new LiveSocket(live.url);
      await s.opened;
      if (i % 2 === 0) s.hello(`Hostile ${i}`);
      s.ws.send(bytes);
      tried[category] = (tried[category] ?? 0) + 1;
      const closed = await s.closed;
      const byCode = codes[category] ??= {};
      byCode[closed.code] = (byCode[closed.code] ?? 0) + 1;
      if (closed.code !== CloseCode.BadMessage || !/^Cannot decode /.test(closed.reason)) {
        assert.fail(`${category} frame [${bytes}] closed with ${closed.code} "${closed.reason}"`);
      }
    }
    console.log(`closes by kind: ${JSON.stringify(codes)}`);
    assert.equal(
      (server.counters.closes["4000"] ?? 0) - (closesBefore["4000"] ?? 0),
      queue.length,
      "one BadMessage close per closing frame",
    );
    assert.equal(server.hub.size, 1, "every hostile player left the hub");

    // Replays: the same ticks again after the server applied them.
    const verdictsBefore = { ...server.counters.inputVerdicts };
    const [replayer, snap] = await joined(live.url, "Replayer");
    const applied = snap.tick + 10;
    replayer.ws.send(
      encodeClientMessage(encoder, { kind: ClientKind.Input, frames: [frame(applied)] }),
    );
    for (;;) {
      const next = await replayer.next(ServerKind.Snapshot);
      if (next.kind === ServerKind.Snapshot && next.ackTick >= applied) break;
    }
    let replayFrames = 0;
    for (let sent = 0; sent < PLAN.replay;) {
      for (let k = 0; k < 100 && sent < PLAN.replay; k++, sent++) {
        const n = 1 + (sent % 3);
        const newest = applied - (sent % 5);
        const frames = Array.from({ length: n }, (_, i) => frame(newest - n + 1 + i));
        replayer.ws.send(encodeClientMessage(encoder, { kind: ClientKind.Input, frames }));
        replayFrames += n;
      }
      await roundTrip(replayer, sent);
    }
    tried.replay = PLAN.replay;

    // Future ticks: from well past the audit's lead to the top of the uint32 range.
    const [traveller, now] = await joined(live.url, "Time Traveller");
    const far = now.tick + 100 * INPUT_LIMITS.maxLeadTicks;
    let futureFrames = 0;
    for (let sent = 0; sent < PLAN.future;) {
      for (let k = 0; k < 100 && sent < PLAN.future; k++, sent++) {
        const n = 1 + (sent % 3);
        const newest = sent % 10 === 0 ? 2 ** 32 - 1 : far + int(rng, 2 ** 32 - 1 - far);
        const frames = Array.from({ length: n }, (_, i) => frame(newest - n + 1 + i));
        traveller.ws.send(encodeClientMessage(encoder, { kind: ClientKind.Input, frames }));
        futureFrames += n;
      }
      await roundTrip(traveller, sent);
    }
    tried.future = PLAN.future;

    const verdicts = verdictDelta(server, verdictsBefore);
    console.log(
      `replay: ${replayFrames} input frames in ${PLAN.replay} messages; ` +
        `future: ${futureFrames} in ${PLAN.future}; verdicts ${JSON.stringify(verdicts)}`,
    );
    // The honest client's own redundant copies count as replays too, hence ≥.
    assert.ok(verdicts.replay >= replayFrames, `${verdicts.replay} replays`);
    assert.ok(verdicts.future >= futureFrames, `${verdicts.future} futures`);
    for (const s of [replayer, traveller]) {
      assert.equal(s.ws.readyState, WebSocket.OPEN, "dropped silently: the socket stays open");
      assert.equal(s.received.filter((r) => r.msg.kind === ServerKind.Reject).length, 0);
      assert.equal((await s.close()).code, 1000);
    }
    problems.push(...await checkHealth("phase 1 (garbage … future)", server, honest, w));
    await honest.stop();
    const { connectionsOpened, messagesIn, bytesIn, bytesOut, snapshotsSkipped, closes } =
      server.counters;
    console.log(
      `phase 1 counters: ${
        JSON.stringify({
          connectionsOpened,
          messagesIn,
          bytesIn,
          bytesOut,
          snapshotsSkipped,
          closes,
        })
      }`,
    );
  }

  // ---- phase 2: floods against the default budgets
  {
    await using live = new LiveServer({ log });
    const server = live.server;
    const honest = new Honest(live.url);
    await honest.ready();
    const w = watch(server);
    const big = paddedPing(LIMITS.maxClientFrameBytes);
    const floods: { what: string; frames: () => Uint8Array[] }[] = [];
    const burst = LIMITS.maxMessagesPerSec * LIMITS.burstSeconds + 60;
    for (let i = 0; i < 3; i++) {
      floods.push({
        what: "pings",
        frames: () =>
          Array.from(
            { length: burst },
            (_, k) => encodeClientMessage(encoder, { kind: ClientKind.Ping, clientTimeMs: k }),
          ),
      });
      floods.push({
        what: "inputs",
        frames: () =>
          Array.from(
            { length: burst },
            (_, k) => encodeClientMessage(encoder, { kind: ClientKind.Input, frames: [frame(k)] }),
          ),
      });
    }
    const bytesEach = (PLAN.flood - 6 * burst) / 2;
    for (let i = 0; i < 2; i++) {
      floods.push({ what: "256-byte pings", frames: () => Array(bytesEach).fill(big) });
    }
    let floodFrames = 0;
    const messagesBefore = server.counters.messagesIn;
    const seenByClients: string[] = [];
    for (const [i, flood] of floods.entries()) {
      const [s] = await joined(live.url, `Flood ${i}`);
      const closesBefore = server.counters.closes[String(CloseCode.RateLimited)] ?? 0;
      const frames = flood.frames();
      // All at once, as a flooder would: most of them arrive after the server's close.
      for (const f of frames) s.ws.send(f);
      floodFrames += frames.length;
      const closed = await s.closed;
      assert.equal(
        server.counters.closes[String(CloseCode.RateLimited)],
        closesBefore + 1,
        `the server closed a flood of ${flood.what} with 4003`,
      );
      seenByClients.push(`${closed.code}${closed.reason ? ` "${closed.reason}"` : ""}`);
      // Deno drops a socket that keeps receiving after close(), close frame and all, so a
      // flooder may see no close code; the Reject sent before the close still tells it why.
      const told = s.received.some((r) =>
        r.msg.kind === ServerKind.Reject && r.msg.code === CloseCode.RateLimited &&
        /too fast/.test(r.msg.reason)
      );
      const closedRight = closed.code === CloseCode.RateLimited && /too fast/.test(closed.reason);
      if (!told && !closedRight) {
        problems.push(
          `flood of ${flood.what}: the client saw close ${closed.code} ` +
            `(wasClean ${closed.wasClean}) and no Reject saying 4003 "sending too fast"`,
        );
      }
    }
    console.log(`flood closes as the clients saw them: ${seenByClients.join(", ")}`);
    tried.flood = floodFrames;
    assert.equal(floodFrames, PLAN.flood);
    assert.equal(server.counters.closes[String(CloseCode.RateLimited)], floods.length);
    console.log(
      `flood: ${floodFrames} frames tried on ${floods.length} sockets, ` +
        `${server.counters.messagesIn - messagesBefore} reached the server`,
    );
    problems.push(...await checkHealth("phase 2 (floods)", server, honest, w));
    await honest.stop();
  }

  console.log(`frames tried by kind: ${JSON.stringify(tried)}`);
  assert.deepEqual(tried, { ...PLAN } as Record<Category, number>);
  assert.deepEqual(handlerErrors, [], "no handler threw");
  assert.deepEqual(problems, [], "the loop and the honest client stayed healthy");
});
