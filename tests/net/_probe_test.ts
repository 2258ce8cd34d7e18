import { IDLE, NetHarness } from "./_harness.ts";
Deno.test("probe", () => {
  for (const warm of [2000, 0]) {
  const rows: string[] = [];
  for (let seed = 1; seed <= 10; seed++) {
    using h = new NetHarness({ seed, link: { latencyMs: 75, jitterMs: 50, inputLoss: 0.05 } });
    const c = h.connect("P");
    h.runUntil(() => c.runtime.latest() !== undefined);
    h.pump(warm);
    const before = c.runtime.stats.corrections;
    const v0 = { ...h.server.counters.inputVerdicts };
    for (const [ms, mx, my] of [[1000,100,0],[750,0,-100],[1000,-100,0],[250,70,70]]) {
      c.control = () => ({ ...IDLE, moveX: mx, moveY: my });
      h.pump(ms);
    }
    const v1 = h.server.counters.inputVerdicts;
    rows.push(`${seed}: corr ${c.runtime.stats.corrections - before} stale ${v1.stale - v0.stale} queued ${v1.queued - v0.queued} lead ${c.runtime.stats.leadTicks}`);
  }
  console.log("warm", warm, "\n" + rows.join("\n"));
  }
});
