/**
 * Runs a whole scripted dungeon: `players` pilots fight the waves and the Warden
 * through SimWorld alone. Shared by the headless demo, the tests and the benchmark.
 */
import { type InputFrame, type SimEvent, SimWorld, type WorldDef } from "../sim/mod.ts";
import { think, viewOfWorld } from "../sim/pilot.ts";

/** Outcome counts of a scripted run. */
export interface RunSummary {
  ticks: number;
  bossDefeated: boolean;
  deaths: number;
  peakLiveBullets: number;
  events: Partial<Record<SimEvent["type"], number>>;
}

/** Fights `def` with `players` pilots until the boss dies, everyone dies, or `maxTicks`. */
export function runDungeon(
  def: WorldDef,
  opts: { players: number; seed: number; maxTicks: number; onTick?: (w: SimWorld) => void },
): RunSummary {
  const world = new SimWorld(def, { seed: opts.seed });
  for (let id = 1; id <= opts.players; id++) world.addPlayer(id, `pilot${id}`);
  const summary: RunSummary = {
    ticks: 0,
    bossDefeated: false,
    deaths: 0,
    peakLiveBullets: 0,
    events: {},
  };
  const inputs = new Map<number, InputFrame>();
  while (summary.ticks < opts.maxTicks) {
    inputs.clear();
    for (const p of world.players.values()) {
      if (p.status !== "active") continue;
      inputs.set(p.id, think(viewOfWorld(world, p), { tick: world.tick, style: p.id }));
    }
    for (const e of world.step(inputs)) {
      summary.events[e.type] = (summary.events[e.type] ?? 0) + 1;
      if (e.type === "bossDefeated") summary.bossDefeated = true;
      if (e.type === "playerDied") summary.deaths++;
    }
    summary.ticks++;
    summary.peakLiveBullets = Math.max(summary.peakLiveBullets, world.bullets.count);
    opts.onTick?.(world);
    const anyoneAlive = [...world.players.values()].some((p) => p.status === "active");
    if (summary.bossDefeated || !anyoneAlive) break;
  }
  return summary;
}
