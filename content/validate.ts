/**
 * Load-time checks of the whole registry: every number a volley carries is on the
 * wire grid (sim/grid.ts), every number a snapshot or event carries fits its field,
 * every id is its index, every reference (portal target, bullet kind, wave enemy,
 * boss) resolves, and every range makes sense. Each problem names the object and
 * the field: `bosses[0] "The Warden of the Fold".phases[1] "Crease".emitters[2]
 * (ring).bullet.turnRadPerS: 0.349… rad/s is not a multiple of 1/1000 …`.
 * Imports only sim/.
 */
import {
  type ArenaDef,
  type BulletSpec,
  type EmitterDef,
  GRID,
  type Grid,
  type MovementDef,
  offGrid,
  type PlayerTuning,
  TELEGRAPH_STYLES,
} from "../sim/mod.ts";
import type { BossContent, BulletLayer, Content, EnemyContent, WorldContent } from "./types.ts";

/** Thrown at load when the content is not shippable; lists every problem. */
export class ContentError extends Error {
  override name = "ContentError";
  constructor(readonly problems: readonly string[]) {
    super(`Content is invalid:\n  ${problems.join("\n  ")}`);
  }
}

/** Most of anything the wire names by a u8 index (worlds, bosses, enemy and bullet kinds). */
const MAX_U8_IDS = 256;
/** Snapshots carry a ship's HP in a u8 and an enemy's in a u16; events carry ids as u16. */
const MAX_PLAYER_HP = 0xff;
const MAX_ENEMY_HP = 0xffff;
/** Boss HP travels as a uint32, for up to four players. */
const MAX_BOSS_HP = 0xffffffff;
const MAX_PLAYERS = 4;
/** A volley's bullet count is a u8. */
const MAX_VOLLEY = 255;
const COLOR = /^(#[0-9a-fA-F]{6}|(rgba|hsla)\([^()]*\))$/;
const KEY = /^[a-z][a-z0-9-]*$/;
const BULLET_SHAPES = new Set(["bolt", "circle", "needle", "block", "dot"]);

/** Collects problems, each under the path of the object it is about. */
class Report {
  readonly problems: string[] = [];

  add(path: string, field: string, problem: string): void {
    this.problems.push(`${path}.${field}: ${problem}`);
  }

  grid(path: string, field: string, value: number, grid: Grid): void {
    const why = offGrid(value, grid);
    if (why) this.add(path, field, why);
  }

  int(path: string, field: string, value: number, range: readonly [number, number]): void {
    if (!Number.isInteger(value) || value < range[0] || value > range[1]) {
      this.add(path, field, `${value} is not a whole number in [${range[0]}, ${range[1]}]`);
    }
  }

  num(path: string, field: string, value: number, range: readonly [number, number]): void {
    if (
      typeof value !== "number" || !Number.isFinite(value) || value < range[0] || value > range[1]
    ) {
      this.add(path, field, `${value} is outside [${range[0]}, ${range[1]}]`);
    }
  }

  positive(path: string, field: string, value: number): void {
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      this.add(path, field, `${value} is not a positive number`);
    }
  }

  text(path: string, field: string, value: unknown): void {
    if (typeof value !== "string" || value.trim() === "") this.add(path, field, "needs some text");
  }

  /** An `id` that must be the entry's place in its list: the wire names `what` by place. */
  place(path: string, opts: { id: number; index: number; what: string }): void {
    if (opts.id !== opts.index) {
      this.add(
        path,
        "id",
        `${opts.id}, but it is entry ${opts.index}: the wire names ${opts.what} by place`,
      );
    }
  }

  /** A `#rrggbb` colour (the renderer derives glows and translucent fills from it). */
  hex(path: string, field: string, value: unknown): void {
    if (typeof value !== "string" || !/^#[0-9a-fA-F]{6}$/.test(value)) {
      this.add(path, field, `${String(value)} is not #rrggbb`);
    }
  }

  color(path: string, field: string, value: unknown): void {
    if (typeof value !== "string" || !COLOR.test(value)) {
      this.add(path, field, `${String(value)} is not #rrggbb, rgba(…) or hsla(…)`);
    }
  }
}

/** Every problem with `content`; empty when it can ship. */
export function validateContent(content: Content): string[] {
  const r = new Report();
  const keys = new Set<string>();
  content.worlds.forEach((w, i) => {
    if (keys.has(w.key)) r.add(`worlds[${i}]`, "key", `"${w.key}" is used twice`);
    keys.add(w.key);
  });
  if (content.worlds.length > MAX_U8_IDS) r.add("content", "worlds", "more than 256");
  if (content.bosses.length > MAX_U8_IDS) r.add("content", "bosses", "more than 256");
  if (content.enemies.length > MAX_U8_IDS) r.add("content", "enemies", "more than 256");
  if (content.bulletKinds.length > MAX_U8_IDS) r.add("content", "bulletKinds", "more than 256");
  const home = content.worlds.find((w) => w.key === content.home);
  if (!home) r.add("content", "home", `"${content.home}" is not a world`);
  else if (home.kind !== "hub") r.add("content", "home", `"${content.home}" is not a hub`);
  for (const f of ["title", "kicker", "lede"] as const) r.text("game", f, content.game[f]);
  r.hex("ships", "self", content.ships.self);
  if (content.ships.allies.length === 0) r.add("ships", "allies", "needs a colour");
  content.ships.allies.forEach((c, i) => r.color("ships", `allies[${i}]`, c));

  content.bulletKinds.forEach((k, i) => {
    const path = `bulletKinds[${i}] "${k.name}"`;
    r.place(path, { id: k.id, index: i, what: "kinds" });
    r.text(path, "name", k.name);
    r.num(path, "z", k.z, [-1000, 1000]);
    checkLayers(r, path, "layers", k.layers);
    if (k.allyLayers) checkLayers(r, path, "allyLayers", k.allyLayers);
  });
  const ctx = { r, kinds: content.bulletKinds.length };
  content.enemies.forEach((e, i) => checkEnemy(ctx, { enemy: e, index: i }));
  content.bosses.forEach((b, i) => checkBoss(ctx, { boss: b, index: i }));
  content.worlds.forEach((w, i) => checkWorld(ctx, { world: w, index: i, content, keys }));
  return r.problems;
}

/** Throws ContentError listing every problem, or returns `content` unchanged. */
export function checkedContent<C extends Content>(content: C): C {
  const problems = validateContent(content);
  if (problems.length > 0) throw new ContentError(problems);
  return content;
}

interface Ctx {
  readonly r: Report;
  /** How many bullet kinds there are: a spec's kind must be below. */
  readonly kinds: number;
}

function checkLayers(r: Report, path: string, field: string, layers: readonly BulletLayer[]) {
  if (layers.length === 0) r.add(path, field, "needs at least one layer");
  layers.forEach((l, i) => {
    const at = `${field}[${i}]`;
    if (!BULLET_SHAPES.has(l.shape)) r.add(path, `${at}.shape`, `"${l.shape}" is not a shape`);
    r.color(path, `${at}.color`, l.color);
    r.positive(path, `${at}.scale`, l.scale);
  });
}

function checkSpec(ctx: Ctx, path: string, spec: BulletSpec): void {
  const { r } = ctx;
  for (
    const field of [
      "kind",
      "radiusPx",
      "ttlTicks",
      "accelPxPerS2",
      "turnRadPerS",
      "damage",
    ] as const
  ) {
    r.grid(path, field, spec[field], GRID[field]);
  }
  if (Number.isInteger(spec.kind) && spec.kind >= ctx.kinds) {
    r.add(path, "kind", `${spec.kind} is not a bullet kind (there are ${ctx.kinds})`);
  }
}

function checkEmitter(ctx: Ctx, path: string, em: EmitterDef): void {
  const { r } = ctx;
  checkSpec(ctx, `${path}.bullet`, em.bullet);
  r.grid(path, "speedPxPerS", em.speedPxPerS, GRID.speedPxPerS);
  r.int(path, "periodTicks", em.periodTicks, [1, 1_000_000]);
  if (em.startDelayTicks !== undefined) {
    r.int(path, "startDelayTicks", em.startDelayTicks, [0, 1_000_000]);
  }
  if (em.telegraph) {
    if (!(TELEGRAPH_STYLES as readonly string[]).includes(em.telegraph.style)) {
      r.add(path, "telegraph.style", `"${em.telegraph.style}" is not ${TELEGRAPH_STYLES}`);
    }
    r.int(path, "telegraph.leadTicks", em.telegraph.leadTicks, [1, 0xffff]);
  }
  switch (em.type) {
    case "ring":
      r.int(path, "count", em.count, [1, MAX_VOLLEY]);
      if (em.rotateRad !== undefined) r.num(path, "rotateRad", em.rotateRad, [-100, 100]);
      return;
    case "aimedSpread":
      r.int(path, "count", em.count, [1, MAX_VOLLEY]);
      r.num(path, "spreadRad", em.spreadRad, [0, 2 * Math.PI]);
      return;
    case "wallGap":
      if (!["rows", "columns", "alternate"].includes(em.orientation)) {
        r.add(path, "orientation", `"${em.orientation}" is not rows, columns or alternate`);
      }
      r.positive(path, "gapPx", em.gapPx);
      r.positive(path, "spacingPx", em.spacingPx);
      return;
    case "arcSweep":
      r.num(path, "arcRad", em.arcRad, [Number.MIN_VALUE, 100]);
      r.num(path, "centerRad", em.centerRad, [-100, 100]);
      r.num(path, "sweepRadPerS", em.sweepRadPerS, [-1000, 1000]);
      if (em.direction !== 1 && em.direction !== -1) r.add(path, "direction", "must be 1 or -1");
      if (em.arms !== undefined) r.int(path, "arms", em.arms, [1, MAX_VOLLEY]);
      return;
    default:
      r.add(path, "type", `"${(em as { type: unknown }).type}" is not an emitter`);
  }
}

function checkMovement(r: Report, path: string, m: MovementDef): void {
  if (m.type === "stationary") return;
  r.num(path, "movement.speedPxPerS", m.speedPxPerS, [0, 10_000]);
  if (m.type === "keepDistance") r.positive(path, "movement.distancePx", m.distancePx);
}

function checkEnemy(ctx: Ctx, opts: { enemy: EnemyContent; index: number }): void {
  const { r } = ctx;
  const e = opts.enemy;
  const path = `enemies[${opts.index}] "${e.name}"`;
  r.place(path, { id: e.id, index: opts.index, what: "enemies" });
  r.text(path, "name", e.name);
  r.num(path, "hp", e.hp, [Number.MIN_VALUE, MAX_ENEMY_HP]);
  r.positive(path, "radiusPx", e.radiusPx);
  r.int(path, "contactDamage", e.contactDamage, [0, MAX_PLAYER_HP]);
  checkMovement(r, path, e.movement);
  e.emitters.forEach((em, i) => checkEmitter(ctx, `${path}.emitters[${i}] (${em.type})`, em));
  r.color(path, "look.fill", e.look.fill);
  r.color(path, "look.stroke", e.look.stroke);
  if (e.look.shape === "star") {
    r.int(path, "look.points", e.look.points, [2, 64]);
    r.positive(path, "look.outer", e.look.outer);
    r.positive(path, "look.inner", e.look.inner);
    r.num(path, "look.spinRadPerS", e.look.spinRadPerS, [-100, 100]);
  } else if (e.look.shape === "polygon") {
    r.int(path, "look.sides", e.look.sides, [3, 64]);
  } else if (e.look.shape !== "arrow") {
    r.add(
      path,
      "look.shape",
      `"${(e.look as { shape: unknown }).shape}" is not star, polygon or arrow`,
    );
  }
}

function checkBoss(ctx: Ctx, opts: { boss: BossContent; index: number }): void {
  const { r } = ctx;
  const b = opts.boss;
  const path = `bosses[${opts.index}] "${b.name}"`;
  r.place(path, { id: b.id, index: opts.index, what: "bosses" });
  r.text(path, "name", b.name);
  r.num(path, "x", b.x, [0, GRID.posPx.max]);
  r.num(path, "y", b.y, [0, GRID.posPx.max]);
  r.positive(path, "radiusPx", b.radiusPx);
  r.positive(path, "baseHp", b.baseHp);
  r.num(path, "hpPerExtraPlayer", b.hpPerExtraPlayer, [0, 100]);
  const fullHp = Math.round(b.baseHp * (1 + b.hpPerExtraPlayer * (MAX_PLAYERS - 1)));
  if (fullHp > MAX_BOSS_HP) {
    r.add(path, "baseHp", `${fullHp} HP with four players overflows the wire`);
  }
  r.int(path, "contactDamage", b.contactDamage, [0, MAX_PLAYER_HP]);
  r.int(path, "foldTicks", b.foldTicks, [0, 1_000_000]);
  if (b.phases.length === 0 || b.phases.length > MAX_U8_IDS) {
    r.add(path, "phases", `${b.phases.length} phases; 1–256 are allowed`);
  }
  b.phases.forEach((phase, i) => {
    const at = `${path}.phases[${i}] "${phase.name}"`;
    r.text(at, "name", phase.name);
    if (i === 0 && phase.fromHpFrac !== 1) r.add(at, "fromHpFrac", "the first phase starts at 1");
    r.num(at, "fromHpFrac", phase.fromHpFrac, [Number.MIN_VALUE, 1]);
    if (i > 0 && !(phase.fromHpFrac < b.phases[i - 1].fromHpFrac)) {
      r.add(at, "fromHpFrac", `${phase.fromHpFrac} does not fall below the phase before`);
    }
    r.num(at, "damageTakenMult", phase.damageTakenMult, [Number.MIN_VALUE, 100]);
    phase.emitters.forEach((em, k) => checkEmitter(ctx, `${at}.emitters[${k}] (${em.type})`, em));
  });
  const look = b.look;
  if (look.phaseColors.length < b.phases.length) {
    r.add(
      path,
      "look.phaseColors",
      `${look.phaseColors.length} colours for ${b.phases.length} phases`,
    );
  }
  look.phaseColors.forEach((c, i) => r.hex(path, `look.phaseColors[${i}]`, c));
  r.color(path, "look.fill", look.fill);
  r.int(path, "look.body.points", look.body.points, [2, 64]);
  r.num(path, "look.body.inner", look.body.inner, [Number.MIN_VALUE, 1]);
  r.num(path, "look.body.spinRadPerS", look.body.spinRadPerS, [-100, 100]);
  r.int(path, "look.core.sides", look.core.sides, [3, 64]);
  r.num(path, "look.core.scale", look.core.scale, [Number.MIN_VALUE, 1]);
  r.num(path, "look.core.spinRadPerS", look.core.spinRadPerS, [-100, 100]);
  r.text(path, "words.stirs", b.words.stirs);
  r.text(path, "words.awakens", b.words.awakens);
  r.text(path, "words.defeated.title", b.words.defeated.title);
  r.text(path, "words.defeated.sub", b.words.defeated.sub);
}

function inside(arena: ArenaDef, p: { x: number; y: number }, marginPx = 0): boolean {
  return p.x >= marginPx && p.y >= marginPx && p.x <= arena.widthPx - marginPx &&
    p.y <= arena.heightPx - marginPx;
}

function checkPlayer(ctx: Ctx, path: string, p: PlayerTuning): void {
  const { r } = ctx;
  r.positive(path, "radiusPx", p.radiusPx);
  r.positive(path, "speedPxPerS", p.speedPxPerS);
  r.int(path, "maxHp", p.maxHp, [1, MAX_PLAYER_HP]);
  r.int(path, "iframeTicks", p.iframeTicks, [0, 1_000_000]);
  r.int(path, "fireCooldownTicks", p.fireCooldownTicks, [1, 1_000_000]);
  r.int(path, "escapeTicks", p.escapeTicks, [1, 1_000_000]);
  r.grid(path, "shotSpeedPxPerS", p.shotSpeedPxPerS, GRID.speedPxPerS);
  checkSpec(ctx, `${path}.shot`, p.shot);
}

function checkWorld(
  ctx: Ctx,
  opts: { world: WorldContent; index: number; content: Content; keys: ReadonlySet<string> },
): void {
  const { r } = ctx;
  const { world: w, content } = opts;
  const path = `worlds[${opts.index}] "${w.key}"`;
  if (!KEY.test(w.key)) r.add(path, "key", `"${w.key}" is not lower-case letters, digits and -`);
  if (w.kind !== "hub" && w.kind !== "dungeon") {
    r.add(path, "kind", `"${w.kind}" is not hub or dungeon`);
  }
  r.text(path, "name", w.name);
  const arena = w.arena;
  r.num(path, "arena.widthPx", arena.widthPx, [1, GRID.posPx.max]);
  r.num(path, "arena.heightPx", arena.heightPx, [1, GRID.posPx.max]);
  arena.walls.forEach((wall, i) => {
    const at = `arena.walls[${i}]`;
    if (!(wall.w > 0 && wall.h > 0)) r.add(path, at, "needs a positive width and height");
    if (!inside(arena, wall) || !inside(arena, { x: wall.x + wall.w, y: wall.y + wall.h })) {
      r.add(path, at, "is not inside the arena");
    }
  });
  if (arena.spawnPoints.length === 0) r.add(path, "arena.spawnPoints", "needs a spawn point");
  arena.spawnPoints.forEach((s, i) => {
    if (!inside(arena, s, w.player.radiusPx)) {
      r.add(path, `arena.spawnPoints[${i}]`, `(${s.x}, ${s.y}) is not inside the arena`);
    }
  });
  checkPlayer(ctx, `${path}.player`, w.player);
  if (w.kind === "dungeon" && w.portals.length > 0) {
    r.add(path, "portals", "portals only open in a hub");
  }
  if (w.portals.length > MAX_U8_IDS) r.add(path, "portals", "more than 256");
  w.portals.forEach((p, i) => {
    const at = `${path}.portals[${i}]`;
    if (!inside(arena, p)) r.add(at, "x", `(${p.x}, ${p.y}) is not inside the arena`);
    r.positive(at, "radiusPx", p.radiusPx);
    if (!opts.keys.has(p.to)) r.add(at, "to", `"${p.to}" is not a world`);
    else if (p.to === w.key) r.add(at, "to", "leads back into its own world");
    r.text(at, "label", p.label);
    r.num(at, "hue", p.hue, [0, 360]);
  });
  for (const f of ["floor", "grid", "border", "wallFill", "wallStroke", "wallInner"] as const) {
    r.color(path, `look.${f}`, w.look[f]);
  }
  r.int(path, "waveDelayTicks", w.waveDelayTicks, [0, 1_000_000]);
  if (w.kind === "hub") {
    if (w.waves.length > 0 || w.boss) r.add(path, "kind", "a hub has no waves and no boss");
    r.text(path, "words.stage", w.words.stage);
    return;
  }
  if (w.waves.length === 0 && !w.boss) r.add(path, "waves", "a dungeon needs waves or a boss");
  if (w.waves.length > MAX_U8_IDS) r.add(path, "waves", "more than 256");
  r.text(path, "words.arrival", w.words.arrival);
  r.text(path, "words.death.title", w.words.death?.title);
  r.text(path, "words.death.sub", w.words.death?.sub);
  w.waves.forEach((wave, i) => {
    if (wave.length === 0) r.add(path, `waves[${i}]`, "is empty");
    wave.forEach((spawn, k) => {
      const at = `waves[${i}][${k}]`;
      if (content.enemies[spawn.enemy.id] !== spawn.enemy) {
        r.add(path, `${at}.enemy`, `"${spawn.enemy.name}" is not in CONTENT.enemies`);
      }
      if (!inside(arena, spawn)) {
        r.add(path, at, `(${spawn.x}, ${spawn.y}) is not inside the arena`);
      }
    });
  });
  const enemies = new Set(w.waves.flat().map((s) => s.enemy));
  const emitters: [string, EmitterDef][] = [...enemies].flatMap((e) =>
    e.emitters.map((em, i) => [`enemies "${e.name}".emitters[${i}]`, em] as [string, EmitterDef])
  );
  if (w.boss) {
    if (content.bosses[w.boss.id] !== w.boss) {
      r.add(path, "boss", `"${w.boss.name}" is not in CONTENT.bosses`);
    }
    if (!inside(arena, w.boss, w.boss.radiusPx)) {
      r.add(path, "boss", `"${w.boss.name}" at (${w.boss.x}, ${w.boss.y}) is not inside the arena`);
    }
    w.boss.phases.forEach((phase, i) =>
      phase.emitters.forEach((em, k) => emitters.push([`boss.phases[${i}].emitters[${k}]`, em]))
    );
  }
  // A wall's bullet count depends on the arena it crosses: a volley holds at most 255.
  for (const [at, em] of emitters) {
    if (em.type !== "wallGap" || !(em.spacingPx > 0)) continue;
    const span = Math.max(arena.widthPx, arena.heightPx);
    if (span / em.spacingPx > MAX_VOLLEY) {
      r.add(
        path,
        `${at}.spacingPx`,
        `${em.spacingPx} px makes walls of over ${MAX_VOLLEY} bullets`,
      );
    }
    if (em.gapPx >= Math.min(arena.widthPx, arena.heightPx)) {
      r.add(path, `${at}.gapPx`, `${em.gapPx} px is wider than the arena`);
    }
  }
}
