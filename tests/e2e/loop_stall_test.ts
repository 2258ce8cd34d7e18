/**
 * What the loop did before a stall, on real time and the kernel's own counts: a process the
 * host stops (SIGSTOP, as a hypervisor that does not run the machine's CPU) slept past its
 * timer; a loop kept busy between ticks (as by a collection's pause) worked. Read from
 * /metrics as the load test reads it. And the reader of the loop thread's own CPU under them.
 */
import assert from "node:assert/strict";
import { metricFigures } from "../../tools/loadtest.ts";
import { renderMetrics } from "../../net/server/metrics.ts";
import { type CpuSample, openThreadCpu } from "../../net/server/cpu_usage.ts";
import { LiveServer, stallTheLoop } from "../net/_harness.ts";
import { startMain, waitFor } from "./_main.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("a server process stopped for 150 ms counts a stall that slept, and none that worked", async () => {
  await using main = await startMain({});
  const base = `http://127.0.0.1:${main.port}`;
  const verdicts = async () =>
    metricFigures(await (await fetch(`${base}/metrics`)).text()).stallVerdicts;
  // Past start-up (whose first ticks may be late while the process still loads).
  await sleep(1000);
  const before = await verdicts();
  Deno.kill(main.child.pid, "SIGSTOP");
  await sleep(150);
  Deno.kill(main.child.pid, "SIGCONT");
  await waitFor("the stall counted", async () => (await verdicts()).slept > before.slept, 5000);
  const after = await verdicts();
  // One stop, one stall (a stall of the host's own in the same second would add one).
  assert.ok(after.slept - before.slept >= 1, JSON.stringify({ before, after }));
  assert.equal(after.worked, before.worked, "the loop did not work through the stop");
});

Deno.test("a loop kept busy between its ticks counts stalls that worked, from its thread's own CPU", async () => {
  await using live = new LiveServer();
  const { server } = live;
  await sleep(300);
  const before = metricFigures(renderMetrics(server)).stallVerdicts;
  const late = await stallTheLoop(server);
  assert.ok(late >= 5, `${late} late ticks`);
  const after = metricFigures(renderMetrics(server)).stallVerdicts;
  assert.equal(after.worked - before.worked, 5, JSON.stringify({ before, after }));
});

Deno.test("the loop thread's CPU reader counts this thread's work and not its sleep", async () => {
  const cpu = openThreadCpu();
  assert.ok(cpu, "Linux with the FFI permission has it");
  try {
    const spent = (a: CpuSample, b: CpuSample) => b.userMs + b.systemMs - a.userMs - a.systemMs;
    const start = cpu.read();
    const until = performance.now() + 60;
    while (performance.now() < until) {
      // Busy: this thread's CPU.
    }
    const busy = cpu.read();
    await sleep(60);
    const rested = cpu.read();
    assert.ok(spent(start, busy) >= 30, `${spent(start, busy)} ms of 60 busy`);
    assert.ok(spent(start, busy) <= 80, `${spent(start, busy)} ms of 60 busy`);
    assert.ok(spent(busy, rested) < 20, `${spent(busy, rested)} ms of 60 asleep`);
  } finally {
    cpu.close();
  }
});
