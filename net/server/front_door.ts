/**
 * The front door: a TCP listener in front of Deno.serve (which listens on a private
 * Unix socket behind it) that does what Deno.serve cannot be told to: cap TCP
 * connections per address and in total, give every request head a deadline and a
 * size cap, close idle HTTP connections, check every WebSocket frame at its header
 * before its payload is read (so an unfinished 64 MiB message cannot pin memory),
 * budget control frames, and end a connection whose client stops reading. It also
 * writes the client's address into a header only it can set. The byte rules are
 * net/server/stream_audit.ts; this file is the I/O. Server-only (Deno TCP APIs).
 *
 * Game sockets (`sockets.path`, when it is a connection's first request) are ended by
 * the door itself: the upgrade request goes to the app in process (its route admits or
 * refuses, as for Deno's own sockets), and once accepted, frames go between the client's
 * connection and the server as messages (net/server/door_socket.ts), with no second hop
 * and no second WebSocket. Anything else is relayed to Deno.serve.
 */
import { addressKey } from "./admission.ts";
import { DoorSocket } from "./door_socket.ts";
import type { NativeTcp } from "./native_tcp.ts";
import type { Clock } from "./scheduler.ts";
import { offerSocket } from "./server_socket.ts";
import {
  clientCloseFrame,
  ClientStreamAudit,
  closeFrame,
  type RequestHead,
  ServerFrameTracker,
  type StreamLimits,
} from "./stream_audit.ts";

/** The door's limits. */
export interface DoorLimits extends StreamLimits {
  /** Open TCP connections from one address (its /64 for IPv6); 0 = no cap (behind a proxy). */
  readonly maxConnectionsPerIp: number;
  /** Open TCP connections in total. */
  readonly maxConnections: number;
  /** A request head must be complete this long after its first byte (or after accept). */
  readonly headerTimeoutMs: number;
  /** An HTTP connection (not upgraded) with no traffic either way for this long is closed. */
  readonly idleMs: number;
  /** A write to a client that has not finished after this long ends the connection. */
  readonly writeStallMs: number;
}

/** What the door has counted. */
export interface DoorStats {
  accepted: number;
  open: number;
  refusedPerAddress: number;
  refusedFull: number;
  /** Requests answered by the door itself (bad or oversized heads, bodies). */
  refusedRequests: number;
  headerTimeouts: number;
  idleCloses: number;
  /** WebSocket connections closed for a frame that broke a rule (size, opcode, mask, rate). */
  frameCloses: number;
  writeStalls: number;
  backendErrors: number;
}

/**
 * The part of a client's TCP connection the door uses: Deno's TcpConn, or one of the C
 * library's (net/server/native_tcp.ts), which can also push its reads (`onData`).
 */
export interface DoorConn {
  readonly remoteAddr: Deno.NetAddr;
  read(buf: Uint8Array): Promise<number | null>;
  write(bytes: Uint8Array): Promise<number>;
  closeWrite(): Promise<void>;
  close(): void;
  /** Every chunk to `onData` as it arrives, then null once at the end. */
  onData?(onData: (chunk: Uint8Array | null) => void): void;
}

/** What the door accepts connections from: Deno's listener, or the C library's. */
interface DoorListener {
  readonly addr: Deno.NetAddr;
  accept(): Promise<DoorConn>;
  close(): void;
}

/** Options of a door. */
export interface DoorOptions {
  readonly hostname: string;
  readonly port: number;
  /**
   * The C library's sockets to listen with (net/server/native_tcp.ts); unset, or when the
   * hostname is not an IP literal, Deno's.
   */
  readonly native?: NativeTcp;
  /** Where Deno.serve listens (a Unix socket path, or host and port). */
  readonly backend: Deno.UnixConnectOptions | Deno.ConnectOptions;
  readonly limits: DoorLimits;
  /** The header the door writes the client's address in (and strips from clients). */
  readonly peerHeader: string;
  readonly clock: Clock;
  readonly log?: (event: string, fields: Record<string, unknown>) => void;
  /**
   * WebSocket upgrades to `path` that open a connection are ended by the door: `fetch`
   * (the app's handler, in process) gets the request with a socket offered
   * (net/server/server_socket.ts). Unset: every upgrade is relayed.
   */
  readonly sockets?: {
    readonly path: string;
    fetch(request: Request, info: { remoteAddr: Deno.NetAddr }): Response | Promise<Response>;
  };
}

/** How often deadlines are checked, in ms. */
const SWEEP_MS = 250;
const CHUNK_BYTES = 16 * 1024;
/** Time a door-made close frame gets to leave before the socket is dropped. */
const LINGER_MS = 200;

interface Pass {
  readonly client: DoorConn;
  readonly ip: string;
  readonly key: string;
  backend: Deno.Conn | undefined;
  /** A door-ended socket's pending write, as last seen by the sweep: its number, and when. */
  seenWrite: number;
  seenWriteAt: number;
  /** When the current head's deadline is (Infinity: none running). */
  headDeadline: number;
  /** Last byte either way (idle HTTP connections). */
  lastTrafficAt: number;
  /** When the write to the client in progress began (Infinity: none). */
  writingSince: number;
  upgraded: boolean;
  /** The upgrade was the connection's first request: nothing precedes its 101 downstream. */
  cleanFrames: boolean;
  /** A close frame of the door's own is due (a client frame broke a rule). */
  kill: { code: number; reason: string } | undefined;
  done: boolean;
  /** Request heads read so far. */
  requests: number;
  /** The game socket the door ends itself, once the app accepted it. */
  socket: DoorSocket | undefined;
  /** Relaying: the server → client side, running once the backend is connected. */
  downstream: Promise<void> | undefined;
}

/** A listening front door. `await using` closes it. */
export class FrontDoor implements AsyncDisposable {
  readonly stats: DoorStats = {
    accepted: 0,
    open: 0,
    refusedPerAddress: 0,
    refusedFull: 0,
    refusedRequests: 0,
    headerTimeouts: 0,
    idleCloses: 0,
    frameCloses: 0,
    writeStalls: 0,
    backendErrors: 0,
  };
  readonly #listener: DoorListener;
  readonly #opts: DoorOptions;
  /** Listening on the C library's sockets (else on Deno's). */
  readonly native: boolean;
  readonly #passes = new Set<Pass>();
  readonly #perAddress = new Map<string, number>();
  readonly #tasks = new Set<Promise<void>>();
  readonly #sweep: ReturnType<typeof setInterval>;
  #accepting = true;
  /** When the deadline sweep last ran. */
  #sweptAt: number;

  private constructor(listener: DoorListener, opts: DoorOptions, native: boolean) {
    this.#listener = listener;
    this.native = native;
    this.#opts = opts;
    this.#sweptAt = opts.clock.now();
    this.#sweep = setInterval(() => this.#checkDeadlines(), SWEEP_MS);
    this.#track(this.#acceptLoop());
  }

  /** Starts listening. */
  static listen(opts: DoorOptions): FrontDoor {
    const at = { hostname: opts.hostname, port: opts.port };
    const native = opts.native?.listen(at);
    return native ? new FrontDoor(native, opts, true) : new FrontDoor(Deno.listen(at), opts, false);
  }

  /** Where the door listens. */
  get addr(): Deno.NetAddr {
    return this.#listener.addr;
  }

  /** Open TCP connections from `ip`'s address. */
  openFrom(ip: string): number {
    return this.#perAddress.get(addressKey(ip)) ?? 0;
  }

  /** Stops taking new connections; open ones carry on. */
  stopAccepting(): void {
    if (!this.#accepting) return;
    this.#accepting = false;
    try {
      this.#listener.close();
    } catch {
      // already closed
    }
  }

  /** Stops accepting and ends every connection. */
  async close(): Promise<void> {
    this.stopAccepting();
    clearInterval(this.#sweep);
    for (const p of this.#passes) this.#end(p);
    await Promise.allSettled([...this.#tasks]);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #track(task: Promise<void>): void {
    this.#tasks.add(task);
    task.finally(() => this.#tasks.delete(task));
  }

  #log(event: string, fields: Record<string, unknown>): void {
    this.#opts.log?.(event, fields);
  }

  async #acceptLoop(): Promise<void> {
    for (;;) {
      let conn: DoorConn;
      try {
        conn = await this.#listener.accept();
      } catch {
        return; // listener closed
      }
      this.#track(this.#serve(conn));
    }
  }

  async #serve(client: DoorConn): Promise<void> {
    const limits = this.#opts.limits;
    const ip = client.remoteAddr.hostname;
    const key = addressKey(ip);
    if (this.stats.open >= limits.maxConnections) {
      this.stats.refusedFull++;
      await refuseAndClose(client, 503, "server full, try again shortly");
      return;
    }
    const fromHere = this.#perAddress.get(key) ?? 0;
    if (limits.maxConnectionsPerIp > 0 && fromHere >= limits.maxConnectionsPerIp) {
      this.stats.refusedPerAddress++;
      await refuseAndClose(client, 429, "too many connections from your address");
      return;
    }
    const now = this.#opts.clock.now();
    const pass: Pass = {
      client,
      ip,
      key,
      backend: undefined,
      headDeadline: now + limits.headerTimeoutMs,
      lastTrafficAt: now,
      writingSince: Infinity,
      upgraded: false,
      cleanFrames: false,
      kill: undefined,
      done: false,
      requests: 0,
      seenWrite: 0,
      seenWriteAt: now,
      socket: undefined,
      downstream: undefined,
    };
    this.#perAddress.set(key, fromHere + 1);
    this.#passes.add(pass);
    this.stats.accepted++;
    this.stats.open++;
    const audit = new ClientStreamAudit({
      peer: ip,
      peerHeader: this.#opts.peerHeader,
      limits,
      nowMs: now,
    });
    await this.#upstream(pass, audit);
    await pass.downstream;
    this.#end(pass);
  }

  /** Connects to Deno.serve for relaying, once; false (and the connection ended) if it is down. */
  async #relay(pass: Pass, audit: ClientStreamAudit): Promise<boolean> {
    if (pass.backend) return true;
    try {
      pass.backend = await Deno.connect(this.#opts.backend as Deno.ConnectOptions);
    } catch (err) {
      this.stats.backendErrors++;
      this.#log("door_backend_error", { error: (err as Error).message });
      await this.#write(pass, httpAnswer(503, "server unavailable"));
      this.#end(pass);
      return false;
    }
    if (pass.done) return false;
    pass.downstream = this.#downstream(pass, audit);
    return true;
  }

  /** True when the door ends this request's WebSocket itself. */
  #ownsSocket(pass: Pass, request: RequestHead): boolean {
    const sockets = this.#opts.sockets;
    if (!sockets || !request.upgrade || pass.requests !== 1) return false;
    const q = request.target.indexOf("?");
    return (q < 0 ? request.target : request.target.slice(0, q)) === sockets.path;
  }

  /**
   * Hands the upgrade to the app with a socket offered. Accepted: the socket is the
   * connection's from now on. Refused: the app's answer goes to the client and the
   * connection ends (false).
   */
  async #openSocket(pass: Pass, request: RequestHead): Promise<boolean> {
    const sockets = this.#opts.sockets!;
    const host = request.headers.find(([k]) => k.toLowerCase() === "host")?.[1] ?? "localhost";
    let req: Request;
    try {
      req = new Request(new URL(request.target, `http://${host}`), {
        headers: request.headers as [string, string][],
      });
    } catch {
      this.stats.refusedRequests++;
      await this.#write(pass, httpAnswer(400, "bad request"));
      this.#end(pass);
      return false;
    }
    const socket = new DoorSocket({
      headers: req.headers,
      wire: {
        conn: pass.client,
        closeWrite: () => halfClose(pass.client),
        end: () => this.#end(pass),
      },
    });
    offerSocket(req, socket);
    let response: Response;
    try {
      response = await sockets.fetch(req, { remoteAddr: pass.client.remoteAddr });
    } catch (err) {
      this.#log("door_socket_error", { error: (err as Error).message });
      response = new Response("internal error", { status: 500 });
    }
    if (socket.accepted && !pass.done) {
      pass.socket = socket;
      return true;
    }
    if (socket.accepted) socket.gone();
    await this.#write(pass, await httpResponse(response));
    this.#end(pass);
    return false;
  }

  /** Client → server, through the audit. */
  async #upstream(pass: Pass, audit: ClientStreamAudit): Promise<void> {
    const buf = new Uint8Array(CHUNK_BYTES);
    const limits = this.#opts.limits;
    while (!pass.done) {
      if (pass.socket && pass.client.onData) {
        // A game socket on the C library's sockets: its reads come from the poll.
        await this.#pushedReads(pass, audit, pass.client.onData.bind(pass.client));
        return;
      }
      let n: number | null;
      try {
        n = await pass.client.read(buf);
      } catch {
        n = null;
      }
      if (n === null) {
        // The client is gone (or half-closed): let the server finish its answer.
        pass.socket?.gone();
        await halfClose(pass.backend);
        return;
      }
      // An open game socket needs no fine clock (no head deadline; control frames are
      // budgeted per second): the sweep's time saves a clock read per read.
      const now = pass.socket ? this.#sweptAt : this.#opts.clock.now();
      pass.lastTrafficAt = now;
      const wasMidHead = audit.midHead;
      const requestsBefore = audit.requests;
      for (const step of audit.feed(buf.subarray(0, n), now)) {
        if (step.kind === "forward") {
          if (pass.socket) {
            pass.socket.receive(step.bytes);
            continue;
          }
          if (step.request) pass.requests++;
          if (step.request && this.#ownsSocket(pass, step.request)) {
            if (!await this.#openSocket(pass, step.request)) return;
            continue;
          }
          if (!await this.#relay(pass, audit) || !await writeAll(pass.backend!, step.bytes)) {
            this.#end(pass);
            return;
          }
          continue;
        }
        if (step.kind === "refuse") {
          this.stats.refusedRequests++;
          this.#log("door_refused", { ip: pass.ip, status: step.status });
          await this.#write(pass, httpAnswer(step.status, step.reason));
          this.#end(pass);
          return;
        }
        // A frame broke a rule. The server hears no more from this client; the
        // downstream side slips a close frame in at the next frame boundary.
        this.#frameBroke(pass, step);
        if (pass.socket) continue;
        if (!pass.cleanFrames) {
          this.#end(pass);
          return;
        }
        // The server hears the same close (it ends the session: no resume for cause).
        if (pass.backend) await writeAll(pass.backend, clientCloseFrame(step.code, step.reason));
        await halfClose(pass.backend);
        return;
      }
      // Deadlines: each head has headerTimeoutMs from its first byte; none after an upgrade.
      if (audit.state === "ws") {
        if (!pass.upgraded) pass.cleanFrames = audit.requests === 1;
        pass.upgraded = true;
        pass.headDeadline = Infinity;
      } else if (audit.midHead) {
        if (!wasMidHead || audit.requests > requestsBefore) {
          pass.headDeadline = now + limits.headerTimeoutMs;
        }
      } else {
        pass.headDeadline = Infinity;
      }
    }
  }

  /**
   * A game socket's reads as the connection pushes them, through the same audit, until
   * the connection ends (or is ended).
   */
  #pushedReads(
    pass: Pass,
    audit: ClientStreamAudit,
    onData: (fn: (chunk: Uint8Array | null) => void) => void,
  ): Promise<void> {
    const socket = pass.socket!;
    return new Promise((done) =>
      onData((chunk) => {
        if (chunk === null) {
          socket.gone();
          done();
          return;
        }
        const now = this.#sweptAt;
        pass.lastTrafficAt = now;
        for (const step of audit.feed(chunk, now)) {
          if (step.kind === "forward") socket.receive(step.bytes);
          else if (step.kind === "close") this.#frameBroke(pass, step);
          // ("refuse" answers a request head: none come after the upgrade.)
        }
      })
    );
  }

  /** A client frame broke a rule: counted, logged, and a door-ended socket closes with why. */
  #frameBroke(pass: Pass, step: { code: number; reason: string }): void {
    this.stats.frameCloses++;
    this.#log("door_frame_close", { ip: pass.ip, code: step.code, reason: step.reason });
    pass.kill = step;
    // The socket says why and ends itself; reading goes on for the client's answer.
    pass.socket?.fail(step.code, step.reason);
  }

  /** Server → client, watched for stalls; a due close frame goes in at a frame boundary. */
  async #downstream(pass: Pass, audit: ClientStreamAudit): Promise<void> {
    const buf = new Uint8Array(CHUNK_BYTES);
    const tracker = new ServerFrameTracker();
    /** After a 101, the frames start once its head is over. */
    let inFrames = false;
    let headTail = 0;
    while (!pass.done) {
      let n: number | null;
      try {
        n = await pass.backend!.read(buf);
      } catch {
        n = null;
      }
      if (n === null) {
        if (pass.kill && inFrames && tracker.atBoundary) await this.#sendClose(pass, pass.kill);
        else await halfClose(pass.client);
        this.#end(pass);
        return;
      }
      let chunk = buf.subarray(0, n);
      pass.lastTrafficAt = this.#opts.clock.now();
      if (pass.cleanFrames && !inFrames) {
        // The 101's head: frames begin after its blank line.
        const end = findHeadEnd(chunk, headTail);
        if (end >= 0) {
          inFrames = true;
          if (!await this.#write(pass, chunk.subarray(0, end))) return;
          chunk = chunk.subarray(end);
        } else {
          headTail = tailMatch(chunk, headTail);
        }
      }
      if (inFrames && pass.kill) {
        const k = tracker.untilBoundary(chunk);
        if (k > 0 && !await this.#write(pass, chunk.subarray(0, k))) return;
        await this.#sendClose(pass, pass.kill);
        this.#end(pass);
        return;
      }
      if (inFrames) {
        tracker.feed(chunk);
        if (tracker.sawClose) audit.serverClosed();
      }
      if (!await this.#write(pass, chunk)) return;
    }
  }

  /** A close frame of the door's own, then a moment for it to leave. */
  async #sendClose(pass: Pass, close: { code: number; reason: string }): Promise<void> {
    if (!await this.#write(pass, closeFrame(close.code, close.reason))) return;
    try {
      await pass.client.closeWrite();
    } catch {
      // already closed
    }
    await new Promise((r) => setTimeout(r, LINGER_MS));
  }

  /** Writes to the client, timing the write for the stall check. */
  async #write(pass: Pass, bytes: Uint8Array): Promise<boolean> {
    if (pass.done) return false;
    pass.writingSince = this.#opts.clock.now();
    const ok = await writeAll(pass.client, bytes);
    pass.writingSince = Infinity;
    if (!ok) this.#end(pass);
    return ok;
  }

  #checkDeadlines(): void {
    const now = this.#opts.clock.now();
    const limits = this.#opts.limits;
    this.#sweptAt = now;
    for (const pass of this.#passes) {
      if (now - pass.writingSince > limits.writeStallMs || this.#socketStalled(pass, now)) {
        this.stats.writeStalls++;
        this.#log("door_write_stall", { ip: pass.ip });
        this.#end(pass);
      } else if (now > pass.headDeadline) {
        this.stats.headerTimeouts++;
        // No answer: a client that cannot finish a head in 10 s is not waiting for one.
        this.#end(pass);
      } else if (!pass.upgraded && now - pass.lastTrafficAt > limits.idleMs) {
        this.stats.idleCloses++;
        this.#end(pass);
      }
    }
  }

  /**
   * A door-ended socket times its writes without a clock read per write: the sweep notes
   * the pending write's number, and a write still pending with that number writeStallMs
   * later has stalled (found within a sweep or two of the limit).
   */
  #socketStalled(pass: Pass, now: number): boolean {
    const s = pass.socket;
    if (!s?.writePending) return false;
    if (pass.seenWrite !== s.writes) {
      pass.seenWrite = s.writes;
      pass.seenWriteAt = now;
      return false;
    }
    return now - pass.seenWriteAt > this.#opts.limits.writeStallMs;
  }

  /** Closes both sides and forgets the connection. Idempotent. */
  #end(pass: Pass): void {
    if (pass.done) return;
    pass.done = true;
    for (const c of [pass.client, pass.backend]) {
      try {
        c?.close();
      } catch {
        // already closed
      }
    }
    pass.socket?.gone();
    this.#passes.delete(pass);
    this.stats.open--;
    const left = (this.#perAddress.get(pass.key) ?? 1) - 1;
    if (left > 0) this.#perAddress.set(pass.key, left);
    else this.#perAddress.delete(pass.key);
  }
}

/** Ends our writing half (the peer reads EOF); a connection already gone is fine. */
async function halfClose(conn: Pick<DoorConn, "closeWrite"> | undefined): Promise<void> {
  try {
    await conn?.closeWrite();
  } catch {
    // already closed
  }
}

/** Writes every byte; false if the connection failed or was closed meanwhile. */
async function writeAll(conn: Pick<DoorConn, "write">, bytes: Uint8Array): Promise<boolean> {
  try {
    for (let at = 0; at < bytes.byteLength;) at += await conn.write(bytes.subarray(at));
    return true;
  } catch {
    return false;
  }
}

/** A short HTTP answer that ends the connection. */
function httpAnswer(status: number, reason: string): Uint8Array {
  const body = JSON.stringify({ reason });
  const text = STATUS_TEXT[status] ?? "Error";
  return new TextEncoder().encode(
    `HTTP/1.1 ${status} ${text}\r\nconnection: close\r\ncontent-type: application/json\r\n` +
      `content-length: ${body.length}\r\n${
        status === 429 || status === 503 ? "retry-after: 5\r\n" : ""
      }\r\n${body}`,
  );
}

/** The app's answer to a refused upgrade, as HTTP/1.1, ending the connection. */
async function httpResponse(res: Response): Promise<Uint8Array> {
  const body = new Uint8Array(await res.arrayBuffer());
  let head = `HTTP/1.1 ${res.status} ${STATUS_TEXT[res.status] ?? "Error"}\r\n`;
  for (const [k, v] of res.headers) {
    if (k !== "content-length" && k !== "connection" && k !== "transfer-encoding") {
      head += `${k}: ${v}\r\n`;
    }
  }
  head += `content-length: ${body.byteLength}\r\nconnection: close\r\n\r\n`;
  const bytes = new TextEncoder().encode(head);
  const out = new Uint8Array(bytes.byteLength + body.byteLength);
  out.set(bytes);
  out.set(body, bytes.byteLength);
  return out;
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: "OK",
  204: "No Content",
  403: "Forbidden",
  404: "Not Found",
  421: "Misdirected Request",
  426: "Upgrade Required",
  500: "Internal Server Error",
  400: "Bad Request",
  408: "Request Timeout",
  413: "Content Too Large",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  501: "Not Implemented",
  503: "Service Unavailable",
};

async function refuseAndClose(conn: DoorConn, status: number, reason: string): Promise<void> {
  await writeAll(conn, httpAnswer(status, reason));
  try {
    conn.close();
  } catch {
    // already closed
  }
}

/** Index just past CRLFCRLF in `chunk`, given how much of it ended the previous chunk. */
function findHeadEnd(chunk: Uint8Array, matched: number): number {
  const seq = [13, 10, 13, 10];
  let m = matched;
  for (let i = 0; i < chunk.byteLength; i++) {
    m = chunk[i] === seq[m] ? m + 1 : chunk[i] === 13 ? 1 : 0;
    if (m === 4) return i + 1;
  }
  return -1;
}

/** How much of CRLFCRLF the end of `chunk` matches, continuing from `matched`. */
function tailMatch(chunk: Uint8Array, matched: number): number {
  const seq = [13, 10, 13, 10];
  let m = matched;
  for (const b of chunk) m = b === seq[m] ? m + 1 : b === 13 ? 1 : 0;
  return m;
}
