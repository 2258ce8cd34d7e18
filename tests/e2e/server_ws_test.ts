/**
 * The real thing, kept short: the Hono app on Deno.serve at 127.0.0.1 (any port),
 * a GameServer on the real clock and real WebSockets. Bad input closes only the
 * offending socket, with its close code and a reason, while a bystander in the
 * same hub keeps receiving snapshots at the normal rate.
 */
import { CONTENT_HASH } from "../../content/mod.ts";
import assert from "node:assert/strict";
import { LIMITS, SNAPSHOT_HZ, TICKS_PER_SNAPSHOT } from "../../content/net_tuning.ts";
import { encodeClientMessage, MessageEncoder } from "../../net/wire/codec.ts";
import { ClientKind, CloseCode, PROTOCOL_VERSION, ServerKind } from "../../net/wire/protocol.ts";
import { LiveServer, LiveSocket as Socket, stallTheLoop } from "../net/_harness.ts";

/** A hello, encoded. */
function helloBytes(name: string): Uint8Array {
  return encodeClientMessage(new MessageEncoder(), {
    kind: ClientKind.Hello,
    version: PROTOCOL_VERSION,
    name,
    content: CONTENT_HASH,
  });
}

Deno.test("a hello with the wrong protocol version gets a Reject and close code 4001", async () => {
  await using live = new LiveServer();
  const s = new Socket(live.url);
  await s.opened;
  const wrong = PROTOCOL_VERSION + 1;
  s.hello("Old Client", { version: wrong });
  const closed = await s.closed;

  assert.equal(closed.code, CloseCode.VersionMismatch);
  assert.match(closed.reason, new RegExp(`version ${wrong}\\b`));
  const kinds = s.received.map((r) => r.msg.kind);
  assert.deepEqual(kinds, [ServerKind.Reject], "a Reject and nothing else");
  const reject = s.received[0].msg;
  assert.ok(reject.kind === ServerKind.Reject);
  assert.equal(reject.code, CloseCode.VersionMismatch);
  assert.match(reject.reason, new RegExp(`version ${wrong}\\b.*${PROTOCOL_VERSION}`));
  assert.equal(live.server.counters.closes[String(CloseCode.VersionMismatch)], 1);
  assert.equal(live.server.connections.size, 0);
});

/** One way to misbehave, and how the server must answer it. */
interface BadCase {
  readonly what: string;
  /** Say a proper hello first, so the offender is a player in the same hub. */
  readonly joinFirst: boolean;
  readonly send: (s: Socket) => void;
  readonly code: number;
  readonly reason: RegExp;
  /** The close comes after a Reject message. */
  readonly reject?: boolean;
}

const BAD_CASES: readonly BadCase[] = [
  {
    what: "garbage bytes",
    joinFirst: true,
    send: (s) => s.ws.send(new Uint8Array([0xff, 0xfe, 0x13, 0x37])),
    code: CloseCode.BadMessage,
    reason: /not CBOR/,
  },
  {
    what: "truncated CBOR",
    joinFirst: false,
    send: (s) => {
      const hello = helloBytes("Cut Short");
      s.ws.send(hello.subarray(0, hello.length - 5)); // the content hash, whole
    },
    code: CloseCode.BadMessage,
    reason: /not CBOR.*end of CBOR data/,
  },
  {
    what: "an oversized binary frame",
    joinFirst: true,
    send: (s) => s.ws.send(new Uint8Array(LIMITS.maxClientFrameBytes + 1)),
    code: CloseCode.FrameTooLarge,
    reason: new RegExp(`${LIMITS.maxClientFrameBytes + 1} bytes exceeds`),
  },
  {
    what: "a text frame",
    joinFirst: true,
    send: (s) => s.ws.send("hello?"),
    code: CloseCode.BadMessage,
    reason: /text frames/,
  },
  {
    what: "a hello with a bad name",
    joinFirst: false,
    send: (s) => s.hello("<script>"),
    code: CloseCode.BadName,
    reason: /name must be/,
    reject: true,
  },
];

Deno.test("bad frames close only the offending socket while the hub's snapshots flow on", async () => {
  await using live = new LiveServer();
  const watcher = new Socket(live.url);
  await watcher.opened;
  watcher.hello("Watcher");
  await watcher.first(ServerKind.Enter);
  const windowStart = performance.now();

  for (const [i, bad] of BAD_CASES.entries()) {
    const s = new Socket(live.url);
    await s.opened;
    if (bad.joinFirst) {
      s.hello(`Offender ${i}`);
      await s.first(ServerKind.Enter);
    }
    bad.send(s);
    const closed = await s.closed;
    assert.equal(closed.code, bad.code, `${bad.what}: close code`);
    assert.match(closed.reason, bad.reason, `${bad.what}: close reason`);
    if (bad.reject) {
      const reject = await s.first(ServerKind.Reject);
      assert.ok(reject.kind === ServerKind.Reject && reject.code === bad.code, bad.what);
      assert.match(reject.reason, bad.reason);
    }
    assert.equal(watcher.ws.readyState, WebSocket.OPEN, `${bad.what}: the watcher is unharmed`);
  }
  assert.equal(live.server.connections.size, 1, "only the watcher is left");
  assert.equal(live.server.hub.size, 1);

  // Measure the watcher's snapshots over a window of about a second.
  const elapsed = performance.now() - windowStart;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - elapsed)));
  const windowMs = performance.now() - windowStart;
  const perSec = (watcher.snapshotsSince(windowStart) / windowMs) * 1000;
  console.log(
    `watcher: ${perSec.toFixed(1)} snapshots/s over ${windowMs.toFixed(0)} ms ` +
      `(nominal ${SNAPSHOT_HZ}); ${live.server.counters.snapshotsSkipped} skipped in all; ` +
      `closes ${JSON.stringify(live.server.counters.closes)}`,
  );
  assert.ok(perSec >= 15, `${perSec.toFixed(1)} snapshots/s`);

  const bye = await watcher.close();
  assert.equal(bye.code, 1000);
});

Deno.test("a stall of the server's loop costs a client that keeps up no snapshot", async () => {
  // After a stall the loop runs the ticks it owes in one turn of the event loop, and
  // Deno's socket writes only between turns: each tick finds the last one's frame still
  // buffered. Only bytes left from an earlier turn may cost a snapshot.
  await using live = new LiveServer();
  const watcher = new Socket(live.url);
  await watcher.opened;
  watcher.hello("Watcher");
  await watcher.first(ServerKind.Enter);
  await watcher.next(ServerKind.Snapshot);
  const late = await stallTheLoop(live.server);
  const ticks = watcher.received.flatMap((r) =>
    r.msg.kind === ServerKind.Snapshot ? [r.msg.tick] : []
  );
  const gaps = ticks.slice(1).map((t, i) => t - ticks[i]).filter((d) => d !== TICKS_PER_SNAPSHOT);
  console.log(
    `${ticks.length} snapshots, ${late} late ticks caught up, ` +
      `${live.server.counters.snapshotsSkipped} skipped, gaps ${JSON.stringify(gaps)}`,
  );
  assert.ok(late >= 5, "the stalls made the loop catch up");
  assert.equal(live.server.counters.snapshotsSkipped, 0, "no snapshot skipped");
  assert.deepEqual(gaps, [], "a snapshot for every snapshot tick");
  await watcher.close();
});
