/**
 * The client's copy of the bullet field: fed by spawn events and early deaths,
 * integrated by the very same BulletPool code the server runs. A volley born on
 * tick T is placed where the server's copy is by running the shared integration
 * for every tick it spent on the wire. The local player's own shots are predicted:
 * drawn at the muzzle on the tick they are fired, then matched to the server's
 * volley by owner and birth tick (the tick of the input that fired them), so each
 * is drawn once; a shot the server never fired disappears quietly.
 *
 * A replica may hold only some volleys (`keeps`) and trail the server: the client
 * keeps its allies' shots in one that runs on the ticks their ships are drawn at, so
 * a shot leaves the drawn muzzle; there a hit waits for the end of its batch's ticks
 * (`holdHits`), where the shot has reached what it struck. A volley that reaches such a
 * replica after its birth there (a stall held it back) may start at its muzzle all the
 * same, late, rather than fast-forwarded to mid-flight (`lateFromMuzzle`), and one whose
 * ship is drawn off its muzzle may start at the drawn ship (`muzzleOf`).
 */
import { CONTENT } from "../../content/mod.ts";
import { TICKS_PER_SNAPSHOT } from "../../content/net_tuning.ts";
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

/** A circle player shots die on. */
export interface ShotTarget {
  /** The enemy's id. */
  readonly id: number;
  readonly x: number;
  readonly y: number;
  readonly r: number;
}

/** A player shot that vanished on an enemy as drawn: which, where, and on which enemy. */
export interface ShotStrike {
  /** The bullet's uid here (a predicted shot's own until its volley confirms it). */
  readonly uid: number;
  readonly x: number;
  readonly y: number;
  readonly enemyId: number;
  /** What it would take off the enemy's HP. */
  readonly damage: number;
}

/** A stationary body that consumes player shots on contact (the boss), while it stands. */
interface ShotSink {
  readonly x: number;
  readonly y: number;
  readonly r: number;
  readonly fromTick: number;
  untilTick: number;
}

/**
 * Uids of predicted shots count down from the top of the u32 range: server uids count
 * up from 1 per instance and would need billions of bullets to meet them.
 */
const PREDICTED_UID_TOP = 0xffffffff;

/** Late-started bullets remembered before the gone ones are forgotten (`lateFromMuzzle`). */
const MAX_LATE_REMEMBERED = 64;

/**
 * Ticks over which a shot started at its ship's drawn muzzle, off its volley's path,
 * glides back onto it (`muzzleOf`): a few px a tick across a flight of ~12 px a tick.
 */
const MUZZLE_BLEND_TICKS = 10;

/**
 * How far a volley's muzzle may be from where its ship is drawn before the volley starts
 * at the drawn ship instead (`muzzleOf`): about a frame's motion of a ship, which the
 * drawn ship of the frame before, the one known here, is behind by.
 */
const MUZZLE_OFF_PX = 8;

/**
 * Further than this, the drawn ship is not drifting off the volley's path but somewhere
 * else altogether (drawn before a jump it has not caught up with): the volley keeps its
 * own muzzle rather than sweep across the arena.
 */
const MUZZLE_MAX_OFF_PX = 120;

/** A bullet drawn off its volley's path (from the drawn muzzle), gliding back. */
interface Glide {
  dx: number;
  dy: number;
  ticksLeft: number;
}

/** What became of a predicted own shot (for sounds, flashes and measurements). */
export interface OwnShotNote {
  /** The tick of the input that fired it (its birth tick). */
  readonly tick: number;
  /** Its uid while predicted. */
  readonly uid: number;
  /** "confirmed": the server fired it as `serverUid`; "refused": the server did not fire it. */
  readonly outcome: "predicted" | "confirmed" | "refused";
  readonly serverUid?: number;
}

interface PredictedShot {
  readonly uid: number;
  confirmed: boolean;
}

/** A bullet field that trails or leads the server by any number of ticks. */
export class BulletReplica {
  pool = new BulletPool();
  /** The tick whose end state `pool` holds. */
  tick = 0;
  #arena: ArenaDef;
  /**
   * Volleys not born yet on this replica's timeline, by birth tick (a trailing replica
   * holds every volley of the last few hundred ms here, and after a hidden tab, of
   * minutes: each tick looks at the first only).
   */
  #pending: Volley[] = [];
  /** Uids killed before their volley was spawned here. */
  readonly #deadEarly = new Set<number>();
  /** Where the bullets of the last Events message's hits were when they died here (impact sparks). */
  readonly #impacts = new Map<number, { x: number; y: number }>();
  #sink: ShotSink | undefined;
  /** Player shots that died on the boss here, with no message (for traffic figures). */
  sunkTotal = 0;
  /**
   * The enemies as drawn on a tick (the present timeline): a player shot touching one
   * vanishes there, as the server, judging by what its owner saw, lands the hit.
   */
  shotTargets: ((tick: number) => readonly ShotTarget[]) | undefined;
  /** Volleys born late here, at their muzzle, rather than mid-flight (`lateFromMuzzle`). */
  lateVolleysTotal = 0;
  /** Player shots retired here on a drawn enemy before the server's word came. */
  predictedHitsTotal = 0;
  /** The local player, whose shots are predicted (-1: none). */
  ownerId = -1;
  /** Own shots drawn before the server's volley, by birth tick. */
  readonly #predicted = new Map<number, PredictedShot>();
  #nextPredictedUid = PREDICTED_UID_TOP;
  readonly #onOwnShot: ((note: OwnShotNote) => void) | undefined;
  readonly #onShotSunk: ((x: number, y: number) => void) | undefined;
  readonly #onShotStruck: ((strike: ShotStrike) => void) | undefined;
  readonly #onHeldHit: ((hit: HitRecord, batchTick: number) => void) | undefined;
  readonly #keeps: (volley: Volley) => boolean;
  readonly #holdHits: boolean;
  /** Hits waiting for the replica to reach the last tick they can have happened on. */
  #heldHits: { hit: HitRecord; batchTick: number }[] = [];
  readonly #lateFromMuzzle: boolean;
  /** Bullets started late at their muzzle (`lateFromMuzzle`), by uid: how many ticks late. */
  readonly #late = new Map<number, number>();
  /** Where a volley's owner is drawn (`muzzleOf`). */
  readonly #muzzleOf: ((owner: number) => { x: number; y: number } | undefined) | undefined;
  /** Bullets started at their ship's drawn muzzle, still off their volley's path, by uid. */
  readonly #glides = new Map<number, Glide>();

  constructor(
    arena: ArenaDef,
    opts: {
      tick: number;
      bullets?: readonly BulletState[];
      onOwnShot?: (note: OwnShotNote) => void;
      /** A player shot (anyone's) died on the boss here, at x, y: the hit the boss took. */
      onShotSunk?: (x: number, y: number) => void;
      /** A player shot vanished here on an enemy as drawn (`shotTargets`). */
      onShotStruck?: (strike: ShotStrike) => void;
      /** The volleys this replica holds (default: all); the others are not its to draw. */
      keeps?: (volley: Volley) => boolean;
      /**
       * A replica that trails the server: a hit on a bullet it holds takes the bullet
       * away only once the replica has run every tick of the hit's batch (before that,
       * the bullet has not reached what it struck on this timeline), and is then told
       * to `onHeldHit` (with `impactOf` saying where, if the bullet was still here).
       */
      holdHits?: boolean;
      onHeldHit?: (hit: HitRecord, batchTick: number) => void;
      /**
       * For bullets that are only drawn (allies' shots, which hit nothing of yours): a
       * volley arriving once its birth tick here is drawn is born on the next tick, at its
       * muzzle, instead of being fast-forwarded to where the server has it, and trails the
       * server's by the ticks it was late; a held hit on one of its bullets waits those
       * ticks more, so it lands where that bullet has reached what it struck.
       */
      lateFromMuzzle?: boolean;
      /**
       * Where the owner of a volley is drawn (on the last frame): a volley whose muzzle is
       * more than MUZZLE_OFF_PX from it (the ship moved on while a late volley waited, or
       * is drawn gliding back after a stall) starts there instead, and glides back onto
       * its path over MUZZLE_BLEND_TICKS.
       */
      muzzleOf?: (owner: number) => { x: number; y: number } | undefined;
    },
  ) {
    this.#arena = arena;
    this.#onOwnShot = opts.onOwnShot;
    this.#onShotSunk = opts.onShotSunk;
    this.#onShotStruck = opts.onShotStruck;
    this.#onHeldHit = opts.onHeldHit;
    this.#keeps = opts.keeps ?? (() => true);
    this.#holdHits = opts.holdHits ?? false;
    this.#lateFromMuzzle = opts.lateFromMuzzle ?? false;
    this.#muzzleOf = opts.muzzleOf;
    this.reset(arena, opts);
  }

  /** Starts over in `arena` with the server's bullets as of the end of `tick`. */
  reset(arena: ArenaDef, opts: { tick: number; bullets?: readonly BulletState[] }): void {
    this.#arena = arena;
    this.pool = new BulletPool();
    this.tick = opts.tick;
    this.#pending = [];
    this.#deadEarly.clear();
    this.#heldHits = [];
    this.#late.clear();
    this.#glides.clear();
    this.#sink = undefined;
    this.#predicted.clear();
    for (const b of opts.bullets ?? []) this.pool.add(b);
  }

  /**
   * Draws an own shot the server has not fired yet, born on `tick` (default: this one;
   * the server spawns after moving bullets, so it is not integrated until the next). An
   * earlier tick (a replay found a shot the first prediction missed) is fast-forwarded.
   */
  predict(volley: Omit<Volley, "uid0" | "birthTick" | "owner" | "team">, tick = this.tick): void {
    if (this.#predicted.has(tick) || tick > this.tick) return;
    const n = volley.angles.length;
    const uid0 = this.#nextPredictedUid - n + 1;
    this.#nextPredictedUid -= n;
    this.#predicted.set(tick, { uid: uid0, confirmed: false });
    const from = this.pool.count;
    spawnVolley(this.pool, {
      ...volley,
      uid0,
      birthTick: tick,
      owner: this.ownerId,
      team: Team.Player,
    });
    this.#sinkShots(tick, from, tick === this.tick);
    fastForward(this.pool, this.#arena, {
      from,
      ticks: this.tick - tick,
      afterStep: (k) => this.#sinkShots(tick + k, from, tick + k === this.tick),
    });
    this.#onOwnShot?.({ tick, uid: uid0, outcome: "predicted" });
  }

  /** True when an own shot was predicted on `tick` and not yet settled. */
  predictedAt(tick: number): boolean {
    const p = this.#predicted.get(tick);
    return p !== undefined && !p.confirmed;
  }

  /** Takes back the shot predicted on `tick` (a replay found the server cannot fire it). */
  unpredict(tick: number): void {
    const p = this.#predicted.get(tick);
    if (!p || p.confirmed) return;
    this.#predicted.delete(tick);
    this.#removeUid(p.uid);
    this.#onOwnShot?.({ tick, uid: p.uid, outcome: "refused" });
  }

  /** Takes back every shot predicted after `tick` (the ship stopped fighting then). */
  unpredictAfter(tick: number): void {
    for (const t of [...this.#predicted.keys()]) if (t > tick) this.unpredict(t);
  }

  /**
   * Everything the server did up to `tick` has arrived (a snapshot of it came after
   * its events): own shots predicted by then and never fired there disappear quietly.
   */
  settle(tick: number): void {
    for (const [t, p] of this.#predicted) {
      if (t > tick) continue;
      this.#predicted.delete(t);
      if (p.confirmed) continue;
      this.#removeUid(p.uid);
      this.#onOwnShot?.({ tick: t, uid: p.uid, outcome: "refused" });
    }
  }

  #removeUid(uid: number): void {
    const slot = this.pool.slotOf(uid);
    if (slot >= 0) this.pool.remove(slot);
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

  /**
   * Applies one Events message: spawns, early deaths, clears and the boss's arrival and
   * fall. Returns the hits held for later (`holdHits`), which `onHeldHit` will report.
   */
  applyEvents(msg: EventsMsg): readonly HitRecord[] {
    this.#impacts.clear();
    /** A clear covers every bullet of its team born up to its tick, earlier ones in this batch too. */
    let cleared: { team: number; tick: number } | undefined;
    for (const e of msg.events) {
      if (e.type === "bossSpawned") {
        const boss = CONTENT.bosses[e.bossId];
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
      if (!this.#keeps(v)) continue;
      if (this.#lateFromMuzzle && v.birthTick <= this.tick) {
        // Its birth here is drawn already: born on the next tick drawn, at the muzzle, it
        // flies the server's path the ticks it was late behind.
        const reborn = { ...v, birthTick: this.tick + 1 };
        this.lateVolleysTotal++;
        // Known before it is born: a hit on it may come with it, or before its birth here.
        this.#noteLate(reborn, reborn.birthTick - v.birthTick);
        this.spawn(reborn);
        continue;
      }
      this.spawn(v);
    }
    if (!this.#holdHits) {
      for (const h of msg.hits) this.hit(h);
      return [];
    }
    const held = msg.hits.filter((h) => this.#holds(h.uid));
    for (const hit of held) this.#heldHits.push({ hit, batchTick: msg.tick });
    if (held.length > 0) this.#landHeldHits();
    return held;
  }

  /** Adds a volley: now, fast-forwarded by its flight time, or when the replica reaches its birth tick. */
  spawn(volley: Volley): void {
    if (volley.birthTick > this.tick) {
      // Events come in tick order: a volley almost always goes last.
      let at = this.#pending.length;
      while (at > 0 && this.#pending[at - 1].birthTick > volley.birthTick) at--;
      this.#pending.splice(at, 0, volley);
      return;
    }
    if (volley.owner === this.ownerId && volley.team === Team.Player && !this.#confirm(volley)) {
      return;
    }
    const from = this.pool.count;
    spawnVolley(this.pool, volley);
    if (this.#deadEarly.size > 0) {
      for (let i = this.pool.count - 1; i >= from; i--) {
        if (this.#deadEarly.delete(this.pool.uid[i])) this.pool.remove(i);
      }
    }
    // Only a volley born now is at a muzzle: a fast-forwarded one is in flight already.
    if (this.#muzzleOf && volley.birthTick === this.tick) this.#fromMuzzle(volley, from);
    // The same integration the server ran, one tick at a time, sink included.
    const born = volley.birthTick;
    this.#sinkShots(born, from);
    fastForward(this.pool, this.#arena, {
      from,
      ticks: this.tick - born,
      afterStep: (k) => this.#sinkShots(born + k, from),
    });
  }

  /** Remembers the bullets of `volley` as born `ticks` late. */
  #noteLate(volley: Volley, ticks: number): void {
    const late = this.#late;
    // Bullets die here without a word (their time, the arena's edge, the boss): forget
    // those once the memory is more than a few ticks of volleys.
    if (late.size >= MAX_LATE_REMEMBERED) {
      for (const uid of late.keys()) if (!this.#holds(uid)) late.delete(uid);
    }
    for (let b = 0; b < volley.angles.length; b++) late.set((volley.uid0 + b) >>> 0, ticks);
  }

  /**
   * Moves a volley's bullets (slots [from, count), just born) to its owner's drawn muzzle
   * when that is off theirs, and has them glide back onto the volley's path.
   */
  #fromMuzzle(volley: Volley, from: number): void {
    const muzzle = this.#muzzleOf?.(volley.owner);
    if (!muzzle || from >= this.pool.count) return;
    const pool = this.pool;
    // The volley's first bullet left where its ship was when it fired.
    const dx = muzzle.x - pool.x[from];
    const dy = muzzle.y - pool.y[from];
    const off2 = dx * dx + dy * dy;
    if (off2 <= MUZZLE_OFF_PX ** 2 || off2 > MUZZLE_MAX_OFF_PX ** 2) return;
    for (let i = from; i < pool.count; i++) {
      pool.x[i] += dx;
      pool.y[i] += dy;
      this.#glides.set(pool.uid[i], { dx, dy, ticksLeft: MUZZLE_BLEND_TICKS });
    }
  }

  /** One tick of every glide: a share of what is left of each offset is taken back. */
  #glide(): void {
    const pool = this.pool;
    for (const [uid, g] of this.#glides) {
      const slot = pool.slotOf(uid);
      if (slot < 0) {
        this.#glides.delete(uid);
        continue;
      }
      const mx = g.dx / g.ticksLeft;
      const my = g.dy / g.ticksLeft;
      pool.x[slot] -= mx;
      pool.y[slot] -= my;
      g.dx -= mx;
      g.dy -= my;
      if (--g.ticksLeft === 0) this.#glides.delete(uid);
    }
  }

  /**
   * Matches the server's volley to the shot predicted on its birth tick. The predicted
   * copy gives way to the server's, fast-forwarded by the shared integration (the same
   * place when the prediction was right). False when the predicted shot already died
   * here (on the boss, a wall): the server's copy must not come back.
   */
  #confirm(volley: Volley): boolean {
    const p = this.#predicted.get(volley.birthTick);
    if (!p || p.confirmed) return true;
    p.confirmed = true;
    this.#onOwnShot?.({
      tick: volley.birthTick,
      uid: p.uid,
      outcome: "confirmed",
      serverUid: volley.uid0,
    });
    const slot = this.pool.slotOf(p.uid);
    if (slot < 0) return false;
    this.pool.remove(slot);
    return true;
  }

  /**
   * Player shots in slots [from, count) that end `tick` on the boss die there; with
   * `targets`, those on an enemy drawn on that tick too (only the present is drawn).
   */
  #sinkShots(tick: number, from: number, targets = false): void {
    // No bullet to test: the drawn enemies are not even asked for (most ticks, in a
    // replica of allies' shots).
    if (this.pool.count <= from) return;
    const sink = this.#sink;
    const onBoss = sink !== undefined && tick >= sink.fromTick && tick <= sink.untilTick;
    const enemies = targets ? this.shotTargets?.(tick) ?? [] : [];
    if (!onBoss && enemies.length === 0) return;
    const pool = this.pool;
    for (let i = pool.count - 1; i >= from; i--) {
      if (pool.team[i] !== Team.Player) continue;
      const x = pool.x[i];
      const y = pool.y[i];
      const r = pool.radius[i];
      if (onBoss && circlesOverlap(x, y, r, sink.x, sink.y, sink.r)) {
        pool.remove(i);
        this.sunkTotal++;
        this.#onShotSunk?.(x, y);
        continue;
      }
      for (const e of enemies) {
        if (!circlesOverlap(x, y, r, e.x, e.y, e.r)) continue;
        const uid = pool.uid[i];
        const damage = pool.damage[i];
        pool.remove(i);
        this.predictedHitsTotal++;
        this.#onShotStruck?.({ uid, x, y, enemyId: e.id, damage });
        break;
      }
    }
  }

  /**
   * Removes a bullet that died early on the server (remembered if its volley is still
   * waiting for its birth tick here; forgotten if this replica does not hold it).
   */
  hit(hit: HitRecord): void {
    const slot = this.pool.slotOf(hit.uid);
    if (slot >= 0) {
      this.#impacts.set(hit.uid, { x: this.pool.x[slot], y: this.pool.y[slot] });
      this.pool.remove(slot);
    } else if (this.#pendingHolds(hit.uid)) this.#deadEarly.add(hit.uid);
  }

  /** Whether bullet `uid` is here or waiting here for its birth tick. */
  #holds(uid: number): boolean {
    return this.pool.slotOf(uid) >= 0 || this.#pendingHolds(uid);
  }

  #pendingHolds(uid: number): boolean {
    for (const v of this.#pending) if (((uid - v.uid0) >>> 0) < v.angles.length) return true;
    return false;
  }

  /**
   * Takes away the bullets of held hits whose batch this replica has now run through (a
   * batch's events happened on its first tick or the two after it), oldest first.
   */
  #landHeldHits(): void {
    const due: { hit: HitRecord; batchTick: number }[] = [];
    const waiting: typeof due = [];
    for (const h of this.#heldHits) {
      const late = this.#late.get(h.hit.uid) ?? 0;
      (h.batchTick + TICKS_PER_SNAPSHOT - 1 + late <= this.tick ? due : waiting).push(h);
    }
    if (due.length === 0) return;
    this.#heldHits = waiting;
    this.#impacts.clear();
    for (const h of due) {
      this.#late.delete(h.hit.uid);
      this.hit(h.hit);
      this.#onHeldHit?.(h.hit, h.batchTick);
    }
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
      if (this.#glides.size > 0) this.#glide();
      const pending = this.#pending;
      if (pending.length > 0 && pending[0].birthTick <= this.tick) {
        let n = 1;
        while (n < pending.length && pending[n].birthTick <= this.tick) n++;
        for (const v of pending.splice(0, n)) this.spawn(v);
      }
      this.#sinkShots(this.tick, 0, true);
      if (this.#heldHits.length > 0) this.#landHeldHits();
    }
  }
}
