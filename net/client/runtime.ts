/**
 * The client side of the netcode, shared by the browser and headless bots:
 * predicts the local ship with the server's own movement function and reconciles
 * on every snapshot, interpolates everyone else a little in the past, and keeps a
 * bullet replica fed by spawn events and integrated by the same BulletPool code.
 * No DOM, no sockets: bytes in through `receive`, bytes out through `send`.
 */
import { CONTENT, CONTENT_HASH, type WorldContent } from "../../content/mod.ts";
import {
  CORRECTION_EPSILON_PX,
  INPUT_SENDING,
  SMOOTHING_PER_TICK,
  SNAP_THRESHOLD_PX,
  SNAPSHOT_BASELINES,
  STRIKE_CLAIM_MS,
  TICKS_PER_SNAPSHOT,
} from "../../content/net_tuning.ts";
import {
  BulletPool,
  HitTarget,
  type InputFrame,
  movePlayer,
  POS_UNITS_PER_PX,
  quantizePos,
  Team,
  type Volley,
} from "../../sim/mod.ts";
import { FireRule } from "./fire_rule.ts";
import { InputClock } from "./input_clock.ts";
import { RemoteView } from "./remote_view.ts";
import { type EnemyOnScreen, EnemyView } from "./enemy_view.ts";
import { BulletReplica, type OwnShotNote, type ShotStrike } from "./replica.ts";
import { StrikeLedger } from "./strikes.ts";
import {
  decodeServerMessage,
  encodeClientMessage,
  MessageDecoder,
  MessageEncoder,
} from "../wire/codec.ts";
import { MAX_SERVER_FRAME_MESSAGES, packFrame, splitFrame } from "../wire/frames.ts";
import { decodeSnapshotBody, fromSnapshotUnits, SnapshotHistory } from "../wire/snapshot_delta.ts";
import {
  type BossSnap,
  type Choice,
  ClientKind,
  type EnterMsg,
  type EventsMsg,
  type HitRecord,
  type NetEvent,
  type NoticeMsg,
  PlayerFlag,
  type PlayerSnap,
  PROTOCOL_VERSION,
  type ResultsMsg,
  ServerKind,
  type SnapshotMsg,
  type SnapshotWireMsg,
  StageCode,
  type TransferMsg,
} from "../wire/protocol.ts";

/** What the player wants this tick, before it becomes a frame. */
export type InputSample = Omit<InputFrame, "tick">;

/** Where the runtime stands. */
/**
 * Where the runtime stands. "reconnecting": the link dropped and ws_client.ts is taking
 * the session back (the world stays on screen, frozen, and no input is sent).
 */
export type RuntimePhase =
  | "connecting"
  | "playing"
  | "transferring"
  | "reconnecting"
  | "rejected"
  | "closed";

/** Figures a netgraph shows. */
export interface NetStats {
  rttMs: number;
  bytesInPerSec: number;
  bytesOutPerSec: number;
  snapshotAgeMs: number;
  correctionsPerSec: number;
  /** Corrections since the start (a correction = reconciled error over epsilon). */
  corrections: number;
  /** Client ticks predicted ahead of the newest snapshot. */
  leadTicks: number;
}

/** An actor ready to draw. */
export interface ActorView {
  readonly id: number;
  readonly x: number;
  readonly y: number;
}

/** A player shot that vanished on an enemy as drawn (`onShotStruck`). */
export interface SeenStrike extends ShotStrike {
  /** An ally's shot, on its ship's timeline (its hit is felt when the server's lands). */
  readonly ally: boolean;
}

/** What the runtime knows of a hit it reports (`onHit`). */
export interface HitInfo {
  /** The first tick of the hit's batch. */
  readonly tick: number;
  /**
   * When the player already felt this hit: a player shot vanished on that enemy as
   * drawn then (`onShotStruck`). Undefined: nothing on screen foretold it.
   */
  readonly feltAtMs: number | undefined;
}

/** Options of a runtime. */
export interface RuntimeOptions {
  /** Sends one frame to the server on the ordered, reliable channel. */
  readonly send: (data: Uint8Array) => void;
  /**
   * Sends one message as an unreliable datagram (WebTransport). When present, input goes
   * this way, each datagram repeating the batches before it; otherwise input is batched
   * on the ordered channel without redundancy.
   */
  readonly sendDatagram?: (data: Uint8Array) => void;
  /**
   * Called for each event the server reports, after the runtime has applied it, with the
   * first tick of its batch (events are batched per snapshot interval: up to 2 ticks early).
   */
  readonly onEvent?: (event: NetEvent, tick: number) => void;
  /** Called when the runtime enters an instance. */
  readonly onEnter?: (enter: EnterMsg) => void;
  /**
   * Called for each bullet that struck something (for hit flashes and sparks: `impactOf`
   * says where it was drawn): at once, or for an ally's shot once its ship's timeline
   * has run through the hit's batch (`allyShots`). `info.feltAtMs` says when a shot
   * vanishing on that enemy as drawn already showed this hit (`onShotStruck`).
   */
  readonly onHit?: (hit: HitRecord, info: HitInfo) => void;
  /** Called when a run this player took part in ends (the results screen). */
  readonly onResults?: (results: ResultsMsg) => void;
  /**
   * Called when an own shot is predicted (drawn at the muzzle: play the sound now),
   * confirmed by the server's volley, or refused by it (it was taken back).
   */
  readonly onOwnShot?: (note: OwnShotNote) => void;
  /**
   * Called when a player shot, anyone's, dies on the boss in a replica (the boss is hit
   * there with no message): at x, y, for a spark; an ally's as its drawn shot gets there.
   */
  readonly onShotSunk?: (x: number, y: number) => void;
  /**
   * Called when a player shot, anyone's, vanishes on an enemy as drawn, before the
   * server's word: a spark where it vanished. The player's own (`ally` false) is the hit
   * as they see it, to be felt now (the enemy's flash, the sound): the server's hit on
   * that enemy, when it comes, finds the shot gone (no second spark) and says it was felt
   * (`onHit`). An ally's is felt when the server's hit lands on its timeline.
   */
  readonly onShotStruck?: (strike: SeenStrike) => void;
  /**
   * Called when the server hands the player to another process: reconnect to `url` and
   * say hello there with `ticket` (ws_client.ts does this in the same page).
   */
  readonly onTransfer?: (transfer: TransferMsg) => void;
  /** Called for each snapshot taken (not for one older than the newest), with its arrival. */
  readonly onSnapshot?: (snapshot: SnapshotMsg, nowMs: number) => void;
  /** Called with something the server wants the player to know (a resume that failed, a restart). */
  readonly onNotice?: (notice: NoticeMsg) => void;
  /** Called with each resume token the server hands out (a page may keep it for a reload). */
  readonly onToken?: (token: string) => void;
}

const PING_INTERVAL_MS = 1000;
const RATE_WINDOW_MS = 1000;
const MAX_TICKS_PER_UPDATE = 8;
/** Behind the target by more than this (a hidden tab, a frozen page): jump, don't crawl. */
const RESYNC_BEHIND_TICKS = 30;
/** Ahead of it by more than this (a clock jump): start over; less, and the client just waits. */
const RESYNC_AHEAD_TICKS = 60;
const SNAPSHOT_BUFFER = 32;
const EMPTY_POOL = new BulletPool(1);

interface TimedSnapshot {
  readonly msg: SnapshotMsg;
  readonly atMs: number;
}

/** The client runtime: prediction, reconciliation, interpolation and the bullet replica. */
export class ClientRuntime {
  readonly #send: (data: Uint8Array) => void;
  #sendDatagram: ((data: Uint8Array) => void) | undefined;
  #sending: { readonly batchTicks: number; readonly redundancy: number };
  /** Messages for the server from this tick: they leave together as one frame. */
  readonly #outbox: Uint8Array[] = [];
  /** Frames of this batch not sent yet. */
  #unsent = 0;
  readonly #onEvent: RuntimeOptions["onEvent"];
  readonly #onEnter: RuntimeOptions["onEnter"];
  readonly #onHit: RuntimeOptions["onHit"];
  readonly #onResults: RuntimeOptions["onResults"];
  readonly #onOwnShot: RuntimeOptions["onOwnShot"];
  readonly #onShotSunk: RuntimeOptions["onShotSunk"];
  readonly #onShotStruck: RuntimeOptions["onShotStruck"];
  /** Hits felt as drawn shots vanished, for the server's to claim. */
  readonly #strikes = new StrikeLedger({ claimMs: STRIKE_CLAIM_MS });
  /** Allies' shots that vanished on a drawn enemy here, by uid, oldest first: when. */
  readonly #allyStrikes = new Map<number, number>();
  /** The time of the update or message being handled: strikes and hits are stamped with it. */
  #nowMs = 0;
  readonly #onTransfer: RuntimeOptions["onTransfer"];
  readonly #onNotice: RuntimeOptions["onNotice"];
  readonly #onToken: RuntimeOptions["onToken"];
  /** The token that takes this session back over a new connection (from Welcome or Token). */
  resumeToken: string | undefined;
  /** How long the server keeps the ship after the link drops, in ms (from Welcome). */
  graceMs = 0;
  /** When the last message from the server arrived (a silent link is a dead one). */
  lastHeardMs = 0;
  /** Transfers to another process so far (each one a reconnect in the same page). */
  transfers = 0;
  /** Snapshots received so far (load tests count them per client). */
  snapshotsTotal = 0;
  readonly #onSnapshot: RuntimeOptions["onSnapshot"];
  readonly #encoder = new MessageEncoder();
  readonly #decoder = new MessageDecoder();

  phase: RuntimePhase = "connecting";
  /** Why the server refused or closed us, for the player to read. */
  closeReason = "";
  /** The code of the Reject this connection got (the server says it before it closes). */
  rejectCode: number | undefined;
  playerId = 0;
  instanceId = "";
  /** The world this client is in, from the registry (its rules, look and words). */
  world: WorldContent | undefined;
  readonly roster = new Map<number, string>();

  #replica: BulletReplica | undefined;
  /**
   * Other players' shots, on the ticks their ships are drawn at (see `allyShots`): they
   * cannot hurt this player, so they may leave the muzzle where it is drawn.
   */
  #allyShots: BulletReplica | undefined;

  /** The next tick this client will predict (its frames name server ticks). */
  clientTick = 0;
  /** Predicted ship position after the last predicted frame. */
  readonly predicted = { x: 0, y: 0 };
  /** Visual offset left from a small correction, decaying each tick. */
  readonly #offset = { x: 0, y: 0 };
  #history: InputFrame[] = [];
  #predicting = false;
  /** The server's cooldown rule for own shots, predicted (set per world on entry). */
  #fire = new FireRule(0);
  /** The first tick this client sent a frame for in this instance. */
  #firstFrameTick = Infinity;
  /**
   * The first tick it named once its clock had settled there: frames named before, while
   * the first snapshots were still teaching the clock where the server stands, may be
   * late for that rather than for the link.
   */
  #settledFromTick = Infinity;

  #snapshots: TimedSnapshot[] = [];
  readonly #clock = new InputClock();
  readonly #remote = new RemoteView();
  readonly #enemyView = new EnemyView();
  /** Enters received: the epoch datagram snapshots must name. */
  #enters = 0;
  /** Snapshots received, in wire units: the baselines the server's deltas name. */
  readonly #baselines = new SnapshotHistory(SNAPSHOT_BASELINES);
  /** A delta named a baseline this client does not hold: ask for one it does. */
  #needBaseline = false;
  /** Deltas that named a baseline this client did not hold (dropped). */
  snapshotsWithoutBaseline = 0;
  /** Messages received, by kind. */
  readonly receivedByKind: Record<number, number> = {};
  /** Snapshots taken and the longest wait between two, since `resetSnapshotArrivals`. */
  readonly snapshotArrivals = { count: 0, maxGapMs: 0, lastAtMs: -1 };

  readonly stats: NetStats = {
    rttMs: 0,
    bytesInPerSec: 0,
    bytesOutPerSec: 0,
    snapshotAgeMs: 0,
    correctionsPerSec: 0,
    corrections: 0,
    leadTicks: 0,
  };
  #window = { startMs: 0, bytesIn: 0, bytesOut: 0, corrections: 0 };
  #lastPingMs = -Infinity;
  #helloAtMs = 0;
  #lastSnapshotMs = 0;
  bytesInTotal = 0;
  bytesOutTotal = 0;
  /** Bytes of Events messages: the bullet and event stream. */
  eventBytesTotal = 0;
  /** Bytes of volley and hit records inside them: the bullet traffic proper. */
  bulletBytesTotal = 0;
  bulletsSpawnedTotal = 0;
  /** Hits (early deaths) the server sent. */
  bulletHitsTotal = 0;
  /** Player shots that vanished on an enemy as drawn (felt before the server's word). */
  strikesTotal = 0;
  /** The server's hits on enemies, and those of them a strike had already shown. */
  enemyHitsTotal = 0;
  hitsFeltEarlyTotal = 0;
  #sunkBefore = 0;
  /** Allies' volleys started late at their muzzle in earlier instances. */
  #lateBefore = 0;

  constructor(opts: RuntimeOptions) {
    this.#send = opts.send;
    this.#sendDatagram = opts.sendDatagram;
    this.#sending = opts.sendDatagram ? INPUT_SENDING.datagram : INPUT_SENDING.reliable;
    this.#onEvent = opts.onEvent;
    this.#onEnter = opts.onEnter;
    this.#onHit = opts.onHit;
    this.#onResults = opts.onResults;
    this.#onOwnShot = opts.onOwnShot;
    this.#onShotSunk = opts.onShotSunk;
    this.#onShotStruck = opts.onShotStruck;
    this.#onTransfer = opts.onTransfer;
    this.#onSnapshot = opts.onSnapshot;
    this.#clock.extraLeadTicks = this.#sending.batchTicks - 1;
    this.#onNotice = opts.onNotice;
    this.#onToken = opts.onToken;
  }

  /**
   * Sends input as datagrams through `send` from now on (or, with undefined, batched on
   * the ordered channel): for a connection whose transport is chosen after construction.
   */
  useDatagrams(send: ((data: Uint8Array) => void) | undefined): void {
    this.#sendDatagram = send;
    this.#sending = send ? INPUT_SENDING.datagram : INPUT_SENDING.reliable;
    // A batch waits for its last frame: its first must still arrive before its tick runs.
    this.#clock.extraLeadTicks = this.#sending.batchTicks - 1;
    this.#unsent = 0;
  }

  /** Starts counting snapshot arrivals and gaps afresh from `nowMs`. */
  resetSnapshotArrivals(nowMs: number): void {
    this.snapshotArrivals.count = 0;
    this.snapshotArrivals.maxGapMs = 0;
    this.snapshotArrivals.lastAtMs = nowMs;
  }

  /**
   * Introduces the player; call once the socket is open. After a transfer, the new
   * socket's hello carries the ticket the old process handed out.
   */
  hello(
    name: string,
    nowMs: number,
    opts: { version?: number; ticket?: string; resume?: string } = {},
  ): void {
    this.#enters = 0; // the server counts Enters per connection
    if (this.phase !== "transferring" && this.phase !== "reconnecting") {
      this.#window.startMs = nowMs;
    }
    this.#helloAtMs = nowMs;
    this.lastHeardMs = nowMs;
    this.#queue(encodeClientMessage(this.#encoder, {
      kind: ClientKind.Hello,
      version: opts.version ?? PROTOCOL_VERSION,
      name,
      content: CONTENT_HASH,
      resume: opts.resume,
      ticket: opts.ticket,
    }));
    this.#flush();
  }

  /** The link dropped and a resume is under way: freeze (the world stays on screen). */
  reconnecting(): void {
    if (this.phase === "playing" || this.phase === "connecting") this.phase = "reconnecting";
  }

  /** Answers the results screen: back to the hub, or again with this crew. */
  choose(choice: Choice): void {
    if (this.phase !== "playing") return;
    this.#queue(encodeClientMessage(this.#encoder, { kind: ClientKind.Choice, choice }));
    this.#flush();
  }

  /** The server refused the connection before it opened, for `reason`. */
  refused(reason: string): void {
    this.phase = "rejected";
    this.closeReason = reason;
  }

  /** The socket closed. */
  closed(reason: string): void {
    if (this.phase !== "rejected") this.phase = "closed";
    if (!this.closeReason) this.closeReason = reason;
  }

  #queue(data: Uint8Array): void {
    this.#outbox.push(data);
  }

  /** Sends this tick's messages as one frame on the ordered channel. */
  #flush(): void {
    if (this.#outbox.length === 0) return;
    const frame = packFrame(this.#outbox);
    this.#outbox.length = 0;
    this.#counted(frame);
    this.#send(frame);
  }

  #counted(data: Uint8Array): void {
    this.bytesOutTotal += data.byteLength;
    this.#window.bytesOut += data.byteLength;
  }

  /**
   * Feeds one frame from the server (one or more messages) or one datagram. Throws
   * CodecError on a malformed one.
   */
  receive(data: Uint8Array, nowMs: number): void {
    this.#nowMs = nowMs;
    this.bytesInTotal += data.byteLength;
    this.#window.bytesIn += data.byteLength;
    const parts = splitFrame(data, { maxMessages: MAX_SERVER_FRAME_MESSAGES });
    for (const part of parts) this.#receiveMessage(part, nowMs);
  }

  #receiveMessage(data: Uint8Array, nowMs: number): void {
    const msg = decodeServerMessage(this.#decoder, data);
    this.receivedByKind[msg.kind] = (this.receivedByKind[msg.kind] ?? 0) + 1;
    this.lastHeardMs = nowMs;
    switch (msg.kind) {
      case ServerKind.Welcome:
        this.playerId = msg.playerId;
        this.phase = "playing";
        this.resumeToken = msg.resume;
        this.graceMs = msg.graceMs;
        this.#onToken?.(msg.resume);
        // A refused transfer ticket said why before the fallback connection got in.
        this.closeReason = "";
        this.rejectCode = undefined;
        // The hello's round trip is a first RTT sample: without it, the first frames
        // would name ticks the server has already run and be dropped as stale.
        if (this.#clock.rttMs === 0) this.#clock.addRtt(Math.max(1, nowMs - this.#helloAtMs));
        this.stats.rttMs = this.#clock.rttMs;
        this.#ping(nowMs);
        this.#flush();
        return;
      case ServerKind.Reject:
        // Refused at the door, or told why before being closed (a restart, say).
        if (this.phase === "connecting") this.phase = "rejected";
        this.closeReason = msg.reason;
        this.rejectCode = msg.code;
        return;
      case ServerKind.Enter:
        this.#enter(msg, nowMs);
        return;
      case ServerKind.Snapshot: {
        const snapshot = this.#rebuild(msg);
        if (snapshot) this.#snapshot(snapshot, nowMs);
        return;
      }
      case ServerKind.Events:
        this.eventBytesTotal += data.byteLength;
        this.#events(msg);
        return;
      case ServerKind.Results:
        this.#onResults?.(msg);
        return;
      case ServerKind.Transfer:
        // The world stays on screen until the new process's Enter replaces it.
        this.phase = "transferring";
        this.transfers++;
        this.#onTransfer?.(msg);
        return;
      case ServerKind.Token:
        this.resumeToken = msg.resume;
        this.#onToken?.(msg.resume);
        return;
      case ServerKind.Notice:
        this.#onNotice?.(msg);
        return;
      case ServerKind.Pong: {
        this.#clock.addRtt(Math.max(0, (nowMs >>> 0) - msg.clientTimeMs - msg.heldMs));
        this.stats.rttMs = this.#clock.rttMs;
        return;
      }
    }
  }

  /** Queues a ping: it rides in the same frame as the tick's input. */
  #ping(nowMs: number): void {
    this.#lastPingMs = nowMs;
    this.#queue(encodeClientMessage(this.#encoder, {
      kind: ClientKind.Ping,
      clientTimeMs: nowMs >>> 0,
    }));
  }

  #enter(msg: EnterMsg, nowMs: number): void {
    const world = CONTENT.worlds[msg.worldId];
    if (!world) throw new TypeError(`Cannot enter world ${msg.worldId}: unknown`);
    this.world = world;
    this.#enters++;
    this.instanceId = msg.instanceId;
    this.roster.clear();
    for (const r of msg.roster) this.roster.set(r.id, r.name);
    this.#sunkBefore += (this.#replica?.sunkTotal ?? 0) + (this.#allyShots?.sunkTotal ?? 0);
    this.#lateBefore += this.#allyShots?.lateVolleysTotal ?? 0;
    // Enemy ids and uids are the instance's own: a strike in the last one is no hit here.
    this.#strikes.clear();
    this.#allyStrikes.clear();
    // The Enter's bullets are the server's state at the end of the tick before msg.tick
    // (allies' shots among them stay on the present timeline: they are gone in a second).
    const allyShot = (v: Volley) => v.team === Team.Player && v.owner !== this.playerId;
    this.#replica = new BulletReplica(world.arena, {
      tick: msg.tick - 1,
      bullets: msg.bullets,
      onOwnShot: this.#onOwnShot,
      onShotSunk: this.#onShotSunk,
      onShotStruck: this.#struck,
      keeps: (v) => !allyShot(v),
    });
    this.#allyShots = new BulletReplica(world.arena, {
      tick: msg.tick - 1,
      onShotSunk: this.#onShotSunk,
      // An ally's shot sparks where it vanishes; its hit shows when the server's lands on
      // this timeline, judged as the ally saw it, not as this page draws it.
      onShotStruck: this.#allyStruck,
      keeps: allyShot,
      holdHits: true,
      // An ally's shot strikes where it is drawn, on its ship's timeline: the flash then.
      onHeldHit: (hit, tick) => this.#hit(hit, { tick, held: true }),
      // A volley a stall held back past its birth here still leaves the drawn muzzle.
      lateFromMuzzle: true,
      muzzleOf: (owner) => this.#remote.lastShown(owner, this.#nowMs),
    });
    this.#replica.ownerId = this.playerId;
    this.#replica.shotTargets = (tick) =>
      this.#enemiesAt(tick).map((e) => ({
        id: e.id,
        x: e.x,
        y: e.y,
        r: CONTENT.enemies[e.kind].radiusPx,
      }));
    // The enemies an ally's shot meets are the ones drawn now, on the present timeline.
    this.#allyShots.shotTargets = () => this.#replica?.shotTargets?.(this.replicaTick) ?? [];
    this.#fire = new FireRule(world.player.fireCooldownTicks);
    if (msg.stage === StageCode.boss && world.boss) {
      const b = world.boss;
      this.#replica.setShotSink({ x: b.x, y: b.y, r: b.radiusPx }, msg.tick - 1);
      this.#allyShots.setShotSink({ x: b.x, y: b.y, r: b.radiusPx }, msg.tick - 1);
    }
    this.#snapshots = [];
    this.#remote.reset();
    this.#enemyView.reset();
    this.#baselines.clear();
    this.#history = [];
    this.#unsent = 0;
    this.#predicting = false;
    this.#firstFrameTick = Infinity;
    this.#settledFromTick = Infinity;
    this.#clock.enter(msg.tick, nowMs);
    this.clientTick = Math.ceil(this.#clock.targetTick(nowMs));
    this.#replica.advanceTo(this.clientTick - 1);
    this.#onEnter?.(msg);
  }

  /** The server tick now, estimated from the least-delayed recent sample. */
  serverTickNow(nowMs: number): number {
    return this.#clock.serverTickNow(nowMs);
  }

  #snapshot(msg: SnapshotMsg, nowMs: number): void {
    this.snapshotsTotal++;
    const newest = this.#snapshots[this.#snapshots.length - 1];
    if (newest && msg.tick <= newest.msg.tick) return; // out of date: newest wins
    this.#snapshots.push({ msg, atMs: nowMs });
    if (this.#snapshots.length > SNAPSHOT_BUFFER) this.#snapshots.shift();
    this.#remote.arrived(msg.tick, nowMs);
    this.#enemyView.touched();
    const arrivals = this.snapshotArrivals;
    arrivals.count++;
    if (arrivals.lastAtMs >= 0) {
      arrivals.maxGapMs = Math.max(arrivals.maxGapMs, nowMs - arrivals.lastAtMs);
    }
    arrivals.lastAtMs = nowMs;
    this.#onSnapshot?.(msg, nowMs);
    this.#lastSnapshotMs = nowMs;
    // Everything the server did up to this tick has arrived: its events come first.
    this.#replica?.settle(msg.tick);
    // Frames after the ack were missing when their ticks ran (the server coasted): late.
    this.#clock.snapshot(msg.tick, {
      nowMs,
      ackTick: msg.ackTick,
      lateTicks: msg.lateTicks,
      slackTicks: msg.slackTicks,
      counts: msg.ackTick + 1 >= this.#firstFrameTick,
      settled: msg.ackTick + 1 >= this.#settledFromTick,
    });
    const self = msg.players.find((p) => p.id === this.playerId);
    if (!self) return;
    if ((self.flags & PlayerFlag.Active) === 0) {
      // Fallen or gone: the shots predicted past this tick will never be fired.
      if (this.#predicting) this.#replica?.unpredictAfter(msg.tick);
      this.#predicting = false;
      this.predicted.x = self.x;
      this.predicted.y = self.y;
      return;
    }
    this.#reconcile(self, msg.tick);
  }

  /**
   * Takes the server's position at `tick` and replays every later frame on top, the
   * fire rule too: a predicted shot the server's cooldown will refuse is taken back.
   */
  #reconcile(self: PlayerSnap, tick: number): void {
    const world = this.world;
    if (!world) return;
    while (this.#history.length > 0 && this.#history[0].tick <= tick) this.#history.shift();
    // The snapshot carries the ship on the 1/8 px grid. When our own prediction of that
    // tick rounds to the same place, it is the server's exact position (same inputs, same
    // code): replay from it, or a ship sliding slowly into a wall's corner would leave it a
    // tick apart on the two sides and show a correction of several pixels.
    const mine = this.#enemyView.shipWas(tick);
    const pos = mine && onSameGridPoint(mine, self)
      ? { x: mine.x, y: mine.y }
      : { x: self.x, y: self.y };
    const armed = world.kind !== "hub";
    this.#fire.restart();
    const replica = this.#replica;
    for (const f of this.#history) {
      movePlayer(pos, f, { arena: world.arena, tuning: world.player });
      this.#enemyView.shipAt(f.tick, pos);
      const fires = this.#fire.fires(f, armed);
      if (!replica || fires === replica.predictedAt(f.tick)) continue;
      // The server's cooldown runs on another beat than predicted: follow the server's.
      if (fires) replica.predict(this.#shot(pos, f.aim), f.tick);
      else replica.unpredict(f.tick);
    }
    if (!this.#predicting) {
      this.#predicting = true;
      this.predicted.x = pos.x;
      this.predicted.y = pos.y;
      return;
    }
    const ex = this.predicted.x - pos.x;
    const ey = this.predicted.y - pos.y;
    const err = Math.hypot(ex, ey);
    if (err > CORRECTION_EPSILON_PX) {
      this.stats.corrections++;
      this.#window.corrections++;
    }
    if (err > SNAP_THRESHOLD_PX) {
      this.#offset.x = 0;
      this.#offset.y = 0;
    } else {
      this.#offset.x += ex;
      this.#offset.y += ey;
    }
    this.predicted.x = pos.x;
    this.predicted.y = pos.y;
  }

  /** The shot the local ship fires from `at` along `aim`, as the server spawns it. */
  #shot(at: { x: number; y: number }, aim: number) {
    const p = this.world!.player;
    return {
      spec: p.shot,
      speedPxPerS: p.shotSpeedPxPerS,
      xs: [quantizePos(at.x)],
      ys: [quantizePos(at.y)],
      angles: [aim],
    };
  }

  /**
   * A shot on the present timeline (the player's own) vanished on an enemy as drawn: the
   * hit is felt now, and the server's will be its.
   */
  readonly #struck = (strike: ShotStrike): void => {
    this.strikesTotal++;
    this.#strikes.struck(strike.enemyId, { atMs: this.#nowMs, damage: strike.damage });
    this.#onShotStruck?.({ ...strike, ally: false });
  };

  /**
   * An ally's shot vanished on an enemy as drawn here: a spark only. The server's hit
   * on it (which then finds no bullet to hold) is the ally's, and claims no strike.
   */
  readonly #allyStruck = (strike: ShotStrike): void => {
    this.#allyStrikes.set(strike.uid, this.#nowMs);
    this.#onShotStruck?.({ ...strike, ally: true });
  };

  /**
   * A hit the server sent, told as it lands on this client's screen. An ally's shot's
   * (held to its ship's timeline, or struck there already) claims no strike: those are
   * the player's own.
   */
  #hit(hit: HitRecord, opts: { tick: number; held: boolean }): void {
    const onEnemy = hit.target === HitTarget.Enemy;
    if (onEnemy) this.enemyHitsTotal++;
    const byAlly = opts.held || this.#allyStrikes.delete(hit.uid);
    const feltAtMs = onEnemy && !byAlly
      ? this.#strikes.claim(hit.targetId, this.#nowMs)
      : undefined;
    if (feltAtMs !== undefined) this.hitsFeltEarlyTotal++;
    this.#onHit?.(hit, { tick: opts.tick, feltAtMs });
  }

  /** Strikes the server's hits never claimed (felt, but not judged hits in time). */
  get strikesUnclaimedTotal(): number {
    return this.#strikes.unclaimedTotal;
  }

  /** Strikes on enemies the server had already killed (felt in the moment before the death). */
  get strikesOverkillTotal(): number {
    return this.#strikes.overkillTotal;
  }

  #events(msg: EventsMsg): void {
    const replica = this.#replica;
    if (!replica) return;
    replica.applyEvents(msg);
    const held = this.#allyShots?.applyEvents(msg) ?? [];
    for (const v of msg.volleys) {
      this.bulletsSpawnedTotal += v.angles.length;
      if (v.owner === this.playerId && v.team === Team.Player) this.#fire.serverFired(v.birthTick);
    }
    this.bulletBytesTotal += msg.bulletBytes ?? 0;
    this.bulletHitsTotal += msg.hits.length;
    for (const h of msg.hits) if (!held.includes(h)) this.#hit(h, { tick: msg.tick, held: false });
    for (const e of msg.events) {
      if (e.type === "playerJoined") this.roster.set(e.playerId, e.name);
      else if (e.type === "playerLeft") this.roster.delete(e.playerId);
      else if (e.type === "enemyKilled") {
        this.#enemyView.killed(e.enemyId);
        this.#strikes.killed(e.enemyId);
      }
      this.#onEvent?.(e, msg.tick);
    }
  }

  /**
   * Advances the client clock to now: for every tick due, samples input, predicts,
   * sends input when a batch is complete and steps the replica.
   */
  update(nowMs: number, sample: (tick: number) => InputSample): void {
    this.#nowMs = nowMs;
    this.#strikes.expire(nowMs);
    for (const [uid, atMs] of this.#allyStrikes) {
      if (nowMs - atMs <= STRIKE_CLAIM_MS) break;
      this.#allyStrikes.delete(uid);
    }
    this.#updateRates(nowMs);
    if (this.phase !== "playing" || !this.world) return;
    const target = this.#clock.targetTick(nowMs);
    if (
      target - this.clientTick > RESYNC_BEHIND_TICKS ||
      this.clientTick - target > RESYNC_AHEAD_TICKS
    ) {
      // Far off (a frozen page, a clock jump): jump rather than crawl. Within the bounds the
      // loop catches up a few ticks per update, or waits, and every tick gets its frame.
      this.clientTick = Math.ceil(target);
      this.#history = [];
      this.#unsent = 0;
    }
    const world = this.world;
    for (let n = 0; n < MAX_TICKS_PER_UPDATE && this.clientTick <= target; n++) {
      const tick = this.clientTick++;
      if (tick < this.#firstFrameTick) this.#firstFrameTick = tick;
      if (tick < this.#settledFromTick && this.#clock.settled(nowMs)) this.#settledFromTick = tick;
      // The enemies of this tick are drawn from the newest snapshot: say how old it is.
      const base = this.#snapshots[this.#snapshots.length - 1]?.msg.tick;
      if (base !== undefined) this.#enemyView.drawFrom(tick, base);
      // A snapshot newer than the tick (the clock behind, just after an Enter or a resume)
      // is drawn as of now: no lag, never a negative one the wire cannot carry.
      const viewLag = Math.max(0, tick - (base ?? tick));
      const frame: InputFrame = { ...sample(tick), tick, viewLag };
      const prev = this.#history[this.#history.length - 1];
      if (prev && prev.tick !== tick - 1) {
        this.#history = [];
        this.#unsent = 0;
      }
      this.#history.push(frame);
      this.#unsent++;
      if (this.#predicting) {
        movePlayer(this.predicted, frame, { arena: world.arena, tuning: world.player });
        this.#enemyView.shipAt(tick, this.predicted);
      }
      this.#offset.x *= 1 - SMOOTHING_PER_TICK;
      this.#offset.y *= 1 - SMOOTHING_PER_TICK;
      if (this.#unsent >= this.#sending.batchTicks) this.#sendInput(nowMs);
      this.#replica?.advanceTo(tick);
      // The shot leaves the muzzle on the tick its input is sampled, as on the server.
      if (this.#predicting && this.#fire.fires(frame, world.kind !== "hub")) {
        this.#replica?.predict(this.#shot(this.predicted, frame.aim));
      }
    }
    // Allies' shots follow their ships: on the tick those are drawn at now.
    this.#allyShots?.advanceTo(Math.floor(this.#remote.renderTick(nowMs)));
    // Everything this call produced leaves at the same instant: one frame.
    this.#flush();
    const newest = this.#snapshots[this.#snapshots.length - 1];
    this.stats.leadTicks = newest ? this.clientTick - newest.msg.tick : 0;
    this.stats.snapshotAgeMs = newest ? nowMs - this.#lastSnapshotMs : 0;
  }

  /**
   * Sends the batch that just completed. Over datagrams the message also repeats the
   * batches before it (still unacknowledged frames only) and acknowledges the newest
   * snapshot, the baseline for delta snapshots; over the ordered channel it joins this
   * tick's frame. A due ping joins the tick's frame either way.
   */
  #sendInput(nowMs: number): void {
    // The ping rides in the same frame as an input batch rather than in one of its own.
    if (nowMs - this.#lastPingMs >= PING_INTERVAL_MS) this.#ping(nowMs);
    const s = this.#sending;
    const frames = this.#history.slice(-s.batchTicks * s.redundancy);
    this.#unsent = 0;
    if (this.#sendDatagram) {
      const snapshotAck = this.#baselines.newest?.tick;
      let snapshotsHeld: number | undefined;
      if (snapshotAck !== undefined) {
        snapshotsHeld = 0;
        for (let k = 0; k < 8; k++) {
          if (this.#baselines.get(snapshotAck - TICKS_PER_SNAPSHOT * (k + 1))) {
            snapshotsHeld |= 1 << k;
          }
        }
      }
      const data = encodeClientMessage(this.#encoder, {
        kind: ClientKind.Input,
        frames,
        snapshotAck,
        snapshotsHeld,
      });
      this.#counted(data);
      this.#sendDatagram(data);
      return;
    }
    // On the ordered stream a baseline goes missing only if a snapshot was skipped after
    // the server counted it sent: asking with an ack gets a delta of one held, or whole.
    const snapshotAck = this.#needBaseline ? (this.#baselines.newest?.tick ?? 0) : undefined;
    this.#needBaseline = false;
    this.#queue(
      encodeClientMessage(this.#encoder, { kind: ClientKind.Input, frames, snapshotAck }),
    );
  }

  /**
   * Rebuilds a snapshot from its delta and the baseline it names; undefined if this
   * client does not hold that baseline (it then asks for one it does) or the datagram
   * belongs to another world than the current one.
   */
  #rebuild(msg: SnapshotWireMsg): SnapshotMsg | undefined {
    // A datagram from the world before the last Enter, or one that overtook the next.
    if (msg.epoch !== undefined && msg.epoch !== (this.#enters & 0xff)) return undefined;
    const base = msg.baseTick === undefined ? undefined : this.#baselines.get(msg.baseTick);
    if (msg.baseTick !== undefined && !base) {
      this.snapshotsWithoutBaseline++;
      this.#needBaseline = true;
      return undefined;
    }
    const units = decodeSnapshotBody(msg.body, { tick: msg.tick, base });
    this.#baselines.add(units);
    return fromSnapshotUnits(units, {
      ackTick: msg.ackTick,
      lateTicks: msg.lateTicks,
      slackTicks: msg.slackTicks,
      epoch: msg.epoch,
    });
  }

  #updateRates(nowMs: number): void {
    const w = this.#window;
    const elapsed = nowMs - w.startMs;
    if (elapsed < RATE_WINDOW_MS) return;
    const perSec = 1000 / elapsed;
    this.stats.bytesInPerSec = w.bytesIn * perSec;
    this.stats.bytesOutPerSec = w.bytesOut * perSec;
    this.stats.correctionsPerSec = w.corrections * perSec;
    this.#window = { startMs: nowMs, bytesIn: 0, bytesOut: 0, corrections: 0 };
  }

  /** The bullet replica, at the client's predicted tick. */
  get replica(): BulletPool {
    return this.#replica?.pool ?? EMPTY_POOL;
  }

  /**
   * Other players' shots, on the tick other players are drawn at (it follows
   * `renderTick`): each leaves its ship's drawn muzzle, and one the server says struck an
   * enemy is taken away once its batch's ticks are drawn. On this player's tick a shot
   * would be drawn as far on as it flew in the remote delay and the lead together (at
   * 150 ± 50 ms each way, a median of 340-380 px: `deno task fairness`), often already in
   * the boss. Only this player's own shots and what can hurt it must share its tick
   * (`replica`).
   */
  get allyShots(): BulletPool {
    return this.#allyShots?.pool ?? EMPTY_POOL;
  }

  /**
   * Allies' volleys that arrived after their birth on the ticks their ships are drawn at
   * (a stall held them back): started at the muzzle, late, rather than mid-flight.
   */
  get allyVolleysLateTotal(): number {
    return this.#lateBefore + (this.#allyShots?.lateVolleysTotal ?? 0);
  }

  /** Early bullet deaths: hits the server sent plus shots the replicas saw die on the boss. */
  get bulletEarlyDeathsTotal(): number {
    return this.bulletHitsTotal + this.#sunkBefore + (this.#replica?.sunkTotal ?? 0) +
      (this.#allyShots?.sunkTotal ?? 0);
  }

  /** Where the bullet of a hit just reported died in a replica (for impact sparks). */
  impactOf(uid: number): { x: number; y: number } | undefined {
    return this.#replica?.impactOf(uid) ?? this.#allyShots?.impactOf(uid);
  }

  /** The tick the replica has been integrated to. */
  get replicaTick(): number {
    return this.#replica?.tick ?? 0;
  }

  /** How far ahead of the server's estimated tick input is named now, in ticks. */
  get inputLeadTicks(): number {
    return this.#clock.leadTicks;
  }

  /** Unacknowledged frames (oldest first). */
  get pendingInputs(): readonly InputFrame[] {
    return this.#history;
  }

  /** Where to draw the local ship: the prediction plus what is left of a smoothed correction. */
  selfView(): ActorView | undefined {
    if (!this.#predicting) {
      const s = this.selfSnapshot();
      return s ? { id: s.id, x: s.x, y: s.y } : undefined;
    }
    return {
      id: this.playerId,
      x: this.predicted.x + this.#offset.x,
      y: this.predicted.y + this.#offset.y,
    };
  }

  /** The newest snapshot, if any. */
  latest(): SnapshotMsg | undefined {
    return this.#snapshots[this.#snapshots.length - 1]?.msg;
  }

  /** The local player's entry in the newest snapshot. */
  selfSnapshot(): PlayerSnap | undefined {
    return this.latest()?.players.find((p) => p.id === this.playerId);
  }

  /** The boss as of the newest snapshot. */
  boss(): BossSnap | null {
    return this.latest()?.boss ?? null;
  }

  /**
   * The tick other players are drawn at: in the past by what the measured jitter asks
   * for (see RemoteView), so a newer snapshot is almost always there to interpolate to.
   */
  renderTick(nowMs: number): number {
    return this.#remote.renderTick(nowMs);
  }

  /** Ticks other players are drawn behind the newest snapshot's arrival (adapts to jitter). */
  get remoteDelayTicks(): number {
    return this.#remote.delayTicks;
  }

  /**
   * Other players, interpolated around `renderTick`, extrapolated briefly across a stall,
   * and blended so that fresh data never makes a ship jump. Call once per drawn frame.
   */
  remotePlayers(nowMs: number): (PlayerSnap & ActorView)[] {
    return this.#remote.ships(this.#snapshots.map((s) => s.msg), {
      nowMs,
      selfId: this.playerId,
    });
  }

  /**
   * Enemies on the present timeline: on the replica's tick, with the local ship and the
   * bullets, run forward from the snapshot that tick's input named (see EnemyView).
   */
  enemies(_nowMs?: number): EnemyOnScreen[] {
    return this.#enemiesAt(this.replicaTick);
  }

  /**
   * The enemies drawn on `tick`, but for those the player's own strikes have already
   * killed on this timeline: what the strikes not yet claimed would deal reaches the HP
   * the newest snapshot gave (the server, a lead behind, kills it when it gets there).
   * One the server never agreed to kill comes back once those strikes expire unclaimed.
   */
  #enemiesAt(tick: number): EnemyOnScreen[] {
    const world = this.world;
    if (!world) return [];
    const drawn = this.#enemyView.at(tick, {
      snaps: this.#snapshots.map((s) => s.msg),
      selfId: this.playerId,
      arena: world.arena,
    });
    if (this.#strikes.empty) return drawn;
    const newest = this.#snapshots[this.#snapshots.length - 1]?.msg.enemies ?? [];
    return drawn.filter((e) => {
      const pending = this.#strikes.pendingDamage(e.id);
      if (pending === 0) return true;
      const hp = newest.find((n) => n.id === e.id)?.hp ?? e.hp;
      return hp > pending;
    });
  }
}

/** True when `a` rounds to `b`, a position on the wire grid. */
function onSameGridPoint(a: { x: number; y: number }, b: { x: number; y: number }): boolean {
  const half = 0.5 / POS_UNITS_PER_PX + 1e-9;
  return Math.abs(a.x - b.x) <= half && Math.abs(a.y - b.y) <= half;
}
