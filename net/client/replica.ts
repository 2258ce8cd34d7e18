/**
 * The client's copy of the bullet field: fed by spawn events and early deaths,
 * integrated by the very same BulletPool code the server runs. A volley born on
 * tick T is placed where the server's copy is by running the shared integration
 * for every tick it spent on the wire.
 */
import { BOSSES } from "../../content/mod.ts";
import {
  type ArenaDef,
  BulletPool,
  type BulletState,
  circlesOverlap,
  fastForward,
  spawnVolley,
  stepBullets,
  Team,
  type Volley,
} from "../../sim/mod.ts";
import type { EventsMsg, HitRecord } from "../wire/protocol.ts";

/** A stationary body that consumes player shots on contact (the boss), while it stands. */
interface ShotSink {
  readonly x: number;
  readonly y: number;
  readonly r: number;
  readonly fromTick: number;
  untilTick: number;
}

/** A bullet field that trails or leads the server by any number of ticks. */
export class BulletReplica {
  pool = new BulletPool();
  /** The tick whose end state `pool` holds. */
  tick = 0;
  #arena: ArenaDef;
  #pending: Volley[] = [];
  /** Uids killed before their volley was spawned here. */
  readonly #deadEarly = new Set<number>();
  /** Where the bullets of the last Events message's hits were when they died here (impact sparks). */
  readonly #impacts = new Map<number, { x: number; y: number }>();
  #sink: ShotSink | undefined;
  /** Player shots that died on the boss here, with no message (for traffic figures). */
  sunkTotal = 0;

  constructor(arena: ArenaDef, opts: { tick: number; bullets?: readonly BulletState[] }) {
    this.#arena = arena;
    this.reset(arena, opts);
  }

  /** Starts over in `arena` with the server's bullets as of the end of `tick`. */
  reset(arena: ArenaDef, opts: { tick: number; bullets?: readonly BulletState[] }): void {
    this.#arena = arena;
    this.pool = new BulletPool();
    this.tick = opts.tick;
    this.#pending = [];
    this.#deadEarly.clear();
    this.#sink = undefined;
    for (const b of opts.bullets ?? []) this.pool.add(b);
  }

  /**
   * The boss stands at (x, y) from `fromTick`: player shots touching it die there,
   * exactly as on the server, which therefore sends no hit for them.
   */
  setShotSink(body: { x: number; y: number; r: number }, fromTick: number): void {
    this.#sink = { ...body, fromTick, untilTick: Infinity };
  }

  /** The boss is gone after `tick`. */
  endShotSink(tick: number): void {
    if (this.#sink) this.#sink.untilTick = tick;
  }

  /** Applies one Events message: spawns, early deaths, clears and the boss's arrival and fall. */
  applyEvents(msg: EventsMsg): void {
    this.#impacts.clear();
    /** A clear covers every bullet of its team born up to its tick, earlier ones in this batch too. */
    let cleared: { team: number; tick: number } | undefined;
    for (const e of msg.events) {
      if (e.type === "bossSpawned") {
        const boss = BOSSES[e.bossId];
        if (boss) this.setShotSink({ x: boss.x, y: boss.y, r: boss.radiusPx }, e.tick);
      } else if (e.type === "bossDefeated") {
        this.endShotSink(e.tick);
      } else if (e.type === "bulletsCleared") {
        this.clearTeam(e.team);
        cleared = { team: e.team, tick: e.tick };
      }
    }
    for (const v of msg.volleys) {
      if (cleared && v.team === cleared.team && v.birthTick <= cleared.tick) continue;
      this.spawn(v);
    }
    for (const h of msg.hits) this.hit(h);
  }

  /** Adds a volley: now, fast-forwarded by its flight time, or when the replica reaches its birth tick. */
  spawn(volley: Volley): void {
    if (volley.birthTick > this.tick) {
      this.#pending.push(volley);
      return;
    }
    const from = this.pool.count;
    spawnVolley(this.pool, volley);
    if (this.#deadEarly.size > 0) {
      for (let i = this.pool.count - 1; i >= from; i--) {
        if (this.#deadEarly.delete(this.pool.uid[i])) this.pool.remove(i);
      }
    }
    // The same integration the server ran, one tick at a time, sink included.
    const born = volley.birthTick;
    this.#sinkShots(born, from);
    fastForward(this.pool, this.#arena, {
      from,
      ticks: this.tick - born,
      afterStep: (k) => this.#sinkShots(born + k, from),
    });
  }

  #sinkShots(tick: number, from: number): void {
    const sink = this.#sink;
    if (!sink || tick < sink.fromTick || tick > sink.untilTick) return;
    const pool = this.pool;
    for (let i = pool.count - 1; i >= from; i--) {
      if (pool.team[i] !== Team.Player) continue;
      if (circlesOverlap(pool.x[i], pool.y[i], pool.radius[i], sink.x, sink.y, sink.r)) {
        pool.remove(i);
        this.sunkTotal++;
      }
    }
  }

  /** Removes a bullet that died early on the server (remembered if not spawned here yet). */
  hit(hit: HitRecord): void {
    const slot = this.pool.slotOf(hit.uid);
    if (slot >= 0) {
      this.#impacts.set(hit.uid, { x: this.pool.x[slot], y: this.pool.y[slot] });
      this.pool.remove(slot);
    } else if (this.#pending.length > 0) this.#deadEarly.add(hit.uid);
  }

  /** Where a bullet hit by the last Events message was when the replica removed it. */
  impactOf(uid: number): { x: number; y: number } | undefined {
    return this.#impacts.get(uid);
  }

  /** Removes every bullet of `team`. */
  clearTeam(team: number): void {
    this.pool.clearTeam(team);
    this.#pending = this.#pending.filter((v) => v.team !== team);
  }

  /** Integrates up to the end of `tick`, spawning pending volleys as their birth ticks pass. */
  advanceTo(tick: number): void {
    while (this.tick < tick) {
      this.tick++;
      stepBullets(this.pool, this.#arena);
      const due = this.#pending.filter((v) => v.birthTick <= this.tick);
      if (due.length > 0) {
        this.#pending = this.#pending.filter((v) => v.birthTick > this.tick);
        for (const v of due) this.spawn(v);
      }
      this.#sinkShots(this.tick, 0);
    }
  }
}
