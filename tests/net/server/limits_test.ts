/**
 * The abuse limits of deploy/README.md (d), in process on a ManualClock: each one
 * closes only the offending connection, with its close code and a reason, while a
 * bystander in the hub plays on. Rates are driven by advancing the clock by hand.
 */
import { CONTENT_HASH } from "../../../content/mod.ts";
import assert from "node:assert/strict";
import {
  LIMITS,
  PONG_MAX_HOLD_MS,
  SNAPSHOT_HZ,
  TICKS_PER_SNAPSHOT,
} from "../../../content/net_tuning.ts";
import { TICK_MS } from "../../../sim/mod.ts";
import { encodeClientMessage, MessageEncoder } from "../../../net/wire/codec.ts";
import { ClientKind, CloseCode, PROTOCOL_VERSION, ServerKind } from "../../../net/wire/protocol.ts";
import { checkName } from "../../../net/server/server.ts";
import { frame, NetHarness, paddedPing, RawClient } from "../_harness.ts";

const MESSAGE_BURST = LIMITS.maxMessagesPerSec * LIMITS.burstSeconds;
const BYTE_BURST = LIMITS.maxBytesPerSec * LIMITS.burstSeconds;

/** A player in the hub whose well-being proves an offender was dealt with alone. */
function bystander(h: NetHarness, ip = "10.9.9.9"): RawClient {
  const b = new RawClient(h.server, ip);
  b.hello("Bystander");
  return b;
}

function snapshotsOf(c: RawClient): number {
  return c.transport.sent.filter((s) => s.latest).length;
}

/** `b` is still connected, still in the hub, and snapshots keep coming. */
function assertUnharmed(h: NetHarness, b: RawClient): void {
  assert.equal(b.transport.closedWith, undefined, "the bystander stays connected");
  assert.ok(h.server.connections.has(b.conn), "the bystander is still a connection");
  assert.ok(h.server.hub.has(b.playerId), "the bystander is still in the hub");
  const before = snapshotsOf(b);
  h.runTicks(2 * TICKS_PER_SNAPSHOT);
  assert.ok(snapshotsOf(b) > before, "the bystander still receives snapshots");
}

/** `c` was closed by the server with `code` and a reason, and the server forgot it. */
function assertClosed(h: NetHarness, c: RawClient, code: number, reason: RegExp): void {
  const closed = c.transport.closedWith;
  assert.ok(closed, `expected close ${code}, but the connection is open`);
  assert.equal(closed.code, code, `close code (reason: ${closed.reason})`);
  assert.match(closed.reason, reason);
  // The reason also travels as the last message, in case the close frame is lost.
  const last = c.transport.messages().at(-1);
  assert.ok(last?.kind === ServerKind.Reject, "a Reject precedes the close");
  assert.equal(last.code, code);
  assert.equal(last.reason, closed.reason);
  assert.equal(c.conn.state, "closed");
  assert.equal(h.server.connections.has(c.conn), false, "the server forgot the connection");
}

/** The kinds of everything the server sent `c`. */
function kindsSent(c: RawClient): number[] {
  return c.transport.messages().map((m) => m.kind);
}

// ---------------------------------------------------------------- message and byte rate

Deno.test("a burst of 240 messages passes; the 241st closes only the sender with 4003", () => {
  using h = new NetHarness();
  const b = bystander(h);
  const c = new RawClient(h.server, "10.0.0.1");
  c.hello("Chatty"); // the hello is the first message of the burst
  for (let i = 1; i < MESSAGE_BURST; i++) c.ping(i);
  assert.equal(c.transport.closedWith, undefined, `${MESSAGE_BURST} messages at once are allowed`);

  c.ping(MESSAGE_BURST);
  assertClosed(h, c, CloseCode.RateLimited, /too fast/);
  assert.equal(h.server.counters.closes[String(CloseCode.RateLimited)], 1);
  assert.equal(h.server.hub.size, 1, "the offender left the hub");
  assertUnharmed(h, b);
});

Deno.test("120 messages/s sustained for 10 s never trips the message budget; each frame answers the newest ping", () => {
  using h = new NetHarness();
  const c = new RawClient(h.server, "10.0.0.1");
  c.hello("Steady");
  const stepMs = 1000 / LIMITS.maxMessagesPerSec;
  for (let i = 0; i < 10 * LIMITS.maxMessagesPerSec; i++) {
    h.clock.advance(stepMs);
    c.ping(i);
  }
  assert.equal(c.transport.closedWith, undefined);
  // Pongs ride in the frames that go anyway (a snapshot every 50 ms): one per frame.
  const pongs = c.transport.messages().filter((m) => m.kind === ServerKind.Pong);
  assert.ok(Math.abs(pongs.length - 10 * SNAPSHOT_HZ) <= 1, `${pongs.length} pongs`);
  const last = pongs.at(-1);
  assert.ok(
    last?.kind === ServerKind.Pong && last.clientTimeMs >= 10 * LIMITS.maxMessagesPerSec - 7,
  );
});

Deno.test("the message budget refills: after burstSeconds idle, another full burst passes", () => {
  using h = new NetHarness();
  const c = new RawClient(h.server, "10.0.0.1");
  c.hello("Bursty");
  for (let i = 1; i < MESSAGE_BURST; i++) c.ping(i);
  h.clock.advance(LIMITS.burstSeconds * 1000);
  for (let i = 0; i < MESSAGE_BURST; i++) c.ping(i);
  assert.equal(c.transport.closedWith, undefined);
  c.ping(0);
  assertClosed(h, c, CloseCode.RateLimited, /too fast/);
});

Deno.test("the byte budget closes a sender of big valid messages with 4003, well under the message budget", () => {
  using h = new NetHarness();
  const b = bystander(h);
  const c = new RawClient(h.server, "10.0.0.1");
  c.hello("Bulky");
  const helloBytes = c.conn.bytesIn;
  const big = paddedPing(LIMITS.maxClientFrameBytes);
  const fits = Math.floor((BYTE_BURST - helloBytes) / big.byteLength);
  for (let i = 0; i < fits; i++) c.send(big);
  assert.equal(c.transport.closedWith, undefined, `${fits} pings of ${big.byteLength} B fit`);

  c.send(big);
  assertClosed(h, c, CloseCode.RateLimited, /too fast/);
  assert.ok(fits + 2 < MESSAGE_BURST / 2, `${fits + 2} messages: the byte budget did it`);
  assertUnharmed(h, b);
});

Deno.test("8192 bytes/s sustained in 256-byte messages never trips the byte budget", () => {
  using h = new NetHarness();
  const c = new RawClient(h.server, "10.0.0.1");
  c.hello("Patient");
  const big = paddedPing(LIMITS.maxClientFrameBytes);
  const perSec = LIMITS.maxBytesPerSec / big.byteLength;
  for (let i = 0; i < 10 * perSec; i++) {
    h.clock.advance(1000 / perSec);
    c.send(big);
  }
  assert.equal(c.transport.closedWith, undefined);
});

// ---------------------------------------------------------------- frame size and type

Deno.test("a frame over 256 bytes closes only the sender with 4004; 256 bytes exactly is fine", () => {
  using h = new NetHarness();
  const b = bystander(h);
  const c = new RawClient(h.server, "10.0.0.1");
  c.hello("Big Mouth");
  c.send(paddedPing(LIMITS.maxClientFrameBytes));
  assert.equal(c.transport.closedWith, undefined, "a valid 256-byte message is accepted");
  h.clock.advance(PONG_MAX_HOLD_MS + TICK_MS);
  assert.ok(kindsSent(c).includes(ServerKind.Pong), "and answered");

  c.send(new Uint8Array(LIMITS.maxClientFrameBytes + 1));
  assertClosed(
    h,
    c,
    CloseCode.FrameTooLarge,
    new RegExp(`${LIMITS.maxClientFrameBytes + 1} bytes exceeds ${LIMITS.maxClientFrameBytes}`),
  );
  assert.equal(h.server.hub.size, 1, "the offender left the hub");
  assertUnharmed(h, b);
});

Deno.test("a text frame closes only the sender with 4000", () => {
  using h = new NetHarness();
  const b = bystander(h);
  const c = new RawClient(h.server, "10.0.0.1");
  c.hello("Texter");
  c.conn.receive("[3, 5]");
  assertClosed(h, c, CloseCode.BadMessage, /text frames/);
  assertUnharmed(h, b);
});

// ---------------------------------------------------------------- connection counts

Deno.test("a connection over MAX_CONNECTIONS_PER_IP is closed with 4008; other addresses still get in", () => {
  using h = new NetHarness({ limits: { maxConnectionsPerIp: 2 } });
  const b = bystander(h);
  const [first, second] = [
    new RawClient(h.server, "10.0.0.1"),
    new RawClient(h.server, "10.0.0.1"),
  ];
  first.hello("First");
  second.hello("Second");

  const third = new RawClient(h.server, "10.0.0.1");
  assertClosed(h, third, CloseCode.TooManyFromIp, /too many connections from your address/);
  assert.deepEqual(kindsSent(third), [ServerKind.Reject], "refused with its reason, nothing else");
  assert.equal(h.server.connectionsFrom("10.0.0.1"), 2);
  for (const c of [first, second]) assert.equal(c.transport.closedWith, undefined);

  const elsewhere = new RawClient(h.server, "10.0.0.2");
  assert.equal(elsewhere.transport.closedWith, undefined, "another address is not limited");

  first.hangUp();
  const again = new RawClient(h.server, "10.0.0.1");
  assert.equal(again.transport.closedWith, undefined, "a freed slot can be used again");
  assert.equal(h.server.connectionsFrom("10.0.0.1"), 2);
  assert.equal(h.server.counters.closes[String(CloseCode.TooManyFromIp)], 1);
  assertUnharmed(h, b);
});

Deno.test("a connection over MAX_CONNECTIONS is closed with 4005; a freed slot takes the next", () => {
  using h = new NetHarness({ limits: { maxConnections: 3 } });
  const b = bystander(h);
  const others = [new RawClient(h.server, "10.0.0.1"), new RawClient(h.server, "10.0.0.2")];

  const fourth = new RawClient(h.server, "10.0.0.3");
  assertClosed(h, fourth, CloseCode.ServerFull, /server full/);
  assert.equal(h.server.connections.size, 3);
  for (const c of others) assert.equal(c.transport.closedWith, undefined);

  others[0].hangUp();
  const next = new RawClient(h.server, "10.0.0.3");
  assert.equal(next.transport.closedWith, undefined);
  assert.equal(h.server.connections.size, 3);
  assertUnharmed(h, b);
});

Deno.test("a refused connection is counted under its close code, not as accepted", () => {
  using h = new NetHarness({ limits: { maxConnections: 1 } });
  const b = bystander(h);
  new RawClient(h.server, "10.0.0.1");
  new RawClient(h.server, "10.0.0.2");
  assert.equal(h.server.counters.closes[String(CloseCode.ServerFull)], 2);
  assert.equal(
    h.server.counters.connectionsOpened,
    1,
    "bh_connections_opened_total counts accepted connections (deploy/README.md (e))",
  );
  assertUnharmed(h, b);
});

Deno.test("a connection attempt during shutdown is closed with 4009", () => {
  using h = new NetHarness();
  const b = bystander(h);
  h.server.shutdown("server restarting");
  assert.equal(b.transport.closedWith?.code, CloseCode.ServerRestarting);
  const late = new RawClient(h.server, "10.0.0.1");
  assertClosed(h, late, CloseCode.ServerRestarting, /^server restarting$/);
  assert.equal(h.server.connections.size, 0);
  assert.equal(h.clock.pending, 0, "no handshake timer outlives a refusal");
});

// ---------------------------------------------------------------- handshake

Deno.test("no hello within 5 s closes only the silent connection with 4002", () => {
  using h = new NetHarness();
  const b = bystander(h);
  const silent = new RawClient(h.server, "10.0.0.1");
  const slow = new RawClient(h.server, "10.0.0.2");

  h.clock.advance(LIMITS.handshakeTimeoutMs - 1);
  slow.hello("Slow but in time");
  assert.equal(silent.transport.closedWith, undefined, "not a millisecond early");
  h.clock.advance(1);

  assertClosed(h, silent, CloseCode.HandshakeTimeout, /no hello within/);
  assert.deepEqual(kindsSent(silent), [ServerKind.Reject]);
  assert.equal(slow.transport.closedWith, undefined);
  assert.ok(h.server.hub.has(slow.playerId));
  h.clock.advance(LIMITS.handshakeTimeoutMs);
  assert.equal(slow.transport.closedWith, undefined, "a hello cancels the timer for good");
  assert.equal(h.clock.pending, 1, "only the scheduler's timer is left");
  assertUnharmed(h, b);
});

Deno.test("a second hello closes the connection with 4000 and takes the player out of the hub", () => {
  using h = new NetHarness();
  const b = bystander(h);
  const c = new RawClient(h.server, "10.0.0.1");
  c.hello("Twice");
  const id = c.playerId;
  c.hello("Twice");
  assertClosed(h, c, CloseCode.BadMessage, /duplicate hello/);
  assert.equal(h.server.hub.has(id), false);
  assert.equal(h.server.playerCount, 1);
  assertUnharmed(h, b);
});

Deno.test("input or ping before the hello closes the connection with 4000", () => {
  using h = new NetHarness();
  const b = bystander(h);
  const eager = new RawClient(h.server, "10.0.0.1");
  eager.input([frame(h.server.hub.world.tick)]);
  assertClosed(h, eager, CloseCode.BadMessage, /expected hello first/);

  const pinger = new RawClient(h.server, "10.0.0.2");
  pinger.ping(1);
  assertClosed(h, pinger, CloseCode.BadMessage, /expected hello first/);
  assert.deepEqual(kindsSent(pinger), [ServerKind.Reject], "no Pong before the hello");
  assert.equal(h.server.counters.closes[String(CloseCode.BadMessage)], 2);
  assertUnharmed(h, b);
});

// ---------------------------------------------------------------- names

const NAME_RULE =
  /name must be 1–16 letters, digits, spaces, _ \. -|name has invisible characters|name mixes/;

const BAD_NAMES: readonly [what: string, name: string][] = [
  ["17 letters", "A".repeat(LIMITS.maxNameLength + 1)],
  ["17 letters inside spaces", `  ${"b".repeat(LIMITS.maxNameLength + 1)}  `],
  ["17 astral letters (34 UTF-16 units)", "𝒜".repeat(LIMITS.maxNameLength + 1)],
  ["64 characters", "c".repeat(LIMITS.maxNameLength * 4)],
  ["empty", ""],
  ["spaces only", "    "],
  ["whitespace controls only", "\t\n\r"],
  ["NUL", "Ann\u0000"],
  ["BEL", "\u0007Bell"],
  ["an ANSI escape", "\u001b[31mRed"],
  ["DEL", "Del\u007f"],
  ["a C1 control (NEL)", "Nel\u0085x"],
  ["a zero-width space", "Ann\u200bBo"],
  ["a right-to-left override", "\u202eevil"],
  ["an emoji", "😀"],
  ["a letter and an emoji", "Ann😀"],
  ["an emoji with a skin tone", "👍🏽"],
  ["markup", "<script>"],
  ["a slash", "a/b"],
  ["an at sign", "me@x"],
  ["a Hangul filler alone", "\u3164"],
  ["a Hangul filler inside a name", "Ann\u3164"],
  ["a halfwidth Hangul filler", "\uFFA0\uFFA0"],
  ["a Braille blank", "\u2800"],
  ["a zero-width joiner", "An\u200dn"],
  ["a soft hyphen", "An\u00adn"],
  ["a combining mark first", "\u0301Ann"],
  ["a pile of combining marks", "Ann\u0336\u0336\u0336"],
  ["Latin with a Cyrillic a", "N\u043Eva"],
  ["Greek with Latin", "Ωmega-7"],
  ["separators only", "._-"],
];

for (const [what, name] of BAD_NAMES) {
  Deno.test(`a hello with a bad name (${what}) gets a Reject and close 4006`, () => {
    using h = new NetHarness();
    const b = bystander(h);
    const c = new RawClient(h.server, "10.0.0.1");
    c.hello(name);
    assertClosed(h, c, CloseCode.BadName, NAME_RULE);
    const messages = c.transport.messages();
    assert.equal(messages.length, 1, "a Reject and nothing else");
    const [reject] = messages;
    assert.ok(reject.kind === ServerKind.Reject);
    assert.equal(reject.code, CloseCode.BadName);
    assert.match(reject.reason, NAME_RULE);
    assert.equal(h.server.playerCount, 1);
    assertUnharmed(h, b);
  });
}

const GOOD_NAMES: readonly [name: string, stored: string][] = [
  ["Zoë", "Zoë"],
  ["  Zoë  ", "Zoë"],
  ["B".repeat(LIMITS.maxNameLength), "B".repeat(LIMITS.maxNameLength)],
  // NFKC: mathematical script capitals are plain letters, full-width forms are ASCII.
  ["𝒜".repeat(LIMITS.maxNameLength), "A".repeat(LIMITS.maxNameLength)],
  ["Ｎｏｖａ", "Nova"],
  ["李小龍", "李小龍"],
  ["Ωμέγα-7", "Ωμέγα-7"],
  ["Дмитрий", "Дмитрий"],
  ["김철수", "김철수"],
  ["a.b c_d-e", "a.b c_d-e"],
  ["Ünal   2", "Ünal 2"],
  // Whitespace controls inside a name collapse to one space: what is kept has none.
  ["Ann\tBo", "Ann Bo"],
  ["Ann\n\nBo", "Ann Bo"],
];

Deno.test("valid names, Unicode letters included, are accepted and stored normalised", () => {
  for (const [name, stored] of GOOD_NAMES) {
    using h = new NetHarness();
    const c = new RawClient(h.server, "10.0.1.1");
    c.hello(name);
    assert.equal(c.transport.closedWith, undefined, JSON.stringify(name));
    assert.deepEqual(kindsSent(c).slice(0, 2), [ServerKind.Welcome, ServerKind.Enter]);
    assert.equal(c.conn.name, stored);
    assert.equal(h.server.hub.world.players.get(c.playerId)?.name, stored);
    const checked = checkName(name, LIMITS.maxNameLength);
    assert.ok(checked.ok && checked.name === stored, JSON.stringify(checked));
    assert.equal(h.server.playerCount, 1);
  }
});

Deno.test("a hello from a client built with other content gets 4001 and 'reload the page'", () => {
  using h = new NetHarness();
  const b = bystander(h);
  const c = new RawClient(h.server, "10.0.0.1");
  c.hello("Stale Tab", { content: (CONTENT_HASH ^ 1) >>> 0 });
  assertClosed(h, c, CloseCode.VersionMismatch, /content [0-9a-f]{8} is not this server's.*reload/);
  assert.deepEqual(kindsSent(c), [ServerKind.Reject]);
  assert.equal(h.server.playerCount, 1, "only the bystander was admitted");
  assertUnharmed(h, b);
});

Deno.test("a very long name meets the name rules, not the codec: 4006 with a Reject", () => {
  using h = new NetHarness();
  const b = bystander(h);
  const c = new RawClient(h.server, "10.0.0.1");
  c.send(encodeClientMessage(new MessageEncoder(), {
    kind: ClientKind.Hello,
    version: PROTOCOL_VERSION,
    name: "d".repeat(LIMITS.maxNameLength * 4 + 1),
    content: CONTENT_HASH,
  }));
  assertClosed(h, c, CloseCode.BadName, /name must be/);
  assert.deepEqual(kindsSent(c), [ServerKind.Reject]);
  assertUnharmed(h, b);
});

// ---------------------------------------------------------------- names in use

const LOOKALIKES: readonly [first: string, second: string][] = [
  ["Nova", "Nova"],
  ["Nova", "nova"],
  ["Nova", "NOVA"],
  ["Nova", "N o v a"],
  ["Nova", "No.va"],
  ["Nova", "Nóva"],
  ["Nova", "N0va"],
  ["Nova", "Ｎｏｖａ"],
  ["Ivan", "lvan"],
  ["Ivan", "1van"],
  ["Dima", "Dirna"],
  ["Bob", "Вов"],
  ["Poxep", "Рохер"],
  ["Hoth", "Ноth".replace("th", "тһ")],
];

for (const [first, second] of LOOKALIKES) {
  Deno.test(`"${second}" is refused with 4006 while "${first}" plays; free again once they leave`, () => {
    using h = new NetHarness();
    const a = new RawClient(h.server, "10.0.0.1");
    a.hello(first);
    assert.equal(a.transport.closedWith, undefined, `${first} is a valid name`);
    const b = new RawClient(h.server, "10.0.0.2");
    b.hello(second);
    assertClosed(h, b, CloseCode.BadName, /is taken right now/);
    assertUnharmed(h, a);
    a.hangUp();
    const c = new RawClient(h.server, "10.0.0.3");
    c.hello(second);
    assert.equal(c.transport.closedWith, undefined, `${second} is free once ${first} left`);
  });
}

Deno.test("names that only look alike in part stay distinct", () => {
  using h = new NetHarness();
  for (const [i, name] of ["Nova", "Novak", "Nova 2", "Avon", "Ann", "Anna"].entries()) {
    const c = new RawClient(h.server, `10.0.2.${i}`);
    c.hello(name);
    assert.equal(c.transport.closedWith, undefined, name);
  }
  assert.equal(h.server.playerCount, 6);
});
