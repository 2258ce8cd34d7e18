/**
 * The smoke run as a test: the real server process, four bots over real
 * WebSockets, the whole dungeon. Slow (about a minute and a half) and always run in CI.
 */
import assert from "node:assert/strict";
import { LATE_TICKS_ALLOWED, runSmoke } from "../../tools/smoke.ts";

Deno.test({
  name: "four bots meet, clear a dungeon (or die trying), one escapes, all end in the hub",
  // The bots' sockets and the server process are opened and closed inside runSmoke.
  async fn() {
    const report = await runSmoke();
    assert.deepEqual(report.failures, [], report.steps.join("\n"));
    assert.ok(report.ok);
    assert.equal(report.serverExitCode, 0, "graceful shutdown on SIGTERM");
    assert.ok(report.peakLiveBullets >= 100, `a real bullet field (${report.peakLiveBullets})`);
    assert.ok(report.ticks > 0, "the server counted its ticks");
    assert.ok(
      report.ticksLate + report.ticksDropped <= report.ticks * LATE_TICKS_ALLOWED,
      `${report.ticksLate} late, ${report.ticksDropped} dropped of ${report.ticks} ticks`,
    );
    console.log(JSON.stringify({ ...report, steps: undefined }));
  },
});
