/**
 * Connection churn over real WebSockets: 100 short cycles (some mid-handshake),
 * after which nothing may be left behind, and a join that must not cost anyone
 * the snapshot of its tick. The in-process 1,000-cycle version is
 * tests/net/server/churn_test.ts.
 */
import assert from "node:assert/strict";
import { TICKS_PER_SNAPSHOT } from "../../content/net_tuning.ts";
import { CloseCode, ServerKind } from "../../net/wire/protocol.ts";
import { LiveServer, LiveSocket } from "../net/_harness.ts";

/** Waits for `cond` on real time, for real-socket tests only. */
async function until(what: string, cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const start = performance.now();
  while (!cond()) {
    if (performance.now() - start > timeoutMs) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

Deno.test("100 real WebSocket cycles, some mid-handshake, leave nothing behind", async () => {
  // One address, 100 connects in a second or two: past its default connect budget.
  await using live = new LiveServer({ limits: { connectBurstPerIp: 1000 } });
  const s = live.server;
  const total = 100;
  const codes = new Map<string, number>();
  const count = (code: number) => codes.set(String(code), (codes.get(String(code)) ?? 0) + 1);

  for (let i = 0; i < total; i++) {
    const sock = new LiveSocket(live.url);
    await sock.opened;
    switch (i % 4) {
      case 0: // mid-handshake: never says hello
        count((await sock.close()).code);
        break;
      case 1: // says hello and leaves without waiting for an answer
        sock.hello(`Quick ${i}`);
        count((await sock.close()).code);
        break;
      case 2: // plays in the hub until the first snapshot, then leaves
        sock.hello(`Stay ${i}`);
        await sock.first(ServerKind.Snapshot);
        count((await sock.close()).code);
        break;
      case 3: { // closed by the server for a bad frame
        sock.hello(`Bad ${i}`);
        await sock.first(ServerKind.Enter);
        sock.ws.send(new Uint8Array([0xff]));
        const closed = await sock.closed;
        assert.equal(closed.code, CloseCode.BadMessage);
        count(closed.code);
        break;
      }
    }
  }
  await until("the server to hear every close", () => s.connections.size === 0);

  assert.deepEqual([...s.instances.keys()], ["hub"]);
  assert.equal(s.playerCount, 0);
  assert.equal(s.hub.size, 0);
  assert.equal(s.counters.connectionsOpened, total);
  assert.deepEqual(s.counters.closes, Object.fromEntries(codes));
  const metricsUrl = live.url.replace(/^ws:/, "http:").replace(/\/ws$/, "/metrics");
  const metrics = await (await fetch(metricsUrl)).text();
  assert.match(metrics, /^bh_connections\{process="single"\} 0$/m);
  assert.match(metrics, /^bh_players\{process="single"\} 0$/m);
  assert.match(
    metrics,
    new RegExp(`^bh_connections_opened_total\\{process="single"\\} ${total}$`, "m"),
  );
});

Deno.test("a player joining the hub does not cost the others the snapshot of that tick", async () => {
  await using live = new LiveServer();
  const watcher = new LiveSocket(live.url);
  await watcher.opened;
  watcher.hello("Watcher");
  await watcher.first(ServerKind.Enter);
  const report: string[] = [];

  for (let i = 0; i < 5; i++) {
    const name = `Visitor ${i}`;
    const visitor = new LiveSocket(live.url);
    await visitor.opened;
    visitor.hello(name);
    // The watcher hears of the visitor in the Events batch flushed on the next snapshot tick.
    let at = -1;
    while (at < 0) {
      await watcher.next(ServerKind.Events);
      at = watcher.received.findIndex((r) =>
        r.msg.kind === ServerKind.Events &&
        r.msg.events.some((e) => e.type === "playerJoined" && e.name === name)
      );
    }
    const batch = watcher.received[at].msg;
    assert.ok(batch.kind === ServerKind.Events);
    const flushTick = Math.ceil(batch.tick / TICKS_PER_SNAPSHOT) * TICKS_PER_SNAPSHOT;
    const snapshotAfter = () =>
      watcher.received.slice(at + 1).find((r) => r.msg.kind === ServerKind.Snapshot);
    if (!snapshotAfter()) await watcher.next(ServerKind.Snapshot);
    const snap = snapshotAfter()!.msg;
    assert.ok(snap.kind === ServerKind.Snapshot);
    report.push(`events of tick ${batch.tick} then snapshot ${snap.tick} (expected ${flushTick})`);
    await visitor.close();
  }
  console.log(`${report.join("; ")}; snapshotsSkipped ${live.server.counters.snapshotsSkipped}`);
  for (const line of report) {
    const [, got, want] = /snapshot (\d+) \(expected (\d+)\)/.exec(line)!;
    assert.equal(Number(got), Number(want), `the snapshot sent with the events: ${line}`);
  }
  assert.equal(
    live.server.counters.snapshotsSkipped,
    0,
    "no snapshot skipped on a socket that keeps up",
  );
  await watcher.close();
});
