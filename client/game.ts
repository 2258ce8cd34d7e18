/**
 * The page's controller: owns the connection (a ClientRuntime on a WebSocket),
 * the two loops that drive it, the renderer and the HUD state, and turns server
 * events into banners and toasts. Screens read its signals; nothing else talks
 * to the network.
 */
import { signal } from "@preact/signals";
import { CONTENT } from "../content/mod.ts";
import {
  type ClientRuntime,
  connectClient,
  fetchServerAddress,
  type GameClient,
  type ReconnectReason,
  type SeenStrike,
} from "../net/client/mod.ts";
import {
  Choice,
  type EnterMsg,
  EnterReason,
  type HitRecord,
  type NetEvent,
  NoticeCode,
  Outcome,
  type ResultsMsg,
} from "../net/wire/mod.ts";
import type { EscapeCancelReason } from "../sim/mod.ts";
import { angleFromUnits, Button, HitTarget } from "../sim/mod.ts";
import { Arrivals } from "./arrivals.ts";
import { Sound } from "./audio.ts";
import { BenchScene } from "./bench.ts";
import { FLASH_MS } from "./draw_world.ts";
import { Effects, SHAKE_PX } from "./effects.ts";
import { HudState } from "./hud_state.ts";
import { InputController } from "./input.ts";
import { Renderer } from "./renderer.ts";
import { type HitFlash, sceneFromRuntime } from "./scene.ts";

/** Which screen the page shows. */
export type Screen = "connect" | "connecting" | "playing" | "disconnected";

/** Where the chosen name is remembered. */
const NAME_KEY = "warden.name";
/**
 * Where this tab keeps its resume token (sessionStorage: per tab, gone with it), so a
 * reload within the grace takes the same ship back.
 */
const RESUME_KEY = "warden.resume";
/** Where "no screen shake" is remembered. */
const CALM_KEY = "warden.calm";
/** Ticks keep flowing from a timer too: rAF stops in background tabs and stalls on slow frames. */
const TICK_INTERVAL_MS = 8;
const NETGRAPH_PERIOD_MS = 250;
/** Above this many players in an instance, joins and leaves are not toasted. */
const CROWD_TOASTS_MAX = 8;
/** How long after you enter an instance the players you were with may still catch up. */
const CATCH_UP_MS = 5000;

const CANCEL_TEXT: Record<EscapeCancelReason, string> = {
  damage: "Escape cancelled — you took damage",
  released: "Escape cancelled — key released",
  died: "Escape cancelled — you died",
};

/** Options of the game controller. */
export interface GameOptions {
  /** The page's URL: GET /transport there says how to connect (WebTransport, then /ws). */
  readonly pageUrl: string;
  /** Skip WebTransport (`?ws=1`). */
  readonly webSocketOnly?: boolean;
  /** Where to remember the player's name; absent in private modes that refuse storage. */
  readonly storage?: Storage;
  /** This tab's own storage, for the resume token (a reload resumes); absent: no reload resume. */
  readonly tabStorage?: Storage;
}

/** The whole client behind the screens. */
export class Game {
  readonly screen = signal<Screen>("connect");
  /** Why the last attempt failed or the connection ended. */
  readonly error = signal("");
  readonly name = signal("");
  /** Show the thumbsticks (set on the first touch). */
  readonly touch = signal(false);
  readonly hud = new HudState();
  readonly input: InputController;
  readonly effects = new Effects();
  readonly sound: Sound;
  /** The results screen of the run that just ended (null: none showing). */
  readonly results = signal<ResultsMsg | null>(null);
  readonly muted = signal(false);
  /** No screen shake (the OS asks for reduced motion, or the player chose it). */
  readonly calm = signal(false);
  /** The touch focus toggle. */
  readonly focusOn = signal(false);
  /**
   * Why the game is reconnecting by itself, or null: its link dropped ("link": the
   * session waits), or the server is restarting ("restart": back once it is up).
   */
  readonly reconnecting = signal<ReconnectReason | null>(null);
  readonly #pageUrl: string;
  readonly #webSocketOnly: boolean;
  readonly #storage: Storage | undefined;
  readonly #tabStorage: Storage | undefined;
  #client: GameClient | undefined;
  /** Bumped by every connect: an older attempt still resolving its address gives up. */
  #attempt = 0;
  #renderer: Renderer | undefined;
  #bench: BenchScene | undefined;
  #benchFlush = false;
  #raf = 0;
  #interval: ReturnType<typeof setInterval> | undefined;
  #flashes: HitFlash[] = [];
  #fps = { frames: 0, sinceMs: 0, value: 0 };
  #lastNetgraphMs = 0;
  /** A server notice to show once the Enter that follows it has cleared the old toasts. */
  #notice = "";
  /** The page is going away: its resume token stays for a reload. */
  #leaving = false;
  /** Your crew catching up after a portal or "again" is no news. */
  readonly #arrivals = new Arrivals();

  constructor(opts: GameOptions) {
    this.#pageUrl = opts.pageUrl;
    this.#webSocketOnly = opts.webSocketOnly ?? false;
    this.#storage = opts.storage;
    this.#tabStorage = opts.tabStorage;
    this.name.value = safeGet(this.#storage, NAME_KEY) ?? "";
    this.input = new InputController({
      onToggleNetgraph: () => this.hud.netgraphOn.value = !this.hud.netgraphOn.value,
      onToggleMute: () => this.toggleMute(),
    });
    this.input.attach();
    this.sound = new Sound({ storage: this.#storage });
    this.sound.attach();
    this.muted.value = this.sound.muted;
    const reduced = globalThis.matchMedia?.("(prefers-reduced-motion: reduce)").matches ?? false;
    this.calm.value = reduced || safeGet(this.#storage, CALM_KEY) === "1";
    this.effects.calm = this.calm.value;
    const coarse = globalThis.matchMedia?.("(pointer: coarse)").matches ?? false;
    this.touch.value = coarse;
    if (!coarse) {
      globalThis.addEventListener("touchstart", () => this.touch.value = true, {
        once: true,
        passive: true,
      });
    }
  }

  /** The live runtime (undefined before the first connect and in bench mode). */
  get runtime(): ClientRuntime | undefined {
    return this.#client?.runtime;
  }

  /** The renderer, once the canvas is mounted. */
  get renderer(): Renderer | undefined {
    return this.#renderer;
  }

  /** Gives the game its canvas (the play view mounts it once). */
  attachCanvas(canvas: HTMLCanvasElement): void {
    this.#renderer = new Renderer(canvas);
    this.#renderer.flushForTiming = this.#benchFlush;
  }

  /** Connects as `name` (remembered for next time). */
  play(name: string): void {
    const trimmed = name.trim();
    if (!trimmed) {
      this.error.value = "Pick a name first.";
      return;
    }
    this.name.value = trimmed;
    safeSet(this.#storage, NAME_KEY, trimmed);
    this.#connect();
  }

  /** Sound on or off (remembered). */
  toggleMute(): void {
    this.sound.setMuted(!this.sound.muted);
    this.muted.value = this.sound.muted;
  }

  /** Screen shake on or off (remembered). */
  toggleCalm(): void {
    this.calm.value = !this.calm.value;
    this.effects.calm = this.calm.value;
    safeSet(this.#storage, CALM_KEY, this.calm.value ? "1" : "0");
  }

  /** The touch focus toggle. */
  toggleFocus(): void {
    this.focusOn.value = !this.focusOn.value;
    this.input.touch.focus = this.focusOn.value;
  }

  /** Answers the results screen: again with this crew, or back to the hub. */
  choose(choice: Choice): void {
    this.results.value = null;
    this.#client?.runtime.choose(choice);
  }

  /** Connects again with the same name after a disconnect. */
  reconnect(): void {
    this.#connect();
  }

  /** Runs the renderer on a synthetic scene of `bullets` bullets, with no server. */
  startBench(bullets: number, opts: { flush: boolean }): void {
    this.#bench = new BenchScene(bullets);
    this.screen.value = "playing";
    this.#benchFlush = opts.flush;
    if (this.#renderer) this.#renderer.flushForTiming = opts.flush;
    this.hud.netgraphOn.value = true;
    this.#startLoops();
  }

  /**
   * Stops every loop, listener and socket (the page is going away). Closed with 1001,
   * not 1000: a reload in this tab takes the same ship back within the grace.
   */
  dispose(): void {
    this.#leaving = true;
    this.#stopLoops();
    this.input.detach();
    this.sound.detach();
    this.#attempt++;
    this.#client?.close(1001, "page closed");
  }

  async #connect(): Promise<void> {
    const attempt = ++this.#attempt;
    this.#stopLoops();
    this.#client?.close(1000, "reconnecting");
    this.#client = undefined;
    this.reconnecting.value = null;
    this.error.value = "";
    this.screen.value = "connecting";
    this.hud.reset();
    this.results.value = null;
    this.effects.clear();
    this.#flashes = [];
    const address = await fetchServerAddress(this.#pageUrl);
    if (attempt !== this.#attempt) return;
    const client = connectClient(address, {
      webSocketOnly: this.#webSocketOnly,
      name: this.name.value,
      now: () => performance.now(),
      onEvent: (e) => this.#onEvent(e),
      onEnter: (e) => this.#onEnter(e),
      onHit: (h, info) => this.#onHit(h, info.feltAtMs !== undefined),
      onResults: (r) => this.#onResults(r),
      // The shot sounds as it is drawn: at the muzzle, on the frame that fired it.
      onOwnShot: (n) => {
        if (n.outcome === "predicted") this.sound.play("shot", performance.now());
      },
      // Shots die on the boss with no message: a spark and a flash show every hit it takes,
      // allies' too, as the shot gets there.
      onShotSunk: (x, y) => this.#onShotSunk(x, y),
      // An own shot that vanishes on an enemy as drawn is the hit as the player sees it.
      onShotStruck: (s) => this.#onShotStruck(s),
      resume: safeGet(this.#tabStorage, RESUME_KEY),
      onToken: (token) => safeSet(this.#tabStorage, RESUME_KEY, token),
      // A resume's Notice comes between the Welcome and the Enter, which clears the toasts:
      // hold it. A drain's comes mid-game: show it now.
      onNotice: (n) => {
        if (n.code !== NoticeCode.Draining) this.#notice = n.text;
        else this.hud.toast(n.text, { nowMs: performance.now(), tone: "warn", forMs: 10_000 });
      },
      onReconnecting: (why) => this.reconnecting.value = why,
      onResumed: () => this.reconnecting.value = null,
    });
    this.#client = client;
    client.closed.then(() => {
      if (this.#client !== client) return; // an older socket, already replaced
      this.reconnecting.value = null;
      if (!this.#leaving) safeRemove(this.#tabStorage, RESUME_KEY);
      this.#stopLoops();
      const rt = client.runtime;
      const everPlayed = this.screen.value === "playing" || this.screen.value === "disconnected";
      if (rt.phase === "rejected" || !everPlayed) {
        this.screen.value = "connect";
        // A socket that never opened has no reason of its own, only a close code.
        this.error.value = rt.closeReason.startsWith("connection closed")
          ? `Could not reach the server — ${rt.closeReason}.`
          : rt.closeReason;
      } else {
        this.screen.value = "disconnected";
        this.error.value = rt.closeReason;
      }
    });
    this.#startLoops();
  }

  #startLoops(): void {
    this.#stopLoops();
    this.#raf = requestAnimationFrame(this.#frame);
    this.#interval = setInterval(this.#tick, TICK_INTERVAL_MS);
  }

  #stopLoops(): void {
    cancelAnimationFrame(this.#raf);
    clearInterval(this.#interval);
    this.#interval = undefined;
  }

  readonly #sample = () => this.input.sample(this.#renderer?.lastSelfScreen);

  readonly #tick = () => {
    this.#client?.runtime.update(performance.now(), this.#sample);
  };

  readonly #frame = () => {
    this.#raf = requestAnimationFrame(this.#frame);
    const now = performance.now();
    this.#countFrame(now);
    if (this.#bench) {
      this.#renderer?.draw(this.#bench.next(now));
      this.hud.setLayout(this.#renderer?.layout);
      this.#updateNetgraph(now);
      return;
    }
    const rt = this.#client?.runtime;
    if (!rt) return;
    rt.update(now, this.#sample);
    if (rt.phase === "playing" && rt.world && this.screen.value === "connecting") {
      this.screen.value = "playing";
    }
    if (this.#flashes.length > 0 && now - this.#flashes[0].atMs > FLASH_MS) {
      this.#flashes = this.#flashes.filter((f) => now - f.atMs <= FLASH_MS);
    }
    this.effects.prune(now, rt.replicaTick);
    const focus = (this.input.lastButtons & Button.Focus) !== 0;
    const renderer = this.#renderer;
    if (renderer) renderer.touch = this.touch.value;
    const scene = sceneFromRuntime(rt, {
      nowMs: now,
      aimUnits: this.input.lastAimUnits,
      flashes: this.#flashes,
      focus,
      telegraphs: this.effects.telegraphs,
      sparks: this.effects.sparks,
      shake: this.effects.shakeOffset(now),
    });
    if (scene) renderer?.draw(scene);
    this.hud.setLayout(renderer?.layout);
    this.hud.update(rt, now);
    this.#updateNetgraph(now);
  };

  #countFrame(now: number): void {
    const f = this.#fps;
    f.frames++;
    if (now - f.sinceMs >= 500) {
      f.value = (f.frames * 1000) / (now - f.sinceMs);
      f.frames = 0;
      f.sinceMs = now;
    }
  }

  #updateNetgraph(now: number): void {
    if (!this.hud.netgraphOn.value || now - this.#lastNetgraphMs < NETGRAPH_PERIOD_MS) return;
    this.#lastNetgraphMs = now;
    const rt = this.#client?.runtime;
    const s = rt?.stats;
    const times = this.#renderer?.drawTimes(120) ?? [];
    const via = this.#client?.transport;
    this.hud.net.value = {
      transport: via === "webtransport" ? "WebTransport" : via === "websocket" ? "WebSocket" : "",
      rttMs: s?.rttMs ?? 0,
      inKBps: (s?.bytesInPerSec ?? 0) / 1024,
      outKBps: (s?.bytesOutPerSec ?? 0) / 1024,
      snapshotAgeMs: s?.snapshotAgeMs ?? 0,
      correctionsPerSec: s?.correctionsPerSec ?? 0,
      bullets: this.#bench
        ? (this.#renderer?.bulletsDrawn ?? 0)
        : (rt ? rt.replica.count + rt.allyShots.count : 0),
      fps: this.#fps.value,
      leadTicks: s?.leadTicks ?? 0,
      drawP95Ms: percentile(times, 0.95),
    };
  }

  #isSelf(id: number): boolean {
    return id === this.#client?.runtime.playerId;
  }

  #nameOf(id: number): string {
    // The runtime forgets a leaver before telling us; last frame's roster still knows the name.
    return this.#client?.runtime.roster.get(id) ??
      this.hud.roster.value.find((l) => l.id === id)?.name ?? "A player";
  }

  #onEnter(e: EnterMsg): void {
    const now = performance.now();
    // Last frame's roster is the instance we left: those who came with us arrive next.
    this.#arrivals.entered(this.hud.roster.value.map((l) => l.name), {
      nowMs: now,
      windowMs: CATCH_UP_MS,
    });
    const grazes = this.hud.grazes.value;
    this.hud.reset();
    // A resume is the same run in the same instance: its graze count goes on (the next
    // Graze event would only bring it back with the next graze).
    if (e.reason === EnterReason.Resume) this.hud.grazes.value = grazes;
    this.hud.toasts.value = []; // news from the instance we left would only confuse
    this.#flashes = [];
    this.effects.clear();
    // A new run closes the last one's results; a transfer to the hub keeps them up.
    if (e.reason === EnterReason.Retry || e.reason === EnterReason.Portal) {
      this.results.value = null;
    }
    const toast = (text: string, tone: "info" | "good" = "info") =>
      this.hud.toast(text, { nowMs: now, tone, forMs: 3500 });
    switch (e.reason) {
      case EnterReason.Portal: {
        const arrival = CONTENT.worlds[e.worldId]?.words.arrival;
        if (arrival) toast(arrival);
        break;
      }
      case EnterReason.Escape:
        toast("Escape complete — you are back in the hub", "good");
        break;
      case EnterReason.Death:
        toast("Back in the hub. Try again?");
        break;
      case EnterReason.Cleared:
        toast("Dungeon cleared — welcome back, hero", "good");
        break;
      case EnterReason.Resume:
        toast("Reconnected — right where you left off", "good");
        break;
      case EnterReason.Evacuated:
        toast("That world hit a server error and was closed — you are safe in the hub");
        break;
      case EnterReason.Retry:
        toast(
          `Again — the crew regroups in ${CONTENT.worlds[e.worldId]?.name ?? "a fresh run"}`,
          "good",
        );
        break;
      case EnterReason.Return:
        toast("Back in the hub");
        break;
    }
    if (this.#notice) {
      this.hud.toast(this.#notice, { nowMs: now, tone: "warn", forMs: 7000 });
      this.#notice = "";
    }
  }

  #onResults(r: ResultsMsg): void {
    this.results.value = r;
    this.hud.banner.value = null; // the results say it all
    this.sound.play(r.outcome === Outcome.Cleared ? "victory" : "death", performance.now());
  }

  /**
   * The server's word on a hit. One the player already felt (a shot vanished on that
   * enemy as drawn) shows nothing more: its flash and sound came then.
   */
  #onHit(h: HitRecord, felt: boolean): void {
    if (felt) return;
    const now = performance.now();
    this.#flash({ target: h.target, targetId: h.targetId, atMs: now });
    const at = this.#client?.runtime.impactOf(h.uid);
    const self = h.target === HitTarget.Player && this.#isSelf(h.targetId);
    if (at) this.effects.spark({ x: at.x, y: at.y, atMs: now, kind: self ? "hurt" : "hit" });
    if (self) {
      this.hud.hurtAtMs.value = now;
      this.effects.shake(SHAKE_PX.hurt, now);
      this.sound.play("hurt", now);
    } else if (h.target === HitTarget.Enemy) {
      this.sound.play("hit", now);
    }
  }

  /**
   * A shot vanished on an enemy as drawn: a spark; the player's own is the hit they see,
   * flashed and heard now (an ally's when the server's hit lands on its timeline).
   */
  #onShotStruck(s: SeenStrike): void {
    const now = performance.now();
    this.effects.spark({ x: s.x, y: s.y, atMs: now, kind: "hit" });
    if (s.ally) return;
    this.#flash({ target: HitTarget.Enemy, targetId: s.enemyId, atMs: now });
    this.sound.play("hit", now);
  }

  /** A shot died on the boss as drawn: a spark, and a flash unless it is folded (unhurt). */
  #onShotSunk(x: number, y: number): void {
    const now = performance.now();
    this.effects.spark({ x, y, atMs: now, kind: "hit" });
    if (!this.#client?.runtime.boss()?.folding) {
      this.#flash({ target: HitTarget.Boss, targetId: 0, atMs: now });
    }
  }

  /** Flashes a target; one already flashing starts its flash again rather than doubling it. */
  #flash(flash: HitFlash): void {
    const same = this.#flashes.findIndex((f) =>
      f.target === flash.target && f.targetId === flash.targetId
    );
    if (same >= 0) this.#flashes.splice(same, 1);
    this.#flashes.push(flash);
  }

  #onEvent(e: NetEvent): void {
    const now = performance.now();
    const hud = this.hud;
    switch (e.type) {
      case "playerHit":
        if (this.#isSelf(e.playerId)) {
          // Contact damage has no bullet: shake and sound here, once per hit.
          hud.hurtAtMs.value = now;
          this.effects.shake(SHAKE_PX.hurt, now);
          this.sound.play("hurt", now);
        }
        break;
      case "graze":
        if (this.#isSelf(e.playerId)) {
          hud.grazes.value = e.total;
          const me = this.#client?.runtime.selfView();
          if (me) this.effects.spark({ x: me.x, y: me.y, atMs: now, kind: "graze" });
          this.sound.play("graze", now);
        }
        break;
      case "telegraph":
        this.effects.telegraphs.push({
          source: e.source,
          sourceId: e.sourceId,
          emitter: e.emitter,
          style: e.style,
          aimRad: angleFromUnits(e.aim),
          fireTick: e.tick + e.leadTicks,
          leadTicks: e.leadTicks,
          phase: this.#client?.runtime.boss()?.phase ?? 0,
        });
        if (e.source === "boss") this.sound.play("warn", now);
        break;
      case "playerDied":
        if (this.#isSelf(e.playerId)) {
          this.sound.play("death", now);
          const words = this.#client?.runtime.world?.words.death;
          hud.banner.value = {
            kind: "death",
            title: words?.title ?? "You fell — returning to the hub",
            sub: words?.sub ?? "Your crew fights on.",
          };
        } else {
          hud.toast(`${this.#nameOf(e.playerId)} fell`, { nowMs: now, tone: "warn" });
        }
        break;
      case "escapeCancelled":
        if (this.#isSelf(e.playerId)) {
          hud.escapeNote.value = { text: CANCEL_TEXT[e.reason], untilMs: now + 2200 };
        }
        break;
      case "escapeCompleted":
        if (!this.#isSelf(e.playerId)) {
          hud.toast(`${this.#nameOf(e.playerId)} escaped`, { nowMs: now });
        }
        break;
      case "waveStarted":
        hud.toast(`Wave ${e.wave + 1}`, { nowMs: now });
        break;
      case "bossSpawned":
        hud.toast(CONTENT.bosses[e.bossId]?.words.awakens ?? "The boss awakens", {
          nowMs: now,
          tone: "warn",
          forMs: 3500,
        });
        break;
      case "bossPhase": {
        if (e.phase > 0) {
          this.effects.shake(SHAKE_PX.phase, now);
          this.sound.play("phase", now);
        }
        // The Events message can beat the first snapshot carrying the boss: ask the world.
        const phase = this.#client?.runtime.world?.boss?.phases[e.phase];
        hud.toast(`Phase ${e.phase + 1}${phase ? ` — ${phase.name}` : ""}`, {
          nowMs: now,
          tone: "warn",
        });
        break;
      }
      case "bossDefeated": {
        this.effects.shake(SHAKE_PX.bossDown, now);
        // The results screen follows within a tick or two; until then, the news.
        const words = this.#client?.runtime.world?.boss?.words.defeated;
        if (!this.results.value) {
          hud.banner.value = {
            kind: "cleared",
            title: words?.title ?? "Dungeon cleared!",
            sub: words?.sub ?? "The boss is undone.",
          };
        }
        break;
      }
      case "playerJoined":
        if (
          !this.#isSelf(e.playerId) && this.#arrivals.isNews(e.name, now) && !this.#crowded()
        ) {
          hud.toast(`${e.name} joined`, { nowMs: now });
        }
        break;
      case "playerLeft":
        if (!this.#isSelf(e.playerId) && !this.#crowded()) {
          hud.toast(`${this.#nameOf(e.playerId)} left`, { nowMs: now });
        }
        break;
      case "portalRefused":
        if (this.#isSelf(e.playerId)) hud.toast(e.reason, { nowMs: now, forMs: 6000 });
        break;
    }
  }

  /** A busy hub: comings and goings are no news there. */
  #crowded(): boolean {
    return (this.#client?.runtime.roster.size ?? 0) > CROWD_TOASTS_MAX;
  }
}

/** The `q` quantile of `values` (0 for none). */
function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function safeGet(storage: Storage | undefined, key: string): string | undefined {
  try {
    return storage?.getItem(key) ?? undefined;
  } catch {
    return undefined; // storage disabled: the name is simply not remembered
  }
}

function safeRemove(storage: Storage | undefined, key: string): void {
  try {
    storage?.removeItem(key);
  } catch {
    // storage disabled: nothing was kept
  }
}

function safeSet(storage: Storage | undefined, key: string, value: string): void {
  try {
    storage?.setItem(key, value);
  } catch {
    // storage disabled or full: remembering the name is a nicety
  }
}
