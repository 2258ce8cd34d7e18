/**
 * A synthetic scene for tools/render_bench.ts (`?bench=N`): the dungeon mid-fight
 * with N bullets kept on screen, a boss, trash and four ships, and no networking.
 * It feeds the same Renderer the game uses, so the timing is the game's.
 */
import { BulletKind, FOLD } from "../content/mod.ts";
import { PlayerFlag } from "../net/wire/mod.ts";
import { BulletPool, Rng, Team } from "../sim/mod.ts";
import type { Scene, ShipView } from "./scene.ts";

/** Where the bench keeps its bullets: the part of the dungeon a 720p window shows. */
const AREA = { x0: 20, y0: 250, x1: 1260, y1: 940 } as const;
const ENEMY_KINDS = [
  BulletKind.Orb,
  BulletKind.Needle,
  BulletKind.Wall,
  BulletKind.Spiral,
  BulletKind.Curl,
];
const RADIUS: Record<number, number> = {
  [BulletKind.PlayerShot]: 4,
  [BulletKind.Orb]: 7,
  [BulletKind.Needle]: 5,
  [BulletKind.Wall]: 9,
  [BulletKind.Spiral]: 6,
  [BulletKind.Curl]: 6,
};

/** A made-up fight with a fixed number of live bullets. */
export class BenchScene {
  readonly #pool: BulletPool;
  readonly #self: ShipView = {
    id: 1,
    x: 640,
    y: 600,
    aimRad: -Math.PI / 2,
    flags: PlayerFlag.Active | PlayerFlag.Firing,
    name: "bench",
    escape: 0,
  };
  readonly #others: ShipView[] = [
    { id: 2, x: 480, y: 700, aimRad: -1.2, flags: PlayerFlag.Active, name: "ally-2", escape: 0 },
    { id: 3, x: 820, y: 690, aimRad: -2, flags: PlayerFlag.Active, name: "ally-3", escape: 0 },
    { id: 4, x: 700, y: 820, aimRad: -1.6, flags: PlayerFlag.Dead, name: "ally-4", escape: 0 },
  ];
  #lastMs = -1;

  constructor(count: number) {
    const rng = new Rng(2024);
    this.#pool = new BulletPool(Math.max(16, count));
    const p = this.#pool;
    for (let i = 0; i < count; i++) {
      // One bullet in ten is a player shot, like a busy boss fight.
      const player = i % 10 === 0;
      const kind = player ? BulletKind.PlayerShot : ENEMY_KINDS[i % ENEMY_KINDS.length];
      const heading = rng.range(0, Math.PI * 2);
      p.x[i] = rng.range(AREA.x0, AREA.x1);
      p.y[i] = rng.range(AREA.y0, AREA.y1);
      p.dirX[i] = Math.cos(heading);
      p.dirY[i] = Math.sin(heading);
      p.speed[i] = player ? 11 : rng.range(1.5, 4);
      p.radius[i] = RADIUS[kind];
      p.kind[i] = kind;
      p.team[i] = player ? Team.Player : Team.Enemy;
      p.owner[i] = player ? 1 + (i % 3) : -1;
      p.uid[i] = i;
    }
    p.count = count;
  }

  /** Moves every bullet by the time since the last frame (wrapping in the area) and returns the scene. */
  next(nowMs: number): Scene {
    const dt = this.#lastMs < 0 ? 1 : Math.min(4, (nowMs - this.#lastMs) / (1000 / 60));
    this.#lastMs = nowMs;
    const p = this.#pool;
    const w = AREA.x1 - AREA.x0;
    const h = AREA.y1 - AREA.y0;
    for (let i = 0; i < p.count; i++) {
      let x = p.x[i] + p.dirX[i] * p.speed[i] * dt;
      let y = p.y[i] + p.dirY[i] * p.speed[i] * dt;
      if (x < AREA.x0) x += w;
      else if (x > AREA.x1) x -= w;
      if (y < AREA.y0) y += h;
      else if (y > AREA.y1) y -= h;
      p.x[i] = x;
      p.y[i] = y;
    }
    const t = nowMs / 1000;
    return {
      nowMs,
      world: FOLD,
      self: { ...this.#self, x: 640 + Math.sin(t) * 60 },
      others: this.#others,
      enemies: [
        { id: 1, kind: 0, x: 320, y: 300, hp: 9 },
        { id: 2, kind: 1, x: 960, y: 320, hp: 16 },
        { id: 3, kind: 2, x: 560, y: 480, hp: 4 },
      ],
      boss: { bossId: 0, hp: 420, maxHp: 700, phase: 1, folding: false },
      bullets: p,
      flashes: [],
    };
  }
}
