/**
 * Session resume over real sockets: a headless bot (the same ws_client.ts the page
 * uses) plays through a TCP relay (net/link) into a boss fight, and the relay's link
 * is cut: reset (the sockets die, new ones are refused for a while) or held (a
 * silent link the bot must notice by itself). The bot gets back into the same
 * instance with the same player id, by itself; past the grace, it lands in the hub
 * told why. Times printed are measured on this loaded 2-core machine.
 */
import assert from "node:assert/strict";
import { Bot } from "../../net/client/bot.ts";
import { LinkRelay, linkSpec } from "../../net/link/mod.ts";
import { encodeServerMessage } from "../../net/wire/codec.ts";
import { CloseCode, EnterReason, NoticeCode, ServerKind } from "../../net/wire/protocol.ts";
import type { WorldDef } from "../../sim/mod.ts";
import { LiveServer } from "../net/_harness.ts";

/** Dungeons open on their boss at once. */
const bossRush = (kind: "hub" | "dungeon", _id: string, world: WorldDef) =>
  kind === "dungeon" ? { ...world, waves: [], waveDelayTicks: 1 } : world;

async function until(what: string, done: () => boolean, ms: number): Promise<void> {
  const start = performance.now();
  while (!done()) {
    if (performance.now() - start > ms) {
      throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A live server, a relay in front of it, and a bot through the relay, fighting a boss. */
async function bossFightThroughRelay(limits: ConstructorParameters<typeof LiveServer>[0] = {}) {
  const live = new LiveServer({ worldDef: bossRush, ...limits });
  const relay = LinkRelay.start({
    target: { hostname: "127.0.0.1", port: live.http.addr.port },
    spec: linkSpec({ delayMs: 20 }),
  });
  const bot = new Bot(relay.url("ws", "/ws"), { name: "Ada" });
  await until("the bot in a boss fight", () => {
    const rt = bot.client.runtime;
    return rt.world?.kind === "dungeon" && rt.boss() !== null;
  }, 15_000);
  bot.mode = "fight";
  const dispose = async () => {
    await bot.stop();
    await relay[Symbol.asyncDispose]();
    await live[Symbol.asyncDispose]();
  };
  return { live, relay, bot, dispose };
}

Deno.test("a link reset for 3 s mid-boss: the bot is back in the same instance and ship by itself", async () => {
  const { live, relay, bot, dispose } = await bossFightThroughRelay();
  try {
    await new Promise((r) => setTimeout(r, 500));
    const rt = bot.client.runtime;
    const before = { id: rt.playerId, instance: rt.instanceId };
    relay.cut(3000, { reset: true });
    const cutAt = performance.now();
    await until("the bot to notice", () => rt.phase === "reconnecting", 2000);
    await until("the resume", () => bot.client.resumes === 1 && rt.phase === "playing", 10_000);
    const backMs = performance.now() - cutAt;
    await until(
      "the Enter of the resume",
      () => bot.log.enters.at(-1)?.reason === EnterReason.Resume,
      2000,
    );
    console.log(
      `reset cut of 3000 ms: back in ${
        backMs.toFixed(0)
      } ms; resumes ${live.server.counters.resumes}, ` +
        `detaches ${live.server.counters.detaches}, relay resets ${relay.stats.resets}`,
    );
    assert.equal(rt.playerId, before.id, "the same player id");
    assert.equal(rt.instanceId, before.instance, "the same instance");
    assert.ok(backMs < 5000, `back within 5 s (${backMs.toFixed(0)} ms)`);
    assert.equal(live.server.counters.resumes, 1);
    assert.equal(live.server.playerCount, 1);
    assert.equal(live.server.playersAway, 0);
    const session = live.server.instances.get(rt.instanceId)!.world.players.get(rt.playerId)!;
    assert.equal(session.away, false, "the ship is back in the fight");
    assert.deepEqual(bot.log.notices, [], "nothing went wrong to tell");
  } finally {
    await dispose();
  }
});

Deno.test("a close for good whose close frame is lost is still for good: the Reject said so, and the bot does not come back", async () => {
  const { live, relay, bot, dispose } = await bossFightThroughRelay();
  try {
    const rt = bot.client.runtime;
    const conn = [...live.server.connections].find((c) => c.name === "Ada");
    assert.ok(conn, "the bot's connection");
    // What Connection.close sends first; then the socket ends with no close frame, as when
    // Deno drops a server socket that an input reached after its close().
    conn.sendReliable(encodeServerMessage(live.server.encoder, {
      kind: ServerKind.Reject,
      code: CloseCode.ServerError,
      reason: "a server error, for a test",
    }));
    await until("the Reject", () => rt.rejectCode === CloseCode.ServerError, 2000);
    relay.cut(3000, { reset: true });
    const closed = await Promise.race([
      bot.client.closed,
      new Promise<undefined>((r) => setTimeout(r, 4000)),
    ]);
    assert.ok(closed, "the bot's connection ended for good");
    assert.equal(rt.phase, "closed");
    assert.equal(rt.closeReason, "a server error, for a test");
    assert.deepEqual(bot.log.drops, [], "never reconnecting");
    assert.equal(bot.client.resumes, 0);
    assert.equal(relay.stats.connections, 1, "no second connection tried");
  } finally {
    await dispose();
  }
});

Deno.test("a link that goes silent for 3 s: the bot's watchdog gives it up, and the server hears 4010", async () => {
  const { live, relay, bot, dispose } = await bossFightThroughRelay();
  try {
    await new Promise((r) => setTimeout(r, 500));
    const rt = bot.client.runtime;
    const before = { id: rt.playerId, instance: rt.instanceId };
    relay.cut(3000); // held: nothing moves either way, no socket closes
    const cutAt = performance.now();
    await until("the watchdog", () => rt.phase === "reconnecting", 4000);
    const noticedMs = performance.now() - cutAt;
    await until("the resume", () => bot.client.resumes === 1 && rt.phase === "playing", 10_000);
    const backMs = performance.now() - cutAt;
    console.log(
      `held cut of 3000 ms: noticed after ${noticedMs.toFixed(0)} ms, back in ${
        backMs.toFixed(0)
      } ms; ` +
        `closes ${
          JSON.stringify(
            Object.fromEntries(
              Object.entries(live.server.counters.closes).filter(([, n]) => n > 0),
            ),
          )
        }`,
    );
    assert.equal(rt.playerId, before.id);
    assert.equal(rt.instanceId, before.instance);
    assert.ok(backMs < 6000, `back within 6 s (${backMs.toFixed(0)} ms)`);
    // The server learned of the dead socket either from the resume (4010) or from the
    // close frame the bot sent it, held in the relay and delivered after the cut.
    const closes = live.server.counters.closes;
    assert.equal(
      (closes["4010"] ?? 0) + (closes["other"] ?? 0),
      1,
      "the old socket was closed once",
    );
  } finally {
    await dispose();
  }
});

Deno.test("past the grace the bot lands in the hub, told that its run went on without it", async () => {
  const { live, relay, bot, dispose } = await bossFightThroughRelay({
    limits: { resumeGraceMs: 1500 },
  });
  try {
    relay.cut(2500, { reset: true });
    await until("a fresh start in the hub", () => {
      const rt = bot.client.runtime;
      return rt.phase === "playing" && rt.world?.kind === "hub";
    }, 12_000);
    assert.equal(bot.log.notices.length, 1);
    assert.equal(bot.log.notices[0].code, NoticeCode.ResumeExpired);
    assert.match(bot.log.notices[0].text, /away for more than 2 s/);
    assert.equal(live.server.counters.resumeRefusals.expired, 1);
    assert.equal(live.server.playerCount, 1, "one player: the fresh one");
  } finally {
    await dispose();
  }
});
