/**
 * An instance: one SimWorld, its peers and its tick. Its messages go only to its
 * own peers. Each step turns the world's events into one Events message for
 * everyone, a snapshot per peer every few ticks, and transfer decisions for the
 * server to carry out.
 */
import {
  type BulletPool,
  type BulletState,
  Button,
  HitTarget,
  type InputFrame,
  InputQueue,
  type InputVerdict,
  quantizeAngle,
  type SimEvent,
  SimWorld,
  type StepProbe,
  type Volley,
  type WorldDef,
  type WorldStepPart,
} from "../../sim/mod.ts";
import { CONTENT } from "../../content/mod.ts";
import {
  AWAY_AFTER_SILENT_TICKS,
  INPUT_LIMITS,
  INTEREST_PLAYERS,
  MAX_REWIND_TICKS,
  ORDERED_SNAPSHOT_BASELINES,
  SNAPSHOT_BASELINES,
  TICKS_PER_SNAPSHOT,
  TRANSFER_DELAYS,
} from "../../content/net_tuning.ts";
import { NearestIndex, nearestPlayers } from "./interest.ts";
import {
  aimToByte,
  encodeServerMessage,
  encodeSnapshot,
  type MessageEncoder,
} from "../wire/codec.ts";
import { VolleyDictionary } from "../wire/volley_codec.ts";
import {
  bossUnits,
  encodeSnapshotBody,
  enemyUnits,
  playerUnits,
  SnapshotHistory,
  type SnapshotUnits,
  sortRows,
  unitsFromOwnRows,
} from "../wire/snapshot_delta.ts";
import {
  EnterReason,
  type HitRecord,
  type NetEvent,
  Outcome,
  PlayerFlag,
  type ResultsMsg,
  RunStatusCode,
  ServerKind,
  StageCode,
} from "../wire/protocol.ts";

/** A client inside an instance, as the instance sees it. */
export interface Peer {
  readonly playerId: number;
  readonly name: string;
  /** Snapshots go as datagrams: they may overtake the Enter that changed instance. */
  readonly datagrams?: boolean;
  /** Enters this peer has been sent; a datagram snapshot names it (mod 256). */
  readonly epoch?: number;
  /** The snapshot tick the peer says it holds, over datagrams or to resync (-1: none). */
  readonly snapshotAck?: number;
  /** True once after a peer on an ordered stream asked for a delta against `snapshotAck`. */
  consumeResync?(): boolean;
  sendReliable(data: Uint8Array): void;
  /** Newest wins; `tick` names the snapshot (a datagram link watches its acknowledgements). */
  sendLatest(data: Uint8Array, tick?: number): boolean;
}

/**
 * A server decision about a player, for the server to carry out: back to the hub, or
 * through a portal of this world (the server looks up where it leads).
 */
export type TransferOrder =
  & { readonly playerId: number; readonly reason: EnterReason }
  & ({ readonly to: "hub" } | { readonly to: "dungeon"; readonly portal: number });

interface Member {
  /** The peer's player id, kept here: the tick reads it for every member, the peer seldom. */
  readonly id: number;
  readonly peer: Peer;
  readonly queue: InputQueue;
  /** In a crowd, the tick of each snapshot interval this member's snapshot goes out on. */
  readonly slot: number;
  /** Snapshots sent to this peer: the baselines of its deltas. */
  readonly sent: SnapshotHistory;
  /** The tick it joined (or came back): silence counts from here before its first frame. */
  readonly sinceTick: number;
  /** Why its ship is parked: its link is down, or its input stopped (since `parkedAt`). */
  parked: "link" | "silence" | undefined;
  parkedAt: number;
}

/**
 * The parts of `Instance.step` around its world's (sim/world.ts WORLD_STEP_PARTS), in
 * the order they run: `between` is the time since the last lap (the server's loop
 * between instances), then the members' inputs, the world's own parts, the events
 * (turned into messages and transfers), their flush, and the snapshots.
 */
export const INSTANCE_STEP_PARTS = ["between", "inputs", "events", "flush", "snapshots"] as const;
export type InstanceStepPart = (typeof INSTANCE_STEP_PARTS)[number];

/** One world and the peers inside it. */
export class Instance {
  readonly id: string;
  readonly worldId: number;
  readonly world: SimWorld;
  readonly #members = new Map<number, Member>();
  #joins = 0;
  readonly #encoder: MessageEncoder;
  readonly #probe: StepProbe<InstanceStepPart | WorldStepPart> | undefined;
  /** The volley headers this instance's Events have carried (net/wire/volley_codec.ts). */
  readonly #volleys = new VolleyDictionary();
  readonly #pendingEvents: NetEvent[] = [];
  readonly #scheduled: { atTick: number; order: TransferOrder }[] = [];
  /**
   * Each member's input for the world, by player id: its queue's own frame, put here when
   * the member (and its queue) is made; each tick's take() fills it in place.
   */
  readonly #inputs = new Map<number, InputFrame>();
  /** In a crowd, where each ship sits in this tick's list of ships (kept, not remade). */
  readonly #crowdAt = new Map<number, number>();
  /** A crowd's index of its ships by x, updated each tick it is crowded. */
  readonly #nearest = new NearestIndex<CrowdShip>();
  /**
   * Which tick of each snapshot interval carries this instance's snapshots and events:
   * the server's tick count modulo TICKS_PER_SNAPSHOT. The server spreads its instances
   * over the interval's ticks, so no one tick carries every instance's sends.
   */
  readonly snapshotSlot: number;
  /** The crew this dungeon was made for ("again with this crew"); the portal skips it. */
  reservedFor: string | undefined;
  #results: ResultsMsg | undefined;
  #runOver = false;
  #batch:
    | { baseTick: number; volleys: Volley[]; hits: HitRecord[]; small: NetEvent[] }
    | undefined;

  constructor(
    id: string,
    opts: {
      worldId: number;
      def: WorldDef;
      seed: number;
      encoder: MessageEncoder;
      snapshotSlot?: number;
      /** Told as each part of a step ends, the world's parts included (a bench's clock). */
      probe?: StepProbe<InstanceStepPart | WorldStepPart>;
    },
  ) {
    this.id = id;
    this.worldId = opts.worldId;
    this.snapshotSlot = opts.snapshotSlot ?? 0;
    this.world = new SimWorld(opts.def, {
      seed: opts.seed,
      // Contact and shots are judged by what each player saw, up to this far back (the hub
      // has nothing to judge: it keeps no history).
      maxRewindTicks: opts.def.kind === "hub" ? 0 : MAX_REWIND_TICKS,
      viewGapTicks: TICKS_PER_SNAPSHOT,
      probe: opts.probe,
    });
    this.#encoder = opts.encoder;
    this.#probe = opts.probe;
  }

  /** The key of this instance's world in the registry. */
  get worldKey(): string {
    return CONTENT.worlds[this.worldId]?.key ?? "";
  }

  get kind(): WorldDef["kind"] {
    return this.world.def.kind;
  }

  get size(): number {
    return this.#members.size;
  }

  has(playerId: number): boolean {
    return this.#members.has(playerId);
  }

  /** The peers inside, in the order they joined. */
  get peers(): Peer[] {
    return [...this.#members.values()].map((m) => m.peer);
  }

  /** Puts a peer's ship in the world and tells it where it is. */
  join(peer: Peer, reason: EnterReason): void {
    // Bullets born so far travel in the Enter message; the batch must not repeat them.
    this.#flush();
    this.world.addPlayer(peer.playerId, peer.name);
    this.#members.set(peer.playerId, {
      id: peer.playerId,
      peer,
      queue: this.#newQueue(peer.playerId),
      slot: this.#joins++ % TICKS_PER_SNAPSHOT,
      sent: baselinesFor(peer),
      sinceTick: this.world.tick,
      parked: undefined,
      parkedAt: 0,
    });
    this.#pendingEvents.push({ type: "playerJoined", playerId: peer.playerId, name: peer.name });
    this.#sendEnter(peer, reason);
  }

  /**
   * A member whose link dropped is back (a resumed session): its parked ship rejoins the
   * fight and it gets the Enter a join would send (every live bullet, the roster), with a
   * fresh input queue for the new connection's frames and no baselines (the client dropped
   * its own at the Enter: the next snapshot is whole). No second ship, no join event.
   */
  rejoin(playerId: number): void {
    const member = this.#members.get(playerId);
    if (!member) return;
    this.#flush();
    this.#members.set(playerId, {
      ...member,
      queue: this.#newQueue(playerId),
      sent: baselinesFor(member.peer),
      sinceTick: this.world.tick,
      parked: undefined,
    });
    this.world.setAway(playerId, false);
    this.#sendEnter(member.peer, EnterReason.Resume);
  }

  /** Parks a member's ship while its link is down (rejoin() brings it back). */
  linkDown(playerId: number): void {
    const member = this.#members.get(playerId);
    if (!member) return;
    member.parked = "link";
    member.parkedAt = this.world.tick;
    this.world.setAway(playerId, true);
  }

  #sendEnter(peer: Peer, reason: EnterReason): void {
    peer.sendReliable(encodeServerMessage(this.#encoder, {
      kind: ServerKind.Enter,
      instanceId: this.id,
      worldId: this.worldId,
      tick: this.world.tick,
      reason,
      roster: [...this.world.players.values()].map((p) => ({ id: p.id, name: p.name })),
      stage: StageCode[this.world.stage],
      bullets: bulletStates(this.world.bullets),
      volleyDictionary: this.#volleys.export(),
    }));
  }

  /** Takes a peer's ship out of the world. */
  leave(playerId: number): void {
    if (!this.#members.delete(playerId)) return;
    this.#inputs.delete(playerId);
    this.#crowdAt.delete(playerId);
    this.world.removePlayer(playerId);
    this.#pendingEvents.push({ type: "playerLeft", playerId });
    for (let i = this.#scheduled.length - 1; i >= 0; i--) {
      if (this.#scheduled[i].order.playerId === playerId) this.#scheduled.splice(i, 1);
    }
  }

  /** Queues a small event for every member (sent with the next batch). */
  announce(event: NetEvent): void {
    this.#pendingEvents.push(event);
  }

  /** The input audit: offers a frame to the player's queue. */
  offerInput(playerId: number, frame: InputFrame): InputVerdict {
    const member = this.#members.get(playerId);
    if (!member) return "stale";
    return member.queue.offer(frame, this.world.tick);
  }

  /** A member's new input queue, its frame put in `#inputs` for the world to read each tick. */
  #newQueue(playerId: number): InputQueue {
    const queue = new InputQueue(INPUT_LIMITS);
    this.#inputs.set(playerId, queue.frame);
    return queue;
  }

  /**
   * Runs one tick; returns the transfers that fall due now. `serverTick`, the server's
   * tick count, picks the ticks of `snapshotSlot` (an instance stepped on its own, as in
   * tests, uses its world's count).
   */
  step(serverTick = this.world.tick): TransferOrder[] {
    const world = this.world;
    const tick = world.tick;
    const probe = this.#probe;
    probe?.lap("between");
    // Each take() fills the frame the member's entry in #inputs already holds: no map
    // written a member a tick.
    for (const m of this.#members.values()) {
      m.queue.take(tick);
      this.#parkIfSilent(m.id, m, tick);
    }
    probe?.lap("inputs");
    const events = world.step(this.#inputs);
    const orders = this.#collect(tick, events);
    for (let i = this.#scheduled.length - 1; i >= 0; i--) {
      if (this.#scheduled[i].atTick <= world.tick) {
        orders.push(this.#scheduled[i].order);
        this.#scheduled.splice(i, 1);
      }
    }
    probe?.lap("events");
    // Events go out once per snapshot interval (one message instead of three), and at
    // once when someone is about to leave, so they hear how their stay ended.
    const snapshotTick = serverTick % TICKS_PER_SNAPSHOT === this.snapshotSlot;
    if (snapshotTick || orders.length > 0) this.#flush();
    probe?.lap("flush");
    // A crowd's snapshots are spread over the interval (a third of the members each tick):
    // every member still gets 20 a second, and no tick carries the whole crowd's sends.
    if (snapshotTick || world.players.size > INTEREST_PLAYERS) this.#sendSnapshots(tick);
    probe?.lap("snapshots");
    return orders;
  }

  /**
   * A member whose frames stopped (a frozen tab, a link cut before anyone noticed) is
   * parked after AWAY_AFTER_SILENT_TICKS in a dungeon; its first frame back unparks it,
   * with as many i-frames as it spent parked (at most the usual), so silence buys no
   * free cover.
   */
  #parkIfSilent(id: number, m: Member, tick: number): void {
    // Nothing in a hub can hurt a ship: there, a silent player just stands.
    if (m.parked === "link" || this.kind === "hub") return;
    const lastHeard = Math.max(m.queue.lastInputTick, m.sinceTick);
    if (m.parked === undefined && tick - lastHeard > AWAY_AFTER_SILENT_TICKS) {
      m.parked = "silence";
      m.parkedAt = tick;
      this.world.setAway(id, true);
    } else if (m.parked === "silence" && m.queue.lastInputTick === tick) {
      m.parked = undefined;
      this.world.setAway(id, false, { iframeTicks: tick - m.parkedAt });
    }
  }

  /** A dungeon whose run has not ended and that still holds a player (connected or away). */
  get runInProgress(): boolean {
    return this.kind === "dungeon" && !this.#runOver && this.#members.size > 0;
  }

  /** The results of a run that ended on the last step, once; the server sends them to the crew. */
  takeResults(): ResultsMsg | undefined {
    const r = this.#results;
    this.#results = undefined;
    return r;
  }

  /** Closes the run once: on the boss's defeat, or when nobody is left fighting after a death. */
  #endRun(outcome: Outcome): void {
    if (this.#runOver || this.kind !== "dungeon") return;
    this.#runOver = true;
    this.#results = {
      kind: ServerKind.Results,
      outcome,
      worldId: this.worldId,
      durationTicks: this.world.tick,
      rows: [...this.world.stats.values()].map((s) => ({
        id: s.id,
        name: s.name,
        damageDealt: s.damageDealt,
        hitsTaken: s.hitsTaken,
        grazes: s.grazes,
        status: RunStatusCode[s.status],
      })),
    };
  }

  /** Sends the batched events to every member. */
  #flush(): void {
    const batch = this.#batch;
    this.#batch = undefined;
    if (!batch) return;
    // Joins and leaves since the last batch go first (seldom any: no copy when there are none).
    if (this.#pendingEvents.length > 0) batch.small.unshift(...this.#pendingEvents.splice(0));
    if (batch.volleys.length === 0 && batch.hits.length === 0 && batch.small.length === 0) return;
    // Encoded once for every member: they all hold this dictionary's state (the Enter
    // gave newcomers the state after the previous batch).
    const bytes = encodeServerMessage(this.#encoder, {
      kind: ServerKind.Events,
      tick: batch.baseTick,
      volleys: batch.volleys,
      hits: batch.hits,
      events: batch.small,
    }, { volleys: this.#volleys });
    for (const m of this.#members.values()) m.peer.sendReliable(bytes);
  }

  /** Adds a tick's events to the batch; returns the transfers they decide. */
  #collect(tick: number, events: readonly SimEvent[]): TransferOrder[] {
    this.#batch ??= { baseTick: tick, volleys: [], hits: [], small: [] };
    const { volleys, hits, small } = this.#batch;
    const orders: TransferOrder[] = [];
    let someoneDied = false;
    for (const e of events) {
      switch (e.type) {
        case "volley":
          volleys.push(e.volley);
          break;
        case "bulletHit":
          // Shots die on the stationary boss identically in every replica: no traffic.
          if (e.target === HitTarget.Boss) break;
          // The event is the record (its type aside): no copy.
          hits.push(e);
          break;
        case "bulletsCleared":
          small.push({ ...e, tick });
          break;
        case "playerHit":
        case "escapeStarted":
        case "escapeCancelled":
        case "waveStarted":
        case "enemySpawned":
        case "enemyKilled":
        case "bossPhase":
          small.push(e);
          break;
        case "playerDied":
          someoneDied = true;
          small.push(e);
          this.#later(TRANSFER_DELAYS.deathReturnTicks, {
            playerId: e.playerId,
            reason: EnterReason.Death,
            to: "hub",
          });
          break;
        case "portalEntered":
          small.push(e);
          orders.push({
            playerId: e.playerId,
            reason: EnterReason.Portal,
            to: "dungeon",
            portal: e.portal,
          });
          break;
        case "escapeCompleted":
          small.push(e);
          orders.push({ playerId: e.playerId, reason: EnterReason.Escape, to: "hub" });
          break;
        case "bossSpawned":
          small.push({ ...e, tick });
          break;
        case "graze": {
          // Only the newest total matters: one per player per batch (found by hand: a
          // callback would be an object per graze, and a boss fight grazes every tick).
          let at = small.length - 1;
          for (; at >= 0; at--) {
            const s = small[at];
            if (s.type === "graze" && s.playerId === e.playerId) break;
          }
          if (at >= 0) small[at] = e;
          else small.push(e);
          break;
        }
        case "telegraph":
          small.push({
            type: "telegraph",
            source: e.source,
            sourceId: e.sourceId,
            emitter: e.emitter,
            style: e.style,
            aim: quantizeAngle(e.aimRad),
            leadTicks: e.leadTicks,
            tick,
          });
          break;
        case "bossDefeated":
          small.push({ ...e, tick });
          this.#endRun(Outcome.Cleared);
          for (const p of this.world.players.values()) {
            if (p.status === "active") {
              this.#later(TRANSFER_DELAYS.resultsReturnTicks, {
                playerId: p.id,
                reason: EnterReason.Cleared,
                to: "hub",
              });
            }
          }
          break;
        default: {
          // Every SimEvent is decided here: a new kind fails the type check until it is.
          const undecided: never = e;
          throw new TypeError(`Cannot send event ${(undecided as SimEvent).type}`);
        }
      }
    }
    // A wipe: the last fighter fell (escapes alone end no run: the rest chose to leave).
    if (someoneDied && this.world.stage !== "cleared" && this.world.countActive() === 0) {
      this.#endRun(Outcome.Wiped);
    }
    return orders;
  }

  /** Schedules a transfer `delay` ticks from now. */
  #later(delay: number, order: TransferOrder): void {
    this.#scheduled.push({ atTick: this.world.tick + delay, order });
  }

  #sendSnapshots(tick: number): void {
    const world = this.world;
    // A crowd: each member gets the ships nearest to its own (the roster counts the rest),
    // so a member's cost stays flat however many share the hub; its snapshots go out on its
    // slot of the interval. Otherwise every member gets the same world.
    const crowded = world.players.size > INTEREST_PLAYERS;
    const players: CrowdShip[] = [];
    const rows: number[][] = [];
    for (const p of world.players.values()) {
      let flags = p.status === "active"
        ? PlayerFlag.Active
        : p.status === "dead"
        ? PlayerFlag.Dead
        : p.status === "escaped"
        ? PlayerFlag.Escaped
        : 0;
      if (p.iframeTicks > 0) flags |= PlayerFlag.Invulnerable;
      if (p.buttons & Button.Fire) flags |= PlayerFlag.Firing;
      if (p.escapeTicks > 0) flags |= PlayerFlag.Channelling;
      if (p.away) flags |= PlayerFlag.Away;
      const row = playerUnits({
        id: p.id,
        x: p.x,
        y: p.y,
        aim: aimToByte(p.aim),
        hp: p.hp,
        flags,
        escape: Math.min(255, Math.round((p.escapeTicks / world.def.player.escapeTicks) * 255)),
      });
      rows.push(row);
      if (crowded) {
        this.#crowdAt.set(p.id, players.length);
        players.push({ id: p.id, x: p.x, y: p.y, row });
      }
    }
    // Every row is in wire units once per tick, however many members get it.
    const enemies = world.enemies.map((e) =>
      enemyUnits({ id: e.id, kind: e.def.id, x: e.x, y: e.y, hp: e.hp })
    );
    const b = world.boss;
    const boss = b
      ? bossUnits({
        bossId: b.def.id,
        hp: b.hp,
        maxHp: b.maxHp,
        phase: b.phase,
        folding: b.foldTicks > 0,
      })
      : null;
    // The enemies in id order once for every member's snapshot; the arrays here are this
    // call's own, so the snapshots take them as they are (sorted in place, not copied).
    sortRows(enemies);
    const shared = { tick, stage: StageCode[world.stage], wave: world.wave, enemies, boss };
    const everyone = crowded ? undefined : unitsFromOwnRows(shared, rows);
    // A crowd's members all ask for their nearest on the same tick: one index for them all,
    // kept from tick to tick (last tick's order by x is nearly this tick's).
    const index = crowded ? this.#nearest : undefined;
    index?.update(players);
    const slot = tick % TICKS_PER_SNAPSHOT;
    // Each member gets the changes since a snapshot it holds: the last one sent on an
    // ordered stream, the newest it acknowledged over datagrams (lost ones never are).
    // Members of a small world with the same baseline share one body: nearly always all of
    // them (the first one's is kept aside; a map only once a second baseline turns up).
    let firstBase: SnapshotUnits | undefined;
    let firstBody: Uint8Array | undefined;
    let bodies: Map<SnapshotUnits | undefined, Uint8Array> | undefined;
    for (const m of this.#members.values()) {
      let units = everyone;
      if (!units) {
        if (m.slot !== slot) continue;
        const at = this.#crowdAt.get(m.id);
        let near: number[][];
        if (at === undefined || players[at]?.id !== m.id) {
          near = nearestPlayers(players, { self: undefined, max: INTEREST_PLAYERS })
            .map((p) => p.row);
        } else {
          const count = index!.nearestIndices(at, INTEREST_PLAYERS);
          const found = index!.found;
          near = new Array(count);
          for (let k = 0; k < count; k++) near[k] = players[found[k]].row;
        }
        units = unitsFromOwnRows(shared, near);
      }
      const acked = m.peer.datagrams || (m.peer.consumeResync?.() ?? false);
      const base = acked ? m.sent.get(m.peer.snapshotAck ?? -1) : m.sent.newest;
      let body: Uint8Array | undefined;
      if (everyone) {
        body = firstBody !== undefined && firstBase === base ? firstBody : bodies?.get(base);
        if (!body) {
          body = encodeSnapshotBody(units, base);
          if (firstBody === undefined) {
            firstBase = base;
            firstBody = body;
          } else {
            (bodies ??= new Map()).set(base, body);
          }
        }
      } else {
        // A crowd member's own rows: a body of its own.
        body = encodeSnapshotBody(units, base);
      }
      const sent = m.peer.sendLatest(
        encodeSnapshot(this.#encoder, {
          tick,
          ackTick: m.queue.lastInputTick,
          lateTicks: m.queue.lateTicks({ reset: false }),
          slackTicks: m.queue.slackTicks({ reset: false }),
          baseTick: base?.tick,
          body,
          epoch: m.peer.datagrams ? (m.peer.epoch ?? 0) & 0xff : undefined,
        }),
        tick,
      );
      if (sent) {
        m.sent.add(units);
        // A skipped snapshot keeps its news of late and early frames for the next one.
        m.queue.lateTicks({ reset: true });
        m.queue.slackTicks({ reset: true });
      }
    }
    index?.release();
  }
}

/** A ship of a crowd, as its members' nearest are found: where it is, and its snapshot row. */
interface CrowdShip {
  readonly id: number;
  readonly x: number;
  readonly y: number;
  readonly row: number[];
}

/** The baselines a member's snapshots are sent against: fewer on an ordered stream. */
function baselinesFor(peer: Peer): SnapshotHistory {
  return new SnapshotHistory(peer.datagrams ? SNAPSHOT_BASELINES : ORDERED_SNAPSHOT_BASELINES);
}

/** Every live bullet's full state, for a client arriving mid-fight. */
export function bulletStates(pool: BulletPool): BulletState[] {
  const out: BulletState[] = [];
  for (let i = 0; i < pool.count; i++) out.push(pool.stateAt(i));
  return out;
}
