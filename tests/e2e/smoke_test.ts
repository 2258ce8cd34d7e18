/**
 * The smoke run as a test: the real server process and four bots through the whole
 * dungeon, once over WebTransport and once over WebSocket. Slow (about a minute and
 * a half each) and always run in CI.
 */
import assert from "node:assert/strict";
import { LATE_TICKS_ALLOWED, runSmoke } from "../../tools/smoke.ts";

for (const transport of ["webtransport", "websocket"] as const) {
  Deno.test({
    name:
      `four bots over ${transport} meet, clear a dungeon (or die trying), one escapes, all end in the hub`,
    // The bots' connections, relays and the server process live and die inside runSmoke.
    async fn() {
      const report = await runSmoke({ transport });
      assert.deepEqual(report.failures, [], report.steps.join("\n"));
      assert.ok(report.ok);
      assert.equal(report.serverExitCode, 0, "graceful shutdown on SIGTERM");
      assert.ok(report.peakLiveBullets >= 100, `a real bullet field (${report.peakLiveBullets})`);
      assert.ok(report.ticks > 0, "the server counted its ticks");
      assert.ok(
        report.ticksLate + report.ticksDropped <= report.ticks * LATE_TICKS_ALLOWED,
        `${report.ticksLate} late, ${report.ticksDropped} dropped of ${report.ticks} ticks`,
      );
      assert.ok(
        report.wireDownBytesPerSecPerClient > report.downBytesPerSecPerClient,
        "headers cost something on the wire",
      );
      console.log(JSON.stringify({ ...report, steps: undefined }));
    },
  });
}
