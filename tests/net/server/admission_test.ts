/**
 * Admission and identity, in process on a ManualClock: player ids are never
 * handed out twice while in use, whatever the churn; one address gets a budget of
 * new connections per second besides its cap on open ones (IPv6 counted by /64);
 * a player gone silent after its hello is closed; a client that stops reading is
 * closed before its queue can grow the server; close codes in the counters come
 * from a fixed set.
 */
import assert from "node:assert/strict";
import { LIMITS, TICKS_PER_SNAPSHOT } from "../../../content/net_tuning.ts";
import { AddressGate, addressKey, Budget } from "../../../net/server/admission.ts";
import { CLOSE_LABELS, closeLabel } from "../../../net/server/server.ts";
import { CloseCode, ServerKind } from "../../../net/wire/protocol.ts";
import { NetHarness, paddedPing, RawClient } from "../_harness.ts";

/** How the server closed `c` (a call, so that an earlier assertion does not narrow it). */
function closedWith(c: RawClient): { code: number; reason: string } | undefined {
  return c.transport.closedWith;
}

function snapshotsOf(c: RawClient): number {
  return c.transport.sent.filter((s) => s.latest).length;
}

/** Everything limits allow except what the test is about. */
const OPEN_DOORS = { connectBurstPerIp: 1e9, connectsPerSecPerIp: 1e9, maxConnectionsPerIp: 1e9 };

// ---------------------------------------------------------------- player ids

Deno.test("player ids are never handed out twice while in use, across wrap-arounds of the id space", () => {
  // The whole u16 space in miniature: 40 ids, wrapped 25 times by churn.
  using h = new NetHarness({ limits: { ...OPEN_DOORS, maxPlayerId: 40 } });
  const honest = new RawClient(h.server, "10.0.0.1");
  honest.hello("Honest");
  const bystander = new RawClient(h.server, "10.0.0.2");
  bystander.hello("Bystander");
  const held = new Set([honest.playerId, bystander.playerId]);
  assert.deepEqual([...held], [1, 2]);
  const seen = new Set<number>();
  for (let i = 0; i < 1000; i++) {
    const churner = new RawClient(h.server, "10.0.9.9");
    churner.hello(`Churn ${i}`);
    const id = churner.playerId;
    assert.ok(!held.has(id), `cycle ${i} got id ${id}, which is in use`);
    assert.ok(id >= 1 && id <= 40);
    seen.add(id);
    churner.hangUp();
  }
  assert.equal(seen.size, 38, "every free id was used, and only those");
  // The honest players never noticed.
  for (const c of [honest, bystander]) {
    assert.equal(c.transport.closedWith, undefined);
    assert.ok(h.server.hub.has(c.playerId), `${c.conn.name} is still in the hub`);
    const before = snapshotsOf(c);
    h.runTicks(2 * TICKS_PER_SNAPSHOT);
    assert.ok(snapshotsOf(c) > before, `${c.conn.name} still gets snapshots`);
  }
  assert.equal(h.server.playerCount, 2);
  assert.equal(h.server.hub.world.players.size, 2);
});

Deno.test("with every player id in use, the next hello is refused 4005 and nobody is displaced", () => {
  using h = new NetHarness({ limits: { ...OPEN_DOORS, maxPlayerId: 3 } });
  const three = [1, 2, 3].map((i) => {
    const c = new RawClient(h.server, `10.0.0.${i}`);
    c.hello(`P${i}`);
    return c;
  });
  const fourth = new RawClient(h.server, "10.0.0.4");
  fourth.hello("P4");
  assert.equal(fourth.transport.closedWith?.code, CloseCode.ServerFull);
  assert.deepEqual(three.map((c) => c.playerId), [1, 2, 3]);
  assert.equal(h.server.hub.size, 3);
  three[1].hangUp();
  const fifth = new RawClient(h.server, "10.0.0.5");
  fifth.hello("P5");
  assert.equal(fifth.playerId, 2, "the freed id is the one given next");
});

// ---------------------------------------------------------------- admission

Deno.test("one address gets connectBurstPerIp connections at once, then connectsPerSecPerIp", () => {
  using h = new NetHarness({ limits: { maxConnectionsPerIp: 1e9 } });
  const burst = LIMITS.connectBurstPerIp;
  for (let i = 0; i < burst; i++) {
    const c = new RawClient(h.server, "10.0.0.1");
    assert.equal(c.transport.closedWith, undefined, `connect ${i + 1} of the burst`);
    c.hangUp();
  }
  const refused = new RawClient(h.server, "10.0.0.1");
  assert.equal(refused.transport.closedWith?.code, CloseCode.TooManyFromIp);
  assert.match(refused.transport.closedWith!.reason, /connecting too often/);
  assert.equal(h.server.counters.refusals.rate, 1);
  // Another address is not affected.
  assert.equal(new RawClient(h.server, "10.0.0.2").transport.closedWith, undefined);
  // One more a second, sustained (the refused attempt above cost a token too).
  h.clock.advance(1000 / LIMITS.connectsPerSecPerIp * 2);
  const later = new RawClient(h.server, "10.0.0.1");
  assert.equal(later.transport.closedWith, undefined, "the budget refills");
});

Deno.test("an IPv6 host is limited by its /64: rotating the low 64 bits buys nothing", () => {
  using h = new NetHarness({ limits: { maxConnectionsPerIp: 3, connectBurstPerIp: 1e9 } });
  const open = [1, 2, 3].map((n) => new RawClient(h.server, `2001:db8:1:2::${n}`));
  for (const c of open) assert.equal(c.transport.closedWith, undefined);
  const fourth = new RawClient(h.server, "2001:db8:1:2:ffff:ffff:ffff:ffff");
  assert.equal(fourth.transport.closedWith?.code, CloseCode.TooManyFromIp);
  assert.equal(new RawClient(h.server, "2001:db8:1:3::1").transport.closedWith, undefined);
  assert.equal(h.server.connectionsFrom("2001:db8:1:2::abcd"), 3);
});

Deno.test("addressKey() folds IPv4-mapped IPv6 to IPv4 and IPv6 to its /64", () => {
  assert.equal(addressKey("203.0.113.7"), "203.0.113.7");
  assert.equal(addressKey("::ffff:203.0.113.7"), "203.0.113.7");
  assert.equal(addressKey("2001:DB8:0:0:1:2:3:4"), "2001:db8:0:0::/64");
  assert.equal(addressKey("[2001:db8::1]"), "2001:db8:0:0::/64");
  assert.equal(addressKey("fe80::1%eth0"), "fe80:0:0:0::/64");
  assert.equal(addressKey("unknown"), "unknown");
});

Deno.test("the gate forgets an address once nothing is open and its budget has refilled", () => {
  const gate = new AddressGate({ maxOpen: 8, connectBurst: 4, connectsPerSec: 2 });
  for (let i = 0; i < 1000; i++) {
    assert.equal(gate.check(`10.1.${i >> 8}.${i & 255}`, { nowMs: 0, attempt: true }), undefined);
  }
  assert.equal(gate.size, 1000, "each spent one of its 4 tokens");
  gate.prune(400);
  assert.equal(gate.size, 1000, "not refilled yet after 0.4 s");
  gate.prune(500);
  assert.equal(gate.size, 0, "refilled after 0.5 s at 2/s: forgotten");
  // Looking does not cost anything, nor remember anything.
  assert.equal(gate.check("10.9.9.9", { nowMs: 600, attempt: false }), undefined);
  assert.equal(gate.size, 0);
});

Deno.test("Budget: a burst at once, then the sustained rate, and the wait until the next", () => {
  const b = new Budget({ ratePerSec: 2, burst: 3, nowMs: 0 });
  assert.equal([1, 2, 3].every(() => b.take(1, 0)), true);
  assert.equal(b.take(1, 0), false);
  assert.equal(b.waitMs(1, 0), 1000, "in debt by one: two tokens at 2/s");
  assert.equal(b.has(1, 999), false);
  assert.equal(b.has(1, 1000), true);
});

// ---------------------------------------------------------------- idle and backlog

Deno.test("a player who says hello and goes silent is closed 4013 after the idle timeout", () => {
  using h = new NetHarness();
  const talker = new RawClient(h.server, "10.0.0.1");
  talker.hello("Talker");
  const silent = new RawClient(h.server, "10.0.0.2");
  silent.hello("Silent");
  const stepMs = 1000;
  for (let t = 0; t < LIMITS.idleTimeoutMs - stepMs; t += stepMs) {
    h.clock.advance(stepMs);
    talker.ping(t);
  }
  assert.equal(silent.transport.closedWith, undefined, "not before the timeout");
  h.clock.advance(2 * stepMs);
  talker.ping(0);
  assert.equal(closedWith(silent)?.code, CloseCode.IdleTimeout);
  assert.match(closedWith(silent)!.reason, /nothing received for 15 s/);
  assert.equal(talker.transport.closedWith, undefined, "a player who talks stays");
  assert.equal(h.server.counters.closes[String(CloseCode.IdleTimeout)], 1);
  // A silent link may be a dead one: the ship waits for a resume, then goes.
  assert.equal(h.server.playersAway, 1);
  h.clock.advance(LIMITS.resumeGraceMs);
  assert.equal(h.server.playerCount, 1);
  assert.equal(h.server.playersAway, 0);
});

Deno.test("a client whose queue passes maxQueuedBytes is closed 4014; the others play on", () => {
  using h = new NetHarness();
  const reader = new RawClient(h.server, "10.0.0.1");
  reader.hello("Reader");
  const stuck = new RawClient(h.server, "10.0.0.2");
  stuck.hello("Stuck");
  h.runTicks(TICKS_PER_SNAPSHOT);
  // It keeps sending pings but reads nothing: each Pong (sent with the next frame) is one
  // more reliable message queued.
  stuck.transport.bufferedBytes = LIMITS.maxQueuedBytes; // at the cap: still fine
  stuck.ping(1);
  h.runTicks(TICKS_PER_SNAPSHOT);
  assert.equal(stuck.transport.closedWith, undefined);
  stuck.transport.bufferedBytes = LIMITS.maxQueuedBytes + 1;
  stuck.ping(2);
  h.runTicks(TICKS_PER_SNAPSHOT);
  assert.equal(closedWith(stuck)?.code, CloseCode.Backlogged);
  assert.match(closedWith(stuck)!.reason, /not reading: \d+ bytes queued/);
  assert.equal(reader.transport.closedWith, undefined);
  assert.equal(h.server.playersAway, 1, "a stuck link may come back: its ship waits");
  h.clock.advance(LIMITS.resumeGraceMs);
  assert.equal(h.server.hub.size, 1);
});

// ---------------------------------------------------------------- frames and close codes

Deno.test("a 1 MiB frame is 4004 (too large), not 4003 (too fast)", () => {
  using h = new NetHarness();
  const c = new RawClient(h.server, "10.0.0.1");
  c.hello("Huge");
  c.send(new Uint8Array(1024 * 1024));
  assert.equal(c.transport.closedWith?.code, CloseCode.FrameTooLarge);
  assert.match(c.transport.closedWith!.reason, /frame of 1048576 bytes exceeds 256/);
  const ok = new RawClient(h.server, "10.0.0.2");
  ok.hello("Fine");
  ok.send(paddedPing(LIMITS.maxClientFrameBytes));
  assert.equal(ok.transport.closedWith, undefined);
});

Deno.test("close codes a client picks are counted as 'other': the metric labels are a fixed set", () => {
  using h = new NetHarness();
  for (let code = 3000; code < 3300; code++) {
    const c = new RawClient(h.server, `10.0.${code >> 8}.${code & 255}`);
    c.hangUp(String(code), "bye");
  }
  new RawClient(h.server, "10.1.0.1").hangUp("1001", "going away");
  assert.deepEqual(h.server.counters.closes, { other: 300, "1001": 1 });
  for (const label of Object.keys(h.server.counters.closes)) {
    assert.ok(CLOSE_LABELS.includes(label));
  }
  assert.equal(closeLabel(String(CloseCode.Backlogged)), "4014");
  assert.equal(closeLabel("error"), "error");
  assert.equal(closeLabel("4999"), "other");
});

Deno.test("a Reject that overflows a full queue does not close twice or count twice", () => {
  using h = new NetHarness();
  const c = new RawClient(h.server, "10.0.0.1");
  c.hello("Full");
  c.transport.bufferedBytes = LIMITS.maxQueuedBytes * 2;
  c.send(new Uint8Array([0xff])); // bad frame: the close's Reject lands on a full queue
  assert.equal(c.transport.closedWith?.code, CloseCode.BadMessage);
  assert.deepEqual(h.server.counters.closes, { [String(CloseCode.BadMessage)]: 1 });
  assert.equal(c.transport.messages().filter((m) => m.kind === ServerKind.Reject).length, 1);
});
