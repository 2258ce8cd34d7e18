/**
 * The front door over real TCP, in front of a small scripted backend: the address
 * header only the door writes, the per-address cap, a slow request head (slowloris)
 * and an idle connection cut off, a client that stops reading cut off once its
 * writes stall, and a WebSocket frame over the cap answered with a close frame
 * slipped in between the server's own frames (and the same close told the server).
 * Short limits keep it quick.
 */
import assert from "node:assert/strict";
import { FrontDoor } from "../../net/server/front_door.ts";
import type { NativeTcp } from "../../net/server/native_tcp.ts";
import { onBothSockets } from "./socket_kinds.ts";
import { realClock } from "../../net/server/scheduler.ts";
import { clientCloseFrame } from "../../net/server/stream_audit.ts";

const LIMITS = {
  maxConnectionsPerIp: 3,
  maxConnections: 100,
  headerTimeoutMs: 400,
  maxHeaderBytes: 4096,
  maxBodyBytes: 1024,
  idleMs: 600,
  writeStallMs: 500,
  maxMessageBytes: 256,
  controlPerSec: 10,
  controlBurst: 20,
};

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A backend that answers by path: /peer echoes the door's header, /stream never ends, /ws upgrades. */
class Backend implements AsyncDisposable {
  readonly listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  readonly conns = new Set<Deno.Conn>();
  /** Bytes of WebSocket frames each upgraded connection received. */
  readonly wsBytes: number[] = [];
  readonly closed: string[] = [];
  readonly #tasks: Promise<void>[] = [];

  constructor() {
    this.#tasks.push(this.#accept());
  }

  get port(): number {
    return this.listener.addr.port;
  }

  async #accept(): Promise<void> {
    for await (const conn of this.listener) this.#tasks.push(this.#serve(conn));
  }

  async #serve(conn: Deno.Conn): Promise<void> {
    this.conns.add(conn);
    const buf = new Uint8Array(65536);
    let head = "";
    let path = "";
    try {
      while (!head.includes("\r\n\r\n")) {
        const n = await conn.read(buf);
        if (n === null) return;
        head += dec.decode(buf.subarray(0, n));
      }
      path = head.split(" ")[1];
      if (path === "/peer") {
        const peer = /\r\nx-warden-peer: ([^\r]*)/i.exec(head)?.[1] ?? "none";
        const count = head.match(/x-warden-peer/gi)?.length ?? 0;
        const body = JSON.stringify({ peer, count });
        await conn.write(
          enc.encode(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n${body}`),
        );
        // Keep-alive, as Deno.serve does: wait for more until the door hangs up.
        while (await conn.read(buf) !== null) {
          // (no second request in these tests)
        }
      } else if (path === "/stream") {
        await conn.write(enc.encode("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"));
        const chunk = enc.encode(`10000\r\n${"x".repeat(65536)}\r\n`);
        for (;;) await conn.write(chunk);
      } else if (path === "/ws") {
        await conn.write(
          enc.encode("HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n"),
        );
        const index = this.wsBytes.push(0) - 1;
        // A 300-byte binary frame every 10 ms: the door must cut in between two of them.
        const frame = new Uint8Array([0x82, 126, 1, 44, ...new Uint8Array(300).fill(7)]);
        const ticker = setInterval(() => conn.write(frame).catch(() => clearInterval(ticker)), 10);
        try {
          for (;;) {
            const n = await conn.read(buf);
            if (n === null) break;
            this.wsBytes[index] += n;
          }
        } finally {
          clearInterval(ticker);
        }
      }
    } catch {
      // the door closed it
    } finally {
      this.closed.push(path);
      this.conns.delete(conn);
      try {
        conn.close();
      } catch {
        // closed already
      }
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.listener.close();
    for (const c of this.conns) {
      try {
        c.close();
      } catch {
        // closed already
      }
    }
    await Promise.allSettled(this.#tasks);
  }
}

function door(backendPort: number, native: NativeTcp | undefined): FrontDoor {
  return FrontDoor.listen({
    hostname: "127.0.0.1",
    port: 0,
    native,
    backend: { hostname: "127.0.0.1", port: backendPort },
    limits: LIMITS,
    peerHeader: "x-warden-peer",
    clock: realClock,
  });
}

async function dial(d: FrontDoor): Promise<Deno.TcpConn> {
  return await Deno.connect({ hostname: "127.0.0.1", port: d.addr.port });
}

/** Reads until the connection ends (or `ms` pass); returns what came and whether it ended. */
async function readAll(
  conn: Deno.Conn,
  ms: number,
): Promise<{ text: string; bytes: Uint8Array; ended: boolean }> {
  const buf = new Uint8Array(65536);
  const parts: Uint8Array[] = [];
  const deadline = performance.now() + ms;
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) return { text: dec.decode(join(parts)), bytes: join(parts), ended: false };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const n = await Promise.race([
      conn.read(buf).catch(() => null),
      new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), left)),
    ]);
    clearTimeout(timer);
    if (n === "timeout") return { text: dec.decode(join(parts)), bytes: join(parts), ended: false };
    if (n === null) return { text: dec.decode(join(parts)), bytes: join(parts), ended: true };
    parts.push(buf.slice(0, n));
  }
}

function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

function close(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // closed already
  }
}

onBothSockets(
  "the door tells the server the client's address, and only the door can",
  async (native) => {
    await using backend = new Backend();
    await using d = door(backend.port, native);
    const c = await dial(d);
    await c.write(
      enc.encode(
        "GET /peer HTTP/1.1\r\nHost: x\r\nX-Warden-Peer: 6.6.6.6\r\nConnection: close\r\n\r\n",
      ),
    );
    const { text } = await readAll(c, 2000);
    close(c);
    assert.match(text, /^HTTP\/1\.1 200 OK/);
    assert.deepEqual(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)), {
      peer: "127.0.0.1",
      count: 1,
    });
  },
);

onBothSockets(
  "past maxConnectionsPerIp the next TCP connection gets 429 and is closed",
  async (native) => {
    await using backend = new Backend();
    await using d = door(backend.port, native);
    const held = await Promise.all([1, 2, 3].map(() => dial(d)));
    await new Promise((r) => setTimeout(r, 50));
    const fourth = await dial(d);
    const { text, ended } = await readAll(fourth, 2000);
    assert.match(text, /^HTTP\/1\.1 429 Too Many Requests\r\n/);
    assert.match(text, /too many connections from your address/);
    assert.equal(ended, true);
    assert.equal(d.stats.refusedPerAddress, 1);
    assert.equal(d.openFrom("127.0.0.1"), 3);
    for (const c of [...held, fourth]) close(c);
  },
);

onBothSockets(
  "a request head trickled slower than headerTimeoutMs is cut off (slowloris)",
  async (native) => {
    await using backend = new Backend();
    await using d = door(backend.port, native);
    const c = await dial(d);
    const start = performance.now();
    await c.write(enc.encode("GET /peer HTTP/1.1\r\nHost: x\r\n"));
    const trickle = setInterval(() => c.write(enc.encode("X-A: b\r\n")).catch(() => {}), 100);
    const { ended } = await readAll(c, 3000);
    clearInterval(trickle);
    const ms = performance.now() - start;
    close(c);
    console.log(`slow head cut off after ${ms.toFixed(0)} ms (limit ${LIMITS.headerTimeoutMs} ms)`);
    assert.equal(ended, true);
    assert.ok(ms >= LIMITS.headerTimeoutMs && ms < LIMITS.headerTimeoutMs + 1000, `${ms} ms`);
    assert.equal(d.stats.headerTimeouts, 1);
    assert.equal(d.stats.open, 0);
  },
);

onBothSockets(
  "a connection that sends nothing is cut off, and so is an idle keep-alive one",
  async (native) => {
    await using backend = new Backend();
    await using d = door(backend.port, native);
    const silent = await dial(d);
    const keepAlive = await dial(d);
    await keepAlive.write(enc.encode("GET /peer HTTP/1.1\r\nHost: x\r\n\r\n"));
    const [a, b] = await Promise.all([readAll(silent, 3000), readAll(keepAlive, 3000)]);
    close(silent);
    close(keepAlive);
    assert.equal(a.ended, true, "silent: gone at the first head's deadline");
    assert.match(b.text, /^HTTP\/1\.1 200 OK/, "the keep-alive request was answered");
    assert.equal(b.ended, true, "then closed once idle");
    assert.equal(d.stats.headerTimeouts, 1);
    assert.equal(d.stats.idleCloses, 1);
  },
);

onBothSockets(
  "a client that stops reading is cut off once a write stalls; the server's side goes too",
  async (native) => {
    await using backend = new Backend();
    await using d = door(backend.port, native);
    const c = await dial(d);
    await c.write(enc.encode("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n"));
    // Never read: the kernel buffers fill, the door's write blocks, the stall clock runs.
    const start = performance.now();
    while (d.stats.writeStalls === 0 && performance.now() - start < 10_000) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const ms = performance.now() - start;
    console.log(
      `stalled writer cut off after ${ms.toFixed(0)} ms (stall limit ${LIMITS.writeStallMs} ms)`,
    );
    assert.equal(d.stats.writeStalls, 1);
    assert.equal(d.stats.open, 0);
    const waitBackend = performance.now();
    while (!backend.closed.includes("/stream") && performance.now() - waitBackend < 2000) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(backend.closed.includes("/stream"), "the backend connection was closed too");
    close(c);
  },
);

/** A masked client frame of `length` payload bytes. */
function clientFrame(opcode: number, length: number): Uint8Array {
  const head = length < 126
    ? [0x80 | opcode, 0x80 | length]
    : [0x80 | opcode, 0x80 | 126, length >> 8, length & 255];
  return new Uint8Array([...head, 1, 2, 3, 4, ...new Uint8Array(length)]);
}

onBothSockets(
  "a frame over the cap gets a 4004 close frame between two of the server's frames",
  async (native) => {
    await using backend = new Backend();
    await using d = door(backend.port, native);
    const c = await dial(d);
    await c.write(
      enc.encode(
        "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
      ),
    );
    await new Promise((r) => setTimeout(r, 60)); // a few server frames flow
    await c.write(clientFrame(2, 100)); // fine
    await c.write(clientFrame(2, 1000)); // over the cap: judged at its header
    const { bytes, ended } = await readAll(c, 3000);
    close(c);
    assert.equal(ended, true);
    // The 101's head, then whole 304-byte server frames, then the door's close frame, nothing else.
    let at = dec.decode(bytes).indexOf("\r\n\r\n") + 4;
    let frames = 0;
    while (bytes[at] === 0x82) {
      assert.deepEqual([...bytes.subarray(at, at + 4)], [0x82, 126, 1, 44], `frame ${frames}`);
      at += 304;
      frames++;
    }
    const reason = "message of 1000 bytes exceeds 256";
    assert.deepEqual([...bytes.subarray(at, at + 4)], [0x88, 2 + reason.length, 0x0f, 0xa4]);
    assert.equal(dec.decode(bytes.subarray(at + 4)), reason);
    assert.ok(frames >= 2, `${frames} whole server frames came first`);
    assert.equal(d.stats.frameCloses, 1);
    assert.equal(backend.wsBytes.length, 1);
    // The server got the good frame, nothing of the bad one, and the door's close (its code
    // tells the server the client was cut off for cause).
    assert.equal(backend.wsBytes[0], 6 + 100 + clientCloseFrame(4004, reason).byteLength);
  },
);
