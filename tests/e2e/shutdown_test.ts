/**
 * The real process, as systemd and Docker run it: `deno run -A main.ts` on a free
 * port. SIGTERM with no run in progress closes a connected player with 4009 "server
 * restarting" and the process exits 0 within 5 s. With a run in progress it drains:
 * the run plays on, the hub is told, /healthz answers 503, new players are refused,
 * and the process exits 0 once the run is over, or when DRAIN_SECONDS is up, or at a
 * second SIGTERM. An invalid PORT stops start-up with status 2 and a message naming
 * the variable.
 */
import assert from "node:assert/strict";
import { Bot } from "../../net/client/bot.ts";
import type { InputSample } from "../../net/client/runtime.ts";
import { connectClient } from "../../net/client/connect.ts";
import { CloseCode, NoticeCode } from "../../net/wire/protocol.ts";
import { MAIN, startMain, waitFor } from "./_main.ts";

const IDLE: InputSample = { moveX: 0, moveY: 0, aim: 0, buttons: 0 };

/** Resolves with `promise`, or rejects after `ms`. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts main.ts, connects one player, sends SIGTERM; checks the close and the exit. */
async function shutdownWithPlayer(opts: { playing: boolean }): Promise<void> {
  await using main = await startMain({});
  // This test is about the server's close: a client that does not come back by itself.
  const client = connectClient(main.ws, {
    name: "Last Player",
    now: () => performance.now(),
    reconnect: false,
  });
  await waitFor(
    "the hello to be answered",
    () => Promise.resolve(client.runtime.instanceId === "hub"),
    5000,
  );
  assert.equal(client.runtime.phase, "playing");
  // A player in the middle of a game sends an input frame every tick.
  const loop = opts.playing
    ? setInterval(() => client.runtime.update(performance.now(), () => IDLE), 8)
    : undefined;

  const signalledAt = performance.now();
  main.child.kill("SIGTERM");
  const closed = await within(5000, "the close", client.closed);
  clearInterval(loop);
  assert.equal(closed.code, CloseCode.ServerRestarting);
  assert.equal(closed.reason, "server restarting");
  assert.equal(client.runtime.closeReason, "server restarting", "what the player is shown");

  const status = await within(5000, "the exit", main.child.status);
  const exitMs = performance.now() - signalledAt;
  console.log(
    `closed with ${closed.code} "${closed.reason}", exit ${status.code} after ${
      exitMs.toFixed(0)
    } ms`,
  );
  assert.equal(status.code, 0, await main.stderr);
  assert.ok(exitMs < 5000, `exited after ${exitMs.toFixed(0)} ms`);
  assert.match(await main.stdout, /play at http:\/\/127\.0\.0\.1:\d+\//);
  assert.equal((await main.stderr).trim(), "", "nothing on stderr");
}

Deno.test('SIGTERM closes a connected player with 4009 "server restarting" and exits 0 within 5 s', async () => {
  await shutdownWithPlayer({ playing: false });
});

Deno.test("SIGTERM closes a player who keeps sending input with 4009 too", async () => {
  await shutdownWithPlayer({ playing: true });
});

Deno.test("PORT=abc stops start-up with status 2 and a message naming PORT", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN],
    env: { PORT: "abc", LOG_LEVEL: "warn" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 2, stderr);
  assert.match(stderr, /^Invalid configuration: PORT="abc" must be an integer/m);
  assert.equal(new TextDecoder().decode(out.stdout), "", "it never started listening");
});

/** A bot fighting in a dungeon and one standing in the hub, on `ws`. */
async function fighterAndIdler(ws: string) {
  // These tests watch the server's closes: bots that do not come back by themselves.
  const fighter = new Bot(ws, { name: "Fighter", reconnect: false });
  const idler = new Bot(ws, { name: "Idler", mode: "idle", reconnect: false });
  await waitFor("the fighter in a dungeon", () => {
    return Promise.resolve(fighter.client.runtime.world?.kind === "dungeon");
  }, 15_000);
  fighter.mode = "fight";
  await waitFor("the idler in the hub", () => {
    return Promise.resolve(idler.client.runtime.world?.kind === "hub");
  }, 5000);
  return { fighter, idler };
}

Deno.test("SIGTERM mid-run drains: the run plays on, the hub is told, /healthz 503, no new players; exit 0 when the run ends", async () => {
  await using main = await startMain({ DRAIN_SECONDS: "60" });
  const { fighter, idler } = await fighterAndIdler(main.ws);
  try {
    const dungeon = fighter.client.runtime.instanceId;
    const signalledAt = performance.now();
    main.child.kill("SIGTERM");
    await waitFor("the Notice", () => Promise.resolve(idler.log.notices.length > 0), 3000);
    assert.equal(idler.log.notices[0].code, NoticeCode.Draining);
    assert.match(idler.log.notices[0].text, /restarts soon/);
    assert.equal(fighter.log.notices[0]?.code, NoticeCode.Draining, "the fighter too");

    const h = await main.healthz();
    assert.equal(h.status, 503, "a load balancer sends new players elsewhere");
    assert.deepEqual([h.body.draining, h.body.runsInProgress], [true, 1]);
    const late = connectClient(main.ws, { name: "Late", now: () => performance.now() });
    const refused = await within(5000, "the refusal", late.closed);
    assert.equal(refused.code, CloseCode.ServerRestarting);
    assert.match(refused.reason, /no new games here now/);

    // The run plays on: a second later the fighter is still in it, still playing.
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(fighter.client.runtime.instanceId, dungeon, "still in its dungeon");
    assert.equal(fighter.client.runtime.phase, "playing");

    // It ends the run (an escape); the process then restarts at once.
    fighter.mode = "escape";
    const status = await within(15_000, "the exit", main.child.status);
    const exitMs = performance.now() - signalledAt;
    assert.equal(status.code, 0, await main.stderr);
    assert.ok(fighter.log.escapeCompleted || fighter.log.died, "the run ended before the exit");
    const closed = await within(2000, "the idler's close", idler.client.closed);
    assert.equal(closed.code, CloseCode.ServerRestarting);
    console.log(
      `drain: exit ${status.code} ${(exitMs / 1000).toFixed(1)} s after SIGTERM, ` +
        `once the run ended (${fighter.log.escapeCompleted ? "escaped" : "died"}); ` +
        `healthz ${h.status} while draining; a new player got ${refused.code}`,
    );
    assert.equal((await main.stderr).trim(), "", "nothing on stderr");
  } finally {
    await fighter.stop();
    await idler.stop();
  }
});

Deno.test("a drain is cut short by DRAIN_SECONDS, and by a second SIGTERM", async (t) => {
  await t.step(
    "DRAIN_SECONDS=2: exit 0 about 2 s after SIGTERM, the run cut off with 4009",
    async () => {
      await using main = await startMain({ DRAIN_SECONDS: "2" });
      const { fighter, idler } = await fighterAndIdler(main.ws);
      try {
        const signalledAt = performance.now();
        main.child.kill("SIGTERM");
        await waitFor("the drain", async () => (await main.healthz()).status === 503, 2000);
        const status = await within(8000, "the exit", main.child.status);
        const exitMs = performance.now() - signalledAt;
        assert.equal(status.code, 0, await main.stderr);
        const closed = await within(2000, "the fighter's close", fighter.client.closed);
        assert.equal(closed.code, CloseCode.ServerRestarting);
        console.log(`DRAIN_SECONDS=2: exit after ${exitMs.toFixed(0)} ms with a run in progress`);
        assert.ok(!fighter.log.died && !fighter.log.escapeCompleted, "the run was still on");
        assert.ok(exitMs >= 1900 && exitMs < 6000, `exit after ${exitMs.toFixed(0)} ms`);
      } finally {
        await fighter.stop();
        await idler.stop();
      }
    },
  );
  await t.step("a second SIGTERM stops at once", async () => {
    await using main = await startMain({ DRAIN_SECONDS: "600" });
    const { fighter, idler } = await fighterAndIdler(main.ws);
    try {
      main.child.kill("SIGTERM");
      await waitFor("the drain", async () => (await main.healthz()).status === 503, 2000);
      const againAt = performance.now();
      main.child.kill("SIGTERM");
      const status = await within(5000, "the exit", main.child.status);
      const exitMs = performance.now() - againAt;
      assert.equal(status.code, 0, await main.stderr);
      assert.match(await main.stdout, /SIGTERM: draining, 1 run\(s\) in progress/);
      console.log(`second SIGTERM: exit after ${exitMs.toFixed(0)} ms`);
    } finally {
      await fighter.stop();
      await idler.stop();
    }
  });
});

Deno.test("a player whose server restarts comes back by itself: reconnecting while it is down, then a fresh hub, told why", async () => {
  const first = await startMain({});
  const bot = new Bot(first.ws, { name: "Stayer", mode: "idle" });
  try {
    await waitFor("the hub", () => Promise.resolve(bot.client.runtime.instanceId === "hub"), 5000);
    const before = bot.client.runtime.playerId;
    first.child.kill("SIGTERM");
    const status = await within(5000, "the exit", first.child.status);
    assert.equal(status.code, 0);
    await first[Symbol.asyncDispose]();
    await waitFor("the restart seen", () => Promise.resolve(bot.log.drops.length > 0), 3000);
    assert.equal(bot.log.drops[0].why, "restart", "4009 is a restart, not the end");
    assert.equal(bot.client.runtime.phase, "reconnecting");
    assert.equal(bot.client.runtime.closeReason, "server restarting", "what the player is shown");
    // Down for a while: retries find nobody (and keep going).
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(bot.client.runtime.phase, "reconnecting");

    const upAt = performance.now();
    await using second = await startMain({}, first.port);
    await waitFor(
      "the player back in a hub",
      () =>
        Promise.resolve(
          bot.client.runtime.phase === "playing" && bot.client.runtime.instanceId === "hub" &&
            bot.log.drops[0].backAtMs !== undefined,
        ),
      10_000,
    );
    const backMs = performance.now() - upAt;
    const notice = bot.log.notices.find((n) => n.code !== NoticeCode.Draining);
    console.log(
      `restart: back ${backMs.toFixed(0)} ms after the new process answered /healthz; ` +
        `player ${before} → ${bot.client.runtime.playerId}; notice "${notice?.text}"`,
    );
    assert.ok(notice, "told that the old session ended with the restart");
    // A lone process without TOKEN_SECRET signs with a secret of its own life.
    assert.match(notice.text, /server (may have )?restarted/);
    assert.equal(bot.client.resumes, 1, "one way back, no click");
    assert.equal(bot.client.connected, true);
    void second;
  } finally {
    await bot.stop();
    await first[Symbol.asyncDispose]();
  }
});

Deno.test("a process killed outright (no close frame): the bot tries for the grace, then waits for the server as for a restart", async () => {
  const first = await startMain({});
  const bot = new Bot(first.ws, { name: "Orphan", mode: "idle" });
  try {
    await waitFor("the hub", () => Promise.resolve(bot.client.runtime.instanceId === "hub"), 5000);
    const killedAt = performance.now();
    first.child.kill("SIGKILL");
    await first.child.status;
    await waitFor("the drop", () => Promise.resolve(bot.log.drops.length > 0), 5000);
    assert.equal(bot.log.drops[0].why, "link", "a dropped link at first: the session may wait");
    // Past the 15 s grace nobody has answered: not the end, a longer wait.
    await waitFor(
      "the wait for an unreachable server",
      () => Promise.resolve(bot.log.drops.length > 1),
      30_000,
    );
    const unreachableAfterMs = performance.now() - killedAt;
    assert.equal(bot.log.drops[1].why, "unreachable");
    assert.equal(bot.client.runtime.phase, "reconnecting", "still trying, not Disconnected");
    await using _second = await startMain({}, first.port);
    await waitFor(
      "the bot back in a hub",
      () =>
        Promise.resolve(
          bot.client.runtime.phase === "playing" && bot.client.runtime.instanceId === "hub",
        ),
      10_000,
    );
    console.log(
      `SIGKILL: "unreachable" after ${(unreachableAfterMs / 1000).toFixed(1)} s; back in a hub ` +
        `${((performance.now() - killedAt) / 1000).toFixed(1)} s after the kill`,
    );
    assert.equal(bot.client.resumes, 1);
  } finally {
    await bot.stop();
    await first[Symbol.asyncDispose]();
  }
});
