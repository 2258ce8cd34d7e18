/** Runs a headless four-pilot dungeon fight through SimWorld and prints what happened. */
import { FOLD } from "../content/mod.ts";
import { runDungeon } from "./demo_run.ts";

if (import.meta.main) {
  const seed = Number(Deno.args[0] ?? 1);
  const started = performance.now();
  const summary = runDungeon(FOLD, { players: 4, seed, maxTicks: 60 * 300 });
  const ms = performance.now() - started;
  console.log(
    `${FOLD.name}, seed ${seed}: ${summary.bossDefeated ? "Warden defeated" : "no victory"}` +
      ` after ${(summary.ticks / 60).toFixed(1)} s of game time (${summary.ticks} ticks,` +
      ` ${
        ms.toFixed(0)
      } ms of CPU), ${summary.deaths} deaths, peak ${summary.peakLiveBullets} bullets`,
  );
  console.log(JSON.stringify(summary.events));
}
