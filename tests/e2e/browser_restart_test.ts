/**
 * A real process restarted under a real page: headless Chromium plays the real bundle
 * served by `deno run -A main.ts`; the process gets SIGTERM (no run in progress: it
 * closes everyone with 4009 and exits), stays down for 2 s, and a new process starts
 * on the same port. The page shows "Server restarting — reconnecting…" over the frozen
 * game, never the Disconnected card, and is back in a hub without a click, told why.
 * Screenshots land in .screenshots/. Skips without Chromium unless REQUIRE_BROWSER=1.
 */
import assert from "node:assert/strict";
import { CHROMIUM_PATH, hasChromium, launchChromium } from "../../tools/chromium.ts";
import type { ClientRuntime } from "../../net/client/runtime.ts";
import { startMain } from "./_main.ts";
import type { Page } from "playwright-core";

const SHOTS = new URL("../../.screenshots/", import.meta.url);
const chromiumThere = hasChromium();
const requireBrowser = Deno.env.get("REQUIRE_BROWSER") === "1";
if (!chromiumThere && !requireBrowser) {
  console.warn(`SKIPPING the browser restart test: ${CHROMIUM_PATH} not found`);
}

type WithBh = { __bh: { readonly runtime: ClientRuntime | undefined } };

async function shot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: new URL(name, SHOTS).pathname });
}

function inHub(): boolean {
  const rt = (globalThis as unknown as WithBh).__bh.runtime;
  return rt?.phase === "playing" && rt.world?.kind === "hub" && rt.selfSnapshot() !== undefined;
}

Deno.test({
  name: "a real process restarted under a page: it comes back by itself, without a click",
  ignore: !chromiumThere && !requireBrowser,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    // Both lives share TOKEN_SECRET, as a deployment should: the new one can tell the
    // player why their old session is gone.
    const env = { TOKEN_SECRET: "ab".repeat(32) };
    const first = await startMain(env);
    const base = `http://127.0.0.1:${first.port}/`;
    const dir = await Deno.makeTempDir({ prefix: "bh_restart_" });
    const ctx = await launchChromium(dir, { viewport: { width: 1280, height: 720 } });
    let second: Awaited<ReturnType<typeof startMain>> | undefined;
    try {
      const page = await ctx.newPage();
      await page.goto(base);
      await page.fill("#pilot-name", "Stayer");
      await page.click("button[type=submit]");
      await page.waitForFunction(inHub, undefined, { timeout: 20_000 });
      await shot(page, "restart_1_hub.png");

      const signalledAt = performance.now();
      first.child.kill("SIGTERM");
      const banner = await page.waitForSelector("[data-testid=reconnecting]", { timeout: 5000 });
      const noticedMs = performance.now() - signalledAt;
      assert.equal(await banner.getAttribute("data-why"), "restart", "read as a restart");
      assert.match((await banner.textContent()) ?? "", /Server restarting — reconnecting…/);
      assert.equal((await first.child.status).code, 0, "the old process exited cleanly");
      await page.waitForTimeout(2000); // down: the page keeps trying
      await shot(page, "restart_2_restarting.png");
      assert.equal(await page.$("[data-testid=disconnected]"), null, "no Disconnected card");
      assert.ok(await page.$("[data-testid=reconnecting]"), "still reconnecting");

      const upAt = performance.now();
      second = await startMain(env, first.port);
      const upMs = performance.now() - upAt;
      await page.waitForSelector("[data-testid=reconnecting]", {
        state: "detached",
        timeout: 15_000,
      });
      await page.waitForFunction(inHub, undefined, { timeout: 5000 });
      const backMs = performance.now() - upAt;
      await page.waitForTimeout(300);
      await shot(page, "restart_3_back.png");
      assert.equal(await page.$("[data-testid=disconnected]"), null, "never Disconnected");
      const toasts = await page.evaluate(() =>
        document.querySelector(".toasts")?.textContent ?? ""
      );
      console.log(
        `browser restart: banner ${noticedMs.toFixed(0)} ms after SIGTERM; new process up in ` +
          `${upMs.toFixed(0)} ms; page back ${backMs.toFixed(0)} ms after it started; ` +
          `toast "${toasts}" (load ${Deno.loadavg().map((l) => l.toFixed(1)).join(" ")})`,
      );
      assert.match(toasts, /server restarted/i, "the page says what happened");
    } finally {
      await ctx.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await first[Symbol.asyncDispose]();
      await second?.[Symbol.asyncDispose]();
    }
  },
});
