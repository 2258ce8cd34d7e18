/**
 * A 32-bit FNV-1a digest of the state that decides a world's future (positions,
 * timers, emitter states, every bullet's flight), for determinism checks.
 * Must not import anything outside sim/.
 */
import type { EmitterState } from "./emitters.ts";
import type { SimWorld } from "./world.ts";

const scratch = new Float64Array(1);
const bytes = new Uint8Array(scratch.buffer);

function mix(h: number, v: number): number {
  scratch[0] = v;
  for (let i = 0; i < 8; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}

function mixAll(h: number, values: readonly number[]): number {
  for (const v of values) h = mix(h, v);
  return h;
}

function mixEmitters(h: number, emitters: readonly EmitterState[]): number {
  for (const em of emitters) h = mixAll(h, [em.cooldownTicks, em.shots, em.sweepRad, em.sweepDir]);
  return h;
}

/** Digest of the tick, RNG, stage, players, enemies, boss and every live bullet. */
export function hashWorld(world: SimWorld): number {
  let h = mixAll(0x811c9dc5, [world.tick, world.rng.state, world.wave, world.stageTicks]);
  for (const p of world.players.values()) {
    h = mixAll(h, [p.id, p.x, p.y, p.aim, p.hp, p.iframeTicks, p.fireCooldownTicks, p.escapeTicks]);
  }
  for (const e of world.enemies) {
    h = mixEmitters(mixAll(h, [e.id, e.x, e.y, e.hp, e.dirX, e.dirY]), e.emitters);
  }
  const boss = world.boss;
  if (boss) h = mixEmitters(mixAll(h, [boss.hp, boss.phase, boss.foldTicks]), boss.emitters);
  const b = world.bullets;
  for (let i = 0; i < b.count; i++) {
    h = mixAll(h, [b.uid[i], b.x[i], b.y[i], b.dirX[i], b.dirY[i], b.speed[i], b.ttl[i]]);
  }
  return h;
}
