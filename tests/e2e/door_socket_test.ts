/**
 * Game sockets the front door ends itself (net/server/door_socket.ts), over real TCP
 * with a real WebSocket client: messages both ways byte for byte, the app's handler
 * sees the door's address header, closes both ways with their codes, a refused
 * upgrade answered with the app's own status, a frame over the cap closed with 4004
 * (and the server hears 4004), and a client that stops reading cut off.
 */
import assert from "node:assert/strict";
import { FrontDoor } from "../../net/server/front_door.ts";
import type { NativeTcp } from "../../net/server/native_tcp.ts";
import { onBothSockets } from "./socket_kinds.ts";
import { realClock } from "../../net/server/scheduler.ts";
import { type ServerSocket, upgradeWebSocket } from "../../net/server/server_socket.ts";

const LIMITS = {
  maxConnectionsPerIp: 10,
  maxConnections: 100,
  headerTimeoutMs: 1000,
  maxHeaderBytes: 4096,
  maxBodyBytes: 1024,
  idleMs: 1000,
  writeStallMs: 500,
  maxMessageBytes: 4096,
  controlPerSec: 10,
  controlBurst: 20,
};

/** What the app side saw of one socket. */
interface Seen {
  socket: ServerSocket;
  peer: string | null;
  messages: (string | Uint8Array)[];
  closed: Promise<{ code: string; reason: string }>;
}

/** A door whose /ws is ended by the door; /no answers 403; nothing behind it otherwise. */
function door(native: NativeTcp | undefined): { door: FrontDoor; sockets: Seen[] } {
  const sockets: Seen[] = [];
  const d = FrontDoor.listen({
    hostname: "127.0.0.1",
    port: 0,
    native,
    // Nothing listens there: only door-ended sockets are used in these tests.
    backend: { hostname: "127.0.0.1", port: 9 },
    limits: LIMITS,
    peerHeader: "x-warden-peer",
    clock: realClock,
    sockets: {
      path: "/ws",
      fetch: (req) => {
        if (new URL(req.url).searchParams.has("refuse")) {
          return Response.json({ reason: "origin not allowed" }, { status: 403 });
        }
        let up;
        try {
          up = upgradeWebSocket(req);
        } catch (err) {
          return new Response((err as Error).message, { status: 400 });
        }
        let closed!: (c: { code: string; reason: string }) => void;
        const seen: Seen = {
          socket: up.socket,
          peer: req.headers.get("x-warden-peer"),
          messages: [],
          closed: new Promise((r) => closed = r),
        };
        up.socket.listen({
          message: (data) => seen.messages.push(data),
          closed: (code, reason) => closed({ code, reason }),
        });
        sockets.push(seen);
        return up.response;
      },
    },
  });
  return { door: d, sockets };
}

/** A client socket through the door, once the app holds its end. */
async function connect(d: FrontDoor, sockets: readonly Seen[]): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${d.addr.port}/ws`);
  ws.binaryType = "arraybuffer";
  await opened(ws);
  await until(() => sockets.length === 1, "the app's socket");
  return ws;
}

function opened(ws: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error("socket failed"));
  });
}

function closedEvent(ws: WebSocket): Promise<CloseEvent> {
  return new Promise((resolve) => ws.addEventListener("close", (e) => resolve(e)));
}

/** A TCP connection that has sent an upgrade request by hand. */
async function rawUpgrade(d: FrontDoor, path: string, key: string): Promise<Deno.TcpConn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: d.addr.port });
  await conn.write(new TextEncoder().encode(
    `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: Upgrade\r\nupgrade: websocket\r\n` +
      `sec-websocket-version: 13\r\nsec-websocket-key: ${key}\r\n\r\n`,
  ));
  return conn;
}

async function until(check: () => boolean, what: string, ms = 2000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

onBothSockets(
  "a door-ended socket carries messages both ways; the server's close reaches the client",
  async (native) => {
    const { door: d, sockets } = door(native);
    await using _ = d;
    const ws = await connect(d, sockets);
    const got: Uint8Array[] = [];
    ws.onmessage = (e) => got.push(new Uint8Array(e.data as ArrayBuffer));
    const seen = sockets[0];
    assert.equal(seen.peer, "127.0.0.1", "the door wrote the client's address");
    const big = Uint8Array.from({ length: 3000 }, (_, i) => i & 0xff);
    ws.send(Uint8Array.of(1, 2, 3));
    ws.send("hé");
    ws.send(big);
    await until(() => seen.messages.length === 3, "three messages");
    assert.deepEqual(seen.messages, [Uint8Array.of(1, 2, 3), "hé", big]);
    for (const n of [0, 125, 126, 70_000]) {
      seen.socket.send(Uint8Array.from({ length: n }, (_, i) => (i * 7) & 0xff));
    }
    await until(() => got.length === 4, "four messages back");
    assert.deepEqual(got.map((g) => g.byteLength), [0, 125, 126, 70_000]);
    assert.deepEqual(got[3], Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7) & 0xff));
    await until(() => seen.socket.bufferedAmount === 0, "the writes to finish");
    const clientClosed = closedEvent(ws);
    seen.socket.close(4009, "server restarting");
    const e = await clientClosed;
    assert.equal(e.code, 4009);
    assert.equal(e.reason, "server restarting");
    assert.deepEqual(await seen.closed, { code: "4009", reason: "server restarting" });
    await until(() => d.stats.open === 0, "the door to let go");
  },
);

onBothSockets("a client's close reaches the server with its code and reason", async (native) => {
  const { door: d, sockets } = door(native);
  await using _ = d;
  const ws = await connect(d, sockets);
  const clientClosed = closedEvent(ws);
  ws.close(4321, "bye now");
  assert.deepEqual(await sockets[0].closed, { code: "4321", reason: "bye now" });
  assert.equal((await clientClosed).code, 4321, "the door answered the close");
  await until(() => d.stats.open === 0, "the door to let go");
});

onBothSockets(
  "a refused or malformed upgrade gets the app's answer and no socket",
  async (native) => {
    const { door: d, sockets } = door(native);
    await using _ = d;
    const ask = async (path: string, key: string) => {
      const conn = await rawUpgrade(d, path, key);
      const chunks: Uint8Array[] = [];
      const buf = new Uint8Array(4096);
      for (let n; (n = await conn.read(buf)) !== null;) chunks.push(buf.slice(0, n));
      conn.close();
      return new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
    };
    const refused = await ask("/ws?refuse", "dGhlIHNhbXBsZSBub25jZQ==");
    assert.match(refused, /^HTTP\/1\.1 403 /);
    assert.match(refused, /origin not allowed/);
    const malformed = await ask("/ws", "nope");
    assert.match(malformed, /^HTTP\/1\.1 400 /);
    assert.match(malformed, /sec-websocket-key/);
    assert.equal(sockets.length, 0);
    await until(() => d.stats.open === 0, "the door to let go");
  },
);

onBothSockets(
  "a frame over the cap is closed with 4004 and the server hears 4004",
  async (native) => {
    const { door: d, sockets } = door(native);
    await using _ = d;
    const ws = await connect(d, sockets);
    const clientClosed = closedEvent(ws);
    ws.send(new Uint8Array(LIMITS.maxMessageBytes + 1));
    const e = await clientClosed;
    assert.equal(e.code, 4004);
    assert.match(e.reason, /exceeds 4096/);
    assert.equal((await sockets[0].closed).code, "4004");
    assert.equal(sockets[0].messages.length, 0, "nothing of it reached the server");
    assert.equal(d.stats.frameCloses, 1);
    await until(() => d.stats.open === 0, "the door to let go");
  },
);

onBothSockets("a client that stops reading is cut off once a write stalls", async (native) => {
  const { door: d, sockets } = door(native);
  await using _ = d;
  const conn = await rawUpgrade(d, "/ws", "dGhlIHNhbXBsZSBub25jZQ==");
  await until(() => sockets.length === 1, "the app's socket");
  // It never reads: the socket's buffers fill and a write stays pending past writeStallMs.
  const chunk = new Uint8Array(60_000);
  const sender = setInterval(() => {
    if (sockets[0].socket.readyState === 1) sockets[0].socket.send(chunk);
  }, 5);
  try {
    assert.deepEqual(await sockets[0].closed, { code: "1006", reason: "" });
  } finally {
    clearInterval(sender);
    conn.close();
  }
  assert.equal(d.stats.writeStalls, 1);
});
