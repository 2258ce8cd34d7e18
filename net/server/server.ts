/**
 * The server runtime: connections, the hub, dungeons made on demand, transfers
 * between them, and one scheduler stepping every instance at 60 Hz. It knows
 * transports only through net/transport.ts and the clock only through Clock.
 */
import { CONTENT, CONTENT_HASH, worldByKey } from "../../content/mod.ts";
import {
  CREW_OFFER_MS,
  LIMITS,
  MAX_CATCHUP_TICKS,
  TICK_WINDOW_TICKS,
} from "../../content/net_tuning.ts";
import type { WorldDef } from "../../sim/mod.ts";
import { type InputVerdict, Rng } from "../../sim/mod.ts";
import {
  CodecError,
  decodeClientMessage,
  encodeServerMessage,
  MessageDecoder,
  MessageEncoder,
} from "../wire/codec.ts";
import { Crews } from "./crews.ts";
import { Instance, type Peer, type TransferOrder } from "./instance.ts";
import {
  Choice,
  ClientKind,
  type ClientMessage,
  CloseCode,
  EnterReason,
  PROTOCOL_VERSION,
  type ResultsMsg,
  ServerKind,
} from "../wire/protocol.ts";
import { type Clock, FixedStepScheduler } from "./scheduler.ts";
import { TickWindow } from "./tick_window.ts";
import type { Transport } from "./transport.ts";

/** Limits the server enforces per connection and in total. */
export type ServerLimits = { -readonly [K in keyof typeof LIMITS]: number };

/** A structured log line: an event name and flat fields. */
export type Logger = (event: string, fields: Record<string, unknown>) => void;

/** Counters for /metrics and /healthz. */
export interface ServerCounters {
  connectionsOpened: number;
  bytesIn: number;
  bytesOut: number;
  messagesIn: number;
  snapshotsSkipped: number;
  inputVerdicts: Record<InputVerdict, number>;
  closes: Record<string, number>;
  instancesCreated: number;
  instancesDestroyed: number;
  /** Instances closed because they threw, by kind. */
  instancesFailed: { hub: number; dungeon: number };
  /** Tick duration histogram: counts of ticks at or under each bound, in ms. */
  tickMsBuckets: number[];
  tickMsSum: number;
  tickMsCount: number;
  lastTickAtMs: number;
  /** Players handed to another process (a Transfer sent). */
  transfersOut: number;
  /** Players admitted with a transfer ticket. */
  transfersIn: number;
  /** Portal entries that could not be placed (registry unreachable, no process with room). */
  portalRefusals: number;
}

/** Upper bounds of the tick duration histogram, in ms. */
export const TICK_MS_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16];

/** Options of a server. */
export interface ServerOptions {
  readonly clock: Clock;
  readonly seed?: number;
  readonly limits?: Partial<ServerLimits>;
  readonly log?: Logger;
  /**
   * The rules a new instance runs instead of its world's in the registry (undefined: the
   * world's own). Tests use it to break one instance among healthy ones; BOSS_RUSH to
   * open dungeons on their boss.
   */
  readonly worldDef?: (
    kind: "hub" | "dungeon",
    instanceId: string,
    world: WorldDef,
  ) => WorldDef | undefined;
  /** Prefix of every instance id, unique per process in a cluster (`p1/` → `p1/hub`). */
  readonly instancePrefix?: string;
  /** This process's name (the `process` label in /metrics). */
  readonly processId?: string;
}

/**
 * Decides where players go when several processes share the game (cluster.ts).
 * Without one, the server places everyone in its own instances.
 */
export interface Placer {
  /** A player passed the handshake, with the hello's transfer ticket if any. */
  admit(conn: Connection): void;
  /**
   * Players who entered one portal of `from` together (one tick, at most one dungeon's
   * worth), bound for an instance of the world named `world`.
   */
  toDungeon(party: readonly Connection[], opts: { from: Instance; world: string }): void;
  /** A player left their instance (already) for a hub. */
  toHub(conn: Connection, reason: EnterReason): void;
  /** An instance was destroyed (emptied, or failed). */
  instanceGone(id: string): void;
}

const NAME_PATTERN = /^[\p{L}\p{N} _.\-]+$/u;

/** A content hash as 8 hex digits. */
function hex(hash: number): string {
  return hash.toString(16).padStart(8, "0");
}

/** Validates a player name: trimmed, 1..max characters of letters, digits, space, _ . - */
export function checkName(raw: string, maxLength: number): string | undefined {
  const name = raw.trim().replace(/\s+/g, " ");
  if (name.length < 1 || [...name].length > maxLength || !NAME_PATTERN.test(name)) return undefined;
  return name;
}

/** A token bucket: `ratePerSec` sustained, `burst` at once. */
class Budget {
  #tokens: number;
  #at: number;
  constructor(readonly ratePerSec: number, readonly burst: number, nowMs: number) {
    this.#tokens = burst;
    this.#at = nowMs;
  }
  take(amount: number, nowMs: number): boolean {
    this.#tokens = Math.min(
      this.burst,
      this.#tokens + ((nowMs - this.#at) / 1000) * this.ratePerSec,
    );
    this.#at = nowMs;
    this.#tokens -= amount;
    return this.#tokens >= 0;
  }
}

/** One client from socket open to close. */
export class Connection implements Peer {
  readonly id: number;
  readonly ip: string;
  readonly #server: GameServer;
  readonly #transport: Transport;
  readonly #decoder = new MessageDecoder();
  readonly #messages: Budget;
  readonly #bytes: Budget;
  #handshakeTimer: number | undefined;
  state: "handshake" | "playing" | "closed" = "handshake";
  playerId = 0;
  name = "";
  instance: Instance | undefined;
  /** The hello's transfer ticket, if it came from another process. */
  ticket: string | undefined;
  /** The hub this player last stood in, to return to after a dungeon. */
  homeHubId: string | undefined;
  bytesIn = 0;
  bytesOut = 0;

  constructor(server: GameServer, opts: { id: number; ip: string; transport: Transport }) {
    this.#server = server;
    this.id = opts.id;
    this.ip = opts.ip;
    this.#transport = opts.transport;
    const limits = server.limits;
    const now = server.clock.now();
    this.#messages = new Budget(
      limits.maxMessagesPerSec,
      limits.maxMessagesPerSec * limits.burstSeconds,
      now,
    );
    this.#bytes = new Budget(
      limits.maxBytesPerSec,
      limits.maxBytesPerSec * limits.burstSeconds,
      now,
    );
    this.#handshakeTimer = server.clock.setTimer(() => {
      this.#handshakeTimer = undefined;
      this.close(CloseCode.HandshakeTimeout, "no hello within the handshake timeout");
    }, limits.handshakeTimeoutMs);
  }

  sendReliable(data: Uint8Array): void {
    if (this.state === "closed") return;
    this.bytesOut += data.byteLength;
    this.#server.counters.bytesOut += data.byteLength;
    this.#transport.sendReliable(data);
  }

  sendLatest(data: Uint8Array): boolean {
    if (this.state === "closed") return false;
    if (!this.#transport.sendLatest(data)) {
      this.#server.counters.snapshotsSkipped++;
      return false;
    }
    this.bytesOut += data.byteLength;
    this.#server.counters.bytesOut += data.byteLength;
    return true;
  }

  /** Handles one incoming frame. Never throws: bad input closes this connection only. */
  receive(data: Uint8Array | string): void {
    if (this.state === "closed") return;
    const server = this.#server;
    const size = typeof data === "string" ? data.length : data.byteLength;
    this.bytesIn += size;
    server.counters.bytesIn += size;
    server.counters.messagesIn++;
    const now = server.clock.now();
    if (!this.#messages.take(1, now) || !this.#bytes.take(size, now)) {
      this.close(CloseCode.RateLimited, "sending too fast");
      return;
    }
    if (typeof data === "string") {
      this.close(CloseCode.BadMessage, "text frames are not accepted");
      return;
    }
    // A hello may carry a transfer ticket; every later frame is small.
    const cap = this.state === "handshake"
      ? server.limits.maxHelloBytes
      : server.limits.maxClientFrameBytes;
    if (size > cap) {
      this.close(CloseCode.FrameTooLarge, `frame of ${size} bytes exceeds ${cap}`);
      return;
    }
    let msg: ClientMessage;
    try {
      msg = decodeClientMessage(this.#decoder, data);
    } catch (err) {
      const reason = err instanceof CodecError ? err.message : "malformed message";
      this.close(CloseCode.BadMessage, reason);
      return;
    }
    try {
      this.#handle(msg);
    } catch (err) {
      // A bug must not take the process down; this client alone pays for it.
      server.log("handler_error", { conn: this.id, error: errorText(err) });
      this.close(CloseCode.ServerError, "the server could not handle a message");
    }
  }

  #handle(msg: ClientMessage): void {
    const server = this.#server;
    if (this.state === "handshake") {
      if (msg.kind !== ClientKind.Hello) {
        this.close(CloseCode.BadMessage, "expected hello first");
        return;
      }
      if (msg.version !== PROTOCOL_VERSION) {
        this.close(
          CloseCode.VersionMismatch,
          `protocol version ${msg.version} is not supported; this server speaks ${PROTOCOL_VERSION} — reload the page`,
        );
        return;
      }
      if (msg.content !== CONTENT_HASH) {
        // Worlds, bosses and kinds travel as ids: other content would misread every one.
        this.close(
          CloseCode.VersionMismatch,
          `content ${hex(msg.content)} is not this server's ${hex(CONTENT_HASH)} — reload the page`,
        );
        return;
      }
      const name = checkName(msg.name, server.limits.maxNameLength);
      if (name === undefined) {
        this.close(
          CloseCode.BadName,
          `name must be 1–${server.limits.maxNameLength} letters, digits, spaces, _ . -`,
        );
        return;
      }
      this.#clearHandshakeTimer();
      this.name = name;
      this.ticket = msg.ticket;
      server.admit(this);
      return;
    }
    switch (msg.kind) {
      case ClientKind.Hello:
        this.close(CloseCode.BadMessage, "duplicate hello");
        return;
      case ClientKind.Input: {
        const instance = this.instance;
        if (!instance) return;
        for (const frame of msg.frames) {
          server.counters.inputVerdicts[instance.offerInput(this.playerId, frame)]++;
        }
        return;
      }
      case ClientKind.Ping:
        this.sendReliable(encodeServerMessage(server.encoder, {
          kind: ServerKind.Pong,
          clientTimeMs: msg.clientTimeMs,
          tick: this.instance?.world.tick ?? 0,
        }));
        return;
      case ClientKind.Choice:
        server.choose(this, msg.choice);
        return;
    }
  }

  #clearHandshakeTimer(): void {
    if (this.#handshakeTimer !== undefined) this.#server.clock.clearTimer(this.#handshakeTimer);
    this.#handshakeTimer = undefined;
  }

  /**
   * Says why in a Reject message, closes the socket with the same code and reason, and
   * forgets the player. Idempotent. The Reject matters: Deno drops a server socket that
   * receives data after close(), losing the close frame (a flooding client never sees
   * it), but what was sent before the close still arrives.
   */
  close(code: number, reason: string): void {
    if (this.state === "closed") return;
    this.sendReliable(
      encodeServerMessage(this.#server.encoder, { kind: ServerKind.Reject, code, reason }),
    );
    this.#transport.close(code, reason);
    this.closed(String(code), reason);
  }

  /** Ends the connection after a Transfer: no Reject, the client is on its way elsewhere. */
  endAfterTransfer(): void {
    if (this.state === "closed") return;
    this.#transport.close(CloseCode.Transferred, "continued on another process");
    this.closed(String(CloseCode.Transferred), "transferred");
  }

  /** The socket is gone (closed by us or by the peer): release everything. */
  closed(code = "peer", reason = "closed by client"): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.#clearHandshakeTimer();
    this.#server.forget(this, code, reason);
  }
}

/** The whole game server: hub, dungeons, connections and the tick loop. */
export class GameServer {
  readonly clock: Clock;
  readonly limits: ServerLimits;
  readonly encoder = new MessageEncoder();
  readonly instances = new Map<string, Instance>();
  readonly connections = new Set<Connection>();
  readonly counters: ServerCounters;
  readonly scheduler: FixedStepScheduler;
  readonly #rng: Rng;
  readonly #log: Logger;
  readonly #players = new Map<number, Connection>();
  readonly #perIp = new Map<string, number>();
  readonly crews = new Crews({ offerMs: CREW_OFFER_MS });
  readonly #worldDef: ServerOptions["worldDef"];
  #hub: Instance;
  /** Recent tick durations, for the load a process reports and /metrics. */
  readonly tickWindow = new TickWindow(TICK_WINDOW_TICKS);
  readonly instancePrefix: string;
  readonly processId: string;
  /** Set by a cluster node; undefined: one process places everyone itself. */
  placer: Placer | undefined;
  #nextHub = 2;
  #nextConnId = 1;
  #nextPlayerId = 1;
  #nextDungeon = 1;
  #accepting = true;

  constructor(opts: ServerOptions) {
    this.clock = opts.clock;
    this.limits = { ...LIMITS, ...opts.limits };
    this.#rng = new Rng(opts.seed ?? 0x5eed);
    this.#log = opts.log ?? (() => {});
    this.#worldDef = opts.worldDef;
    this.instancePrefix = opts.instancePrefix ?? "";
    this.processId = opts.processId ?? "single";
    this.counters = {
      connectionsOpened: 0,
      bytesIn: 0,
      bytesOut: 0,
      messagesIn: 0,
      snapshotsSkipped: 0,
      inputVerdicts: { queued: 0, replay: 0, stale: 0, future: 0, flood: 0, invalid: 0 },
      closes: {},
      instancesCreated: 0,
      instancesDestroyed: 0,
      instancesFailed: { hub: 0, dungeon: 0 },
      tickMsBuckets: TICK_MS_BUCKETS.map(() => 0),
      tickMsSum: 0,
      tickMsCount: 0,
      lastTickAtMs: 0,
      transfersOut: 0,
      transfersIn: 0,
      portalRefusals: 0,
    };
    this.#hub = this.#createInstance(CONTENT.home);
    this.scheduler = new FixedStepScheduler(this.clock, {
      step: () => this.tick(),
      maxCatchUpTicks: MAX_CATCHUP_TICKS,
      onError: (err) => this.log("tick_error", { error: errorText(err) }),
    });
  }

  /** The hub: where every player starts and returns (replaced if it ever fails). */
  get hub(): Instance {
    return this.#hub;
  }

  log(event: string, fields: Record<string, unknown>): void {
    this.#log(event, fields);
  }

  /** Starts the 60 Hz loop. */
  start(): void {
    this.scheduler.start();
  }

  /** Stops accepting and closes every client with `reason`, then stops the loop. */
  shutdown(reason: string): void {
    this.#accepting = false;
    for (const c of [...this.connections]) c.close(CloseCode.ServerRestarting, reason);
    this.scheduler.stop();
  }

  get accepting(): boolean {
    return this.#accepting;
  }

  /** Number of connections from `ip`. */
  connectionsFrom(ip: string): number {
    return this.#perIp.get(ip) ?? 0;
  }

  /**
   * Why a new connection from `ip` would be refused, or undefined to accept.
   * Checked before the upgrade and again on open.
   */
  refusal(ip: string): { code: CloseCode; reason: string } | undefined {
    if (!this.#accepting) return { code: CloseCode.ServerRestarting, reason: "server restarting" };
    if (this.connections.size >= this.limits.maxConnections) {
      return { code: CloseCode.ServerFull, reason: "server full, try again shortly" };
    }
    if (this.connectionsFrom(ip) >= this.limits.maxConnectionsPerIp) {
      return { code: CloseCode.TooManyFromIp, reason: "too many connections from your address" };
    }
    return undefined;
  }

  /** Registers an open socket; the returned connection receives its frames. */
  open(transport: Transport, ip: string): Connection {
    const conn = new Connection(this, { id: this.#nextConnId++, ip, transport });
    const refused = this.refusal(ip);
    this.connections.add(conn);
    this.#perIp.set(ip, this.connectionsFrom(ip) + 1);
    if (refused) {
      conn.close(refused.code, refused.reason);
      return conn;
    }
    // Counted only once accepted: a refusal is counted under its close code instead.
    this.counters.connectionsOpened++;
    this.log("connect", { conn: conn.id, ip });
    return conn;
  }

  /** A connection passed the handshake: place it (a cluster's placer, or this server's hub). */
  admit(conn: Connection): void {
    if (this.placer) {
      this.placer.admit(conn);
      return;
    }
    if (conn.ticket !== undefined) {
      conn.close(CloseCode.BadTicket, "this server takes no transfer tickets: connect without one");
      return;
    }
    this.welcome(conn);
    this.#moveTo(conn, this.hubFor(conn), EnterReason.Join);
  }

  /** Gives an admitted connection its player id and says so. */
  welcome(conn: Connection): void {
    conn.playerId = this.#nextPlayerId;
    this.#nextPlayerId = this.#nextPlayerId >= 0xffff ? 1 : this.#nextPlayerId + 1;
    conn.state = "playing";
    this.#players.set(conn.playerId, conn);
    conn.sendReliable(encodeServerMessage(this.encoder, {
      kind: ServerKind.Welcome,
      version: PROTOCOL_VERSION,
      playerId: conn.playerId,
    }));
    this.log("hello", { conn: conn.id, player: conn.playerId, name: conn.name });
  }

  /** Drops every trace of a closed connection. */
  forget(conn: Connection, code: string, reason: string): void {
    if (!this.connections.delete(conn)) return;
    const left = this.connectionsFrom(conn.ip) - 1;
    if (left > 0) this.#perIp.set(conn.ip, left);
    else this.#perIp.delete(conn.ip);
    this.countClose(code);
    if (conn.playerId !== 0) {
      this.#players.delete(conn.playerId);
      this.crews.forget(conn.playerId);
    }
    const instance = conn.instance;
    conn.instance = undefined;
    if (instance) this.#leave(instance, conn.playerId);
    this.log("disconnect", { conn: conn.id, player: conn.playerId, code, reason });
  }

  /** Counts a closed or refused connection under its close code. */
  countClose(code: string): void {
    this.counters.closes[code] = (this.counters.closes[code] ?? 0) + 1;
  }

  /**
   * Runs one tick of every instance and carries out the transfers they decide. An
   * instance that throws is closed on its own; the others tick on.
   */
  tick(): void {
    const started = this.clock.now();
    for (const instance of [...this.instances.values()]) {
      if (this.instances.get(instance.id) !== instance) continue; // closed earlier this tick
      let orders: TransferOrder[];
      let results: ResultsMsg | undefined;
      try {
        orders = instance.step();
        results = instance.takeResults();
      } catch (err) {
        this.#fail(instance, { during: "step", err });
        continue;
      }
      // Who enters one portal of one instance in one tick goes to one dungeon together.
      const parties = new Map<string, Connection[]>();
      for (const order of orders) {
        const conn = this.#players.get(order.playerId);
        if (!conn || conn.instance !== instance) continue;
        if (order.to === "hub") {
          this.#toHub(conn, order.reason);
          continue;
        }
        const world = CONTENT.worlds[instance.worldId].portals[order.portal].to;
        parties.set(world, [...parties.get(world) ?? [], conn]);
      }
      for (const [world, party] of parties) {
        for (let i = 0; i < party.length; i += this.limits.maxPlayersPerDungeon) {
          const group = party.slice(i, i + this.limits.maxPlayersPerDungeon);
          this.#toDungeon(group, { from: instance, world });
        }
      }
      if (results) this.#offerResults(instance, results);
    }
    this.crews.prune(started);
    const ms = this.clock.now() - started;
    const c = this.counters;
    c.tickMsSum += ms;
    c.tickMsCount++;
    c.lastTickAtMs = started;
    this.tickWindow.add(ms);
    for (let i = 0; i < TICK_MS_BUCKETS.length; i++) {
      if (ms <= TICK_MS_BUCKETS[i]) c.tickMsBuckets[i]++;
    }
  }

  #toDungeon(party: readonly Connection[], opts: { from: Instance; world: string }): void {
    if (this.placer) {
      // They wait in the portal (their ships frozen) until the placement comes back.
      this.placer.toDungeon(party, opts);
      return;
    }
    const target = this.#dungeonWithRoom(opts.world, party.length);
    for (const conn of party) this.#move(conn, target, EnterReason.Portal);
  }

  /** Takes a player out of their instance and sends them to a hub. */
  #toHub(conn: Connection, reason: EnterReason): void {
    if (!this.placer) {
      this.#move(conn, this.hubFor(conn), reason);
      return;
    }
    this.leave(conn);
    this.placer.toHub(conn, reason);
  }

  /**
   * The hub for a player here: the one they came from while it has room, else the
   * fullest with room (so a crowd meets), else a new shard.
   */
  hubFor(conn: Connection): Instance {
    const home = conn.homeHubId === undefined ? undefined : this.instances.get(conn.homeHubId);
    if (home && home.kind === "hub" && home.size < this.limits.hubCapacity) return home;
    let best: Instance | undefined;
    for (const i of this.instances.values()) {
      if (i.kind !== "hub" || i.size >= this.limits.hubCapacity) continue;
      if (!best || i.size > best.size) best = i;
    }
    return best ?? this.#createInstance(CONTENT.home);
  }

  /** The instance `id` of this process, made (with that id, of world `world`) if missing. */
  instanceFor(id: string, world: string): Instance {
    return this.instances.get(id) ?? this.#createInstance(world, id);
  }

  /** Moves a player from wherever they are into `target` (of this process). */
  move(conn: Connection, target: Instance, reason: EnterReason): void {
    this.#move(conn, target, reason);
  }

  /** Takes a player out of their instance, if any (their connection stays). */
  leave(conn: Connection): void {
    const from = conn.instance;
    conn.instance = undefined;
    if (from) this.#leave(from, conn.playerId);
  }

  /**
   * Sends a player to another process: a Transfer naming the URL and ticket, then the
   * socket closes (4011) once that has gone out. The client reconnects there.
   */
  handOff(conn: Connection, to: { url: string; ticket: string; reason: EnterReason }): void {
    this.log("transfer", {
      player: conn.playerId,
      from: conn.instance?.id,
      to: to.url,
      reason: to.reason,
    });
    this.leave(conn);
    conn.sendReliable(encodeServerMessage(this.encoder, {
      kind: ServerKind.Transfer,
      url: to.url,
      ticket: to.ticket,
      reason: to.reason,
    }));
    this.counters.transfersOut++;
    conn.endAfterTransfer();
  }

  /** The portal could not place a player: back to a spawn point of their hub, told why. */
  refusePortal(conn: Connection, reason: string): void {
    const hub = conn.instance;
    if (!hub || conn.state !== "playing") return;
    conn.instance = undefined;
    this.#leave(hub, conn.playerId);
    const back = this.instances.get(hub.id) ?? this.hubFor(conn);
    this.#moveTo(conn, back, EnterReason.Join);
    if (back.has(conn.playerId)) {
      back.announce({ type: "portalRefused", playerId: conn.playerId, reason });
    }
    this.counters.portalRefusals++;
    this.log("portal_refused", { player: conn.playerId, instance: hub.id, reason });
  }

  /**
   * A run ended: its results go to each of its crew still in that dungeon or back in the
   * hub (not to one already fighting elsewhere), with the offer of a run together.
   */
  #offerResults(from: Instance, results: ResultsMsg): void {
    const bytes = encodeServerMessage(this.encoder, results);
    const crew: number[] = [];
    for (const row of results.rows) {
      const conn = this.#players.get(row.id);
      if (!conn || (conn.instance !== from && conn.instance?.kind !== "hub")) continue;
      crew.push(row.id);
      conn.sendReliable(bytes);
    }
    this.crews.offer(from.id, { members: crew, world: from.worldKey, nowMs: this.clock.now() });
    this.log("run_end", { instance: from.id, outcome: results.outcome, crew: crew.length });
  }

  /**
   * A player's answer on the results screen. "Again" joins the crew's new dungeon (made
   * by the first to answer, reserved for the crew); "hub" leaves the finished one. An
   * answer without an open offer (a double click, a lapsed offer) changes nothing.
   */
  choose(conn: Connection, choice: Choice): void {
    const from = conn.instance;
    const crewId = this.crews.take(conn.playerId, this.clock.now());
    if (!from || crewId === undefined) return;
    if (from.kind !== "hub" && from.id !== crewId) return; // already fighting elsewhere
    if (choice === Choice.Hub) {
      if (from.kind !== "hub") this.#toHub(conn, EnterReason.Return);
      return;
    }
    const nextId = this.crews.next(crewId);
    let target = nextId === undefined ? undefined : this.instances.get(nextId);
    if (
      !target || !target.world.acceptsPlayers || target.size >= this.limits.maxPlayersPerDungeon
    ) {
      target = this.#createInstance(this.crews.world(crewId) ?? from.worldKey);
      target.reservedFor = crewId;
      this.crews.setNext(crewId, target.id);
    }
    this.#move(conn, target, EnterReason.Retry);
  }

  /** Moves a player from wherever it is to `target`. */
  #move(conn: Connection, target: Instance, reason: EnterReason): void {
    const from = conn.instance;
    this.log("transfer", { player: conn.playerId, from: from?.id, to: target.id, reason });
    conn.instance = undefined;
    if (from) this.#leave(from, conn.playerId);
    this.#moveTo(conn, target, reason);
  }

  /** Takes a player out of an instance, closing the instance if that throws or empties it. */
  #leave(instance: Instance, playerId: number): void {
    try {
      instance.leave(playerId);
    } catch (err) {
      this.#fail(instance, { during: "leave", err });
      return;
    }
    this.#destroyIfEmpty(instance);
  }

  /**
   * Puts a player in `target`. If the join throws, `target` is closed and the player
   * goes to the hub instead (a fresh one if the hub itself failed); a player no hub
   * can take is closed with ServerError.
   */
  #moveTo(conn: Connection, target: Instance, reason: EnterReason, attempt = 0): void {
    try {
      target.join(conn, reason);
      conn.instance = target;
      if (target.kind === "hub") conn.homeHubId = target.id;
    } catch (err) {
      this.#fail(target, { during: "join", err });
      if (attempt >= 1) {
        conn.close(CloseCode.ServerError, "the server could not place you in a world");
        return;
      }
      this.#moveTo(conn, this.#hub, EnterReason.Evacuated, attempt + 1);
    }
  }

  /**
   * Closes an instance that threw: logs it with its id, counts it, and sends every
   * player inside to the hub with reason Evacuated. A failed hub is replaced first.
   */
  #fail(instance: Instance, opts: { during: string; err: unknown }): void {
    if (this.instances.get(instance.id) !== instance) return;
    this.instances.delete(instance.id);
    this.counters.instancesFailed[instance.kind]++;
    this.counters.instancesDestroyed++;
    this.log("instance_failed", {
      instance: instance.id,
      during: opts.during,
      tick: instance.world.tick,
      players: instance.size,
      error: errorText(opts.err),
    });
    if (instance === this.#hub) this.#hub = this.#createInstance(CONTENT.home);
    this.placer?.instanceGone(instance.id);
    for (const peer of instance.peers) {
      const conn = this.#players.get(peer.playerId);
      if (!conn || conn.instance !== instance) continue;
      conn.instance = undefined;
      this.#moveTo(conn, this.#hub, EnterReason.Evacuated);
    }
  }

  /** The newest instance of world `key` that still has room for `seats` players, or a new one. */
  #dungeonWithRoom(key: string, seats: number): Instance {
    let newest: Instance | undefined;
    for (const i of this.instances.values()) {
      if (
        i.worldKey === key && i.reservedFor === undefined && i.world.acceptsPlayers &&
        i.size + seats <= this.limits.maxPlayersPerDungeon
      ) {
        newest = i;
      }
    }
    return newest ?? this.#createInstance(key);
  }

  /**
   * A new instance of the world named `key`, with id `givenId` (a cluster's placement)
   * or a local one: the first hub is the world's key, later shards `hub-2`, …
   */
  #createInstance(key: string, givenId?: string): Instance {
    const { world, id: worldId } = worldByKey(key);
    const local = world.kind === "dungeon"
      ? `dungeon-${this.#nextDungeon++}`
      : this.instances.size === 0
      ? world.key
      : `${world.key}-${this.#nextHub++}`;
    const id = givenId ?? this.instancePrefix + local;
    const instance = new Instance(id, {
      worldId,
      def: this.#worldDef?.(world.kind, id, world) ?? world,
      seed: Math.floor(this.#rng.next() * 0xffffffff),
      encoder: this.encoder,
    });
    this.instances.set(id, instance);
    this.counters.instancesCreated++;
    this.log("instance_create", { instance: id, kind: world.kind, world: world.key });
    return instance;
  }

  #destroyIfEmpty(instance: Instance): void {
    if (instance === this.#hub || instance.size > 0) return;
    this.instances.delete(instance.id);
    this.counters.instancesDestroyed++;
    this.log("instance_destroy", { instance: instance.id, ticks: instance.world.tick });
    this.placer?.instanceGone(instance.id);
  }

  /** Players inside instances. */
  get playerCount(): number {
    return this.#players.size;
  }

  /** Seconds since the last tick ran, for the health check. */
  tickAgeMs(): number {
    return this.counters.lastTickAtMs === 0 ? 0 : this.clock.now() - this.counters.lastTickAtMs;
  }
}

/** An error's stack (or text) for a log line. */
function errorText(err: unknown): string {
  return err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
}
