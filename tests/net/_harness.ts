/**
 * In-process netcode harness, shared by the tests beside it: a Transport that
 * records (and optionally forwards) what the server sends, the link simulator
 * (net/link: delay, jitter, stalls) plus input loss, timed by a ManualClock, and a GameServer with
 * ClientRuntimes connected through such links, pumped in small time steps.
 * It speaks to net/ only through public APIs and never reads `#private` state.
 */
import { CONTENT_HASH, PLAYER, WARDEN } from "../../content/mod.ts";
import { ClientRuntime, type HitInfo, type InputSample } from "../../net/client/runtime.ts";
import type { OwnShotNote } from "../../net/client/replica.ts";
import {
  decodeClientMessage,
  decodeServerMessage,
  encodeClientMessage,
  MessageDecoder,
  MessageEncoder,
} from "../../net/wire/codec.ts";
import {
  ClientKind,
  type ClientMessage,
  type EnterMsg,
  type HitRecord,
  type NetEvent,
  PROTOCOL_VERSION,
  type ResultsMsg,
  ServerKind,
  type ServerMessage,
  type SnapshotMsg,
} from "../../net/wire/protocol.ts";
import { type Clock, ManualClock, realClock } from "../../net/server/scheduler.ts";
import {
  type Connection,
  GameServer,
  type Logger,
  type ServerLimits,
  type ServerOptions,
} from "../../net/server/server.ts";
import type { Transport } from "../../net/server/transport.ts";
import { MAX_SERVER_FRAME_MESSAGES, packFrame, splitFrame } from "../../net/wire/frames.ts";
import {
  decodeSnapshotBody,
  fromSnapshotUnits,
  SnapshotHistory,
} from "../../net/wire/snapshot_delta.ts";
import { SNAPSHOT_BASELINES } from "../../content/net_tuning.ts";
import { createApp } from "../../routes/app.ts";
import { type InputFrame, Rng, type WorldDef } from "../../sim/mod.ts";
import { LinkPipe, LinkSim, type LinkSpec, linkSpec, parseLinkSpec } from "../../net/link/mod.ts";

/** Standing still, aiming up, no buttons. */
export const IDLE: InputSample = { moveX: 0, moveY: 0, aim: 0, buttons: 0 };

/** Walks to the hub's portal while in the hub; stands still anywhere else. */
export const toPortal: Control = (_tick, c) => {
  const portal = c.runtime.world?.portals[0];
  const me = c.runtime.selfView();
  return portal && me ? steerTo(me, portal) : IDLE;
};

/** Pump granularity: a few ms, well under a 16.7 ms tick. */
export const STEP_MS = 2;

// ---------------------------------------------------------------- transport

/** What a FakeTransport was asked to send. */
export interface SentFrame {
  readonly data: Uint8Array;
  /** True for `sendLatest` (snapshots), false for `sendReliable`. */
  readonly latest: boolean;
}

/**
 * A Transport that records every message and close, and may forward what each tick
 * sent on, as one frame (or a snapshot as a datagram, when `datagrams`).
 */
export class FakeTransport implements Transport {
  readonly kind = "websocket";
  readonly datagrams: boolean;
  readonly sent: SentFrame[] = [];
  /** Frames flushed so far. */
  frames = 0;
  readonly #queued: Uint8Array[] = [];
  closedWith: { code: number; reason: string } | undefined;
  /** Set to false to act like a backed-up socket: `sendLatest` then refuses. */
  acceptLatest = true;
  /** What the transport reports as not yet sent (a test sets it to play a client not reading). */
  bufferedBytes = 0;
  readonly #forward: ((data: Uint8Array) => void) | undefined;
  readonly #onClose: ((code: number, reason: string) => void) | undefined;
  readonly #decoder = new MessageDecoder();

  constructor(
    opts: {
      forward?: (data: Uint8Array) => void;
      onClose?: (code: number, reason: string) => void;
      /** Snapshots are forwarded at once, alone, as datagrams would be. */
      datagrams?: boolean;
    } = {},
  ) {
    this.#forward = opts.forward;
    this.#onClose = opts.onClose;
    this.datagrams = opts.datagrams ?? false;
  }

  sendReliable(data: Uint8Array): void {
    if (this.closedWith) return;
    this.sent.push({ data, latest: false });
    this.#queued.push(data);
  }

  sendLatest(data: Uint8Array): boolean {
    if (this.closedWith || !this.acceptLatest) return false;
    this.sent.push({ data, latest: true });
    if (this.datagrams) this.#forward?.(data);
    else this.#queued.push(data);
    return true;
  }

  flush(): void {
    if (this.#queued.length === 0) return;
    const frame = packFrame(this.#queued);
    this.#queued.length = 0;
    this.frames++;
    this.#forward?.(frame);
  }

  close(code: number, reason: string): void {
    if (this.closedWith) return;
    this.flush();
    this.closedWith = { code, reason };
    this.#onClose?.(code, reason);
  }

  /** Every message sent so far, decoded with the real codec. */
  messages(): ServerMessage[] {
    return this.sent.map((s) => decodeServerMessage(this.#decoder, s.data));
  }

  /**
   * Every snapshot sent so far, rebuilt from its delta as the client would (each against
   * the one before it: what an ordered stream delivers), with its size on the wire.
   */
  snapshots(): { msg: SnapshotMsg; bytes: number }[] {
    const held = new SnapshotHistory(SNAPSHOT_BASELINES);
    const out: { msg: SnapshotMsg; bytes: number }[] = [];
    for (const s of this.sent) {
      const m = decodeServerMessage(this.#decoder, s.data);
      if (m.kind === ServerKind.Enter) held.clear();
      if (m.kind !== ServerKind.Snapshot) continue;
      const base = m.baseTick === undefined ? undefined : held.get(m.baseTick);
      if (m.baseTick !== undefined && !base) throw new Error(`no baseline ${m.baseTick}`);
      const units = decodeSnapshotBody(m.body, { tick: m.tick, base });
      held.add(units);
      out.push({ msg: fromSnapshotUnits(units, { ackTick: m.ackTick }), bytes: s.data.byteLength });
    }
    return out;
  }
}

// ---------------------------------------------------------------- link

/** How a client's simulated link behaves. */
export interface LinkOptions {
  /** The link, as LINK_SIM reads it ("75±50", "150±50,stall=250/4000") or built in code. */
  readonly spec?: string | LinkSpec;
  /**
   * Chance that one client → server input datagram is lost. A link with this set carries
   * input as datagrams (the runtime then sends it with redundancy); nothing else is lost.
   */
  readonly inputLoss?: number;
  /**
   * Loses the `n`-th input datagram (1-based) when this says so: loss by a fixed pattern.
   * A link with this set carries input as datagrams too.
   */
  readonly dropInput?: (n: number) => boolean;
  /**
   * Snapshots go as datagrams (deltas against the acknowledged one, the epoch, the loss
   * meter), alone and at once; the path still delivers them in order, without loss.
   */
  readonly snapshotDatagrams?: boolean;
}

/** Figures a link counts. */
export interface LinkStats {
  inputsSent: number;
  inputsLost: number;
  toServer: number;
  toClient: number;
}

type Down = Uint8Array | { readonly close: { code: number; reason: string } };

/**
 * A client's network path through the link simulator (net/link), both ways one
 * ordered stream as a WebSocket is, delivered on the harness's ManualClock. Input may
 * instead go as datagrams, which may be lost (the WebTransport path).
 */
export class HarnessLink {
  readonly sim: LinkSim | undefined;
  readonly stats: LinkStats = { inputsSent: 0, inputsLost: 0, toServer: 0, toClient: 0 };
  /** Chance that one Input message is lost; tests may change it mid-run (1 = blackout). */
  inputLoss: number;
  /** Ticks of every input frame that went onto the path (was not lost), in sending order. */
  readonly inputTicksSent: number[] = [];
  readonly #dropInput: ((n: number) => boolean) | undefined;
  readonly #up: LinkPipe<Uint8Array>;
  /** Datagrams take the same path but not the stream's place in line. */
  readonly #upDatagrams: LinkPipe<Uint8Array>;
  readonly #down: LinkPipe<Down>;
  readonly #rng: Rng;
  readonly #decoder = new MessageDecoder();

  constructor(
    clock: ManualClock,
    opts: LinkOptions & {
      stream: number;
      toServer: (data: Uint8Array) => void;
      toServerDatagram: (data: Uint8Array) => void;
      toClient: (item: Down) => void;
    },
  ) {
    const spec = typeof opts.spec === "string" ? parseLinkSpec(opts.spec) : opts.spec;
    const sim = new LinkSim(spec ?? linkSpec({}), { startMs: clock.now(), stream: opts.stream });
    this.sim = spec ? sim : undefined;
    this.#rng = new Rng(opts.stream * 7919 + 1);
    this.inputLoss = opts.inputLoss ?? 0;
    this.#dropInput = opts.dropInput;
    this.#up = new LinkPipe(sim.up, {
      clock,
      deliver: (data) => {
        this.stats.toServer++;
        opts.toServer(data);
      },
    });
    this.#upDatagrams = new LinkPipe(sim.up, {
      clock,
      deliver: (data) => {
        this.stats.toServer++;
        opts.toServerDatagram(data);
      },
    });
    this.#down = new LinkPipe(sim.down, {
      clock,
      deliver: (item) => {
        this.stats.toClient++;
        opts.toClient(item);
      },
    });
  }

  #dead = false;

  /** Client → server, a frame on the ordered stream: it always arrives. */
  sendToServer(data: Uint8Array): void {
    if (this.#dead) return;
    for (const part of splitFrame(data, { maxMessages: 8 })) {
      const msg: ClientMessage = decodeClientMessage(this.#decoder, part);
      if (msg.kind !== ClientKind.Input) continue;
      this.stats.inputsSent++;
      for (const f of msg.frames) this.inputTicksSent.push(f.tick);
    }
    this.#up.send(data);
  }

  /** Client → server, an input datagram: lost with the link's `inputLoss` or `dropInput`. */
  sendDatagramToServer(data: Uint8Array): void {
    if (this.#dead) return;
    this.stats.inputsSent++;
    const dropped = this.#dropInput?.(this.stats.inputsSent) ??
      (this.inputLoss > 0 && this.#rng.next() < this.inputLoss);
    if (dropped) {
      this.stats.inputsLost++;
      return;
    }
    const msg = decodeClientMessage(this.#decoder, data);
    if (msg.kind === ClientKind.Input) {
      for (const f of msg.frames) this.inputTicksSent.push(f.tick);
    }
    this.#upDatagrams.send(data);
  }

  /** Server → client. */
  sendToClient(data: Uint8Array): void {
    if (!this.#dead) this.#down.send(data);
  }

  /** The server closed the socket: the close arrives after everything sent before it. */
  closeToClient(code: number, reason: string): void {
    if (!this.#dead) this.#down.send({ close: { code, reason } });
  }

  /** Messages in flight, both ways. */
  get inFlight(): number {
    return this.#up.inFlight + this.#upDatagrams.inFlight + this.#down.inFlight;
  }

  /** Drops everything in flight (the socket is gone). */
  cut(): void {
    this.#up.clear();
    this.#upDatagrams.clear();
    this.#down.clear();
  }

  /**
   * The path dies without a word to either end (a cable pulled, a NAT forgetting the
   * flow): what is in flight and everything sent from now on is lost, and neither side
   * hears of a close.
   */
  kill(): void {
    this.#dead = true;
    this.cut();
  }
}

// ---------------------------------------------------------------- harness

/** Picks a client's input for one tick; tests reassign it as the scenario moves on. */
export type Control = (tick: number, client: SimClient) => InputSample;

/** A message as a client received it, with the server tick count at arrival. */
export interface Received<T> {
  readonly value: T;
  /** `server.scheduler.stats.ticks` when it arrived. */
  readonly serverTicks: number;
  readonly atMs: number;
  /** Arrival order across everything this harness's clients received. */
  readonly seq: number;
}

/** One ClientRuntime wired to the server through a simulated link. */
export interface SimClient {
  readonly name: string;
  readonly runtime: ClientRuntime;
  /** The link, transport and connection in use now (reconnect() replaces all three). */
  link: HarnessLink;
  /** The server's end of the socket. */
  transport: FakeTransport;
  conn: Connection;
  control: Control;
  readonly enters: Received<EnterMsg>[];
  /** Small events with the server tick they belong to. */
  readonly events: Received<{ event: NetEvent; tick: number }>[];
  /** What became of each own shot the runtime predicted (drawn, matched, taken back). */
  readonly ownShots: Received<OwnShotNote>[];
  /** Results screens the server sent. */
  readonly results: Received<ResultsMsg>[];
  /** Hits the runtime reported, with what it knew of each (`onHit`). */
  readonly hits: Received<{ hit: HitRecord; info: HitInfo }>[];
  /** The close the server sent, once it has arrived. */
  closed: { code: number; reason: string } | undefined;
}

/** Options of a harness. */
export interface HarnessOptions {
  readonly seed?: number;
  /** Default link of clients that don't bring their own; direct (no delay) if absent. */
  readonly link?: LinkOptions;
  readonly limits?: Partial<ServerLimits>;
  /** Arm the scheduler (default true). */
  readonly start?: boolean;
  readonly log?: Logger;
  readonly worldDef?: ServerOptions["worldDef"];
}

/** A GameServer on a ManualClock with simulated clients, pumped by hand. */
export class NetHarness {
  readonly clock = new ManualClock();
  readonly server: GameServer;
  readonly clients: SimClient[] = [];
  readonly #link: LinkOptions;
  readonly #seed: number;
  #nextIp = 1;
  #seq = 0;
  #down = false;

  constructor(opts: HarnessOptions = {}) {
    this.#seed = opts.seed ?? 1;
    this.#link = opts.link ?? {};
    this.server = new GameServer({
      clock: this.clock,
      seed: this.#seed,
      limits: opts.limits,
      log: opts.log,
      worldDef: opts.worldDef,
    });
    if (opts.start ?? true) this.server.start();
  }

  /** Ticks the server has run. */
  get ticks(): number {
    return this.server.scheduler.stats.ticks;
  }

  /** Opens a socket for a new ClientRuntime and says hello (with `resume`, to take a session back). */
  connect(
    name: string,
    opts: { link?: LinkOptions; control?: Control; resume?: string } = {},
  ): SimClient {
    const enters: SimClient["enters"] = [];
    const events: SimClient["events"] = [];
    const results: SimClient["results"] = [];
    const ownShots: SimClient["ownShots"] = [];
    const hits: SimClient["hits"] = [];
    const stamp = <T>(value: T): Received<T> => ({
      value,
      serverTicks: this.ticks,
      atMs: this.clock.now(),
      seq: this.#seq++,
    });
    const spec = opts.link ?? this.#link;
    const lossy = spec.inputLoss !== undefined || spec.dropInput !== undefined;
    // Late-bound: the runtime sends on whichever link the client uses now.
    const self: { client?: SimClient } = {};
    const runtime = new ClientRuntime({
      send: (data) => self.client?.link.sendToServer(data),
      sendDatagram: lossy ? (data) => self.client?.link.sendDatagramToServer(data) : undefined,
      onEnter: (msg) => enters.push(stamp(msg)),
      onEvent: (event, tick) => events.push(stamp({ event, tick })),
      onResults: (msg) => results.push(stamp(msg)),
      onOwnShot: (note) => ownShots.push(stamp(note)),
      onHit: (hit, info) => hits.push(stamp({ hit, info })),
    });
    const client = {
      name,
      runtime,
      control: opts.control ?? (() => IDLE),
      enters,
      events,
      results,
      ownShots,
      hits,
      closed: undefined,
      ...this.#wire(self, opts.link),
    } as SimClient;
    self.client = client;
    this.clients.push(client);
    runtime.hello(name, this.clock.now(), { resume: opts.resume });
    return client;
  }

  /** A new link, transport and server connection for `self.client` (delivering only while current). */
  #wire(
    self: { client?: SimClient },
    linkOpts: LinkOptions | undefined,
  ): { link: HarnessLink; transport: FakeTransport; conn: Connection } {
    const n = this.#nextIp++;
    const current = (l: HarnessLink) => self.client?.link === l ? self.client : undefined;
    const link: HarnessLink = new HarnessLink(this.clock, {
      ...(linkOpts ?? this.#link),
      stream: this.#seed * 7919 + n,
      toServer: (data) => current(link)?.conn.receive(data),
      toServerDatagram: (data) => current(link)?.conn.receiveDatagram(data),
      toClient: (item) => {
        const client = current(link);
        if (!client) return; // an old socket: the page ignores it
        if (item instanceof Uint8Array) {
          client.runtime.receive(item, this.clock.now());
          return;
        }
        client.closed = item.close;
        client.runtime.closed(item.close.reason);
        client.link.cut();
      },
    });
    const transport = new FakeTransport({
      forward: (data) => link.sendToClient(data),
      onClose: (code, reason) => link.closeToClient(code, reason),
      datagrams: (linkOpts ?? this.#link).snapshotDatagrams,
    });
    const conn = this.server.open(transport, `10.0.0.${n}`);
    return { link, transport, conn };
  }

  /**
   * The client's link is gone and it comes back over a new one, saying hello with
   * `resume` (the runtime's token by default), as net/client/connect.ts does. The old
   * connection is left as it was (a half-open socket the server has not noticed), unless
   * the test closed it first. Returns the old link, transport and connection.
   */
  reconnect(
    client: SimClient,
    opts: { resume?: string | null; link?: LinkOptions } = {},
  ): { link: HarnessLink; transport: FakeTransport; conn: Connection } {
    const old = { link: client.link, transport: client.transport, conn: client.conn };
    old.link.kill();
    Object.assign(client, this.#wire({ client }, opts.link), { closed: undefined });
    client.runtime.reconnecting();
    const resume = opts.resume === null ? undefined : opts.resume ?? client.runtime.resumeToken;
    client.runtime.hello(client.name, this.clock.now(), { resume });
    return old;
  }

  /** The client hangs up: the server hears of it at once; nothing in flight arrives. */
  disconnect(client: SimClient, code = "1000", reason = "left"): void {
    client.link.cut();
    client.conn.closed(code, reason);
    client.runtime.closed(reason);
    client.closed ??= { code: Number(code), reason };
  }

  /**
   * One pump step of `ms`: every message lands at its own arrival time (server
   * ticks fire in between as the clock passes them), then every runtime updates.
   */
  step(ms = STEP_MS): void {
    this.clock.advance(ms);
    const now = this.clock.now();
    for (const client of this.clients) {
      if (client.closed) continue;
      client.runtime.update(now, (tick) => client.control(tick, client));
    }
  }

  /** Pumps for `ms` in steps of `stepMs`. */
  pump(ms: number, stepMs = STEP_MS): void {
    const end = this.clock.now() + ms;
    while (this.clock.now() < end) this.step(Math.min(stepMs, end - this.clock.now()));
  }

  /** Pumps until `done()` holds; throws after `maxMs`. Returns the ms it took. */
  runUntil(done: () => boolean, opts: { maxMs?: number; stepMs?: number; what?: string } = {}) {
    const start = this.clock.now();
    const maxMs = opts.maxMs ?? 10_000;
    while (!done()) {
      if (this.clock.now() - start > maxMs) {
        throw new Error(`Timed out after ${maxMs} ms waiting for ${opts.what ?? "a condition"}`);
      }
      this.step(opts.stepMs ?? STEP_MS);
    }
    return this.clock.now() - start;
  }

  /** Pumps until the server has run `n` more ticks. */
  runTicks(n: number, stepMs = STEP_MS): void {
    const target = this.ticks + n;
    while (this.ticks < target) this.step(stepMs);
  }

  /** Closes every client and stops the loop; idempotent. */
  shutdown(): void {
    if (this.#down) return;
    this.#down = true;
    this.server.shutdown("test over");
    for (const c of this.clients) c.link.cut();
  }

  [Symbol.dispose](): void {
    this.shutdown();
  }
}

// ---------------------------------------------------------------- raw clients

/** A connection driven message by message through the real codec, no runtime. */
export class RawClient {
  readonly transport = new FakeTransport();
  readonly conn: Connection;
  readonly #encoder = new MessageEncoder();

  constructor(server: GameServer, ip: string) {
    this.conn = server.open(this.transport, ip);
  }

  /** Sends raw bytes as one binary frame. */
  send(data: Uint8Array): void {
    this.conn.receive(data);
  }

  hello(name: string, opts: { version?: number; content?: number } = {}): void {
    const { version = PROTOCOL_VERSION, content = CONTENT_HASH } = opts;
    this.send(
      encodeClientMessage(this.#encoder, { kind: ClientKind.Hello, version, name, content }),
    );
  }

  /** One Input message carrying `frames` (1–3 consecutive ticks, oldest first). */
  input(frames: readonly InputFrame[]): void {
    this.send(encodeClientMessage(this.#encoder, { kind: ClientKind.Input, frames }));
  }

  /** One Ping message. */
  ping(clientTimeMs = 0): void {
    this.send(encodeClientMessage(this.#encoder, { kind: ClientKind.Ping, clientTimeMs }));
  }

  /** The client hangs up (as the socket's onclose tells the server). */
  hangUp(code = "1000", reason = "left"): void {
    this.conn.closed(code, reason);
  }

  /** The id the Welcome gave us. */
  get playerId(): number {
    for (const m of this.transport.messages()) {
      if (m.kind === ServerKind.Welcome) return m.playerId;
    }
    throw new Error("Cannot find a welcome: the hello was not accepted");
  }
}

/**
 * A valid Ping of exactly `totalBytes` (5–256): CBOR tag 28 ("shareable") wraps a
 * value without changing it, so nested tags pad the message. No other client
 * message can grow that large while staying valid, and the byte budget needs big ones.
 */
export function paddedPing(totalBytes: number): Uint8Array {
  if (totalBytes < 5 || totalBytes > 256) {
    throw new RangeError(`Cannot pad a ping to ${totalBytes}`);
  }
  // [0x82, 3, (0xd8 0x1c)…, time 5]: the time takes 1 byte, or 2 in the longer form 0x18 0x05.
  const time = (totalBytes - 2) % 2 === 1 ? [5] : [0x18, 5];
  const out = [0x82, ClientKind.Ping];
  for (let i = 0; i < (totalBytes - 2 - time.length) / 2; i++) out.push(0xd8, 0x1c);
  return new Uint8Array([...out, ...time]);
}

/** An input frame for `tick`; the rest defaults to standing still. */
export function frame(tick: number, extra: Partial<InputSample> = {}): InputFrame {
  return { tick, ...IDLE, ...extra };
}

/** A move toward (x, y) from `from`, scaled to full speed (or less when close). */
export function steerTo(
  from: { x: number; y: number },
  to: { x: number; y: number },
): InputSample {
  const dx = to.x - from.x;
  const dy = to.y - from.y;
  const d = Math.hypot(dx, dy);
  if (d < 1) return IDLE;
  return {
    moveX: Math.round((dx / d) * 100),
    moveY: Math.round((dy / d) * 100),
    aim: 0,
    buttons: 0,
  };
}

/** Euclidean distance, in px. */
export function dist(a: { x: number; y: number }, b: { x: number; y: number }): number {
  return Math.hypot(a.x - b.x, a.y - b.y);
}

// ---------------------------------------------------------------- real sockets

/** Options of a live server. */
export interface LiveServerOptions {
  readonly limits?: Partial<ServerLimits>;
  /** A simulated link on every game connection, as LINK_SIM sets in dev. */
  readonly linkSim?: LinkSpec;
  readonly log?: Logger;
  readonly seed?: number;
  readonly worldDef?: ServerOptions["worldDef"];
}

/** A game server on the real clock behind the real app on a free port; `await using` shuts both down. */
export class LiveServer implements AsyncDisposable {
  readonly server: GameServer;
  readonly http: Deno.HttpServer<Deno.NetAddr>;
  readonly url: string;

  constructor(opts: LiveServerOptions = {}) {
    this.server = new GameServer({
      clock: realClock,
      seed: opts.seed ?? 1,
      limits: opts.limits,
      log: opts.log,
      worldDef: opts.worldDef,
    });
    this.server.start();
    const app = createApp(this.server, {
      clientJs: () => Promise.resolve(""),
      linkSim: opts.linkSim,
    });
    this.http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
    this.url = `ws://127.0.0.1:${this.http.addr.port}/ws`;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.server.shutdown("test over");
    await this.http.shutdown();
  }
}

/**
 * Stalls this process's only thread five times for 70 ms, 100 ms apart, as long collections
 * would, then waits 200 ms: the server's loop runs the ticks each stall owes back to back,
 * in one turn of the event loop. Returns how many ticks started late meanwhile.
 */
export async function stallTheLoop(server: GameServer): Promise<number> {
  const lateBefore = server.scheduler.stats.ticksLate;
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const start = performance.now();
    while (performance.now() - start < 70) {
      // The stall: busy, as in a collection's pause.
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  return server.scheduler.stats.ticksLate - lateBefore;
}

/** A plain WebSocket that decodes and keeps every server message, with its arrival time. */
export class LiveSocket {
  readonly ws: WebSocket;
  readonly received: { atMs: number; msg: ServerMessage }[] = [];
  readonly opened: Promise<void>;
  readonly closed: Promise<CloseEvent>;
  readonly #decoder = new MessageDecoder();
  readonly #encoder = new MessageEncoder();
  readonly #waiters: {
    kind: number;
    resolve: (m: ServerMessage) => void;
    reject: (err: Error) => void;
  }[] = [];
  /** Set once the socket has closed: a wait for a message that can no longer come fails. */
  #closedWith: CloseEvent | undefined;

  constructor(url: string) {
    const ws = new WebSocket(url);
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    this.opened = new Promise((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error(`Cannot open ${url}`));
    });
    this.closed = new Promise((resolve) =>
      ws.onclose = (e) => {
        this.#closedWith = e;
        for (const w of this.#waiters.splice(0)) w.reject(this.#noMore(w.kind));
        resolve(e);
      }
    );
    ws.onmessage = (e) => {
      if (!(e.data instanceof ArrayBuffer)) {
        throw new TypeError("the server sends binary frames only");
      }
      const parts = splitFrame(new Uint8Array(e.data), { maxMessages: MAX_SERVER_FRAME_MESSAGES });
      for (const part of parts) {
        const msg = decodeServerMessage(this.#decoder, part);
        this.received.push({ atMs: performance.now(), msg });
        for (let i = this.#waiters.length - 1; i >= 0; i--) {
          if (this.#waiters[i].kind === msg.kind) this.#waiters.splice(i, 1)[0].resolve(msg);
        }
      }
    };
  }

  hello(name: string, opts: { version?: number; content?: number } = {}): void {
    const { version = PROTOCOL_VERSION, content = CONTENT_HASH } = opts;
    this.ws.send(
      encodeClientMessage(this.#encoder, { kind: ClientKind.Hello, version, name, content }),
    );
  }

  /** The first message of `kind`, already here or still to come. */
  first(kind: number): Promise<ServerMessage> {
    const seen = this.received.find((r) => r.msg.kind === kind);
    if (seen) return Promise.resolve(seen.msg);
    return this.next(kind);
  }

  /**
   * The next message of `kind` to arrive from now on. Rejects if the socket closes first
   * (a Reject in place of a Welcome, say), naming the close and the Reject's reason.
   */
  next(kind: number): Promise<ServerMessage> {
    if (this.#closedWith) return Promise.reject(this.#noMore(kind));
    return new Promise((resolve, reject) => this.#waiters.push({ kind, resolve, reject }));
  }

  #noMore(kind: number): Error {
    const e = this.#closedWith!;
    const reject = this.received.find((r) => r.msg.kind === ServerKind.Reject)?.msg;
    const said = reject?.kind === ServerKind.Reject
      ? `; the server's Reject: ${reject.reason}`
      : "";
    return new Error(
      `the socket closed (${e.code} ${e.reason}) before a message of kind ${kind} came${said}`,
    );
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

/**
 * A dungeon whose boss comes after 5 s (a crew has time to regroup) and kills with one
 * touch: the "again with this crew" tests end runs with it.
 */
export function deadlyRoom(): WorldDef {
  return {
    kind: "dungeon",
    name: "Test Room",
    arena: { widthPx: 1280, heightPx: 960, walls: [], spawnPoints: [{ x: 640, y: 800 }] },
    player: { ...PLAYER, maxHp: 1 },
    portals: [],
    waves: [],
    waveDelayTicks: 300,
    boss: WARDEN,
  };
}

/** A clock that moves on by an uneven step every time it is read: ticks take time. */
export class DriftingClock implements Clock {
  static readonly STEPS_MS = [0.03, 0.07, 0.2, 0.4, 0.9, 1.5, 3, 6, 12, 40];
  #nowMs = 0;
  #reads = 0;
  now(): number {
    this.#nowMs += DriftingClock.STEPS_MS[this.#reads++ % DriftingClock.STEPS_MS.length] * 0.77;
    return this.#nowMs;
  }
  setTimer(): number {
    return 1;
  }
  clearTimer(): void {}
}
