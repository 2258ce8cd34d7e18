/**
 * SimWorld: one instance of the game (the hub or a dungeon) as plain data.
 * `step(inputs)` advances exactly one tick of 1/60 s and returns what happened.
 * No timers, no I/O, no Math.random: a world is a function of its seed and inputs.
 * Must not import anything outside sim/.
 */
import { BulletPool, spawnVolley, stepBullets } from "./bullets.ts";
import { quantizeAngle, quantizePos } from "./grid.ts";
import type { Volley } from "./bullets.ts";
import {
  armEmitter,
  type EmitterState,
  type FireContext,
  telegraphEmitter,
  tickEmitter,
} from "./emitters.ts";
import { HitTarget, type SimEvent } from "./events.ts";
import { circlesOverlap, outsideSpan } from "./geometry.ts";
import { movePlayer } from "./movement.ts";
import { stepEnemyMotion } from "./enemy_motion.ts";
import { type SeenEnemy, ViewHistory } from "./player_view.ts";
import { Rng } from "./rng.ts";
import { TICK_HZ } from "./time.ts";
import {
  type ArenaDef,
  type BossDef,
  Button,
  type EnemyDef,
  type InputFrame,
  type PlayerTuning,
  Team,
  type WorldDef,
} from "./types.ts";

/** Where a player stands in the flow of the game. Only "active" ships move and get hit. */
export type PlayerStatus = "active" | "dead" | "escaped" | "portal";

/** One ship, owned by the world. */
export interface PlayerState {
  readonly id: number;
  readonly name: string;
  x: number;
  y: number;
  /** Aim in angle units (1/65536 turn). */
  aim: number;
  hp: number;
  status: PlayerStatus;
  iframeTicks: number;
  fireCooldownTicks: number;
  /** Ticks the escape button has been held in a channel; 0 when not channelling. */
  escapeTicks: number;
  /** Buttons of the input applied last tick. */
  buttons: number;
  /**
   * Its player's link is down (the server waits for a resume): the ship holds still,
   * is not hit or aimed at and fires nothing, but is still in the run.
   */
  away: boolean;
  /**
   * How many ticks behind the server its player's view ran, as its latest input said:
   * how far back its shots are judged against what it saw.
   */
  viewLag: number;
}

/** One trash enemy. */
export interface EnemyState {
  readonly id: number;
  readonly def: EnemyDef;
  x: number;
  y: number;
  hp: number;
  /** Drift heading. */
  dirX: number;
  dirY: number;
  /** Which way a distance-keeper circles its target: 1 or -1. */
  readonly strafe: number;
  readonly emitters: EmitterState[];
}

/** The boss of a dungeon once it has appeared. */
export interface BossState {
  readonly def: BossDef;
  readonly maxHp: number;
  hp: number;
  phase: number;
  /** Invulnerable ticks left of the fold between phases. */
  foldTicks: number;
  emitters: EmitterState[];
}

/*
 * The state the step rewrites every tick is made by classes, not object literals. V8 gives
 * object literals with the same keys in the same order one shared chain of hidden classes,
 * and a field's representation lives there: one literal anywhere in the process with an
 * object where a ship has its x (net/wire/decisions.ts has a table of every PlayerState
 * field, in the same order, whose values are objects) makes every ship's x a boxed number,
 * and each move a fresh heap number. A class's instances have hidden classes of their own.
 * Every number field starts as a number (one declared without a value starts as undefined,
 * which boxes it the same way).
 */

/** A ship (see above). */
class Ship implements PlayerState {
  readonly id: number;
  readonly name: string;
  x = 0;
  y = 0;
  aim = quantizeAngle(-Math.PI / 2);
  hp = 0;
  status: PlayerStatus = "active";
  iframeTicks = 0;
  fireCooldownTicks = 0;
  escapeTicks = 0;
  buttons = 0;
  away = false;
  viewLag = 0;

  constructor(o: { id: number; name: string; at: { x: number; y: number }; hp: number }) {
    this.id = o.id;
    this.name = o.name;
    this.x = o.at.x;
    this.y = o.at.y;
    this.hp = o.hp;
  }
}

/** A trash enemy (see above). */
class Enemy implements EnemyState {
  readonly id: number;
  readonly def: EnemyDef;
  x = 0;
  y = 0;
  hp = 0;
  dirX = 0;
  dirY = 0;
  readonly strafe: number;
  readonly emitters: EmitterState[];

  constructor(
    o: { id: number; def: EnemyDef; x: number; y: number; heading: number; strafe: number },
  ) {
    this.id = o.id;
    this.def = o.def;
    this.x = o.x;
    this.y = o.y;
    this.hp = o.def.hp;
    this.dirX = Math.cos(o.heading);
    this.dirY = Math.sin(o.heading);
    this.strafe = o.strafe;
    this.emitters = o.def.emitters.map(armEmitter);
  }
}

/** The boss (see above). */
class Boss implements BossState {
  readonly def: BossDef;
  readonly maxHp: number;
  hp = 0;
  phase = 0;
  foldTicks = 0;
  emitters: EmitterState[];

  constructor(def: BossDef, maxHp: number) {
    this.def = def;
    this.maxHp = maxHp;
    this.hp = maxHp;
    this.emitters = def.phases[0].emitters.map(armEmitter);
  }
}

/**
 * What one player did in this world, kept after they leave it: the results screen
 * lists everyone who took part.
 */
export interface RunStats {
  readonly id: number;
  readonly name: string;
  /** HP taken off enemies and the boss (after phase multipliers). */
  damageDealt: number;
  hitsTaken: number;
  grazes: number;
  /** How their run ended so far: still fighting, fell, escaped, or left the world. */
  status: PlayerStatus | "left";
}

/** Where a dungeon stands: fighting wave `wave`, waiting before it, the boss, or done. */
export type Stage = "hub" | "waves" | "boss" | "cleared";

/** Options for a new world. */
export interface WorldOptions {
  readonly seed: number;
  /** First tick number; a replica starts where its server is. */
  readonly startTick?: number;
  /**
   * Judge contact and player shots by what each player saw (their frames say how old
   * their picture was), reaching at most this far back; 0 or absent: by the truth alone.
   */
  readonly maxRewindTicks?: number;
  /** Ticks between the two samples a client reads enemy headings from (its snapshot interval). */
  readonly viewGapTicks?: number;
  /** Told as each part of a step ends (a bench's clock); a server and a replica run without one. */
  readonly probe?: StepProbe<WorldStepPart>;
}

/** The parts of `SimWorld.step`, in the order they run. */
export const WORLD_STEP_PARTS = [
  "bullets",
  "ships",
  "enemies",
  "history",
  "playerShots",
  "enemyShots",
  "contact",
] as const;
export type WorldStepPart = (typeof WORLD_STEP_PARTS)[number];

/**
 * Hears the end of each part of a step, so a bench can say where a world's tick goes
 * part by part (`deno task server-bench --parts`). The parts are whole passes, a handful
 * a step: the calls are lost beside them, and without a probe each is one test of a field.
 */
export interface StepProbe<Part extends string = string> {
  lap(part: Part): void;
}

/** Grazed uids remembered per player before the dead ones are swept out. */
const GRAZE_MEMORY = 256;

const NEUTRAL_INPUT: Omit<InputFrame, "tick"> = { moveX: 0, moveY: 0, aim: 0, buttons: 0 };

/** A whole game instance: players, enemies, boss, bullets and the rules between them. */
export class SimWorld {
  readonly def: WorldDef;
  readonly bullets = new BulletPool();
  readonly players = new Map<number, PlayerState>();
  readonly enemies: EnemyState[] = [];
  readonly rng: Rng;
  /** Everyone who has played in this world, by player id (see RunStats). */
  readonly stats = new Map<number, RunStats>();
  boss: BossState | undefined;
  /** The tick the next `step` computes. */
  tick: number;
  stage: Stage;
  /** Index of the wave being fought, or the next one while waiting. */
  wave = 0;
  /** Ticks until the next wave or the boss appears; -1 while a fight is on. */
  stageTicks: number;
  #nextUid = 1;
  #nextEnemyId = 1;
  #events: SimEvent[] = [];
  /** Set when the boss changes phase or falls: enemy bullets go once the shots are resolved. */
  #clearEnemyShots = false;
  /** Uids each player has grazed already: a bullet counts once per player. */
  readonly #grazed = new Map<number, Set<number>>();
  /** Recent ticks as snapshots showed them, to rebuild what each player saw. */
  readonly #history: ViewHistory | undefined;
  /** What movePlayer() needs of this world, made once rather than per ship per tick. */
  readonly #moveOpts: { arena: ArenaDef; tuning: PlayerTuning };
  /** The ships enemy shots can hit this tick (reused: filled by each step). */
  readonly #targets: PlayerState[] = [];
  /** The player shots' slots, found each tick (grown with the bullet pool). */
  #shotSlots = new Int32Array(128);
  /**
   * What each player saw, once asked, and the tick it was asked on (a view of undefined:
   * the truth). Stamped rather than cleared each tick: Map.clear() gives an old map a
   * new table in the old generation, garbage that only a full collection takes back.
   */
  readonly #seen = new Map<number, { tick: number; view: Map<number, SeenEnemy> | undefined }>();
  readonly #probe: StepProbe<WorldStepPart> | undefined;

  constructor(def: WorldDef, opts: WorldOptions) {
    this.def = def;
    this.#moveOpts = { arena: def.arena, tuning: def.player };
    this.rng = new Rng(opts.seed);
    this.tick = opts.startTick ?? 0;
    this.stage = def.kind === "hub" ? "hub" : "waves";
    this.stageTicks = def.kind === "hub" ? -1 : def.waveDelayTicks;
    const rewind = opts.maxRewindTicks ?? 0;
    this.#history = rewind > 0
      ? new ViewHistory({ maxRewindTicks: rewind, gapTicks: opts.viewGapTicks ?? 1 })
      : undefined;
    this.#probe = opts.probe;
  }

  /** True while new players may join: the hub always, a dungeon until its boss appears. */
  get acceptsPlayers(): boolean {
    return this.stage === "hub" || this.stage === "waves";
  }

  /** Adds a ship at the next spawn point. */
  addPlayer(id: number, name: string): PlayerState {
    const points = this.def.arena.spawnPoints;
    const at = points[this.players.size % points.length];
    const player = new Ship({ id, name, at, hp: this.def.player.maxHp });
    this.players.set(id, player);
    this.stats.set(id, { id, name, damageDealt: 0, hitsTaken: 0, grazes: 0, status: "active" });
    this.#grazed.set(id, new Set());
    return player;
  }

  /** Removes a ship; its bullets fly on, its stats stay for the results. */
  removePlayer(id: number): void {
    const p = this.players.get(id);
    const stats = this.stats.get(id);
    if (p && stats) stats.status = p.status === "active" ? "left" : p.status;
    this.players.delete(id);
    this.#grazed.delete(id);
    this.#seen.delete(id);
  }

  /**
   * Parks a ship while its player's link is down, or brings it back. Going away ends an
   * escape channel; coming back grants invulnerability (the usual i-frames, or fewer
   * when `iframeTicks` says so), so a player who returns into a bullet field has a
   * moment to see it.
   */
  setAway(id: number, away: boolean, opts: { iframeTicks?: number } = {}): void {
    const p = this.players.get(id);
    if (!p || p.away === away) return;
    p.away = away;
    if (away) {
      p.buttons = 0;
      if (p.escapeTicks > 0 && p.status === "active") {
        p.escapeTicks = 0;
        this.#emit({ type: "escapeCancelled", playerId: p.id, reason: "released" });
      }
    } else if (p.status === "active") {
      const grace = Math.min(opts.iframeTicks ?? Infinity, this.def.player.iframeTicks);
      p.iframeTicks = Math.max(p.iframeTicks, grace);
    }
  }

  /** Active ships left in the world (away ones too: they are still in the run). */
  countActive(): number {
    let n = 0;
    for (const p of this.players.values()) if (p.status === "active") n++;
    return n;
  }

  /**
   * Advances one tick. `inputs` holds the input each player applies on this tick;
   * a player without one stands still. Returns everything that happened.
   */
  step(inputs: ReadonlyMap<number, InputFrame>): SimEvent[] {
    const probe = this.#probe;
    this.#events = [];
    // Bullets already in flight move first: anything born this tick starts at its muzzle.
    stepBullets(this.bullets, this.def.arena);
    probe?.lap("bullets");
    for (const p of this.players.values()) {
      const input = inputs.get(p.id);
      this.#stepPlayer(p, input ?? { ...NEUTRAL_INPUT, aim: p.aim, tick: this.tick });
      if (input) p.viewLag = input.viewLag ?? 0;
    }
    probe?.lap("ships");
    this.#advanceStage();
    this.#stepEnemies();
    this.#stepBoss();
    probe?.lap("enemies");
    this.#remember();
    probe?.lap("history");
    this.#resolvePlayerShots();
    // Cleared after the loop over shots: clearing inside it would reshuffle the slots it walks.
    if (this.#clearEnemyShots) {
      this.#clearEnemyShots = false;
      this.bullets.clearTeam(Team.Enemy);
      this.#emit({ type: "bulletsCleared", team: Team.Enemy });
    }
    probe?.lap("playerShots");
    this.#resolveEnemyShots();
    probe?.lap("enemyShots");
    this.#resolveContact();
    probe?.lap("contact");
    this.tick++;
    return this.#events;
  }

  /** Records this tick as snapshots show it, for rebuilding what players saw. */
  #remember(): void {
    if (!this.#history) return;
    this.#history.record(this.tick, this.enemies, this.players.values());
  }

  /**
   * How far an enemy and a picture of it can be apart: both left the same base at most
   * `maxRewindTicks` ago, each moving at most the enemy's speed a tick.
   */
  #viewDrift(def: EnemyDef): number {
    const m = def.movement;
    const perTick = m.type === "stationary" ? 0 : m.speedPxPerS / TICK_HZ;
    // A few pixels over, for the snapshot grid and a wall pushing an enemy out.
    return 2 * perTick * (this.#history?.maxRewindTicks ?? 0) + 4;
  }

  /** The enemies as player `id` saw them on this tick, or undefined when that is the truth. */
  #seenBy(id: number): Map<number, SeenEnemy> | undefined {
    if (!this.#history) return undefined;
    let seen = this.#seen.get(id);
    if (!seen) {
      seen = { tick: -1, view: undefined };
      this.#seen.set(id, seen);
    }
    if (seen.tick !== this.tick) {
      seen.tick = this.tick;
      seen.view = this.#history.seenBy(id, {
        tick: this.tick,
        lagTicks: this.players.get(id)?.viewLag ?? 0,
        arena: this.def.arena,
      });
    }
    return seen.view;
  }

  #emit(event: SimEvent): void {
    this.#events.push(event);
  }

  #takeUids = (count: number): number => {
    const first = this.#nextUid;
    this.#nextUid = (this.#nextUid + count) >>> 0;
    return first;
  };

  #spawn(volley: Volley): void {
    spawnVolley(this.bullets, volley);
    this.#emit({ type: "volley", volley });
  }

  #stepPlayer(p: PlayerState, input: InputFrame): void {
    if (p.status !== "active" || p.away) return;
    const tuning = this.def.player;
    movePlayer(p, input, this.#moveOpts);
    p.aim = input.aim;
    p.buttons = input.buttons;
    if (p.iframeTicks > 0) p.iframeTicks--;
    if (p.fireCooldownTicks > 0) p.fireCooldownTicks--;

    if (this.stage === "hub") {
      const portals = this.def.portals ?? [];
      for (let i = 0; i < portals.length; i++) {
        const portal = portals[i];
        if (Math.hypot(p.x - portal.x, p.y - portal.y) <= portal.radiusPx) {
          p.status = "portal";
          this.#emit({ type: "portalEntered", playerId: p.id, portal: i });
          break;
        }
      }
      return;
    }

    const escapeHeld = (input.buttons & Button.Escape) !== 0;
    if (escapeHeld) {
      if (p.escapeTicks === 0) this.#emit({ type: "escapeStarted", playerId: p.id });
      p.escapeTicks++;
      if (p.escapeTicks >= tuning.escapeTicks) {
        p.status = "escaped";
        const stats = this.stats.get(p.id);
        if (stats) stats.status = "escaped";
        this.#emit({ type: "escapeCompleted", playerId: p.id });
        return;
      }
    } else if (p.escapeTicks > 0) {
      p.escapeTicks = 0;
      this.#emit({ type: "escapeCancelled", playerId: p.id, reason: "released" });
    }

    // A channelling ship holds its fire; the cooldown is the only rate limit.
    if ((input.buttons & Button.Fire) !== 0 && p.escapeTicks === 0 && p.fireCooldownTicks === 0) {
      p.fireCooldownTicks = tuning.fireCooldownTicks;
      this.#spawn({
        birthTick: this.tick,
        uid0: this.#takeUids(1),
        team: Team.Player,
        owner: p.id,
        spec: tuning.shot,
        speedPxPerS: tuning.shotSpeedPxPerS,
        xs: [quantizePos(p.x)],
        ys: [quantizePos(p.y)],
        angles: [p.aim],
      });
    }
  }

  #advanceStage(): void {
    if (this.stageTicks < 0) return;
    if (this.stageTicks > 0) {
      this.stageTicks--;
      return;
    }
    this.stageTicks = -1;
    const waves = this.def.waves;
    if (this.stage === "waves" && this.wave < waves.length) {
      this.#emit({ type: "waveStarted", wave: this.wave });
      for (const spawn of waves[this.wave]) this.spawnEnemy(spawn.enemy, spawn.x, spawn.y);
      return;
    }
    const bossDef = this.def.boss;
    if (this.stage === "waves" && bossDef) {
      this.stage = "boss";
      const extra = Math.max(0, this.countActive() - 1);
      const maxHp = Math.round(bossDef.baseHp * (1 + bossDef.hpPerExtraPlayer * extra));
      this.boss = new Boss(bossDef, maxHp);
      this.#emit({ type: "bossSpawned", bossId: bossDef.id, maxHp });
      this.#emit({ type: "bossPhase", phase: 0 });
      return;
    }
    this.stage = "cleared";
  }

  /** Puts a trash enemy in the world (waves do this; tools may too). */
  spawnEnemy(def: EnemyDef, x: number, y: number): EnemyState {
    const heading = this.rng.range(0, 2 * Math.PI);
    const enemy = new Enemy({
      id: this.#nextEnemyId++,
      def,
      x,
      y,
      heading,
      strafe: this.rng.next() < 0.5 ? -1 : 1,
    });
    this.enemies.push(enemy);
    this.#emit({ type: "enemySpawned", enemyId: enemy.id, kind: def.id });
    return enemy;
  }

  /** The active ship nearest to (x, y), if any. */
  nearestPlayer(x: number, y: number): PlayerState | undefined {
    let best: PlayerState | undefined;
    let bestD2 = Infinity;
    for (const p of this.players.values()) {
      if (p.status !== "active" || p.away) continue;
      const d2 = (p.x - x) ** 2 + (p.y - y) ** 2;
      if (d2 < bestD2) {
        bestD2 = d2;
        best = p;
      }
    }
    return best;
  }

  #fireContext(x: number, y: number): FireContext {
    return {
      tick: this.tick,
      originX: x,
      originY: y,
      target: this.nearestPlayer(x, y),
      arena: this.def.arena,
      rng: this.rng,
      takeUids: this.#takeUids,
    };
  }

  #stepEnemies(): void {
    const arena = this.def.arena;
    for (const e of this.enemies) {
      stepEnemyMotion(e, { def: e.def, target: this.nearestPlayer(e.x, e.y), arena });
      this.#fire(e.emitters, { x: e.x, y: e.y, source: "enemy", sourceId: e.id });
    }
  }

  /** Warns of and fires one body's emitters for this tick. */
  #fire(
    emitters: readonly EmitterState[],
    from: { x: number; y: number; source: "enemy" | "boss"; sourceId: number },
  ): void {
    const ctx = this.#fireContext(from.x, from.y);
    for (let k = 0; k < emitters.length; k++) {
      const warning = telegraphEmitter(emitters[k], ctx);
      if (warning) {
        this.#emit({
          type: "telegraph",
          source: from.source,
          sourceId: from.sourceId,
          emitter: k,
          ...warning,
        });
      }
      const volley = tickEmitter(emitters[k], ctx);
      if (volley) this.#spawn(volley);
    }
  }

  #stepBoss(): void {
    const boss = this.boss;
    if (!boss || this.stage !== "boss") return;
    if (boss.foldTicks > 0) {
      boss.foldTicks--;
      return;
    }
    this.#fire(boss.emitters, { x: boss.def.x, y: boss.def.y, source: "boss", sourceId: 0 });
  }

  #resolvePlayerShots(): void {
    const pool = this.bullets;
    // Every shot touching the boss this tick dies on it, the ones after the killing shot
    // too: which come after depends on slot order, which replicas do not share.
    const bossUp = this.stage === "boss";
    // The player shots' slots, highest first, listed without a test of each bullet's team
    // (which goes one way or the other bullet by bullet): every slot is written, and the
    // count moves on by the bullet's team, 1 for a player's shot. A shot freed below moves
    // the last bullet into its slot: one already passed, so the list stays good.
    if (this.#shotSlots.length < pool.count) this.#shotSlots = new Int32Array(pool.capacity);
    const slots = this.#shotSlots;
    const team = pool.team;
    const player: 1 = Team.Player;
    let shots = 0;
    for (let i = pool.count - 1; i >= 0; i--) {
      slots[shots] = i;
      shots += team[i] & player;
    }
    for (let at = 0; at < shots; at++) {
      const i = slots[at];
      const x = pool.x[i];
      const y = pool.y[i];
      const r = pool.radius[i];
      const damage = pool.damage[i];
      const boss = this.boss;
      if (boss && bossUp && overlaps(x, y, r, boss.def)) {
        const dealt = boss.hp > 0 ? this.#damageBoss(boss, damage) : 0;
        const shooter = this.stats.get(pool.owner[i]);
        if (shooter) shooter.damageDealt += dealt;
        this.#emit({
          type: "bulletHit",
          uid: pool.uid[i],
          target: HitTarget.Boss,
          targetId: 0,
          damage: dealt,
        });
        pool.remove(i);
        continue;
      }
      for (let k = 0; k < this.enemies.length; k++) {
        const e = this.enemies[k];
        // Where the shooter saw it counts too: the server favours the player. The picture
        // is asked for only near the enemy: it cannot be further off than the rewind lets
        // enemy and picture drift apart.
        let hit = circlesOverlap(x, y, r, e.x, e.y, e.def.radiusPx);
        if (!hit && this.#history) {
          const reach = r + e.def.radiusPx + this.#viewDrift(e.def);
          if (Math.abs(x - e.x) <= reach && Math.abs(y - e.y) <= reach) {
            const s = this.#seenBy(pool.owner[i])?.get(e.id);
            hit = s !== undefined && circlesOverlap(x, y, r, s.x, s.y, e.def.radiusPx);
          }
        }
        if (!hit) continue;
        const shooter = this.stats.get(pool.owner[i]);
        if (shooter) shooter.damageDealt += Math.min(damage, e.hp);
        e.hp -= damage;
        this.#emit({
          type: "bulletHit",
          uid: pool.uid[i],
          target: HitTarget.Enemy,
          targetId: e.id,
          damage,
        });
        pool.remove(i);
        if (e.hp <= 0) this.#killEnemy(k);
        break;
      }
    }
  }

  #killEnemy(index: number): void {
    const [e] = this.enemies.splice(index, 1);
    this.#emit({ type: "enemyKilled", enemyId: e.id });
    if (this.enemies.length === 0 && this.stage === "waves") {
      this.wave++;
      this.stageTicks = this.def.waveDelayTicks;
    }
  }

  /** Applies a hit to the boss; a single hit never skips a phase. Returns damage dealt. */
  #damageBoss(boss: BossState, base: number): number {
    if (boss.foldTicks > 0) return 0;
    const phases = boss.def.phases;
    const next = phases[boss.phase + 1];
    const floor = next ? next.fromHpFrac * boss.maxHp : 0;
    const before = boss.hp;
    boss.hp = Math.max(floor, boss.hp - base * phases[boss.phase].damageTakenMult);
    const dealt = before - boss.hp;
    if (next && boss.hp <= floor) {
      boss.phase++;
      boss.foldTicks = boss.def.foldTicks;
      boss.emitters = next.emitters.map(armEmitter);
      this.#emit({ type: "bossPhase", phase: boss.phase });
      // A clean slate at each phase change: the new pattern reads on an empty screen.
      this.#clearEnemyShots = true;
    } else if (!next && boss.hp <= 0) {
      this.stage = "cleared";
      this.#emit({ type: "bossDefeated" });
      this.#clearEnemyShots = true;
    }
    return dealt;
  }

  /**
   * Enemy shots against ships: one pass over the bullets, each tested against the ships
   * that can be hit (at most a crew's few), rather than a pass over every bullet per ship.
   * A ship takes one hit a tick (its i-frames start): the rest of the pattern passes
   * through; a near miss before that counts as a graze.
   */
  #resolveEnemyShots(): void {
    const targets = this.#targets;
    // Counted, not emptied: emptying an array gives back its slots, and the first push
    // next tick would take new ones (a dungeon's every step).
    let n = 0;
    // The box around the targets' centres: a bullet further out than its graze reach on
    // either axis is out of every target's reach, and is passed over without a distance.
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (const p of this.players.values()) {
      if (p.status === "active" && !p.away && p.iframeTicks <= 0) {
        targets[n++] = p;
        if (p.x < minX) minX = p.x;
        if (p.x > maxX) maxX = p.x;
        if (p.y < minY) minY = p.y;
        if (p.y > maxY) maxY = p.y;
      }
    }
    if (n === 0) return;
    const pool = this.bullets;
    const { x, y, radius, team } = pool;
    const pr = this.def.player.radiusPx;
    const band = this.def.player.grazeBandPx;
    for (let i = pool.count - 1; i >= 0; i--) {
      if (team[i] !== Team.Enemy) continue;
      const bx = x[i];
      const by = y[i];
      const reach = radius[i] + pr;
      const grazeReach = reach + band;
      if (
        outsideSpan(by, minY - grazeReach, maxY + grazeReach) ||
        outsideSpan(bx, minX - grazeReach, maxX + grazeReach)
      ) continue;
      const grazeReach2 = grazeReach * grazeReach;
      for (let k = 0; k < n; k++) {
        const p = targets[k];
        const dx = bx - p.x;
        const dy = by - p.y;
        const d2 = dx * dx + dy * dy;
        if (d2 >= grazeReach2) continue;
        if (d2 >= reach * reach) {
          this.#graze(p, pool.uid[i]);
          continue;
        }
        this.#emit({
          type: "bulletHit",
          uid: pool.uid[i],
          target: HitTarget.Player,
          targetId: p.id,
          damage: pool.damage[i],
        });
        this.#hurtPlayer(p, pool.damage[i]);
        pool.remove(i);
        // Its one hit this tick: no further shot tests it.
        targets[k] = targets[--n];
        if (n === 0) return;
        break;
      }
    }
  }

  #resolveContact(): void {
    const pr = this.def.player.radiusPx;
    for (const p of this.players.values()) {
      if (p.status !== "active" || p.away || p.iframeTicks > 0) continue;
      const boss = this.boss;
      if (boss && this.stage === "boss" && overlaps(p.x, p.y, pr, boss.def)) {
        this.#hurtPlayer(p, boss.def.contactDamage);
        continue;
      }
      for (const e of this.enemies) {
        if (e.def.contactDamage <= 0) continue;
        if (!circlesOverlap(p.x, p.y, pr, e.x, e.y, e.def.radiusPx)) continue;
        // Only if the player saw it touch them too: the server favours the player.
        const seen = this.#seenBy(p.id);
        if (seen) {
          const s = seen.get(e.id);
          if (!s || !circlesOverlap(p.x, p.y, pr, s.x, s.y, e.def.radiusPx)) continue;
        }
        this.#hurtPlayer(p, e.def.contactDamage);
        break;
      }
    }
  }

  /** Counts a near miss once per bullet and player. */
  #graze(p: PlayerState, uid: number): void {
    const seen = this.#grazed.get(p.id);
    const stats = this.stats.get(p.id);
    if (!seen || !stats || seen.has(uid)) return;
    if (seen.size >= GRAZE_MEMORY) this.#forgetDeadGrazes(seen);
    seen.add(uid);
    stats.grazes++;
    this.#emit({ type: "graze", playerId: p.id, total: stats.grazes });
  }

  /** Drops uids of bullets no longer alive, so the memory stays as small as the danger. */
  #forgetDeadGrazes(seen: Set<number>): void {
    const live = new Set<number>();
    const pool = this.bullets;
    for (let i = 0; i < pool.count; i++) live.add(pool.uid[i]);
    for (const uid of seen) if (!live.has(uid)) seen.delete(uid);
  }

  #hurtPlayer(p: PlayerState, damage: number): void {
    const stats = this.stats.get(p.id);
    if (stats) stats.hitsTaken++;
    p.hp = Math.max(0, p.hp - damage);
    p.iframeTicks = this.def.player.iframeTicks;
    this.#emit({ type: "playerHit", playerId: p.id, hp: p.hp });
    if (p.escapeTicks > 0) {
      p.escapeTicks = 0;
      this.#emit({
        type: "escapeCancelled",
        playerId: p.id,
        reason: p.hp === 0 ? "died" : "damage",
      });
    }
    if (p.hp === 0) {
      p.status = "dead";
      if (stats) stats.status = "dead";
      this.#emit({ type: "playerDied", playerId: p.id });
    }
  }
}

function overlaps(x: number, y: number, r: number, body: BossDef): boolean {
  return circlesOverlap(x, y, r, body.x, body.y, body.radiusPx);
}
