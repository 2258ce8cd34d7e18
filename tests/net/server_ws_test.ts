/**
 * The real thing, kept short: the Hono app on Deno.serve at 127.0.0.1 (any port),
 * a GameServer on the real clock and real WebSockets. Bad input closes only the
 * offending socket, with its close code and a reason, while a bystander in the
 * same hub keeps receiving snapshots at the normal rate.
 */
import assert from "node:assert/strict";
import { LIMITS, SNAPSHOT_HZ } from "../../content/net_tuning.ts";
import {
  decodeServerMessage,
  encodeClientMessage,
  MessageDecoder,
  MessageEncoder,
} from "../../net/codec.ts";
import {
  ClientKind,
  CloseCode,
  PROTOCOL_VERSION,
  ServerKind,
  type ServerMessage,
} from "../../net/protocol.ts";
import { realClock } from "../../net/scheduler.ts";
import { GameServer } from "../../net/server.ts";
import { createApp } from "../../routes/app.ts";

/** A game server behind the real app on a free port; `await using` shuts both down. */
class LiveServer implements AsyncDisposable {
  readonly server = new GameServer({ clock: realClock, seed: 1 });
  readonly http: Deno.HttpServer<Deno.NetAddr>;
  readonly url: string;

  constructor() {
    this.server.start();
    const app = createApp(this.server, { clientJs: () => Promise.resolve("") });
    this.http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
    this.url = `ws://127.0.0.1:${this.http.addr.port}/ws`;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.server.shutdown("test over");
    await this.http.shutdown();
  }
}

/** A plain WebSocket that decodes and keeps every server message, with its arrival time. */
class Socket {
  readonly ws: WebSocket;
  readonly received: { atMs: number; msg: ServerMessage }[] = [];
  readonly opened: Promise<void>;
  readonly closed: Promise<CloseEvent>;
  readonly #decoder = new MessageDecoder();
  readonly #encoder = new MessageEncoder();
  readonly #waiters: { kind: number; resolve: (m: ServerMessage) => void }[] = [];

  constructor(url: string) {
    const ws = new WebSocket(url);
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    this.opened = new Promise((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error(`Cannot open ${url}`));
    });
    this.closed = new Promise((resolve) => ws.onclose = resolve);
    ws.onmessage = (e) => {
      assert.ok(e.data instanceof ArrayBuffer, "the server sends binary frames only");
      const msg = decodeServerMessage(this.#decoder, new Uint8Array(e.data));
      this.received.push({ atMs: performance.now(), msg });
      for (let i = this.#waiters.length - 1; i >= 0; i--) {
        if (this.#waiters[i].kind === msg.kind) this.#waiters.splice(i, 1)[0].resolve(msg);
      }
    };
  }

  hello(name: string, version = PROTOCOL_VERSION): void {
    this.ws.send(encodeClientMessage(this.#encoder, { kind: ClientKind.Hello, version, name }));
  }

  /** The first message of `kind`, already here or still to come. */
  first(kind: number): Promise<ServerMessage> {
    const seen = this.received.find((r) => r.msg.kind === kind);
    if (seen) return Promise.resolve(seen.msg);
    return new Promise((resolve) => this.#waiters.push({ kind, resolve }));
  }

  /** Snapshots that arrived at or after `sinceMs`. */
  snapshotsSince(sinceMs: number): number {
    return this.received.filter((r) => r.msg.kind === ServerKind.Snapshot && r.atMs >= sinceMs)
      .length;
  }

  /** Closes from our side (if still open) and waits for the close to complete. */
  async close(): Promise<CloseEvent> {
    if (this.ws.readyState <= WebSocket.OPEN) this.ws.close(1000, "done");
    return await this.closed;
  }
}

/** A hello, encoded. */
function helloBytes(name: string): Uint8Array {
  return encodeClientMessage(new MessageEncoder(), {
    kind: ClientKind.Hello,
    version: PROTOCOL_VERSION,
    name,
  });
}

Deno.test("a hello with the wrong protocol version gets a Reject and close code 4001", async () => {
  await using live = new LiveServer();
  const s = new Socket(live.url);
  await s.opened;
  const wrong = PROTOCOL_VERSION + 1;
  s.hello("Old Client", wrong);
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
      s.ws.send(hello.subarray(0, hello.length - 3));
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
