/**
 * A real browser whose link is cut: headless Chromium plays the real bundle through a
 * TCP relay (net/link) in front of the real server; in a boss fight the relay holds
 * the link for 3 s (nothing moves, no socket closes: the page must notice by itself).
 * The page shows "reconnecting…" over the frozen game and, without a click, is back
 * in the same dungeon as the same player. Screenshots land in .screenshots/.
 * Skips without Chromium unless REQUIRE_BROWSER=1, as the other browser tests do.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { CHROMIUM_PATH, hasChromium, launchChromium } from "../../tools/chromium.ts";
import type { ClientRuntime } from "../../net/client/runtime.ts";
import { LinkRelay, linkSpec } from "../../net/link/mod.ts";
import { realClock } from "../../net/server/scheduler.ts";
import { GameServer } from "../../net/server/server.ts";
import { createApp } from "../../routes/app.ts";
import type { WorldDef } from "../../sim/mod.ts";
import { bundleClient, stopBundler } from "../../tools/build.ts";

const SHOTS = new URL("../../.screenshots/", import.meta.url);
const chromiumThere = hasChromium();
const requireBrowser = Deno.env.get("REQUIRE_BROWSER") === "1";
if (!chromiumThere && !requireBrowser) {
  console.warn(`SKIPPING the browser resume test: ${CHROMIUM_PATH} not found`);
}

type WithBh = { __bh: { readonly runtime: ClientRuntime | undefined } };

/**
 * The hub's first portal moved under its spawn points (so a new player steps straight
 * into a dungeon), and dungeons that open on their boss: the test is about the cut.
 */
function straightToTheBoss(kind: "hub" | "dungeon", _id: string, world: WorldDef): WorldDef {
  if (kind === "dungeon") return { ...world, waves: [], waveDelayTicks: 1 };
  const spawn = world.arena.spawnPoints[0];
  const [first, ...rest] = world.portals ?? [];
  return { ...world, portals: [{ ...first, x: spawn.x, y: spawn.y, radiusPx: 400 }, ...rest] };
}

async function shot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: new URL(name, SHOTS).pathname });
}

function state(page: Page) {
  return page.evaluate(() => {
    const rt = (globalThis as unknown as WithBh).__bh.runtime!;
    return {
      phase: rt.phase,
      playerId: rt.playerId,
      instanceId: rt.instanceId,
      boss: rt.boss() !== null,
      replica: rt.replica.count,
    };
  });
}

Deno.test({
  name: "a real browser whose link is cut for 3 s is back in its dungeon without a click",
  ignore: !chromiumThere && !requireBrowser,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = new GameServer({ clock: realClock, worldDef: straightToTheBoss });
    const js = bundleClient({ minify: false });
    const app = createApp(server, { clientJs: () => js });
    server.start();
    const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
    await js;
    const relay = LinkRelay.start({
      target: { hostname: "127.0.0.1", port: http.addr.port },
      spec: linkSpec({ delayMs: 40 }),
    });
    const dir = await Deno.makeTempDir({ prefix: "bh_resume_" });
    const ctx = await launchChromium(dir, { viewport: { width: 1280, height: 720 } });
    try {
      const page = await ctx.newPage();
      await page.goto(relay.url("http", "/"));
      await page.fill("#pilot-name", "Cutter");
      await page.click("button[type=submit]");
      await page.waitForFunction(
        () => {
          const rt = (globalThis as unknown as WithBh).__bh.runtime;
          return rt?.phase === "playing" && rt.world?.kind === "dungeon" && rt.boss() !== null;
        },
        undefined,
        { timeout: 15_000 },
      );
      await page.waitForTimeout(1500); // the boss fight is on: bullets on screen
      const before = await state(page);
      assert.ok(before.replica > 0, "bullets in the air");
      await shot(page, "resume_1_fight.png");

      relay.cut(3000);
      const cutAt = performance.now();
      await page.waitForSelector("[data-testid=reconnecting]", { timeout: 4000 });
      const noticedMs = performance.now() - cutAt;
      await shot(page, "resume_2_reconnecting.png");
      assert.equal(await page.$("[data-testid=disconnected]"), null, "no Disconnected card");

      await page.waitForSelector("[data-testid=reconnecting]", {
        state: "detached",
        timeout: 10_000,
      });
      const backMs = performance.now() - cutAt;
      // Back in play: the Enter's bullets and a snapshot after it (the Enter clears the
      // snapshots, and the first one comes on the dungeon's next snapshot tick).
      await page.waitForFunction(
        () => {
          const rt = (globalThis as unknown as WithBh).__bh.runtime;
          return rt?.phase === "playing" && rt.replica.count > 0 && rt.latest() !== undefined;
        },
        undefined,
        { timeout: 3000 },
      );
      const after = await state(page);
      await page.waitForTimeout(300);
      await shot(page, "resume_3_back.png");
      console.log(
        `browser: cut 3000 ms, "reconnecting…" after ${noticedMs.toFixed(0)} ms, back after ` +
          `${backMs.toFixed(0)} ms; ${before.instanceId} player ${before.playerId} → ` +
          `${after.instanceId} player ${after.playerId}; resumes ${server.counters.resumes}`,
      );
      assert.equal(after.instanceId, before.instanceId, "the same dungeon");
      assert.equal(after.playerId, before.playerId, "the same player");
      assert.ok(after.boss, "the boss fight goes on");
      assert.equal(server.counters.resumes, 1);
      const toasts = await page.evaluate(() =>
        document.querySelector(".toasts")?.textContent ?? ""
      );
      assert.match(toasts, /Reconnected — right where you left off/, "the page says so");
    } finally {
      await ctx.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await relay[Symbol.asyncDispose]();
      server.shutdown("test over");
      await http.shutdown();
      await stopBundler();
    }
  },
});
