/**
 * The link simulator on real sockets: the TCP relay between a real WebSocket and
 * the real server (delay both ways, a cut that holds everything, a cut that resets
 * every connection and refuses new ones), and the server's own LINK_SIM wrapping.
 */
import assert from "node:assert/strict";
import { LinkRelay, linkSpec, parseLinkSpec } from "../../net/link/mod.ts";
import { ServerKind } from "../../net/wire/protocol.ts";
import { LiveServer, LiveSocket } from "../net/_harness.ts";

/** Hello → Welcome round trip, in ms. Names in use at once must differ. */
async function handshakeMs(
  url: string,
  name = "Relay",
): Promise<{ ms: number; socket: LiveSocket }> {
  const socket = new LiveSocket(url);
  await socket.opened;
  const t0 = performance.now();
  socket.hello(name);
  await socket.first(ServerKind.Welcome);
  return { ms: performance.now() - t0, socket };
}

function target(live: LiveServer) {
  return { hostname: "127.0.0.1", port: live.http.addr.port };
}

Deno.test("the relay delays both directions: a hello's answer takes the round trip", async () => {
  await using live = new LiveServer();
  await using relay = LinkRelay.start({ target: target(live), spec: linkSpec({ delayMs: 100 }) });
  const direct = await handshakeMs(live.url);
  const relayed = await handshakeMs(relay.url("ws", "/ws"), "Relayed");
  console.log(
    `hello→welcome: direct ${direct.ms.toFixed(1)} ms, relayed ${relayed.ms.toFixed(1)} ms`,
  );
  assert.ok(relayed.ms >= 200, `relayed round trip ${relayed.ms} ms`);
  assert.ok(relayed.ms < 400, `relayed round trip ${relayed.ms} ms`);
  assert.ok(relay.stats.bytesUp > 0 && relay.stats.bytesDown > 0);
  await direct.socket.close();
  await relayed.socket.close();
});

Deno.test("a cut holds the stream for its length, then everything arrives in order", async () => {
  await using live = new LiveServer();
  await using relay = LinkRelay.start({ target: target(live), spec: linkSpec({ delayMs: 10 }) });
  const { socket } = await handshakeMs(relay.url("ws", "/ws"));
  await socket.first(ServerKind.Snapshot);
  relay.cut(600);
  const cutAt = performance.now();
  await new Promise((r) => setTimeout(r, 400));
  const during = socket.snapshotsSince(cutAt + 20);
  await new Promise((r) => setTimeout(r, 500));
  const after = socket.snapshotsSince(cutAt + 20);
  console.log(`snapshots after the cut began: ${during} within 400 ms, ${after} by 900 ms`);
  assert.equal(during, 0, "nothing arrives while the link is cut");
  assert.ok(after >= 8, `the held snapshots arrived: ${after}`);
  const ticks = socket.received.filter((r) => r.msg.kind === ServerKind.Snapshot).map((r) =>
    (r.msg as { tick: number }).tick
  );
  for (let i = 1; i < ticks.length; i++) assert.ok(ticks[i] > ticks[i - 1], "order kept");
  assert.equal(relay.open, 1, "the connection survived the cut");
  await socket.close();
});

Deno.test("a resetting cut closes every connection and refuses new ones until it ends", async () => {
  // A broken link keeps its player waiting for a resume for the grace: a short one here.
  await using live = new LiveServer({ limits: { resumeGraceMs: 400 } });
  await using relay = LinkRelay.start({ target: target(live), spec: linkSpec({}) });
  const { socket } = await handshakeMs(relay.url("ws", "/ws"));
  relay.cut(500, { reset: true });
  const closed = await socket.closed;
  assert.notEqual(closed.code, 1000, "not a clean close");
  const refused = new LiveSocket(relay.url("ws", "/ws"));
  await assert.rejects(refused.opened, /Cannot open/);
  await refused.closed;
  await new Promise((r) => setTimeout(r, 550));
  const again = await handshakeMs(relay.url("ws", "/ws"));
  assert.equal(relay.stats.resets, 1);
  await again.socket.close();
  // The server noticed the broken connection and, the grace over, let its player go.
  for (let i = 0; i < 50 && live.server.playerCount > 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(live.server.playerCount, 0);
});

Deno.test("LINK_SIM on the server delays both ways of every game connection", async () => {
  await using live = new LiveServer({ linkSim: parseLinkSpec("80") });
  const { ms, socket } = await handshakeMs(live.url);
  console.log(`hello→welcome with LINK_SIM=80: ${ms.toFixed(1)} ms`);
  assert.ok(ms >= 160 && ms < 350, `round trip ${ms} ms`);
  await socket.close();
});
