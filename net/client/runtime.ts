/**
 * The client side of the netcode, shared by the browser and headless bots:
 * predicts the local ship with the server's own movement function and reconciles
 * on every snapshot, interpolates everyone else a little in the past, and keeps a
 * bullet replica fed by spawn events and integrated by the same BulletPool code.
 * No DOM, no sockets: bytes in through `receive`, bytes out through `send`.
 */
import { WORLDS } from "../../content/mod.ts";
import {
  CORRECTION_EPSILON_PX,
  INPUT_FRAMES_PER_MESSAGE,
  INPUT_LEAD_MARGIN_TICKS,
  INTERPOLATION_DELAY_TICKS,
  SMOOTHING_PER_TICK,
  SNAP_THRESHOLD_PX,
} from "../../content/net_tuning.ts";
import { BulletPool, type InputFrame, movePlayer, TICK_MS, type WorldDef } from "../../sim/mod.ts";
import { BulletReplica } from "./replica.ts";
import {
  decodeServerMessage,
  encodeClientMessage,
  MessageDecoder,
  MessageEncoder,
} from "../wire/codec.ts";
import {
  type BossSnap,
  type Choice,
  ClientKind,
  type EnemySnap,
  type EnterMsg,
  type EventsMsg,
  type HitRecord,
  type NetEvent,
  PlayerFlag,
  type PlayerSnap,
  PROTOCOL_VERSION,
  type ResultsMsg,
  ServerKind,
  type SnapshotMsg,
  StageCode,
} from "../wire/protocol.ts";

/** What the player wants this tick, before it becomes a frame. */
export type InputSample = Omit<InputFrame, "tick">;

/** Where the runtime stands. */
export type RuntimePhase = "connecting" | "playing" | "rejected" | "closed";

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

/** Options of a runtime. */
export interface RuntimeOptions {
  /** Sends bytes to the server (ordered). */
  readonly send: (data: Uint8Array) => void;
  /**
   * Called for each event the server reports, after the runtime has applied it, with the
   * first tick of its batch (events are batched per snapshot interval: up to 2 ticks early).
   */
  readonly onEvent?: (event: NetEvent, tick: number) => void;
  /** Called when the runtime enters an instance. */
  readonly onEnter?: (enter: EnterMsg) => void;
  /** Called for each bullet that struck something (for hit flashes). */
  readonly onHit?: (hit: HitRecord, tick: number) => void;
  /** Called when a run this player took part in ends (the results screen). */
  readonly onResults?: (results: ResultsMsg) => void;
}

const PING_INTERVAL_MS = 1000;
const RATE_WINDOW_MS = 1000;
const OFFSET_WINDOW_MS = 3000;
const MAX_TICKS_PER_UPDATE = 8;
const RESYNC_TICKS = 12;
const SNAPSHOT_BUFFER = 32;
const EMPTY_POOL = new BulletPool(1);

interface TimedSnapshot {
  readonly msg: SnapshotMsg;
  readonly atMs: number;
}

/** The client runtime: prediction, reconciliation, interpolation and the bullet replica. */
export class ClientRuntime {
  readonly #send: (data: Uint8Array) => void;
  readonly #onEvent: RuntimeOptions["onEvent"];
  readonly #onEnter: RuntimeOptions["onEnter"];
  readonly #onHit: RuntimeOptions["onHit"];
  readonly #onResults: RuntimeOptions["onResults"];
  readonly #encoder = new MessageEncoder();
  readonly #decoder = new MessageDecoder();

  phase: RuntimePhase = "connecting";
  /** Why the server refused or closed us, for the player to read. */
  closeReason = "";
  playerId = 0;
  instanceId = "";
  world: WorldDef | undefined;
  readonly roster = new Map<number, string>();

  #replica: BulletReplica | undefined;

  /** The next tick this client will predict (its frames name server ticks). */
  clientTick = 0;
  /** Predicted ship position after the last predicted frame. */
  readonly predicted = { x: 0, y: 0 };
  /** Visual offset left from a small correction, decaying each tick. */
  readonly #offset = { x: 0, y: 0 };
  #history: InputFrame[] = [];
  #predicting = false;

  #snapshots: TimedSnapshot[] = [];
  /** Samples of (server tick − local ms / tick) with their time: the best is the least delayed. */
  #offsets: { atMs: number; value: number }[] = [];

  readonly stats: NetStats = {
    rttMs: 0,
    bytesInPerSec: 0,
    bytesOutPerSec: 0,
    snapshotAgeMs: 0,
    correctionsPerSec: 0,
    corrections: 0,
    leadTicks: 0,
  };
  #rttSamples: number[] = [];
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
  #sunkBefore = 0;

  constructor(opts: RuntimeOptions) {
    this.#send = opts.send;
    this.#onEvent = opts.onEvent;
    this.#onEnter = opts.onEnter;
    this.#onHit = opts.onHit;
    this.#onResults = opts.onResults;
  }

  /** Introduces the player; call once the socket is open. */
  hello(name: string, nowMs: number, version = PROTOCOL_VERSION): void {
    this.#window.startMs = nowMs;
    this.#helloAtMs = nowMs;
    this.#out(encodeClientMessage(this.#encoder, { kind: ClientKind.Hello, version, name }));
  }

  /** Answers the results screen: back to the hub, or again with this crew. */
  choose(choice: Choice): void {
    if (this.phase !== "playing") return;
    this.#out(encodeClientMessage(this.#encoder, { kind: ClientKind.Choice, choice }));
  }

  /** The socket closed. */
  closed(reason: string): void {
    if (this.phase !== "rejected") this.phase = "closed";
    if (!this.closeReason) this.closeReason = reason;
  }

  #out(data: Uint8Array): void {
    this.bytesOutTotal += data.byteLength;
    this.#window.bytesOut += data.byteLength;
    this.#send(data);
  }

  /** Feeds one message from the server. Throws CodecError on a malformed one. */
  receive(data: Uint8Array, nowMs: number): void {
    this.bytesInTotal += data.byteLength;
    this.#window.bytesIn += data.byteLength;
    const msg = decodeServerMessage(this.#decoder, data);
    switch (msg.kind) {
      case ServerKind.Welcome:
        this.playerId = msg.playerId;
        this.phase = "playing";
        // The hello's round trip is a first RTT sample: without it, the first frames
        // would name ticks the server has already run and be dropped as stale.
        if (this.stats.rttMs === 0) this.stats.rttMs = Math.max(1, nowMs - this.#helloAtMs);
        this.#ping(nowMs);
        return;
      case ServerKind.Reject:
        // Refused at the door, or told why before being closed (a restart, say).
        if (this.phase === "connecting") this.phase = "rejected";
        this.closeReason = msg.reason;
        return;
      case ServerKind.Enter:
        this.#enter(msg, nowMs);
        return;
      case ServerKind.Snapshot:
        this.#snapshot(msg, nowMs);
        return;
      case ServerKind.Events:
        this.eventBytesTotal += data.byteLength;
        this.#events(msg);
        return;
      case ServerKind.Results:
        this.#onResults?.(msg);
        return;
      case ServerKind.Pong: {
        const rtt = Math.max(0, (nowMs >>> 0) - msg.clientTimeMs);
        this.#rttSamples.push(rtt);
        if (this.#rttSamples.length > 10) this.#rttSamples.shift();
        this.stats.rttMs = this.stats.rttMs === 0 ? rtt : this.stats.rttMs * 0.8 + rtt * 0.2;
        return;
      }
    }
  }

  #ping(nowMs: number): void {
    this.#lastPingMs = nowMs;
    this.#out(encodeClientMessage(this.#encoder, {
      kind: ClientKind.Ping,
      clientTimeMs: nowMs >>> 0,
    }));
  }

  #enter(msg: EnterMsg, nowMs: number): void {
    const world = WORLDS[msg.worldId];
    if (!world) throw new TypeError(`Cannot enter world ${msg.worldId}: unknown`);
    this.world = world;
    this.instanceId = msg.instanceId;
    this.roster.clear();
    for (const r of msg.roster) this.roster.set(r.id, r.name);
    this.#sunkBefore += this.#replica?.sunkTotal ?? 0;
    // The Enter's bullets are the server's state at the end of the tick before msg.tick.
    this.#replica = new BulletReplica(world.arena, { tick: msg.tick - 1, bullets: msg.bullets });
    if (msg.stage === StageCode.boss && world.boss) {
      const b = world.boss;
      this.#replica.setShotSink({ x: b.x, y: b.y, r: b.radiusPx }, msg.tick - 1);
    }
    this.#snapshots = [];
    this.#history = [];
    this.#predicting = false;
    this.#offsets = [{ atMs: nowMs, value: msg.tick - nowMs / TICK_MS }];
    this.clientTick = Math.ceil(this.#targetTick(nowMs));
    this.#replica.advanceTo(this.clientTick - 1);
    this.#onEnter?.(msg);
  }

  /** The server tick now, estimated from the least-delayed recent sample. */
  serverTickNow(nowMs: number): number {
    let best = -Infinity;
    for (const o of this.#offsets) if (o.value > best) best = o.value;
    return best + nowMs / TICK_MS + this.stats.rttMs / 2 / TICK_MS;
  }

  /** The tick whose input should be sampled now: far enough ahead to arrive in time. */
  #targetTick(nowMs: number): number {
    const jitterMs = spread(this.#rttSamples);
    return this.serverTickNow(nowMs) + (this.stats.rttMs / 2 + 2 * jitterMs) / TICK_MS +
      INPUT_LEAD_MARGIN_TICKS;
  }

  #snapshot(msg: SnapshotMsg, nowMs: number): void {
    const newest = this.#snapshots[this.#snapshots.length - 1];
    if (newest && msg.tick <= newest.msg.tick) return; // out of date: newest wins
    this.#snapshots.push({ msg, atMs: nowMs });
    if (this.#snapshots.length > SNAPSHOT_BUFFER) this.#snapshots.shift();
    this.#lastSnapshotMs = nowMs;
    this.#offsets.push({ atMs: nowMs, value: msg.tick - nowMs / TICK_MS });
    while (this.#offsets.length > 1 && this.#offsets[0].atMs < nowMs - OFFSET_WINDOW_MS) {
      this.#offsets.shift();
    }
    const self = msg.players.find((p) => p.id === this.playerId);
    if (!self) return;
    if ((self.flags & PlayerFlag.Active) === 0) {
      this.#predicting = false;
      this.predicted.x = self.x;
      this.predicted.y = self.y;
      return;
    }
    this.#reconcile(self, msg.tick);
  }

  /** Takes the server's position at `tick` and replays every later frame on top. */
  #reconcile(self: PlayerSnap, tick: number): void {
    const world = this.world;
    if (!world) return;
    while (this.#history.length > 0 && this.#history[0].tick <= tick) this.#history.shift();
    const pos = { x: self.x, y: self.y };
    for (const f of this.#history) movePlayer(pos, f, { arena: world.arena, tuning: world.player });
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

  #events(msg: EventsMsg): void {
    const replica = this.#replica;
    if (!replica) return;
    replica.applyEvents(msg);
    for (const v of msg.volleys) this.bulletsSpawnedTotal += v.angles.length;
    this.bulletBytesTotal += msg.bulletBytes ?? 0;
    this.bulletHitsTotal += msg.hits.length;
    for (const h of msg.hits) this.#onHit?.(h, msg.tick);
    for (const e of msg.events) {
      if (e.type === "playerJoined") this.roster.set(e.playerId, e.name);
      else if (e.type === "playerLeft") this.roster.delete(e.playerId);
      this.#onEvent?.(e, msg.tick);
    }
  }

  /**
   * Advances the client clock to now: for every tick due, samples input, predicts,
   * sends the frame (with the previous ones, for redundancy) and steps the replica.
   */
  update(nowMs: number, sample: (tick: number) => InputSample): void {
    this.#updateRates(nowMs);
    if (this.phase !== "playing" || !this.world) return;
    if (nowMs - this.#lastPingMs >= PING_INTERVAL_MS) this.#ping(nowMs);
    const target = this.#targetTick(nowMs);
    if (Math.abs(target - this.clientTick) > RESYNC_TICKS) {
      // Far off (a stall, a transfer, a clock jump): jump rather than crawl.
      this.clientTick = Math.ceil(target);
      this.#history = [];
    }
    const world = this.world;
    for (let n = 0; n < MAX_TICKS_PER_UPDATE && this.clientTick <= target; n++) {
      const tick = this.clientTick++;
      const frame: InputFrame = { ...sample(tick), tick };
      const prev = this.#history[this.#history.length - 1];
      if (prev && prev.tick !== tick - 1) this.#history = [];
      this.#history.push(frame);
      if (this.#predicting) {
        movePlayer(this.predicted, frame, { arena: world.arena, tuning: world.player });
      }
      this.#offset.x *= 1 - SMOOTHING_PER_TICK;
      this.#offset.y *= 1 - SMOOTHING_PER_TICK;
      const recent = this.#history.slice(-INPUT_FRAMES_PER_MESSAGE);
      this.#out(encodeClientMessage(this.#encoder, { kind: ClientKind.Input, frames: recent }));
      this.#replica?.advanceTo(tick);
    }
    const newest = this.#snapshots[this.#snapshots.length - 1];
    this.stats.leadTicks = newest ? this.clientTick - newest.msg.tick : 0;
    this.stats.snapshotAgeMs = newest ? nowMs - this.#lastSnapshotMs : 0;
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

  /** Early bullet deaths: hits the server sent plus shots the replica saw die on the boss. */
  get bulletEarlyDeathsTotal(): number {
    return this.bulletHitsTotal + this.#sunkBefore + (this.#replica?.sunkTotal ?? 0);
  }

  /** Where the bullet of a hit just reported died in the replica (for impact sparks). */
  impactOf(uid: number): { x: number; y: number } | undefined {
    return this.#replica?.impactOf(uid);
  }

  /** The tick the replica has been integrated to. */
  get replicaTick(): number {
    return this.#replica?.tick ?? 0;
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

  /** The tick remote actors are drawn at: a little in the past, so two snapshots bracket it. */
  renderTick(nowMs: number): number {
    return this.serverTickNow(nowMs) - this.stats.rttMs / 2 / TICK_MS - INTERPOLATION_DELAY_TICKS;
  }

  /** Other players, interpolated between the snapshots around `renderTick`. */
  remotePlayers(nowMs: number): (PlayerSnap & ActorView)[] {
    return this.#interpolate(nowMs, (s) => s.players).filter((p) => p.id !== this.playerId);
  }

  /** Enemies, interpolated the same way. */
  enemies(nowMs: number): (EnemySnap & ActorView)[] {
    return this.#interpolate(nowMs, (s) => s.enemies);
  }

  #interpolate<T extends { id: number; x: number; y: number }>(
    nowMs: number,
    pick: (s: SnapshotMsg) => readonly T[],
  ): T[] {
    const snaps = this.#snapshots;
    if (snaps.length === 0) return [];
    const at = this.renderTick(nowMs);
    let i = snaps.length - 1;
    while (i > 0 && snaps[i - 1].msg.tick > at) i--;
    const b = snaps[i].msg;
    const a = i > 0 ? snaps[i - 1].msg : undefined;
    if (!a || at >= b.tick) return [...pick(b)];
    const t = Math.max(0, Math.min(1, (at - a.tick) / (b.tick - a.tick)));
    const before = new Map(pick(a).map((e) => [e.id, e]));
    return pick(b).map((e) => {
      const prev = before.get(e.id);
      if (!prev) return e;
      return { ...e, x: prev.x + (e.x - prev.x) * t, y: prev.y + (e.y - prev.y) * t };
    });
  }
}

function spread(samples: readonly number[]): number {
  if (samples.length < 2) return 0;
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  return Math.sqrt(samples.reduce((a, b) => a + (b - mean) ** 2, 0) / samples.length);
}
