/**
 * The server runtime: admission, players (sessions), the hub, dungeons made on
 * demand, transfers between them, and one scheduler stepping every instance at
 * 60 Hz. It knows transports only through net/server/transport.ts and the clock
 * only through Clock. Sockets are Connections (connection.ts); players are Sessions.
 */
import { CONTENT, worldByKey } from "../../content/mod.ts";
import {
  CREW_OFFER_MS,
  LIMITS,
  MAX_CATCHUP_TICKS,
  TICK_WINDOW_TICKS,
  TICKS_PER_SNAPSHOT,
} from "../../content/net_tuning.ts";
import type { StepProbe, WorldDef, WorldStepPart } from "../../sim/mod.ts";
import { type InputVerdict, Rng } from "../../sim/mod.ts";
import { encodeServerMessage, MessageEncoder } from "../wire/codec.ts";
import {
  Choice,
  CloseCode,
  EnterReason,
  NoticeCode,
  PROTOCOL_VERSION,
  type ResultsMsg,
  ServerKind,
} from "../wire/protocol.ts";
import { AddressGate, addressKey } from "./admission.ts";
import { Connection, errorText } from "./connection.ts";
import { Crews } from "./crews.ts";
import {
  type CpuSample,
  cpuSpent,
  openThreadCpu,
  processCpu,
  type ThreadCpu,
} from "./cpu_usage.ts";
import { Instance, type InstanceStepPart, type TransferOrder } from "./instance.ts";
import { type Clock, FixedStepScheduler } from "./scheduler.ts";
import { StallWatch } from "./stall_watch.ts";
import { Session } from "./session.ts";
import { TickWindow } from "./tick_window.ts";
import { randomId, randomSecret, TokenSigner } from "./tokens.ts";
import type { Transport } from "./transport.ts";

export { Connection } from "./connection.ts";
export { checkName } from "./names.ts";

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
  /** Closes by close code, from CLOSE_LABELS. */
  closes: Record<string, number>;
  /** Connections refused before they became one, by why. */
  refusals: Record<RefusalKind, number>;
  instancesCreated: number;
  instancesDestroyed: number;
  /** Instances closed because they threw, by kind. */
  instancesFailed: { hub: number; dungeon: number };
  /** Tick duration histogram: counts of ticks at or under each bound, in ms. */
  tickMsBuckets: number[];
  tickMsSum: number;
  tickMsCount: number;
  /**
   * Where the ticks' time went, ms in all: stepping the hubs, stepping the dungeons (each
   * with the transfers and results its step decided), then flushing the connections (and
   * the periodic sweep). The three add up to tickMsSum.
   */
  tickMsByPart: { hub: number; dungeon: number; flush: number };
  /**
   * Bullets in flight after each instance's step, summed over ticks: over a span of ticks,
   * divided by them, how many bullets the fights carried on average (their load).
   */
  bulletTicks: number;
  lastTickAtMs: number;
  /** Players handed to another process (a Transfer sent). */
  transfersOut: number;
  /** Players admitted with a transfer ticket. */
  transfersIn: number;
  /** Portal entries that could not be placed (registry unreachable, no process with room). */
  portalRefusals: number;
  /** Sessions taken back over a new connection. */
  resumes: number;
  /** Resume tokens that did not take: the run was over, or the token was no good. */
  resumeRefusals: { expired: number; refused: number };
  /** Players whose link dropped and who were kept waiting (each time). */
  detaches: number;
}

/** Why a connection was refused before it became one. */
export type RefusalKind =
  | "host"
  | "origin"
  | "bad_upgrade"
  | "draining"
  | "full"
  | "per_address"
  | "rate";

/** Every refusal kind, for metrics. */
export const REFUSAL_KINDS: readonly RefusalKind[] = [
  "host",
  "origin",
  "bad_upgrade",
  "draining",
  "full",
  "per_address",
  "rate",
];

/** A refused connection: why, the close code it maps to, and the HTTP status before an upgrade. */
export interface Refusal {
  readonly kind: RefusalKind;
  readonly code: CloseCode;
  readonly reason: string;
  readonly status: 400 | 403 | 421 | 429 | 503;
  readonly retryAfterMs?: number;
}

/**
 * The close codes /metrics counts by name: the game's own, the usual WebSocket ones,
 * and "error"; anything else a client picks is counted as "other", so a client cannot
 * grow the metrics by closing with a new code each time.
 */
export const CLOSE_LABELS: readonly string[] = [
  ...Object.values(CloseCode).map(String),
  "1000",
  "1001",
  "1005",
  "1006",
  "error",
  "other",
];
const KNOWN_CLOSES = new Set(CLOSE_LABELS);

/** The label a close is counted under. */
export function closeLabel(code: string): string {
  return KNOWN_CLOSES.has(code) ? code : "other";
}

/** Ticks between two sweeps for idle players (and stale per-address entries). */
const SWEEP_TICKS = 30;

/**
 * Resume tokens one sweep renews, at least: each is an HMAC, a message and a send
 * (~15–30 µs here). Players who arrived together (a restart's reconnects, a load test's
 * bots) fall due on the same sweep, and every half-life after it: 800 signatures alone
 * take 11–25 ms here, and a load test's ticks of 12–19 ms every five minutes were them.
 * A budget a sweep spreads them out (and once spread they stay spread);
 * TOKEN_RENEWAL_SPREAD_SWEEPS bounds how long the last of a crowd waits, far inside the
 * half of its token's life that is left.
 */
const TOKEN_RENEWALS_PER_SWEEP = 16;
const TOKEN_RENEWAL_SPREAD_SWEEPS = 60;

/**
 * A tick longer than this is slow: half the tick's budget, and the p99 the capacity goal
 * holds a process to (docs/CAPACITY.md).
 */
export const SLOW_TICK_MS = 8;

/**
 * At most one `slow_tick` line this often; the slow ticks between are counted into the next
 * (/metrics has them all: the tick histogram's bucket at 8 ms).
 */
export const SLOW_TICK_LOG_MS = 10_000;

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
  /**
   * A probe for each new instance's step, by its kind (`deno task server-bench --parts`);
   * none by default.
   */
  readonly stepProbe?: (
    kind: "hub" | "dungeon",
  ) => StepProbe<InstanceStepPart | WorldStepPart> | undefined;
  /** Prefix of every instance id, unique per process in a cluster (`p1/` → `p1/hub`). */
  readonly instancePrefix?: string;
  /** This process's name (the `process` label in /metrics). */
  readonly processId?: string;
  /** Signs resume tokens (TOKEN_SECRET; a random per-process one by default). */
  readonly tokenSecret?: Uint8Array;
  /**
   * Runs at the start of every tick, before its time is counted: main.ts polls the front
   * door's sockets there, so the inputs that arrived are read just before the tick that
   * uses them.
   */
  readonly beforeTick?: () => void;
  /**
   * The process's CPU use so far, for the `slow_tick` line (default: `getrusage`), and the
   * loop's for the `loop_stall` line (default: its thread's own, once the loop starts).
   */
  readonly cpuUsage?: () => CpuSample;
}

/** The purpose resume tokens are signed for (a transfer ticket cannot pass for one). */
const RESUME_PURPOSE = "resume";

/** What every player is told when the server starts draining (and a resume during it). */
const DRAINING_TEXT =
  "The server restarts soon: runs in progress play on to their end; no new runs until then.";
/** The close reason of a new player refused while draining. */
const DRAINING_REFUSAL = "server restarting: no new games here now, try again in a minute";
/** Why a portal does not open while draining. */
const DRAINING_PORTAL = "the server restarts soon: no new runs";

/**
 * What a resume token says: the session, its generation, which process life made it,
 * and which process (in a cluster, another process that gets the token hands the
 * client over to that one).
 */
interface ResumeClaim {
  readonly s: string;
  readonly g: number;
  readonly e: string;
  readonly p: string;
}

/** Why a resume token did not take back a session here, as the player is told. */
type ResumeRefusal = { kind: "expired" | "refused"; code: NoticeCode; text: string };

/** A resume token this process cannot check itself: another process of the cluster made it. */
export interface ForeignResume {
  /** The token, as the hello carried it. */
  readonly token: string;
  /** The process that made it, and its life (a restart voids it). */
  readonly processId: string;
  readonly epoch: string;
  /** That process is gone: the player starts afresh here, told why. */
  readonly gone: () => void;
}

/**
 * Closes a client sends that end its session at once: hanging up (1000), and the codes
 * of a close for cause, which the front door sends on the client's behalf when it cuts
 * one off (a protocol error, a frame over the cap, too many control frames).
 */
const PEER_CLOSES_FOR_GOOD: ReadonlySet<string> = new Set(
  [1000, 1002, CloseCode.BadMessage, CloseCode.RateLimited, CloseCode.FrameTooLarge].map(String),
);

/**
 * Whether a closed connection's player keeps its ship for a resume: a link that failed,
 * went silent or stopped reading may come back; a player who hung up (1000) or was
 * closed for cause (by the server, or by the front door for it) may not.
 */
function keepsSession(why: { code: string; byServer: boolean }): boolean {
  if (why.byServer) {
    return why.code === String(CloseCode.IdleTimeout) || why.code === String(CloseCode.Backlogged);
  }
  return !PEER_CLOSES_FOR_GOOD.has(why.code);
}

/** A resume that came too late, or to a process life that is over: `why`, then the way on. */
function resumeExpired(why: string): ResumeRefusal {
  return {
    kind: "expired",
    code: NoticeCode.ResumeExpired,
    text: `${why}: you are back in the hub.`,
  };
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
  /**
   * A player left their instance (already) for a hub; `crew`: the dungeon run they left,
   * and whether they have its results already (a hub elsewhere still gets its offer).
   */
  toHub(conn: Connection, reason: EnterReason, crew?: { id: string; seen: boolean }): void;
  /** A dungeon's run ended here: its crew on other processes may still answer "again". */
  runEnded(from: Instance, opts: { results: ResultsMsg; next: string }): void;
  /** A player answered "again" to the run of another process: send them to its `next`. */
  again(conn: Connection, crew: { id: string; next: string; world: string }): void;
  /** An instance was destroyed (emptied, or failed). */
  instanceGone(id: string): void;
  /**
   * A hello carries a resume token another process made (a load balancer sent the
   * client here): hand the client over to that process if it still runs that life,
   * else call `resume.gone()`.
   */
  resumeElsewhere(conn: Connection, resume: ForeignResume): void;
}

/** The whole game server: hub, dungeons, players, connections and the tick loop. */
export class GameServer {
  readonly clock: Clock;
  readonly limits: ServerLimits;
  readonly encoder = new MessageEncoder();
  readonly instances = new Map<string, Instance>();
  /** The instances a tick steps, listed as it begins (slots emptied as each is stepped). */
  readonly #tickList: (Instance | undefined)[] = [];
  readonly connections = new Set<Connection>();
  readonly counters: ServerCounters;
  readonly scheduler: FixedStepScheduler;
  readonly #rng: Rng;
  readonly #log: Logger;
  /** Every player, by id. */
  readonly #sessions = new Map<number, Session>();
  /** Every player, by the key of its name: no two may read the same. */
  readonly #names = new Map<string, Session>();
  /** Every player, by the id its resume token names. */
  readonly #bySid = new Map<string, Session>();
  readonly #signer: TokenSigner;
  /**
   * This process life: tokens from an earlier one (a restart) are recognised as such.
   * A cluster announces it as the process's boot id.
   */
  readonly epoch = randomId(6);
  readonly #gate: AddressGate;
  readonly #beforeTick: (() => void) | undefined;
  readonly #cpuUsage: () => CpuSample;
  /** The loop's thread's own CPU, read while the loop runs, where the C library is at hand. */
  #threadCpu: ThreadCpu | undefined;
  readonly #cpuGiven: boolean;
  /** What the loop did before each stall (`loop_stall`, and /metrics by verdict). */
  readonly stallWatch: StallWatch;
  readonly crews = new Crews({ offerMs: CREW_OFFER_MS });
  readonly #worldDef: ServerOptions["worldDef"];
  readonly #stepProbe: ServerOptions["stepProbe"];
  #hub: Instance;
  /** Slow ticks since the last `slow_tick` line, and when that line was written. */
  #slowUnlogged = 0;
  #slowLoggedAt = -Infinity;
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
  /** Since when new runs and new players are refused (drain()); runs in progress go on. */
  #drainingSinceMs: number | undefined;

  constructor(opts: ServerOptions) {
    this.clock = opts.clock;
    this.#beforeTick = opts.beforeTick;
    this.#cpuUsage = opts.cpuUsage ?? processCpu;
    this.#cpuGiven = opts.cpuUsage !== undefined;
    this.stallWatch = new StallWatch({
      cpu: () => this.#threadCpu ? this.#threadCpu.read() : this.#cpuUsage(),
      now: () => this.clock.now(),
      logEveryMs: SLOW_TICK_LOG_MS,
      log: (fields) => this.log("loop_stall", fields),
    });
    this.limits = { ...LIMITS, ...opts.limits };
    this.#rng = new Rng(opts.seed ?? 0x5eed);
    this.#log = opts.log ?? (() => {});
    this.#worldDef = opts.worldDef;
    this.#stepProbe = opts.stepProbe;
    this.instancePrefix = opts.instancePrefix ?? "";
    this.processId = opts.processId ?? "single";
    this.#signer = new TokenSigner(opts.tokenSecret ?? randomSecret());
    this.#gate = new AddressGate({
      maxOpen: this.limits.maxConnectionsPerIp,
      connectBurst: this.limits.connectBurstPerIp,
      connectsPerSec: this.limits.connectsPerSecPerIp,
    });
    this.counters = {
      connectionsOpened: 0,
      bytesIn: 0,
      bytesOut: 0,
      messagesIn: 0,
      snapshotsSkipped: 0,
      inputVerdicts: { queued: 0, replay: 0, stale: 0, future: 0, flood: 0, invalid: 0 },
      closes: {},
      refusals: Object.fromEntries(REFUSAL_KINDS.map((k) => [k, 0])) as Record<
        RefusalKind,
        number
      >,
      instancesCreated: 0,
      instancesDestroyed: 0,
      instancesFailed: { hub: 0, dungeon: 0 },
      tickMsBuckets: TICK_MS_BUCKETS.map(() => 0),
      tickMsSum: 0,
      tickMsCount: 0,
      tickMsByPart: { hub: 0, dungeon: 0, flush: 0 },
      bulletTicks: 0,
      lastTickAtMs: 0,
      transfersOut: 0,
      transfersIn: 0,
      portalRefusals: 0,
      resumes: 0,
      resumeRefusals: { expired: 0, refused: 0 },
      detaches: 0,
    };
    this.#hub = this.#createInstance(CONTENT.home);
    this.scheduler = new FixedStepScheduler(this.clock, {
      step: () => this.tick(),
      maxCatchUpTicks: MAX_CATCHUP_TICKS,
      onError: (err) => this.log("tick_error", { error: errorText(err) }),
      watch: this.stallWatch,
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
    if (!this.#cpuGiven) this.#threadCpu ??= openThreadCpu();
    this.scheduler.start();
  }

  /**
   * The first step of a graceful restart: no new players and no new runs here from now
   * on, while runs in progress play on to their end (main.ts waits for runsInProgress to
   * reach 0, up to DRAIN_SECONDS, then calls shutdown()). A dropped player may still
   * resume. Everyone is told with a Notice; later arrivals (resumes) are told too.
   */
  drain(): void {
    if (this.#drainingSinceMs !== undefined || !this.#accepting) return;
    this.#drainingSinceMs = this.clock.now();
    for (const session of this.#sessions.values()) this.#drainNotice(session);
    this.log("drain", { runs: this.runsInProgress, players: this.playerCount });
  }

  /** True from drain() on: new players and new runs are refused. */
  get draining(): boolean {
    return this.#drainingSinceMs !== undefined;
  }

  /** Dungeons whose run has not ended and that still hold a player (connected or away). */
  get runsInProgress(): number {
    let n = 0;
    for (const instance of this.instances.values()) if (instance.runInProgress) n++;
    return n;
  }

  #drainNotice(session: Session): void {
    session.conn?.sendReliable(encodeServerMessage(this.encoder, {
      kind: ServerKind.Notice,
      code: NoticeCode.Draining,
      text: DRAINING_TEXT,
    }));
  }

  /** Stops accepting and closes every client with `reason`, then stops the loop. */
  shutdown(reason: string): void {
    this.#accepting = false;
    for (const c of [...this.connections]) c.close(CloseCode.ServerRestarting, reason);
    for (const s of [...this.#sessions.values()]) this.#endSession(s, "shutdown");
    this.scheduler.stop();
    this.#threadCpu?.close();
    this.#threadCpu = undefined;
  }

  get accepting(): boolean {
    return this.#accepting;
  }

  /** Open connections from `ip`'s address (its /64 for IPv6). */
  connectionsFrom(ip: string): number {
    return this.#gate.openFrom(addressKey(ip));
  }

  /**
   * Why a new game connection from `ip` would be refused now, or undefined to accept.
   * With `attempt`, this is a real connection attempt: it spends one of the address's
   * connects per second whatever the answer. Without, it only looks (the page asks why
   * its socket failed).
   */
  admission(ip: string, opts: { attempt: boolean }): Refusal | undefined {
    if (!this.#accepting) {
      return {
        kind: "draining",
        code: CloseCode.ServerRestarting,
        reason: "server restarting",
        status: 503,
        retryAfterMs: 5000,
      };
    }
    const byAddress = this.#gate.check(addressKey(ip), {
      nowMs: this.clock.now(),
      attempt: opts.attempt,
    });
    if (byAddress) {
      return {
        ...byAddress,
        code: CloseCode.TooManyFromIp,
        status: 429,
        retryAfterMs: byAddress.kind === "rate" ? byAddress.retryAfterMs : 5000,
      };
    }
    if (this.connections.size >= this.limits.maxConnections) {
      return {
        kind: "full",
        code: CloseCode.ServerFull,
        reason: "server full, try again shortly",
        status: 503,
        retryAfterMs: 5000,
      };
    }
    return undefined;
  }

  /** Counts a connection refused before it became one. */
  countRefusal(kind: RefusalKind): void {
    this.counters.refusals[kind]++;
  }

  /**
   * Registers a socket; the returned connection receives its frames. The app checks
   * admission before the upgrade and passes `admitted`; without it (tests, tools) the
   * check happens here and a refused socket gets a Reject and the refusal's close code.
   */
  open(transport: Transport, ip: string, opts: { admitted?: boolean } = {}): Connection {
    const key = addressKey(ip);
    const conn = new Connection(this, { id: this.#nextConnId++, ip, addressKey: key, transport });
    const refused = opts.admitted ? undefined : this.admission(ip, { attempt: true });
    this.connections.add(conn);
    this.#gate.opened(key, this.clock.now());
    if (refused) {
      this.countRefusal(refused.kind);
      conn.close(refused.code, refused.reason);
      return conn;
    }
    this.counters.connectionsOpened++;
    this.log("connect", { conn: conn.id, ip });
    return conn;
  }

  /**
   * A connection passed the handshake. A valid resume token takes its session back (same
   * id, same ship, same instance); one another process of the cluster made goes to the
   * placer, which hands the client over to that process; anything else places it as a
   * new player (a cluster's placer, or this server's hub), told why a token did not take.
   */
  admit(conn: Connection): void {
    const token = conn.hello?.resume;
    if (token !== undefined) {
      const claim = this.#resumeCheck(token);
      if ("session" in claim) {
        this.#resume(conn, claim.session);
        return;
      }
      if ("elsewhere" in claim && this.placer) {
        this.placer.resumeElsewhere(conn, {
          token,
          ...claim.elsewhere,
          gone: () => {
            if (conn.state !== "handshake") return;
            this.#resumeRefused(conn, resumeExpired("The server that held your game has stopped"));
            this.#admitNew(conn);
          },
        });
        return;
      }
      this.#resumeRefused(
        conn,
        "elsewhere" in claim
          ? resumeExpired("The server restarted, ending any run in progress")
          : claim,
      );
    }
    this.#admitNew(conn);
  }

  #resumeRefused(conn: Connection, claim: ResumeRefusal): void {
    this.counters.resumeRefusals[claim.kind]++;
    conn.resumeNotice = claim;
    this.log("resume_refused", { conn: conn.id, kind: claim.kind, why: claim.text });
  }

  /** Places a connection that takes no session back: a new player, or a transfer's arrival. */
  #admitNew(conn: Connection): void {
    // Draining: a player arriving with a transfer ticket is joining a run in progress here;
    // anyone else would start something this process is not going to see through.
    if (this.draining && conn.ticket === undefined) {
      this.countRefusal("draining");
      conn.close(CloseCode.ServerRestarting, DRAINING_REFUSAL);
      return;
    }
    if (this.placer) {
      this.placer.admit(conn);
      return;
    }
    if (conn.ticket !== undefined) {
      conn.close(CloseCode.BadTicket, "this server takes no transfer tickets: connect without one");
      return;
    }
    const session = this.welcome(conn);
    if (session) this.#moveTo(session, this.#hubFor(session), EnterReason.Join);
  }

  /**
   * Makes an admitted connection a player: a name no one else's reads like, a player id
   * nobody holds, and a Welcome saying so. Closes the connection (and returns undefined)
   * when either is not to be had.
   */
  welcome(conn: Connection): Session | undefined {
    const hello = conn.hello;
    if (!hello || conn.state !== "handshake") return undefined;
    if (this.#names.has(hello.nameKey)) {
      conn.close(CloseCode.BadName, `"${hello.name}" is taken right now: pick another name`);
      return undefined;
    }
    const playerId = this.#freePlayerId();
    if (playerId === undefined) {
      conn.close(CloseCode.ServerFull, "server full, try again shortly");
      return undefined;
    }
    const session = new Session({
      playerId,
      name: hello.name,
      nameKey: hello.nameKey,
      sid: randomId(),
    });
    this.#sessions.set(playerId, session);
    this.#names.set(hello.nameKey, session);
    this.#bySid.set(session.sid, session);
    session.conn = conn;
    conn.session = session;
    conn.state = "playing";
    session.gen = 1;
    this.#sendWelcome(session);
    const notice = conn.resumeNotice;
    if (notice) {
      conn.sendReliable(encodeServerMessage(this.encoder, {
        kind: ServerKind.Notice,
        code: notice.code,
        text: notice.text,
      }));
    }
    this.log("hello", { conn: conn.id, player: playerId, name: session.name });
    return session;
  }

  /** The Welcome: the player's id and the token that takes this session back. */
  #sendWelcome(session: Session): void {
    session.conn?.sendReliable(encodeServerMessage(this.encoder, {
      kind: ServerKind.Welcome,
      version: PROTOCOL_VERSION,
      playerId: session.playerId,
      resume: this.#token(session),
      graceMs: this.limits.resumeGraceMs,
    }));
  }

  /** A resume token for the session's current generation, good for resumeTokenTtlMs. */
  #token(session: Session): string {
    const now = this.clock.now();
    session.tokenIssuedAtMs = now;
    session.tokenExpiresAtMs = Math.ceil(now + this.limits.resumeTokenTtlMs);
    const claim: ResumeClaim = {
      s: session.sid,
      g: session.gen,
      e: this.epoch,
      p: this.processId,
    };
    return this.#signer.sign(RESUME_PURPOSE, {
      payload: claim,
      expiresAtMs: session.tokenExpiresAtMs,
    });
  }

  /**
   * Which session a resume token takes back, or why none: the tag and the purpose (the
   * signer), then whose it is: another process's (in a cluster, the placer hands the
   * client over; that process checks the rest on its own clock), an earlier life of this
   * one (a restart), or this life's: the expiry, a session still waiting, and the current
   * generation (or the one before, until its successor's connection has spoken).
   */
  #resumeCheck(
    token: string,
  ):
    | { session: Session }
    | { elsewhere: { processId: string; epoch: string } }
    | ResumeRefusal {
    const refused = (why: string) => ({
      kind: "refused" as const,
      code: NoticeCode.ResumeRefused,
      text: `Your game could not be resumed (${why}): you are back in the hub.`,
    });
    // The expiry is a time on the clock of the process that made the token (below).
    const check = this.#signer.verify<Partial<ResumeClaim>>(RESUME_PURPOSE, token, -Infinity);
    if (!check.ok) {
      // Without TOKEN_SECRET each process life has its own secret: after a restart, an
      // honest player's token reads just like a forged one.
      return refused(
        check.refusal === "malformed"
          ? "the token was malformed"
          : "the token was not signed here: the server may have restarted",
      );
    }
    const { s, g, e, p } = check.payload ?? {};
    if (
      typeof s !== "string" || typeof g !== "number" || typeof e !== "string" ||
      (p !== undefined && typeof p !== "string")
    ) {
      return refused("the token was malformed");
    }
    if (e !== this.epoch) {
      const processId = p ?? this.processId;
      return processId === this.processId
        ? resumeExpired("The server restarted, ending any run in progress")
        : { elsewhere: { processId, epoch: e } };
    }
    if (!(this.clock.now() < check.expiresAtMs)) {
      return resumeExpired("Your resume token had expired");
    }
    const session = this.#bySid.get(s);
    if (!session) {
      return resumeExpired(
        `You were away for more than ${
          Math.round(this.limits.resumeGraceMs / 1000)
        } s and the run went on without you`,
      );
    }
    if (g === session.gen || (g === session.gen - 1 && session.previousGenLive)) return { session };
    return refused("that token was already used");
  }

  /**
   * Takes a session back over `conn`: the old socket, if the server has not noticed it
   * die yet, is closed with 4010; the parked ship rejoins its instance, and the client
   * gets a Welcome (same id, the next token) and an Enter with every live bullet.
   */
  #resume(conn: Connection, session: Session): void {
    const now = this.clock.now();
    const old = session.conn;
    if (session.graceTimer !== undefined) this.clock.clearTimer(session.graceTimer);
    session.graceTimer = undefined;
    const awayMs = session.detachedAtMs > 0 ? now - session.detachedAtMs : 0;
    session.detachedAtMs = 0;
    session.conn = conn;
    conn.session = session;
    conn.state = "playing";
    session.gen++;
    session.previousGenLive = true;
    this.#sendWelcome(session);
    old?.close(CloseCode.Replaced, "this game continued on a newer connection");
    const instance = session.instance;
    if (instance) instance.rejoin(session.playerId);
    else this.#moveTo(session, this.#hubFor(session), EnterReason.Join);
    if (this.draining) this.#drainNotice(session);
    this.counters.resumes++;
    this.log("resume", {
      conn: conn.id,
      player: session.playerId,
      instance: session.instance?.id,
      awayMs: Math.round(awayMs),
      replaced: old?.id,
    });
  }

  /** The next player id not held by anyone, 1–maxPlayerId (ids are u16 on the wire). */
  #freePlayerId(): number | undefined {
    const max = this.limits.maxPlayerId;
    for (let n = 0; n < max; n++) {
      const id = this.#nextPlayerId > max ? 1 : this.#nextPlayerId;
      this.#nextPlayerId = id >= max ? 1 : id + 1;
      if (!this.#sessions.has(id)) return id;
    }
    return undefined;
  }

  /** A connection is gone: count it, and release its player. */
  forget(conn: Connection, opts: { code: string; reason: string; byServer?: boolean }): void {
    if (!this.connections.delete(conn)) return;
    this.#gate.closed(conn.addressKey, this.clock.now());
    this.countClose(opts.code);
    this.log("disconnect", {
      conn: conn.id,
      player: conn.playerId,
      code: opts.code,
      reason: opts.reason,
    });
    const session = conn.session;
    if (session && session.conn === conn) {
      session.conn = undefined;
      const why = { code: opts.code, byServer: opts.byServer ?? false };
      if (this.#accepting && keepsSession(why)) this.#detach(session, opts.code);
      else this.#endSession(session, "disconnect");
    }
  }

  /**
   * A player's link dropped: the ship waits, parked, for resumeGraceMs; a resume takes
   * it back, or the session ends then.
   */
  #detach(session: Session, code: string): void {
    session.detachedAtMs = this.clock.now();
    session.instance?.linkDown(session.playerId);
    session.graceTimer = this.clock.setTimer(() => {
      session.graceTimer = undefined;
      this.#endSession(session, "no resume within the grace period");
    }, this.limits.resumeGraceMs);
    this.counters.detaches++;
    this.log("session_detach", { player: session.playerId, code, instance: session.instance?.id });
  }

  /** A player is gone for good: out of its instance, its id and name free again. */
  #endSession(session: Session, why: string): void {
    if (this.#sessions.get(session.playerId) !== session) return;
    if (session.graceTimer !== undefined) this.clock.clearTimer(session.graceTimer);
    session.graceTimer = undefined;
    this.#sessions.delete(session.playerId);
    this.#names.delete(session.nameKey);
    this.#bySid.delete(session.sid);
    this.crews.forget(session.playerId);
    const instance = session.instance;
    session.instance = undefined;
    if (instance) this.#leave(instance, session.playerId);
    this.log("session_end", { player: session.playerId, why });
  }

  /** Counts a closed connection under its close code (unknown codes as "other"). */
  countClose(code: string): void {
    const label = closeLabel(code);
    this.counters.closes[label] = (this.counters.closes[label] ?? 0) + 1;
  }

  /**
   * Runs one tick of every instance and carries out the transfers they decide. An
   * instance that throws is closed on its own; the others tick on.
   */
  tick(): void {
    this.#beforeTick?.();
    const started = this.clock.now();
    // Read (a few µs) only while a slow tick could be logged: its line says where the time went.
    const cpuAtStart = this.#slowLogDue(started) ? this.#cpuUsage() : undefined;
    const serverTick = this.scheduler.stats.ticks;
    // The instance that took longest, for a slow tick's log line: one heavy world, or a
    // stall that fell wherever the tick happened to be.
    let slowest: Instance | undefined;
    let slowestMs = 0;
    let at = started;
    // Each kind's time and the bullets in flight, summed here and counted once after the
    // loop (a store into the counters keyed by each instance's kind, 200 a tick, was not free).
    let hubMs = 0;
    let dungeonMs = 0;
    let bullets = 0;
    // The instances open as the tick began, in a list kept from tick to tick: one made
    // during the tick (a transfer's dungeon) is stepped from the next.
    const list = this.#tickList;
    let count = 0;
    for (const instance of this.instances.values()) list[count++] = instance;
    for (let k = 0; k < count; k++) {
      const instance = list[k];
      list[k] = undefined;
      // Closed earlier this tick (by another's transfer, or its own failure): not stepped.
      if (!instance || this.instances.get(instance.id) !== instance) continue;
      let orders: TransferOrder[] | undefined;
      let results: ResultsMsg | undefined;
      try {
        orders = instance.step(serverTick);
        results = instance.takeResults();
        bullets += instance.world.bullets.count;
      } catch (err) {
        this.#fail(instance, { during: "step", err });
      }
      // A failed instance (no orders) is closed: its time counts, it is not the slowest.
      if (orders && orders.length > 0) this.#carryOut(instance, orders);
      if (results) this.#offerResults(instance, results);
      const now = this.clock.now();
      if (orders && now - at > slowestMs) {
        slowest = instance;
        slowestMs = now - at;
      }
      if (instance.kind === "hub") hubMs += now - at;
      else dungeonMs += now - at;
      at = now;
    }
    this.counters.tickMsByPart.hub += hubMs;
    this.counters.tickMsByPart.dungeon += dungeonMs;
    this.counters.bulletTicks += bullets;
    // One frame per client per tick, carrying whatever this tick (and any message
    // handled since the last one) had for it.
    for (const conn of this.connections) conn.flush();
    if (this.scheduler.stats.ticks % SWEEP_TICKS === 0) this.#sweep(started);
    const ms = this.clock.now() - started;
    if (ms > SLOW_TICK_MS) {
      this.#slowTick({
        started,
        ms,
        slowest,
        slowestMs,
        afterMs: ms - (at - started),
        cpuAtStart,
      });
    }
    const c = this.counters;
    c.tickMsSum += ms;
    c.tickMsCount++;
    c.tickMsByPart.flush += ms - (at - started);
    c.lastTickAtMs = started;
    this.tickWindow.add(ms);
    for (let i = 0; i < TICK_MS_BUCKETS.length; i++) {
      if (ms <= TICK_MS_BUCKETS[i]) c.tickMsBuckets[i]++;
    }
  }

  /** True when a slow tick starting at `started` would be logged (one line per SLOW_TICK_LOG_MS). */
  #slowLogDue(started: number): boolean {
    return started - this.#slowLoggedAt >= SLOW_TICK_LOG_MS;
  }

  /**
   * Counts a slow tick and, at most once per SLOW_TICK_LOG_MS, logs it: how long, how many
   * instances, the slowest of them against their mean, and the flush and sweep after them.
   * A slowest instance far over the mean is one heavy world; a slowest instance that
   * normally costs what the others do is a stall (the host, a collection) that fell in it.
   * The process's CPU in the tick tells those stalls apart: user time near the tick's
   * length is work (a collection's too), time in the kernel is system calls and faults,
   * and CPU well short of it with preemptions is the core taken away.
   */
  #slowTick(tick: {
    started: number;
    ms: number;
    slowest: Instance | undefined;
    slowestMs: number;
    /** The flush and sweep after the instances. */
    afterMs: number;
    /** The process's CPU use when the tick began (read whenever a line is due). */
    cpuAtStart: CpuSample | undefined;
  }): void {
    this.#slowUnlogged++;
    if (!this.#slowLogDue(tick.started) || !tick.cpuAtStart) return;
    const instances = this.instances.size;
    const round = (v: number) => Math.round(v * 100) / 100;
    this.log("slow_tick", {
      ms: round(tick.ms),
      instances,
      slowest: tick.slowest?.id,
      slowestKind: tick.slowest?.kind,
      slowestMs: round(tick.slowestMs),
      instanceMeanMs: instances > 0 ? round((tick.ms - tick.afterMs) / instances) : 0,
      flushMs: round(tick.afterMs),
      slowTicks: this.#slowUnlogged,
      ...cpuSpent(tick.cpuAtStart, this.#cpuUsage()),
    });
    this.#slowLoggedAt = tick.started;
    this.#slowUnlogged = 0;
  }

  /** Carries out one instance's transfer orders of this tick. */
  #carryOut(instance: Instance, orders: readonly TransferOrder[]): void {
    // Who enters one portal of one instance in one tick goes to one dungeon together.
    const parties = new Map<string, Session[]>();
    for (const order of orders) {
      const session = this.#sessions.get(order.playerId);
      if (!session || session.instance !== instance) continue;
      if (order.to === "hub") {
        this.#toHub(session, order.reason);
        continue;
      }
      const world = CONTENT.worlds[instance.worldId].portals[order.portal].to;
      parties.set(world, [...parties.get(world) ?? [], session]);
    }
    for (const [world, party] of parties) {
      if (this.draining) {
        for (const s of party) if (s.conn) this.refusePortal(s.conn, DRAINING_PORTAL);
        continue;
      }
      for (let i = 0; i < party.length; i += this.limits.maxPlayersPerDungeon) {
        const group = party.slice(i, i + this.limits.maxPlayersPerDungeon);
        this.#toDungeon(group, { from: instance, world });
      }
    }
  }

  /**
   * Closes players gone silent, renews resume tokens at half their life, and forgets
   * addresses with nothing left to limit.
   */
  #sweep(nowMs: number): void {
    // Lapsed offers are refused when taken anyway: forgetting them twice a second is enough.
    this.crews.prune(nowMs);
    const idleMs = this.limits.idleTimeoutMs;
    for (const conn of [...this.connections]) {
      if (conn.state === "playing" && nowMs - conn.lastMessageAtMs > idleMs) {
        conn.close(CloseCode.IdleTimeout, `nothing received for ${Math.round(idleMs / 1000)} s`);
      }
    }
    this.#renewTokens(nowMs);
    this.#gate.prune(nowMs);
  }

  /**
   * Gives connected players whose token is past half its life a fresh one, a budget a
   * sweep (TOKEN_RENEWALS_PER_SWEEP): the rest are renewed on the sweeps after.
   */
  #renewTokens(nowMs: number): void {
    const renewAfterMs = this.limits.resumeTokenTtlMs / 2;
    let budget = Math.max(
      TOKEN_RENEWALS_PER_SWEEP,
      Math.ceil(this.#sessions.size / TOKEN_RENEWAL_SPREAD_SWEEPS),
    );
    for (const session of this.#sessions.values()) {
      if (budget === 0) return;
      if (!session.conn || nowMs - session.tokenIssuedAtMs < renewAfterMs) continue;
      budget--;
      session.conn.sendReliable(encodeServerMessage(this.encoder, {
        kind: ServerKind.Token,
        resume: this.#token(session),
      }));
    }
  }

  #toDungeon(party: readonly Session[], opts: { from: Instance; world: string }): void {
    const conns = party.flatMap((s) => s.conn ? [s.conn] : []);
    if (this.placer && conns.length === party.length) {
      // They wait in the portal (their ships frozen) until the placement comes back.
      this.placer.toDungeon(conns, opts);
      return;
    }
    const target = this.#dungeonWithRoom(opts.world, party.length);
    for (const session of party) this.#move(session, target, EnterReason.Portal);
  }

  /** Takes a player out of their instance and sends them to a hub. */
  #toHub(session: Session, reason: EnterReason): void {
    if (!this.placer || !session.conn) {
      this.#move(session, this.#hubFor(session), reason);
      return;
    }
    const from = session.instance;
    const crew = from?.kind === "dungeon"
      ? { id: from.id, seen: this.crews.has(session.playerId) }
      : undefined;
    this.#takeOut(session);
    this.placer.toHub(session.conn, reason, crew);
  }

  /**
   * The hub for a player here: the one they came from while it has room, else the
   * fullest with room (so a crowd meets), else a new shard.
   */
  hubFor(conn: Connection): Instance {
    return conn.session ? this.#hubFor(conn.session) : this.#hub;
  }

  #hubFor(session: Session): Instance {
    const home = session.homeHubId === undefined
      ? undefined
      : this.instances.get(session.homeHubId);
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
    if (conn.session) this.#move(conn.session, target, reason);
  }

  /** Takes a player out of their instance, if any (their connection stays). */
  leave(conn: Connection): void {
    if (conn.session) this.#takeOut(conn.session);
  }

  #takeOut(session: Session): void {
    const from = session.instance;
    session.instance = undefined;
    if (from) this.#leave(from, session.playerId);
  }

  /**
   * Sends a player to another process: a Transfer naming the URL and ticket, then the
   * socket closes (4011) once that has gone out. The client reconnects there.
   */
  handOff(conn: Connection, to: { url: string; ticket: string; reason: EnterReason }): void {
    const session = conn.session;
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
    // The player lives on in the other process: nothing of it stays here.
    if (session) this.#endSession(session, "transferred");
  }

  /** The portal could not place a player: back to a spawn point of their hub, told why. */
  refusePortal(conn: Connection, reason: string): void {
    const session = conn.session;
    const hub = session?.instance;
    if (!session || !hub || conn.state !== "playing") return;
    session.instance = undefined;
    this.#leave(hub, conn.playerId);
    const back = this.instances.get(hub.id) ?? this.#hubFor(session);
    this.#moveTo(session, back, EnterReason.Join);
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
      const session = this.#sessions.get(row.id);
      if (!session || (session.instance !== from && session.instance?.kind !== "hub")) continue;
      crew.push(row.id);
      session.sendReliable(bytes);
    }
    // Named now, made by the first to answer "again", here or from another process.
    const next = `${this.instancePrefix}dungeon-${this.#nextDungeon++}`;
    this.crews.offer(from.id, {
      members: crew,
      world: from.worldKey,
      next,
      nowMs: this.clock.now(),
    });
    this.placer?.runEnded(from, { results, next });
    this.log("run_end", { instance: from.id, outcome: results.outcome, crew: crew.length });
  }

  /**
   * A player's answer on the results screen. "Again" joins the crew's new dungeon (made
   * by the first to answer, reserved for the crew); "hub" leaves the finished one. An
   * answer without an open offer (a double click, a lapsed offer) changes nothing.
   */
  choose(session: Session, choice: Choice): void {
    const from = session.instance;
    const crewId = this.crews.take(session.playerId, this.clock.now());
    if (!from || crewId === undefined) return;
    if (from.kind !== "hub" && from.id !== crewId) return; // already fighting elsewhere
    // Draining: no new run, so "again" is "back to the hub" (the Notice said why).
    if (choice === Choice.Hub || this.draining) {
      if (from.kind !== "hub") this.#toHub(session, EnterReason.Return);
      return;
    }
    const nextId = this.crews.next(crewId);
    const world = this.crews.world(crewId) ?? from.worldKey;
    if (this.crews.remote(crewId) && nextId !== undefined && session.conn) {
      this.placer?.again(session.conn, { id: crewId, next: nextId, world });
      return;
    }
    const id = nextId ?? `${this.instancePrefix}dungeon-${this.#nextDungeon++}`;
    this.#move(session, this.crewDungeon(id, { crewId, world }), EnterReason.Retry);
  }

  /**
   * The crew `crewId`'s "again" dungeon here: the one it regroups in (`id`, unless a
   * later one replaced it), made reserved for the crew if missing; once that one no
   * longer takes players (its boss is up, or it is full), a fresh one for this member.
   */
  crewDungeon(id: string, opts: { crewId: string; world: string }): Instance {
    const nextId = this.crews.next(opts.crewId) ?? id;
    let target = this.instances.get(nextId) ?? this.#createInstance(opts.world, nextId);
    if (!target.world.acceptsPlayers || target.size >= this.limits.maxPlayersPerDungeon) {
      target = this.#createInstance(opts.world);
      this.crews.setNext(opts.crewId, target.id);
    }
    target.reservedFor ??= opts.crewId;
    return target;
  }

  /**
   * The results and offer of a run another process hosted reach a player in a hub here
   * (read from its crew record): the results screen unless `seen` already, then an offer
   * whose "again" travels to the crew's `next` dungeon there.
   */
  offerCrew(
    conn: Connection,
    crew: {
      id: string;
      world: string;
      next: string;
      results: ResultsMsg;
      offerMs: number;
      seen: boolean;
    },
  ): void {
    const session = conn.session;
    if (!session || conn.state !== "playing" || session.instance?.kind !== "hub") return;
    if (!crew.seen) {
      // Row ids are the host's player ids: this player's row is theirs here.
      const rows = crew.results.rows.map((r) =>
        r.name === session.name ? { ...r, id: session.playerId } : r
      );
      session.sendReliable(encodeServerMessage(this.encoder, { ...crew.results, rows }));
    }
    this.crews.offer(crew.id, {
      members: [session.playerId],
      world: crew.world,
      next: crew.next,
      remote: true,
      offerMs: crew.offerMs,
      nowMs: this.clock.now(),
    });
    this.log("crew_offer_remote", { player: session.playerId, crew: crew.id });
  }

  /** Moves a player from wherever it is to `target`. */
  #move(session: Session, target: Instance, reason: EnterReason): void {
    const from = session.instance;
    this.log("transfer", { player: session.playerId, from: from?.id, to: target.id, reason });
    session.instance = undefined;
    if (from) this.#leave(from, session.playerId);
    this.#moveTo(session, target, reason);
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
  #moveTo(session: Session, target: Instance, reason: EnterReason, attempt = 0): void {
    try {
      target.join(session, reason);
      session.instance = target;
      if (target.kind === "hub") session.homeHubId = target.id;
    } catch (err) {
      this.#fail(target, { during: "join", err });
      if (attempt >= 1) {
        session.conn?.close(CloseCode.ServerError, "the server could not place you in a world");
        this.#endSession(session, "unplaceable");
        return;
      }
      this.#moveTo(session, this.#hub, EnterReason.Evacuated, attempt + 1);
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
      const session = this.#sessions.get(peer.playerId);
      if (!session || session.instance !== instance) continue;
      session.instance = undefined;
      this.#moveTo(session, this.#hub, EnterReason.Evacuated);
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
      snapshotSlot: this.#quietestSnapshotSlot(),
      probe: this.#stepProbe?.(world.kind),
    });
    this.instances.set(id, instance);
    this.counters.instancesCreated++;
    this.log("instance_create", { instance: id, kind: world.kind, world: world.key });
    return instance;
  }

  /** The tick of the snapshot interval that carries the fewest instances' snapshots. */
  #quietestSnapshotSlot(): number {
    const load = new Array<number>(TICKS_PER_SNAPSHOT).fill(0);
    for (const instance of this.instances.values()) load[instance.snapshotSlot]++;
    return load.indexOf(Math.min(...load));
  }

  #destroyIfEmpty(instance: Instance): void {
    if (instance === this.#hub || instance.size > 0) return;
    this.instances.delete(instance.id);
    this.counters.instancesDestroyed++;
    this.log("instance_destroy", { instance: instance.id, ticks: instance.world.tick });
    this.placer?.instanceGone(instance.id);
  }

  /** Players (past the handshake), connected or not. */
  get playerCount(): number {
    return this.#sessions.size;
  }

  /** Players whose link is down, their ships parked until a resume or the grace ends. */
  get playersAway(): number {
    let n = 0;
    for (const s of this.#sessions.values()) if (!s.conn) n++;
    return n;
  }

  /** Addresses the admission gate remembers (bounded by the active ones). */
  get addressesTracked(): number {
    return this.#gate.size;
  }

  /** Seconds since the last tick ran, for the health check. */
  tickAgeMs(): number {
    return this.counters.lastTickAtMs === 0 ? 0 : this.clock.now() - this.counters.lastTickAtMs;
  }
}
