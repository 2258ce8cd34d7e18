/**
 * Layout and the genre's screens in a real Chromium at phone, tablet and desktop
 * sizes (touch emulated on the phone and tablet): in the hub, a wave and the boss
 * fight, no piece of HUD text overlaps another, nothing of the HUD covers the
 * arena, the whole arena fits, touch screens get touch hints and the escape button
 * sits off the playfield. Then a wipe brings the results screen and "Again with
 * this crew" starts a new dungeon. Screenshots land in .screenshots/layout-*.png.
 * The real server runs in-process (75 ms each way); the test moves the fight along
 * through the server's public world state (skip to the boss, make the ship last).
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { CHROMIUM_PATH, hasChromium, launchChromium } from "../../tools/chromium.ts";
import type { ClientRuntime } from "../../net/client/runtime.ts";
import { linkSpec } from "../../net/link/mod.ts";
import { realClock } from "../../net/server/scheduler.ts";
import { GameServer } from "../../net/server/server.ts";
import { createApp } from "../../routes/app.ts";
import { bundleClient, stopBundler } from "../../tools/build.ts";
import { type HudReport, hudReport } from "../../tools/hud_report.ts";
import type { Renderer } from "../../client/renderer.ts";
import type { Effects } from "../../client/effects.ts";
import type { Sound } from "../../client/audio.ts";

const SHOTS = new URL("../../.screenshots/", import.meta.url);
const chromiumThere = hasChromium();
const requireBrowser = Deno.env.get("REQUIRE_BROWSER") === "1";

const SIZES = [
  { w: 390, h: 844, touch: true },
  { w: 844, h: 390, touch: true },
  { w: 768, h: 1024, touch: true },
  { w: 1280, h: 800, touch: false },
  { w: 1920, h: 1080, touch: false },
] as const;

interface Bh {
  readonly runtime: ClientRuntime | undefined;
  readonly renderer: Renderer | undefined;
  readonly effects: Effects;
  readonly sound: Sound;
}
type WithBh = { __bh: Bh };

function checkHud(r: HudReport, where: string, size: { w: number; h: number; touch: boolean }) {
  assert.deepEqual(r.collisions, [], `${where}: HUD boxes overlap`);
  assert.deepEqual(r.offScreen, [], `${where}: HUD boxes off screen`);
  assert.deepEqual(r.clipped, [], `${where}: HUD text cut off`);
  assert.deepEqual(r.onArena, [], `${where}: HUD over the arena`);
  // The whole arena is on screen, and in portrait it takes the whole width.
  assert.ok(r.arena.x >= -0.5 && r.arena.y >= -0.5, `${where}: arena starts on screen`);
  assert.ok(r.arena.x + r.arena.w <= size.w + 0.5, `${where}: arena fits the width`);
  assert.ok(r.arena.y + r.arena.h <= size.h + 0.5, `${where}: arena fits the height`);
  if (size.h > size.w) {
    assert.ok(r.arena.w >= size.w - 1, `${where}: portrait shows the whole width`);
  }
  if (size.touch) assert.doesNotMatch(r.texts, /Hold Q|WASD/, `${where}: keyboard hints on touch`);
  else assert.doesNotMatch(r.texts, /thumb/i, `${where}: touch hints with a keyboard`);
}

async function shot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: new URL(name, SHOTS).pathname });
}

/** Holds movement keys toward the hub portal until the ship is in a dungeon. */
async function walkIntoPortal(page: Page): Promise<void> {
  const held = new Set<string>();
  const hold = async (key: string, on: boolean) => {
    if (on && !held.has(key)) {
      await page.keyboard.down(key);
      held.add(key);
    } else if (!on && held.delete(key)) await page.keyboard.up(key);
  };
  const deadline = performance.now() + 15_000;
  try {
    for (;;) {
      const state = await page.evaluate(() => {
        const rt = (globalThis as unknown as WithBh).__bh.runtime!;
        const me = rt.selfView();
        return {
          kind: rt.world?.kind,
          portal: rt.world?.portals[0],
          me: me && { x: me.x, y: me.y },
        };
      });
      if (state.kind === "dungeon") return;
      if (performance.now() > deadline) throw new Error("walking into the portal timed out");
      if (state.portal && state.me) {
        const dx = state.portal.x - state.me.x;
        const dy = state.portal.y - state.me.y;
        await hold("KeyD", dx > 6);
        await hold("KeyA", dx < -6);
        await hold("KeyS", dy > 6);
        await hold("KeyW", dy < -6);
      }
      await page.waitForTimeout(40);
    }
  } finally {
    for (const k of [...held]) await hold(k, false);
  }
}

Deno.test({
  name: "layout: no HUD collisions, the whole arena, touch hints, results and retry, at 5 sizes",
  ignore: !chromiumThere && !requireBrowser,
  async fn(t) {
    if (!chromiumThere) {
      throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM_PATH} is missing: install Chromium`);
    }
    const server = new GameServer({ clock: realClock });
    const js = bundleClient({ minify: false });
    const app = createApp(server, { clientJs: () => js, linkSim: linkSpec({ delayMs: 75 }) });
    server.start();
    const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
    await js;
    const url = `http://127.0.0.1:${http.addr.port}/`;
    /** The server-side ship of the page's player, and its instance's world. */
    const serverSide = async (page: Page) => {
      const { id, instance } = await page.evaluate(() => {
        const rt = (globalThis as unknown as WithBh).__bh.runtime!;
        return { id: rt.playerId, instance: rt.instanceId };
      });
      const world = server.instances.get(instance)!.world;
      return { world, ship: world.players.get(id)! };
    };
    try {
      for (const size of SIZES) {
        const tag = `${size.w}x${size.h}`;
        await t.step(`${tag}${size.touch ? " touch" : ""}`, async () => {
          const dir = await Deno.makeTempDir({ prefix: "bh_layout_" });
          const ctx = await launchChromium(dir, {
            viewport: { width: size.w, height: size.h },
            hasTouch: size.touch,
            isMobile: size.touch,
          });
          try {
            const page = ctx.pages()[0] ?? await ctx.newPage();
            const errors: string[] = [];
            page.on("pageerror", (e) => errors.push(String(e)));
            await page.goto(url);
            await page.waitForSelector("#pilot-name");
            const hint = await page.textContent("[data-testid=connect-hint]");
            if (size.touch) assert.match(hint ?? "", /thumb/, "touch hint on the connect screen");
            else assert.match(hint ?? "", /WASD/, "keyboard hint on the connect screen");
            const soundStarted = () =>
              page.evaluate(() => (globalThis as unknown as WithBh).__bh.sound.started);
            assert.equal(await soundStarted(), false, "no audio before a gesture");
            await shot(page, `layout-${tag}-0-connect.png`);
            await page.fill("#pilot-name", `P${size.w}`);
            await page.click("button[type=submit]");
            await page.waitForSelector("[data-testid=help]");
            await page.waitForTimeout(400);
            assert.equal(await soundStarted(), true, "the Play gesture started the audio");
            if (!size.touch) {
              // M mutes; the choice survives a reload.
              await page.keyboard.press("KeyM");
              assert.equal(await page.textContent("[data-testid=mute]"), "sound off");
              assert.equal(await page.evaluate(() => localStorage.getItem("warden.muted")), "1");
              await page.reload();
              await page.fill("#pilot-name", `P${size.w}`);
              await page.click("button[type=submit]");
              await page.waitForSelector("[data-testid=help]");
              assert.equal(await page.textContent("[data-testid=mute]"), "sound off");
              await page.click("[data-testid=mute]");
              assert.equal(await page.evaluate(() => localStorage.getItem("warden.muted")), "0");
              await page.waitForTimeout(300);
            }
            checkHud(await page.evaluate(hudReport), `${tag} hub`, size);
            await shot(page, `layout-${tag}-1-hub.png`);

            await walkIntoPortal(page);
            const { world, ship } = await serverSide(page);
            ship.hp = 200; // the test is about the screen, not surviving (hp is a u8 on the wire)
            await page.waitForSelector("[data-testid=wave-hp]", { timeout: 10_000 });
            await page.waitForTimeout(1200);
            checkHud(await page.evaluate(hudReport), `${tag} wave`, size);
            if (size.touch) {
              const esc = await page.locator("[data-testid=escape-button]").boundingBox();
              const arena = (await page.evaluate(hudReport)).arena;
              assert.ok(esc, "a touch screen gets an escape button in a dungeon");
              const over = esc.x < arena.x + arena.w && arena.x < esc.x + esc.width &&
                esc.y < arena.y + arena.h && arena.y < esc.y + esc.height;
              assert.ok(!over, "the escape button sits off the playfield");
            }
            await shot(page, `layout-${tag}-2-wave.png`);

            // Straight to the Warden: no foes left, no waves left, no wait.
            world.enemies.length = 0;
            world.wave = world.def.waves.length;
            world.stageTicks = 0;
            await page.waitForSelector("[data-testid=boss]", { timeout: 10_000 });
            await page.waitForTimeout(2500);
            checkHud(await page.evaluate(hudReport), `${tag} boss`, size);
            await shot(page, `layout-${tag}-3-boss.png`);
            // The Warden's aimed spread warns with a line before it fires. The line shows for
            // its lead (30 ticks) less the client's input lead: on a loaded host a page this
            // large sends late frames, the lead grows (18–26 ticks measured here), and the line
            // is up for only a few ticks before its shot. Seen while its shot is to come is the
            // claim; a spread comes every 1.6 s.
            await page.waitForFunction(
              () => {
                const bh = (globalThis as unknown as WithBh).__bh;
                const tick = bh.runtime!.replicaTick;
                return bh.effects.telegraphs.some((t) =>
                  t.source === "boss" && t.style === "line" && t.fireTick - tick > 0
                );
              },
              undefined,
              { timeout: 20_000, polling: 16 },
            );
            await shot(page, `layout-${tag}-3b-telegraph.png`);

            // A wipe: the results screen, then again with this crew.
            ship.hp = 1;
            ship.iframeTicks = 0;
            const results = page.locator("[data-testid=results]");
            await results.waitFor({ timeout: 30_000 });
            assert.match(await results.textContent() ?? "", new RegExp(`P${size.w}`));
            await shot(page, `layout-${tag}-4-results.png`);
            const before = await page.evaluate(() =>
              (globalThis as unknown as WithBh).__bh.runtime!.instanceId
            );
            await page.click("[data-testid=again]");
            await page.waitForFunction(
              (before) => {
                const rt = (globalThis as unknown as WithBh).__bh.runtime!;
                return rt.world?.kind === "dungeon" && rt.instanceId !== before &&
                  rt.instanceId !== "hub";
              },
              before,
              { timeout: 10_000 },
            );
            assert.equal(await results.count(), 0, "the results close on a new run");
            assert.deepEqual(errors, [], "no page errors");
          } finally {
            await ctx.close();
            await Deno.remove(dir, { recursive: true }).catch(() => {});
          }
        });
      }
    } finally {
      server.shutdown("test over");
      await http.shutdown();
      await stopBundler();
    }
  },
});
