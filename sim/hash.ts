/**
 * A 32-bit FNV-1a digest of everything that decides a world's future, for
 * determinism checks. Must not import anything outside sim/.
 */
import type { SimWorld } from "./world.ts";

const scratch = new Float64Array(1);
const bytes = new Uint8Array(scratch.buffer);

function mix(h: number, v: number): number {
  scratch[0] = v;
  for (let i = 0; i < 8; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}

/** Digest of the tick, RNG, players, enemies, boss and every live bullet. */
export function hashWorld(world: SimWorld): number {
  let h = 0x811c9dc5;
  h = mix(h, world.tick);
  h = mix(h, world.rng.state);
  h = mix(h, world.wave);
  for (const p of world.players.values()) {
    for (const v of [p.id, p.x, p.y, p.aim, p.hp, p.iframeTicks, p.escapeTicks]) h = mix(h, v);
  }
  for (const e of world.enemies) for (const v of [e.id, e.x, e.y, e.hp]) h = mix(h, v);
  if (world.boss) { for (const v of [world.boss.hp, world.boss.phase]) h = mix(h, v); }
  const b = world.bullets;
  for (let i = 0; i < b.count; i++) {
    h = mix(h, b.uid[i]);
    h = mix(h, b.x[i]);
    h = mix(h, b.y[i]);
  }
  return h;
}
