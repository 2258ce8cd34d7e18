/**
 * The client's copy of the bullet field: fed by spawn events and early deaths,
 * integrated by the very same BulletPool code the server runs. A volley born on
 * tick T is placed where the server's copy is by running the shared integration
 * for every tick it spent on the wire.
 */
import {
  type ArenaDef,
  BulletPool,
  fastForward,
  spawnVolley,
  stepBullets,
  type Volley,
} from "../sim/mod.ts";
import type { BulletState, HitRecord } from "./protocol.ts";

/** A bullet field that trails or leads the server by any number of ticks. */
export class BulletReplica {
  pool = new BulletPool();
  /** The tick whose end state `pool` holds. */
  tick = 0;
  #arena: ArenaDef;
  #pending: Volley[] = [];
  /** Uids killed before their volley was spawned here. */
  readonly #deadEarly = new Set<number>();

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
    for (const b of opts.bullets ?? []) addBulletState(this.pool, b);
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
    fastForward(this.pool, this.#arena, { from, ticks: this.tick - volley.birthTick });
  }

  /** Removes a bullet that died early on the server (remembered if not spawned here yet). */
  hit(hit: HitRecord): void {
    const slot = this.pool.slotOf(hit.uid);
    if (slot >= 0) this.pool.remove(slot);
    else if (this.#pending.length > 0) this.#deadEarly.add(hit.uid);
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
      if (this.#pending.length === 0) continue;
      const due = this.#pending.filter((v) => v.birthTick <= this.tick);
      if (due.length === 0) continue;
      this.#pending = this.#pending.filter((v) => v.birthTick > this.tick);
      for (const v of due) this.spawn(v);
    }
  }
}

function addBulletState(pool: BulletPool, b: BulletState): void {
  if (pool.count === pool.capacity) pool.grow();
  const i = pool.count++;
  pool.uid[i] = b.uid;
  pool.x[i] = b.x;
  pool.y[i] = b.y;
  pool.dirX[i] = b.dirX;
  pool.dirY[i] = b.dirY;
  pool.speed[i] = b.speed;
  pool.accel[i] = b.accel;
  pool.turnCos[i] = b.turnCos;
  pool.turnSin[i] = b.turnSin;
  pool.radius[i] = b.radius;
  pool.ttl[i] = b.ttl;
  pool.kind[i] = b.kind;
  pool.team[i] = b.team;
  pool.damage[i] = b.damage;
  pool.owner[i] = b.owner;
}
