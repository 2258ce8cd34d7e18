/**
 * WebTransport for real: Deno's QuicEndpoint on a free UDP port with a certificate
 * made by net/server/certs.ts, the Hono app offering it at /transport, and Deno's
 * own WebTransport client (the same code path the browser takes). Snapshots arrive
 * as datagrams, input goes as datagrams, a dead UDP port falls back to WebSocket
 * within the 1 s budget, rotation keeps open sessions, and bad bytes on the stream
 * close only their session.
 */
import assert from "node:assert/strict";
import { WEBTRANSPORT } from "../../content/net_tuning.ts";
import {
  connectClient,
  fetchServerAddress,
  type ReconnectReason,
  type ServerAddress,
} from "../../net/client/connect.ts";
import {
  GameServer,
  realClock,
  selfSignedCertificate,
  WEBTRANSPORT_PATH,
  WebTransportServer,
} from "../../net/server/mod.ts";
import { CloseCode } from "../../net/wire/protocol.ts";
import { createApp } from "../../routes/app.ts";
import { stallTheLoop } from "../net/_harness.ts";

/** A game server with the app on a free TCP port and WebTransport on a free UDP port. */
class LiveWtServer implements AsyncDisposable {
  readonly server = new GameServer({ clock: realClock, seed: 3 });
  readonly wt: WebTransportServer;
  readonly http: Deno.HttpServer<Deno.NetAddr>;
  certificatesMade = 0;

  constructor() {
    this.server.start();
    this.wt = new WebTransportServer(this.server, {
      hostname: "127.0.0.1",
      port: 0,
      certificate: () => {
        this.certificatesMade++;
        return selfSignedCertificate(Date.now(), {
          validityDays: WEBTRANSPORT.certValidityDays,
          hostnames: ["127.0.0.1"],
        });
      },
      rotateEveryMs: 3_600_000,
    });
    const app = createApp(this.server, {
      clientJs: () => Promise.resolve(""),
      webTransport: () => ({
        port: this.wt.port,
        path: WEBTRANSPORT_PATH,
        certificateHashes: this.wt.certificateHashes,
      }),
    });
    this.http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  }

  get pageUrl(): string {
    return `http://127.0.0.1:${this.http.addr.port}/`;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.server.shutdown("test over");
    await new Promise((r) => setTimeout(r, 50));
    this.wt.close();
    await this.http.shutdown();
  }
}

async function waitFor(what: string, cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = performance.now();
  while (!cond()) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A client that updates every 8 ms, moving right, and counts its snapshots. */
function player(address: ServerAddress, name: string) {
  const snapshots: number[] = [];
  const reconnecting: ReconnectReason[] = [];
  const client = connectClient(address, {
    name,
    now: () => performance.now(),
    onSnapshot: (_s, at) => snapshots.push(at),
    onReconnecting: (why) => reconnecting.push(why),
  });
  const timer = setInterval(() => {
    client.runtime.update(performance.now(), () => ({ moveX: 100, moveY: 0, aim: 0, buttons: 0 }));
  }, 8);
  return {
    client,
    snapshots,
    reconnecting,
    async stop(): Promise<void> {
      clearInterval(timer);
      client.close(1000, "done");
      await client.closed;
    },
  };
}

Deno.test("a client plays over WebTransport: datagram snapshots in, datagram input out", async () => {
  await using live = new LiveWtServer();
  await live.wt.start();
  const address = await fetchServerAddress(live.pageUrl);
  assert.ok(address.webTransport, "the page is offered WebTransport");
  assert.equal(address.webTransport.certificateHashes.length, 1, "with a pinned certificate");

  const p = player(address, "Quic");
  await waitFor("the hub", () => p.client.runtime.instanceId === "hub");
  assert.equal(p.client.transport, "webtransport");
  const conn = [...live.server.connections][0];
  assert.equal(conn.transportKind, "webtransport");
  const startX = p.client.runtime.selfSnapshot()?.x ?? 0;
  const since = performance.now();
  await new Promise((r) => setTimeout(r, 1000));
  const got = p.snapshots.filter((t) => t >= since).length;
  assert.ok(got >= 15, `${got} snapshots in 1 s (nominal 20)`);
  const x = p.client.runtime.selfSnapshot()?.x ?? 0;
  assert.ok(x > startX + 100, `input datagrams moved the ship (x ${startX} → ${x})`);
  assert.ok(conn.snapshotAck > 0, "the client acknowledges snapshots in its input");
  assert.ok(
    live.server.counters.inputVerdicts.replay > 0,
    "redundant copies arrive and are dropped as replays",
  );
  await p.stop();
  await waitFor("the server to forget the session", () => live.server.connections.size === 0);
});

Deno.test("a server shutdown reaches a WebTransport client as 4009 with its reason: it waits for the restart", async () => {
  await using live = new LiveWtServer();
  await live.wt.start();
  const p = player(await fetchServerAddress(live.pageUrl), "Leaver");
  await waitFor("the hub", () => p.client.runtime.instanceId === "hub");
  assert.equal(p.client.transport, "webtransport");
  live.server.shutdown("server restarting");
  await waitFor("the restart seen", () => p.reconnecting.length > 0);
  assert.deepEqual(p.reconnecting, ["restart"], "4009 is a restart: the client will come back");
  assert.equal(p.client.runtime.phase, "reconnecting");
  assert.equal(p.client.runtime.closeReason, "server restarting");
  await p.stop();
  assert.equal((await p.client.closed).code, 1000, "until the player leaves");
});

Deno.test("with no UDP answer the client falls back to WebSocket within the budget", async () => {
  await using live = new LiveWtServer();
  // Nothing listens on this UDP port: QUIC alone would give up only after ~10 s.
  const silent = Deno.listenDatagram({ transport: "udp", hostname: "127.0.0.1", port: 0 });
  const port = (silent.addr as Deno.NetAddr).port;
  try {
    const hash = (await selfSignedCertificate(Date.now(), { validityDays: 1, hostnames: [] }))
      .sha256;
    const address: ServerAddress = {
      webSocketUrl: `ws://127.0.0.1:${live.http.addr.port}/ws`,
      webTransport: {
        url: `https://127.0.0.1:${port}${WEBTRANSPORT_PATH}`,
        certificateHashes: [btoa(String.fromCharCode(...hash))],
      },
    };
    const started = performance.now();
    const p = player(address, "Blocked");
    await waitFor("the hub", () => p.client.runtime.instanceId === "hub", 5000);
    const tookMs = performance.now() - started;
    assert.equal(p.client.transport, "websocket");
    assert.match(p.client.fallbackReason, /did not open within 1000 ms/);
    assert.ok(tookMs < WEBTRANSPORT.fallbackAfterMs + 500, `in the hub after ${tookMs} ms`);
    await p.stop();
  } finally {
    silent.close();
  }
});

Deno.test("rotation: new sessions get the new certificate, open ones keep playing", async () => {
  await using live = new LiveWtServer();
  await live.wt.start();
  const before = await fetchServerAddress(live.pageUrl);
  const old = player(before, "Before");
  await waitFor("the hub", () => old.client.runtime.instanceId === "hub");

  await live.wt.rotate();
  const after = await fetchServerAddress(live.pageUrl);
  assert.equal(live.certificatesMade, 2);
  assert.notDeepEqual(
    after.webTransport?.certificateHashes,
    before.webTransport?.certificateHashes,
  );
  const fresh = player(after, "After");
  await waitFor("the hub", () => fresh.client.runtime.instanceId === "hub");
  assert.equal(fresh.client.transport, "webtransport", fresh.client.fallbackReason);

  const since = performance.now();
  await new Promise((r) => setTimeout(r, 500));
  assert.ok(old.snapshots.filter((t) => t >= since).length >= 7, "the old session still plays");
  // The old hash no longer opens a session: the page must fetch the new one.
  const stale = connectClient(before, { name: "Stale", now: () => performance.now() });
  await waitFor("a transport", () => stale.transport !== undefined, 3000);
  assert.equal(stale.transport, "websocket");
  stale.close();
  await stale.closed;
  await old.stop();
  await fresh.stop();
});

Deno.test("bad bytes on the stream close only that session, with a reason", async () => {
  await using live = new LiveWtServer();
  await live.wt.start();
  const address = await fetchServerAddress(live.pageUrl);
  const bystander = player(address, "Bystander");
  await waitFor("the hub", () => bystander.client.runtime.instanceId === "hub");

  const target = address.webTransport!;
  const session = new WebTransport(target.url, {
    serverCertificateHashes: target.certificateHashes.map((h) => ({
      algorithm: "sha-256",
      value: Uint8Array.from(atob(h), (c) => c.charCodeAt(0)),
    })),
  });
  await session.ready;
  const stream = await session.createBidirectionalStream();
  const w = stream.writable.getWriter();
  await w.write(new Uint8Array([0xff, 0x13, 0x37]));
  const info = await session.closed;
  assert.equal(info.closeCode, CloseCode.BadMessage);
  assert.match(info.reason ?? "", /not CBOR/);

  const since = performance.now();
  await new Promise((r) => setTimeout(r, 500));
  assert.ok(bystander.snapshots.filter((t) => t >= since).length >= 7, "the bystander plays on");
  assert.equal(bystander.client.transport, "webtransport");
  await bystander.stop();
});

Deno.test("a stall of the server's loop costs a WebTransport client no snapshot", async () => {
  // The ticks a stall owes run in one turn of the event loop, and a datagram written in
  // that turn waits for the loop to turn: the next tick's must not be skipped behind it.
  await using live = new LiveWtServer();
  await live.wt.start();
  const p = player(await fetchServerAddress(live.pageUrl), "Quic");
  await waitFor("the hub", () => p.client.runtime.instanceId === "hub");
  assert.equal(p.client.transport, "webtransport");
  assert.ok(await stallTheLoop(live.server) >= 5, "the stalls made the loop catch up");
  assert.equal(live.server.counters.snapshotsSkipped, 0, "no snapshot skipped");
  await p.stop();
});
