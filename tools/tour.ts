/**
 * The player's tour: a real server, two bot crewmates and headless Chromium playing
 * the whole game as a person would, through a bad link, at several screen sizes —
 * the connect screen, the hub, the Fold (both waves, the Warden's four phases with
 * focus held, the clear, the results, "again with this crew", a death), the hub,
 * the Sunken Choir (its waves, the Cantor's phases, a dropped link taken back, an
 * escape). A screenshot at every step lands in `.screenshots/tour/<size>/`; look at
 * them. The last line is JSON: per size, page errors, console errors, HUD problems
 * per step (overlaps, text cut off, HUD on the arena), frame-interval figures, the
 * snapshots the page could not use (a delta whose baseline it lacked), and how far the
 * crewmates' shots (those fired since the page arrived) were from their ships, as drawn,
 * on the first frame that drew each.
 *
 *   deno task tour                                  every size, LINK_SIM 150±50,stall=250/4000
 *   deno task tour --size 390x844 --link 75±25      one size, another link
 *
 * The server runs in this process so the tour can move a fight along (a boss's HP
 * set near its next phase) and keep the pilot alive until it is meant to die; the
 * page and the bots each reach it through a LinkRelay with the simulated link.
 */
import type { CDPSession, Page } from "playwright-core";
import { Bot } from "../net/client/bot.ts";
import type { ClientRuntime } from "../net/client/runtime.ts";
import { LinkRelay, type LinkSpec, linkSpec, parseLinkSpec } from "../net/link/mod.ts";
import { realClock } from "../net/server/scheduler.ts";
import { GameServer } from "../net/server/server.ts";
import { Choice, StageCode } from "../net/wire/mod.ts";
import { createApp } from "../routes/app.ts";
import type { Renderer } from "../client/renderer.ts";
import type { PlayerState, SimWorld } from "../sim/mod.ts";
import { bundleClient, stopBundler } from "./build.ts";
import { hasChromium, launchChromium } from "./chromium.ts";
import { type FrameFigures, frameFigures } from "./frame_figures.ts";
import { type HudReport, hudReport } from "./hud_report.ts";

/** One screen the tour plays on. */
interface Size {
  readonly w: number;
  readonly h: number;
  readonly touch: boolean;
}

const SIZES: readonly Size[] = [
  { w: 1280, h: 800, touch: false },
  { w: 1920, h: 1080, touch: false },
  { w: 390, h: 844, touch: true },
  { w: 844, h: 390, touch: true },
];
const DEFAULT_LINK = "150±50,stall=250/4000";
const OUT = new URL("../.screenshots/tour/", import.meta.url);

type WithBh = {
  __bh: { readonly runtime: ClientRuntime | undefined; readonly renderer: Renderer | undefined };
  /** Each animation frame since the hub: when the one before it began, and the interval (ms). */
  __frames?: [number, number][];
  /** From the Fold on: how far each ally's shot was from its ship when first drawn (px). */
  __allyShotPx?: number[];
  /** From the Fold on, summed over runtimes: the five counts of `hitsOnEnemies`. */
  __hitCounts?: () => number[];
};

/** What one size's tour found. */
interface SizeReport {
  size: string;
  steps: string[];
  pageErrors: string[];
  consoleErrors: string[];
  hud: Record<string, Partial<Pick<HudReport, "collisions" | "onArena" | "offScreen" | "clipped">>>;
  /**
   * Frame intervals in the page, without those that overlap a screenshot: headless
   * Chromium holds a frame up while it captures one, and that is the tool's stall, not
   * the game's (counted apart as `atScreenshots`).
   */
  frameMs?: FrameFigures;
  /**
   * Deltas whose baseline the page lacked (each one a snapshot it could not use): over
   * the simulated link's jitter and stalls, a frame the server counted as sent was lost.
   */
  snapshotsWithoutBaseline?: number;
  /**
   * Other players' shots, read off each drawn scene: how far each was from the ship that
   * fired it, as drawn, on the first frame that drew it (px).
   */
  allyShotsFirstDrawnPx?: {
    shots: number;
    median: number;
    p90: number;
    p99: number;
    max: number;
    /** Shots first drawn more than 10 px from their ship: the tail, which the max is one of. */
    over10: number;
  };
  /**
   * The server's hits on enemies the page heard of, those already felt when a shot
   * vanished on the enemy as drawn, and the strikes: all, unclaimed by any hit, and on
   * enemies the server had already killed.
   */
  hitsOnEnemies?: {
    fromServer: number;
    feltAtStrike: number;
    strikes: number;
    unclaimed: number;
    overkill: number;
  };
}

/** Where the page's pilot goes and what it holds; the pilot loop reads this. */
interface Orders {
  goal?: { x: number; y: number } | "portal0" | "portal1";
  fire: boolean;
  escape: boolean;
  focus: boolean;
  /** Keep the ship's HP up server-side (the tour is about the screens). */
  guard: boolean;
}

function arg(name: string): string | undefined {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}

/** The page's view of itself, read in the page. */
function pageState(page: Page) {
  return page.evaluate(() => {
    const rt = (globalThis as unknown as WithBh).__bh.runtime;
    const me = rt?.selfView();
    const snap = rt?.latest();
    return {
      phase: rt?.phase,
      id: rt?.playerId ?? 0,
      instance: rt?.instanceId ?? "",
      kind: rt?.world?.kind,
      arena: rt?.world ? { w: rt.world.arena.widthPx, h: rt.world.arena.heightPx } : undefined,
      portals: rt?.world?.portals.map((p) => ({ x: p.x, y: p.y })) ?? [],
      me: me && { x: me.x, y: me.y },
      stage: snap?.stage,
      wave: snap?.wave,
      enemies: snap?.enemies.length ?? 0,
      boss: snap?.boss ? { phase: snap.boss.phase, hp: snap.boss.hp } : null,
    };
  });
}

/** Screen position of the nearest enemy (or the boss) from the own ship, in CSS px. */
function targetOnScreen(page: Page) {
  return page.evaluate(() => {
    const bh = (globalThis as unknown as WithBh).__bh;
    const rt = bh.runtime;
    const cam = bh.renderer?.camera;
    const me = rt?.selfView();
    if (!rt || !cam || !me) return undefined;
    const spots: { x: number; y: number }[] = rt.enemies().map((e) => ({ x: e.x, y: e.y }));
    const boss = rt.boss();
    const def = rt.world?.boss;
    if (boss && def) spots.push({ x: def.x, y: def.y });
    spots.sort((a, b) => Math.hypot(a.x - me.x, a.y - me.y) - Math.hypot(b.x - me.x, b.y - me.y));
    return spots[0] && cam.toScreen(spots[0].x, spots[0].y);
  });
}

/** Holds and releases keys toward the orders, aims at the nearest foe, ~12 times a second. */
class Pilot {
  readonly orders: Orders = { fire: false, escape: false, focus: false, guard: true };
  readonly #page: Page;
  readonly #held = new Set<string>();
  #running = true;
  readonly done: Promise<void>;
  readonly #ship: () => { ship: PlayerState | undefined; world: SimWorld | undefined };

  constructor(
    page: Page,
    ship: () => { ship: PlayerState | undefined; world: SimWorld | undefined },
  ) {
    this.#page = page;
    this.#ship = ship;
    this.done = this.#loop();
  }

  async #hold(key: string, on: boolean): Promise<void> {
    if (on && !this.#held.has(key)) {
      this.#held.add(key);
      await this.#page.keyboard.down(key);
    } else if (!on && this.#held.delete(key)) await this.#page.keyboard.up(key);
  }

  async #loop(): Promise<void> {
    while (this.#running) {
      try {
        await this.#step();
      } catch {
        // the page is navigating or closing: try again on the next beat
      }
      await new Promise((r) => setTimeout(r, 80));
    }
    for (const k of [...this.#held]) await this.#hold(k, false).catch(() => {});
  }

  async #step(): Promise<void> {
    const o = this.orders;
    const { ship, world } = this.#ship();
    if (o.guard && ship && world && ship.status === "active") {
      ship.hp = Math.max(ship.hp, world.def.player.maxHp - 1);
    }
    const s = await pageState(this.#page);
    let goal: { x: number; y: number } | undefined;
    if (o.goal === "portal0" || o.goal === "portal1") {
      goal = s.portals[o.goal === "portal0" ? 0 : 1];
    } else goal = o.goal;
    const me = s.me;
    const dx = goal && me ? goal.x - me.x : 0;
    const dy = goal && me ? goal.y - me.y : 0;
    await this.#hold("KeyD", dx > 8);
    await this.#hold("KeyA", dx < -8);
    await this.#hold("KeyS", dy > 8);
    await this.#hold("KeyW", dy < -8);
    await this.#hold("Space", o.fire);
    await this.#hold("KeyQ", o.escape);
    await this.#hold("ShiftLeft", o.focus);
    if (o.fire) {
      const at = await targetOnScreen(this.#page);
      if (at) await this.#page.mouse.move(at.x, at.y);
    }
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.done;
  }
}

async function waitFor(
  what: string,
  test: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!(await test())) {
    if (performance.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function tourOne(
  size: Size,
  opts: { server: GameServer; pageRelay: LinkRelay; botRelay: LinkRelay },
): Promise<SizeReport> {
  const { server, pageRelay, botRelay } = opts;
  const tag = `${size.w}x${size.h}`;
  const out = new URL(`${tag}/`, OUT);
  await Deno.remove(out, { recursive: true }).catch(() => {});
  await Deno.mkdir(out, { recursive: true });
  const report: SizeReport = { size: tag, steps: [], pageErrors: [], consoleErrors: [], hud: {} };
  const dir = await Deno.makeTempDir({ prefix: "bh_tour_" });
  const ctx = await launchChromium(dir, {
    viewport: { width: size.w, height: size.h },
    hasTouch: size.touch,
    isMobile: size.touch,
  });
  const page = ctx.pages()[0] ?? await ctx.newPage();
  page.on("pageerror", (e) => report.pageErrors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") report.consoleErrors.push(m.text());
  });
  let n = 0;
  /** When each screenshot held the page up, on the page's clock (ms). */
  const shotSpans: [number, number][] = [];
  const pageNow = () => page.evaluate(() => performance.now());
  const shot = async (label: string) => {
    const name = `${String(n++).padStart(2, "0")}-${label}`;
    const from = await pageNow();
    await page.screenshot({ path: new URL(`${name}.png`, out).pathname });
    shotSpans.push([from, await pageNow()]);
    report.steps.push(name);
    const inGame = await page.evaluate(() =>
      !!(globalThis as unknown as WithBh).__bh.renderer?.layout &&
      !!document.querySelector(".hud")
    );
    if (!inGame) return;
    const r = await page.evaluate(hudReport);
    const bad = Object.fromEntries(
      (["collisions", "onArena", "offScreen", "clipped"] as const)
        .filter((k) => r[k].length > 0).map((k) => [k, r[k]]),
    );
    if (Object.keys(bad).length > 0) report.hud[name] = bad;
  };
  const serverSide = () => {
    // Reads the page's ids synchronously from the last state the pilot saw.
    const inst = server.instances.get(lastState.instance);
    return { world: inst?.world, ship: inst?.world.players.get(lastState.id) };
  };
  let lastState = { id: 0, instance: "" };
  const refresh = async () => {
    const s = await pageState(page);
    lastState = { id: s.id, instance: s.instance };
    return s;
  };
  let bots = ["Vega", "Orion"].map((name) =>
    new Bot(botRelay.url("ws", "/ws"), { name: `${name}${size.w}`, mode: "idle" })
  );
  const pilot = new Pilot(page, serverSide);
  const stateSync = setInterval(() => refresh().catch(() => {}), 150);
  try {
    await page.goto(pageRelay.url("http", "/?ws=1"));
    await page.waitForSelector("#pilot-name");
    await page.waitForTimeout(300);
    await shot("connect");
    await page.fill("#pilot-name", `Nova${size.w}`);
    await page.click("button[type=submit]");
    await shot("connecting");
    await page.waitForSelector("[data-testid=help]", { timeout: 15_000 });
    await page.waitForTimeout(1500);
    await shot("hub");
    // Frame intervals, measured by the page from here on.
    await page.evaluate(() => {
      const g = globalThis as unknown as WithBh;
      g.__frames = [];
      let last = performance.now();
      const tick = (t: number) => {
        g.__frames!.push([last, t - last]);
        last = t;
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });

    // Allies' shots, from here on: each drawn scene, after the game's own frame callback.
    await page.evaluate(() => {
      const g = globalThis as unknown as WithBh;
      g.__allyShotPx = [];
      const seen = new Set<string>();
      const look = () => {
        const scene = g.__bh.renderer?.lastScene;
        const at = g.__bh.runtime?.instanceId ?? "";
        // The crewmates' shots fired since the page arrived (the ones in flight then are in
        // the main replica: they were never at a muzzle here).
        const pool = scene?.allyShots;
        for (let i = 0; pool && i < pool.count; i++) {
          const ship = scene!.others.find((o) => o.id === pool.owner[i]);
          const key = `${at}/${pool.uid[i]}`;
          if (pool.team[i] !== 1 || !ship || seen.has(key)) continue;
          seen.add(key);
          g.__allyShotPx!.push(Math.hypot(pool.x[i] - ship.x, pool.y[i] - ship.y));
        }
        requestAnimationFrame(look);
      };
      requestAnimationFrame(look);
    });

    // Hits on enemies, from here on: each runtime's counts (a resume brings a new one).
    await page.evaluate(() => {
      const g = globalThis as unknown as WithBh;
      const counts = new Map<unknown, number[]>();
      g.__hitCounts = () => {
        const sum = [0, 0, 0, 0, 0];
        for (const c of counts.values()) c.forEach((n, k) => sum[k] += n);
        return sum;
      };
      const look = () => {
        const rt = g.__bh.runtime;
        if (rt) {
          counts.set(rt, [
            rt.enemyHitsTotal,
            rt.hitsFeltEarlyTotal,
            rt.strikesTotal,
            rt.strikesUnclaimedTotal,
            rt.strikesOverkillTotal,
          ]);
        }
        requestAnimationFrame(look);
      };
      requestAnimationFrame(look);
    });

    // The Fold, with the crew.
    for (const b of bots) b.mode = "portal";
    await waitFor(
      "the bots in the Fold",
      () => bots.every((b) => b.client.runtime.world?.kind === "dungeon"),
    );
    pilot.orders.goal = "portal0";
    await waitFor("the pilot in the Fold", async () => (await refresh()).kind === "dungeon");
    for (const b of bots) b.mode = "fight";
    pilot.orders.goal = undefined;
    pilot.orders.fire = true;
    await page.waitForTimeout(900);
    await shot("fold-arrival");
    await fightWaves(shot, { refresh, serverSide, pilot });
    await fightBoss("fold", shot, { refresh, serverSide, pilot, focusPhase: 2 });
    await page.waitForSelector("[data-testid=results]", { timeout: 30_000 });
    await page.waitForTimeout(600);
    await shot("fold-results");
    const before = (await refresh()).instance;
    await page.click("[data-testid=again]");
    for (const b of bots) b.client.runtime.choose(Choice.Again);
    await waitFor("again with this crew", async () => {
      const s = await refresh();
      return s.kind === "dungeon" && s.instance !== before;
    });
    await page.waitForTimeout(1200);
    await shot("fold-again");
    // A death: no guard, stand still among the first wave's bullets.
    pilot.orders.guard = false;
    pilot.orders.fire = false;
    const { ship } = serverSide();
    if (ship) ship.hp = 1;
    await page.waitForSelector("[data-testid=banner]", { timeout: 60_000 });
    await page.waitForTimeout(400);
    await shot("fold-death");
    await waitFor("back in the hub after the death", async () => (await refresh()).kind === "hub");
    pilot.orders.guard = true;
    await page.waitForTimeout(800);
    await shot("hub-after-death");
    await Promise.all(bots.map((b) => b.stop()));

    // The Sunken Choir, with a fresh crew.
    bots = ["Lyra", "Castor"].map((name) =>
      new Bot(botRelay.url("ws", "/ws"), { name: `${name}${size.w}`, portal: 1, mode: "portal" })
    );
    await waitFor(
      "the bots in the Choir",
      () => bots.every((b) => b.client.runtime.world?.kind === "dungeon"),
    );
    for (const b of bots) b.mode = "fight";
    pilot.orders.goal = "portal1";
    await waitFor("the pilot in the Choir", async () => (await refresh()).kind === "dungeon");
    pilot.orders.goal = undefined;
    pilot.orders.fire = true;
    await page.waitForTimeout(900);
    await shot("choir-arrival");
    await fightWaves(shot, { refresh, serverSide, pilot, prefix: "choir" });
    await fightBoss("choir", shot, { refresh, serverSide, pilot, untilPhase: 2 });
    // The link drops for 3 s in the boss fight: reconnecting…, then back.
    pageRelay.cut(3000);
    await page.waitForSelector("[data-testid=reconnecting]", { timeout: 5000 }).catch(() => {});
    await shot("choir-reconnecting");
    await page.waitForSelector("[data-testid=reconnecting]", {
      state: "detached",
      timeout: 15_000,
    });
    await page.waitForTimeout(500);
    await shot("choir-resumed");
    // Escape: hold Q through the channel (the guard keeps hits from cancelling it for long).
    pilot.orders.fire = false;
    pilot.orders.escape = true;
    await page.waitForSelector("[data-testid=escape]", { timeout: 10_000 });
    await page.waitForTimeout(1200);
    await shot("choir-escaping");
    await waitFor("escaped to the hub", async () => (await refresh()).kind === "hub", 30_000);
    pilot.orders.escape = false;
    await page.waitForTimeout(800);
    await shot("hub-after-escape");
    if (size.touch) await showThumbsticks(page, shot);
    const frames = await page.evaluate(() => (globalThis as unknown as WithBh).__frames ?? []);
    report.frameMs = frameFigures(frames, shotSpans);
    const allyPx = await page.evaluate(() => (globalThis as unknown as WithBh).__allyShotPx ?? []);
    allyPx.sort((a, b) => a - b);
    const at = (q: number) =>
      Math.round(10 * (allyPx[Math.min(allyPx.length - 1, Math.floor(q * allyPx.length))] ?? 0)) /
      10;
    report.allyShotsFirstDrawnPx = {
      shots: allyPx.length,
      median: at(0.5),
      p90: at(0.9),
      p99: at(0.99),
      max: at(1),
      over10: allyPx.filter((px) => px > 10).length,
    };
    const [fromServer, feltAtStrike, strikes, unclaimed, overkill] = await page.evaluate(() =>
      (globalThis as unknown as WithBh).__hitCounts?.() ?? []
    );
    report.hitsOnEnemies = { fromServer, feltAtStrike, strikes, unclaimed, overkill };
    report.snapshotsWithoutBaseline = await page.evaluate(() =>
      (globalThis as unknown as WithBh).__bh.runtime?.snapshotsWithoutBaseline ?? -1
    );
  } catch (err) {
    report.pageErrors.push(`tour stopped: ${(err as Error).message}`);
    await shot("stopped").catch(() => {});
  } finally {
    clearInterval(stateSync);
    await pilot.stop();
    await Promise.all(bots.map((b) => b.stop()));
    await ctx.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  return report;
}

interface FightCtx {
  refresh: () => ReturnType<typeof pageState>;
  serverSide: () => { world: SimWorld | undefined; ship: PlayerState | undefined };
  pilot: Pilot;
  prefix?: string;
}

/** Plays the waves; after 20 s of a wave its foes are left at 1 HP to keep the tour short. */
async function fightWaves(shot: (l: string) => Promise<void>, c: FightCtx): Promise<void> {
  const prefix = c.prefix ?? "fold";
  for (let wave = 0;; wave++) {
    await waitFor(`wave ${wave + 1}`, async () => {
      const s = await c.refresh();
      return (s.stage === StageCode.waves && s.wave === wave && s.enemies > 0) || s.boss !== null;
    });
    if ((await c.refresh()).boss) return;
    await new Promise((r) => setTimeout(r, 2500));
    await shot(`${prefix}-wave${wave + 1}`);
    const until = performance.now() + 20_000;
    await waitFor(`wave ${wave + 1} cleared`, async () => {
      const s = await c.refresh();
      // Past the time limit every foe is left one hit from death (the wave still ends by play).
      if (performance.now() > until) {
        for (const e of c.serverSide().world?.enemies ?? []) e.hp = 1;
      }
      return s.enemies === 0 || s.boss !== null;
    }, 40_000);
  }
}

/** The boss: each phase shown, then its HP set just over the next phase's line. */
async function fightBoss(
  prefix: string,
  shot: (l: string) => Promise<void>,
  c: FightCtx & { focusPhase?: number; untilPhase?: number },
): Promise<void> {
  await waitFor("the boss", async () => (await c.refresh()).boss !== null, 40_000);
  const phases = c.serverSide().world?.boss?.def.phases.length ?? 4;
  const last = c.untilPhase ?? phases - 1;
  for (let p = 0; p <= last; p++) {
    await waitFor(`phase ${p + 1}`, async () => ((await c.refresh()).boss?.phase ?? -1) >= p);
    await new Promise((r) => setTimeout(r, 3000));
    c.pilot.orders.focus = p === c.focusPhase;
    if (c.pilot.orders.focus) await new Promise((r) => setTimeout(r, 500));
    await shot(`${prefix}-boss-phase${p + 1}${c.pilot.orders.focus ? "-focus" : ""}`);
    c.pilot.orders.focus = false;
    if (p === last && c.untilPhase !== undefined) return;
    const boss = c.serverSide().world?.boss;
    if (!boss) return;
    const next = boss.def.phases[p + 1];
    boss.hp = next ? next.fromHpFrac * boss.maxHp + 4 : 6;
    if (!next) {
      await waitFor(
        "the boss down",
        async () => (await c.refresh()).stage !== StageCode.boss,
        30_000,
      );
      await new Promise((r) => setTimeout(r, 150));
      await shot(`${prefix}-boss-down`);
    }
  }
}

/** A thumb on each stick (touch emulation through CDP), held for a screenshot. */
async function showThumbsticks(page: Page, shot: (l: string) => Promise<void>): Promise<void> {
  const zones = await page.evaluate(() =>
    ["left", "right"].map((s) => {
      const r = document.querySelector(`[data-testid=stick-${s}]`)?.getBoundingClientRect();
      return r && { x: r.left + r.width / 2, y: r.top + r.height / 2 };
    })
  );
  const [l, r] = zones;
  if (!l || !r) return;
  const cdp: CDPSession = await page.context().newCDPSession(page);
  const touch = (
    type: "touchStart" | "touchMove" | "touchEnd",
    pts: { x: number; y: number; id: number }[],
  ) => cdp.send("Input.dispatchTouchEvent", { type, touchPoints: pts });
  await touch("touchStart", [{ x: l.x, y: l.y, id: 1 }, { x: r.x, y: r.y, id: 2 }]);
  await touch("touchMove", [{ x: l.x + 30, y: l.y - 20, id: 1 }, {
    x: r.x - 40,
    y: r.y - 30,
    id: 2,
  }]);
  await page.waitForTimeout(300);
  await shot("hub-thumbsticks");
  await touch("touchEnd", []);
  await cdp.detach();
}

if (import.meta.main) {
  if (!hasChromium()) {
    console.error("the tour needs Chromium at /usr/bin/chromium (or CHROMIUM_PATH)");
    Deno.exit(1);
  }
  const spec: LinkSpec | undefined = parseLinkSpec(arg("link") ?? DEFAULT_LINK);
  const only = arg("size");
  const sizes = only ? SIZES.filter((s) => `${s.w}x${s.h}` === only) : SIZES;
  const server = new GameServer({ clock: realClock });
  const js = bundleClient({ minify: false });
  const app = createApp(server, { clientJs: () => js });
  server.start();
  const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  await js;
  const target = { hostname: "127.0.0.1", port: http.addr.port };
  const pageRelay = LinkRelay.start({ target, spec: spec ?? linkSpec({ delayMs: 0 }) });
  const botRelay = LinkRelay.start({ target, spec: spec ?? linkSpec({ delayMs: 0 }) });
  const reports: SizeReport[] = [];
  try {
    for (const size of sizes) {
      const r = await tourOne(size, { server, pageRelay, botRelay });
      console.log(`${r.size}: ${r.steps.length} screenshots in .screenshots/tour/${r.size}/`);
      reports.push(r);
    }
  } finally {
    await pageRelay.close();
    await botRelay.close();
    server.shutdown("tour over");
    await http.shutdown();
    await stopBundler();
  }
  console.log(JSON.stringify({ link: arg("link") ?? DEFAULT_LINK, reports }));
}
