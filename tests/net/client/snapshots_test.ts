/**
 * What the client makes of snapshots, fed through the real codec into a ClientRuntime
 * with no server: an older snapshot never replaces a newer one ("newest wins"), and
 * other ships are drawn between two snapshots, not snapped to the newest. (Enemies are
 * not interpolated: they are run forward to the present, see the runtime.)
 */
import assert from "node:assert/strict";
import { FOLD, worldByKey } from "../../../content/mod.ts";
import { ClientRuntime } from "../../../net/client/runtime.ts";
import { sample } from "../../../net/client/remote_view.ts";
import {
  ClientKind,
  decodeClientMessage,
  encodeServerMessage,
  encodeWholeSnapshot,
  MessageDecoder,
  MessageEncoder,
  PlayerFlag,
  PROTOCOL_VERSION,
  ServerKind,
  type SnapshotMsg,
  splitFrame,
  StageCode,
} from "../../../net/wire/mod.ts";

const enc = new MessageEncoder();
const dec = new MessageDecoder();
const SELF = 1;
const ALLY = 2;

/** A runtime that has been welcomed into the Fold at tick 0, at `nowMs`. */
function inFold(nowMs: number, send: (data: Uint8Array) => void = () => {}): ClientRuntime {
  const rt = new ClientRuntime({ send });
  rt.hello("Ada", nowMs);
  rt.receive(
    encodeServerMessage(enc, {
      kind: ServerKind.Welcome,
      version: PROTOCOL_VERSION,
      playerId: 1,
      resume: "token",
      graceMs: 15_000,
    }),
    nowMs,
  );
  rt.receive(
    encodeServerMessage(enc, {
      kind: ServerKind.Enter,
      instanceId: "dungeon-1",
      worldId: worldByKey(FOLD.key).id,
      tick: 0,
      reason: 1,
      roster: [{ id: SELF, name: "Ada" }, { id: ALLY, name: "Bo" }],
      stage: StageCode.waves,
      bullets: [],
    }),
    nowMs,
  );
  return rt;
}

/** A snapshot of `tick`: our ship at `selfX`, an ally and an enemy at `x`. */
function snapshot(tick: number, opts: { selfX: number; x: number }): Uint8Array {
  const msg: SnapshotMsg = {
    kind: ServerKind.Snapshot,
    tick,
    ackTick: -1,
    stage: StageCode.waves,
    wave: 0,
    players: [
      { id: SELF, x: opts.selfX, y: 800, aim: 0, hp: 5, flags: PlayerFlag.Active, escape: 0 },
      { id: ALLY, x: opts.x, y: 700, aim: 0, hp: 5, flags: PlayerFlag.Active, escape: 0 },
    ],
    enemies: [{ id: 7, kind: 0, x: opts.x, y: 300, hp: 12 }],
    boss: null,
    lateTicks: 0,
  };
  return encodeWholeSnapshot(enc, msg);
}

Deno.test("an older snapshot arriving after a newer one changes nothing: newest wins", () => {
  const rt = inFold(0);
  rt.receive(snapshot(30, { selfX: 500, x: 400 }), 500);
  rt.receive(snapshot(27, { selfX: 100, x: 100 }), 510); // overtaken on the way (a datagram)
  assert.equal(rt.latest()?.tick, 30);
  assert.equal(rt.selfSnapshot()?.x, 500);
  assert.equal(rt.predicted.x, 500, "the prediction was not reset to a stale position");
  rt.receive(snapshot(33, { selfX: 510, x: 410 }), 560);
  assert.equal(rt.latest()?.tick, 33, "a newer one is taken");
  assert.equal(rt.snapshotsTotal, 3, "all three arrived; one was dropped as stale");
});

/** Times at which other ships are drawn at a tick between the two snapshots'. */
function between(rt: ClientRuntime, opts: { from: number; to: number }): number[] {
  const out: number[] = [];
  for (let nowMs = 0; nowMs < 5000; nowMs += 5) {
    const at = rt.renderTick(nowMs);
    if (at > opts.from + 0.25 && at < opts.to - 0.25) out.push(nowMs);
  }
  return out;
}

Deno.test("other ships are drawn between two snapshots, not snapped to the newest", () => {
  const rt = inFold(0);
  rt.receive(snapshot(30, { selfX: 500, x: 100 }), 500);
  rt.receive(snapshot(33, { selfX: 500, x: 160 }), 550);
  const times = between(rt, { from: 30, to: 33 });
  assert.ok(times.length > 0, "some moment draws a tick between the two snapshots");
  // The first frame a ship is shown is its interpolated position (no blending history yet).
  const nowMs = times[Math.floor(times.length / 2)];
  const at = rt.renderTick(nowMs);
  const expected = 100 + ((at - 30) / 3) * 60;
  const [ally] = rt.remotePlayers(nowMs);
  assert.ok(Math.abs(ally.x - expected) < 1e-9, `ally at ${ally.x}, expected ${expected}`);
  assert.ok(ally.x > 100 && ally.x < 160);
});

Deno.test("sample() interpolates a ship between the snapshots around a tick", () => {
  const snaps = [30, 33, 36].map((tick, i): SnapshotMsg => ({
    kind: ServerKind.Snapshot,
    tick,
    ackTick: -1,
    stage: StageCode.waves,
    wave: 0,
    players: [{ id: ALLY, x: 100 + 60 * i, y: 700 - 30 * i, aim: 0, hp: 5, flags: 1, escape: 0 }],
    enemies: [],
    boss: null,
    lateTicks: 0,
  }));
  assert.deepEqual(sample(snaps, { id: ALLY, tick: 31 }), { x: 120, y: 690 });
  assert.deepEqual(sample(snaps, { id: ALLY, tick: 34.5 }), { x: 190, y: 655 });
  assert.deepEqual(sample(snaps, { id: ALLY, tick: 33 }), { x: 160, y: 670 });
});

const idle = () => ({ moveX: 0, moveY: 0, aim: 0, buttons: 0 });

Deno.test("a snapshot newer than the client's tick gives input a view lag of 0, not a negative one", () => {
  const sent: Uint8Array[] = [];
  const rt = inFold(0, (d) => sent.push(d));
  rt.receive(snapshot(2, { selfX: 500, x: 400 }), 100);
  rt.update(100, idle);
  // The server's next snapshot names a tick the client has not reached yet (a jittery
  // link, a clock estimate a little behind).
  const ahead = rt.clientTick + 2;
  rt.receive(snapshot(ahead, { selfX: 500, x: 400 }), 101);
  const before = sent.length;
  rt.update(101, idle);
  rt.update(150, idle);
  const frames = sent.slice(before).flatMap((f) => splitFrame(f, { maxMessages: 16 }))
    .map((m) => decodeClientMessage(dec, m))
    .flatMap((m) => m.kind === ClientKind.Input ? m.frames : []);
  assert.ok(frames.length > 0, "input went out");
  assert.ok(frames.some((f) => f.tick < ahead), "frames for ticks before the snapshot's");
  for (const f of frames) assert.ok((f.viewLag ?? 0) >= 0, `tick ${f.tick}: lag ${f.viewLag}`);
});
