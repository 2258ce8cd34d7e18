/**
 * The numbers the step rewrites every tick stay unboxed in V8, with the server's modules
 * loaded. A field whose hidden class says "tagged" holds each new double as a fresh heap
 * number: an object literal anywhere in the process with the same keys in the same order
 * and an object in that field (net/wire/decisions.ts has one per state) shares the hidden
 * class and boxes the field for every object made that way, and so does a class field
 * declared without a value (it starts as undefined). Read off V8's own trace of field
 * generalizations, in a process that loads what main.ts loads and runs a fight.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).href;

const FIGHT = `
import "${ROOT}net/server/mod.ts";
import "${ROOT}net/server/registry/mod.ts";
import "${ROOT}net/wire/mod.ts";
import "${ROOT}net/link/mod.ts";
import "${ROOT}routes/app.ts";
import { CONTENT } from "${ROOT}content/mod.ts";
import { SimWorld } from "${ROOT}sim/mod.ts";
const dungeon = CONTENT.worlds.find((w) => w.kind === "dungeon" && w.boss && w.waves.length > 0);
// The boss after a short wait (as BOSS_RUSH has it), and one trash enemy beside it.
const def = { ...dungeon, waves: [], waveDelayTicks: 30 };
const world = new SimWorld(def, { seed: 3, maxRewindTicks: 8, viewGapTicks: 3 });
for (let id = 1; id <= 4; id++) world.addPlayer(id, "p" + id);
world.spawnEnemy(dungeon.waves[0][0].enemy, 300.5, 200.25);
const inputs = new Map();
for (let t = 0; t < 900; t++) {
  for (const p of world.players.values()) {
    inputs.set(p.id, {
      tick: world.tick, moveX: ((t * 7 + p.id * 13) % 201) - 100, moveY: ((t * 3) % 201) - 100,
      aim: (t * 300) & 0xffff, buttons: 1, viewLag: 2,
    });
  }
  world.step(inputs);
}
// On stderr: V8 writes its trace to stdout, where a line of ours could land inside one of its.
const b = world.boss;
console.error(\`fought to tick \${world.tick}, stage \${world.stage}, boss hp \${b?.hp} of \${b?.maxHp}\`);
`;

/** Fields the step writes doubles into, every tick or every hit. */
const DOUBLE_FIELDS = ["x", "y", "dirX", "dirY", "hp", "state"];

Deno.test("ships, enemies, the boss and the world's random state keep their numbers unboxed", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--trace-generalization", FIGHT],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const said = new TextDecoder().decode(out.stderr);
  assert.ok(out.success, said);
  // The fight reached the boss and hurt it: every field below was written.
  const fought = said.match(/fought to tick 900, stage (boss|cleared), boss hp ([\d.]+) of (\d+)/);
  assert.ok(fought && Number(fought[2]) < Number(fought[3]), said);
  // e.g. "[generalizing]x:h{Any;const}->t{Any;const} (uninitialized field) [~addPlayer+… at file:///…/sim/world.ts:1]"
  const lines = text.split("\n").filter((l) => l.startsWith("[generalizing]"));
  assert.ok(lines.length > 0, "V8 traced its generalizations");
  const boxed = lines.filter((l) => {
    const m = l.match(/^\[generalizing\](\w+):\S*->t\{.*\/sim\//);
    return m !== null && DOUBLE_FIELDS.includes(m[1]);
  });
  assert.deepEqual(boxed, [], "number fields of the simulation's state made tagged (boxed)");
  // The trace does show these fields becoming doubles, so the test reads the right lines.
  assert.ok(lines.some((l) => /^\[generalizing\]x:\S*->d\{.*\/sim\//.test(l)), "x became a double");
});
