/**
 * A headless bot: a ClientRuntime over a real WebSocket or WebTransport, piloted by the shared
 * brain. It walks into the portal, fights, dodges crudely and escapes when told,
 * and records what it was told by the server so a smoke run can assert on it.
 */
import { type InputSample } from "./runtime.ts";
import {
  type ClientOptions,
  connectClient,
  type GameClient,
  type ReconnectReason,
  type ServerAddress,
} from "./connect.ts";
import { think } from "../../sim/pilot.ts";
import type {
  EnterReason,
  EventName,
  NetEvent,
  NoticeMsg,
  ResultsMsg,
  SnapshotMsg,
} from "../wire/protocol.ts";
import { CONTENT } from "../../content/mod.ts";

/** What a bot has lived through. */
export interface BotLog {
  enters: { instanceId: string; reason: EnterReason; atMs: number }[];
  /** How many of each small event arrived. */
  events: Map<EventName, number>;
  escapeCompleted: boolean;
  died: boolean;
  bossDefeatedSeen: boolean;
  peakReplicaBullets: number;
  /** What the server let it know (a resume that failed, a restart coming). */
  notices: NoticeMsg[];
  /** The results screens it was shown (runs it took part in that ended). */
  results: ResultsMsg[];
  /** When its link dropped (or the server restarted) and when it was back (ms, the bot's clock). */
  drops: { lostAtMs: number; why: ReconnectReason; backAtMs?: number }[];
}

/** A bot's standing orders. */
export type BotMode = "portal" | "fight" | "escape" | "idle";

/** One headless player. */
export class Bot {
  readonly name: string;
  readonly client: GameClient;
  readonly log: BotLog = {
    enters: [],
    events: new Map(),
    escapeCompleted: false,
    died: false,
    bossDefeatedSeen: false,
    peakReplicaBullets: 0,
    notices: [],
    results: [],
    drops: [],
  };
  mode: BotMode = "portal";
  /** Which of the hub's portals to walk into. */
  readonly portal: number;
  readonly #now: () => number;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    address: ServerAddress | string,
    opts: {
      name: string;
      now?: () => number;
      mode?: BotMode;
      portal?: number;
      webSocketOnly?: boolean;
      /** A resume token from an earlier connection (a reload): the first hello takes it back. */
      resume?: string;
      /** How to come back after a dropped link or a restart (false: never). */
      reconnect?: ClientOptions["reconnect"];
      onSnapshot?: (snapshot: SnapshotMsg, nowMs: number) => void;
    },
  ) {
    this.name = opts.name;
    this.mode = opts.mode ?? "portal";
    this.portal = opts.portal ?? 0;
    this.#now = opts.now ?? (() => performance.now());
    this.client = connectClient(address, {
      name: opts.name,
      webSocketOnly: opts.webSocketOnly,
      resume: opts.resume,
      reconnect: opts.reconnect,
      onSnapshot: opts.onSnapshot,
      now: this.#now,
      onEnter: (e) =>
        this.log.enters.push({ instanceId: e.instanceId, reason: e.reason, atMs: this.#now() }),
      onEvent: (e) => this.#noteEvent(e),
      onNotice: (n) => this.log.notices.push(n),
      onResults: (r) => this.log.results.push(r),
      onReconnecting: (why) => this.log.drops.push({ lostAtMs: this.#now(), why }),
      onResumed: () => {
        const drop = this.log.drops.at(-1);
        if (drop) drop.backAtMs = this.#now();
      },
    });
    // Bots run their own loop at roughly the tick rate; the runtime catches up on late wakes.
    this.#timer = setInterval(() => this.update(), 8);
  }

  #noteEvent(e: NetEvent): void {
    this.log.events.set(e.type, (this.log.events.get(e.type) ?? 0) + 1);
    const me = this.client.runtime.playerId;
    if (e.type === "escapeCompleted" && e.playerId === me) this.log.escapeCompleted = true;
    if (e.type === "playerDied" && e.playerId === me) this.log.died = true;
    if (e.type === "bossDefeated") this.log.bossDefeatedSeen = true;
  }

  /** Runs the runtime up to now with the brain's input. */
  update(): void {
    const rt = this.client.runtime;
    const now = this.#now();
    rt.update(now, (tick) => this.#decide(tick, now));
    this.log.peakReplicaBullets = Math.max(
      this.log.peakReplicaBullets,
      rt.replica.count + rt.allyShots.count,
    );
  }

  #decide(tick: number, now: number): InputSample {
    const rt = this.client.runtime;
    const world = rt.world;
    const self = rt.selfView();
    if (!world || !self || this.mode === "idle") return { moveX: 0, moveY: 0, aim: 0, buttons: 0 };
    const targets = rt.enemies(now).map((e) => ({
      x: e.x,
      y: e.y,
      r: CONTENT.enemies[e.kind]?.radiusPx ?? 0,
    }));
    const boss = rt.boss();
    if (boss && boss.hp > 0) {
      const def = CONTENT.bosses[boss.bossId];
      targets.push({ x: def.x, y: def.y, r: def.radiusPx });
    }
    const frame = think(
      {
        self,
        arena: world.arena,
        targets: world.kind === "hub" ? [] : targets,
        bullets: rt.replica,
        goal: this.mode === "portal" ? world.portals[this.portal] : undefined,
      },
      { tick, escape: this.mode === "escape", style: rt.playerId },
    );
    return { moveX: frame.moveX, moveY: frame.moveY, aim: frame.aim, buttons: frame.buttons };
  }

  /** Stops the loop and closes the socket. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    // Closes the socket if open, and ends any retries of a dropped link.
    this.client.close(1000, "bot done");
    await this.client.closed;
  }
}
