/**
 * Connection churn. In process on a ManualClock: 300 overlapping connect/
 * disconnect cycles of every kind (hanging up mid-handshake, timing out, leaving
 * the hub, leaving a dungeon reached on foot or by a direct transfer, being closed
 * by the server for a bad frame). After the run
 * (tests/e2e/churn_ws_test.ts repeats it over real WebSockets), nothing may be left behind: no dungeon, no connection, no player, no
 * timer but the scheduler's, and /metrics agrees.
 */
import assert from "node:assert/strict";
import { HUB } from "../../../content/mod.ts";
import { LIMITS } from "../../../content/net_tuning.ts";
import { CloseCode } from "../../../net/wire/protocol.ts";
import { createApp } from "../../../routes/app.ts";
import { Rng, TICK_MS } from "../../../sim/mod.ts";
import { frame, IDLE, NetHarness, RawClient, steerTo } from "../_harness.ts";

/** The scheduler's own timer: all a quiet server should have pending. */
const SCHEDULER_TIMERS = 1;

/** Ways a cycle ends, each with the close code the server counts for it. */
const KINDS = {
  /** Opens and hangs up without a hello. */
  handshakeHangUp: "1001",
  /** Opens and never speaks: the server closes it after 5 s. */
  handshakeTimeout: String(CloseCode.HandshakeTimeout),
  /** Sends input before its hello: the server closes it. */
  inputBeforeHello: String(CloseCode.BadMessage),
  /** Says hello, idles in the hub, hangs up. */
  hubHangUp: "1000",
  /** Says hello, then sends garbage from the hub. */
  hubBadFrame: String(CloseCode.BadMessage),
  /** Walks into the portal, stays in the dungeon a while, hangs up. */
  portalWalk: "1001",
  /** Is put on the portal (a direct transfer), stays, hangs up. */
  directTransfer: "1006",
  /** Is put on the portal, then sends an oversized frame from the dungeon. */
  dungeonBadFrame: String(CloseCode.FrameTooLarge),
} as const;
type Kind = keyof typeof KINDS;
const KIND_NAMES = Object.keys(KINDS) as Kind[];

/** One connection from open to close, moved on once per tick. */
class Cycle {
  readonly client: RawClient;
  readonly stayTicks: number;
  #ticks = 0;
  #inDungeonFor = -1;

  constructor(
    readonly kind: Kind,
    readonly h: NetHarness,
    opts: { ip: string; name: string; stayTicks: number },
  ) {
    this.client = new RawClient(h.server, opts.ip);
    this.stayTicks = opts.stayTicks;
    if (kind === "inputBeforeHello") this.client.input([frame(h.server.hub.world.tick)]);
    else if (kind !== "handshakeHangUp" && kind !== "handshakeTimeout") {
      this.client.hello(opts.name);
    }
  }

  get done(): boolean {
    return this.client.conn.state === "closed";
  }

  /** The dungeon this cycle's player is in, if any. */
  get dungeon(): string | undefined {
    const i = this.client.conn.instance;
    return i?.kind === "dungeon" ? i.id : undefined;
  }

  /** Acts for one tick; throws if a cycle is stuck. */
  step(): void {
    if (this.done) return;
    const t = this.#ticks++;
    const c = this.client;
    const stay = this.stayTicks;
    switch (this.kind) {
      case "handshakeHangUp":
        if (t >= stay) c.hangUp("1001", "going away");
        return;
      case "handshakeTimeout":
      case "inputBeforeHello":
        // The server ends these; the loop below fails the test if it never does.
        return;
      case "hubHangUp":
        this.#input(IDLE);
        if (t >= stay) c.hangUp("1000", "left");
        return;
      case "hubBadFrame":
        this.#input(IDLE);
        if (t >= stay) c.send(new Uint8Array([0xff, 0x00, 0x13]));
        return;
      default:
        this.#dungeonStep(t);
    }
  }

  #dungeonStep(t: number): void {
    const c = this.client;
    if (this.dungeon === undefined) {
      assert.ok(this.#inDungeonFor < 0, `${this.kind}: sent back to the hub before leaving`);
      assert.ok(t < 600, `${this.kind}: no dungeon after 10 s`);
      const ship = this.h.server.hub.world.players.get(c.playerId);
      if (!ship) return;
      if (this.kind === "portalWalk") this.#input(steerTo(ship, HUB.portals[0]));
      else [ship.x, ship.y] = [HUB.portals[0].x, HUB.portals[0].y];
      return;
    }
    this.#inDungeonFor++;
    this.#input(IDLE);
    if (this.#inDungeonFor < this.stayTicks) return;
    if (this.kind === "portalWalk") c.hangUp("1001", "tab closed");
    else if (this.kind === "directTransfer") c.hangUp("1006", "connection lost");
    else c.send(new Uint8Array(LIMITS.maxClientFrameBytes + 1));
  }

  /** Sends the frame for the tick its instance is about to run. */
  #input(sample: typeof IDLE): void {
    const instance = this.client.conn.instance;
    if (instance) this.client.input([frame(instance.world.tick, sample)]);
  }
}

Deno.test("300 connect/disconnect cycles of every kind leave nothing behind", async () => {
  using h = new NetHarness({ seed: 7 });
  const rng = new Rng(2024);
  const total = 300;
  const concurrent = 24;
  const live: Cycle[] = [];
  const started = new Map<Kind, number>(KIND_NAMES.map((k) => [k, 0]));
  const dungeonsSeen = new Set<string>();
  let next = 0;
  let peakPlayers = 0;

  while (next < total || live.length > 0) {
    while (next < total && live.length < concurrent) {
      const kind = KIND_NAMES[Math.floor(rng.next() * KIND_NAMES.length)];
      started.set(kind, started.get(kind)! + 1);
      live.push(
        new Cycle(kind, h, {
          // 32 addresses: several connections share one, under the per-IP limit.
          ip: `10.0.0.${next % 32}`,
          name: `P${next}`,
          stayTicks: Math.floor(rng.range(0, 90)),
        }),
      );
      next++;
    }
    h.clock.advance(TICK_MS);
    for (const cycle of live) {
      cycle.step();
      if (cycle.dungeon) dungeonsSeen.add(cycle.dungeon);
    }
    peakPlayers = Math.max(peakPlayers, h.server.playerCount);
    for (let i = live.length - 1; i >= 0; i--) if (live[i].done) live.splice(i, 1);
    assert.ok(h.clock.now() < 600_000, "the churn finishes within 10 minutes of game time");
  }
  h.clock.advance(TICK_MS * 3); // a few quiet ticks after the last close

  const s = h.server;
  // A player whose link dropped (1001, 1006) waits, parked, for a resume: until the grace
  // ends its ship (and its dungeon) stays; then nothing may be left.
  const waiting = s.playersAway;
  assert.equal(s.playerCount, waiting, "only players waiting for a resume are left");
  assert.ok(waiting > 0, "some cycles dropped their link mid-game");
  h.clock.advance(LIMITS.resumeGraceMs);
  h.clock.advance(TICK_MS * 3);
  console.log(
    `${total} cycles in ${(h.clock.now() / 1000).toFixed(0)} s of game time: ` +
      `${JSON.stringify(Object.fromEntries(started))}; ${dungeonsSeen.size} dungeons, ` +
      `peak ${peakPlayers} players; closes ${JSON.stringify(s.counters.closes)}; ` +
      `${waiting} players were still waiting for a resume at the end`,
  );
  assert.deepEqual([...s.instances.keys()], ["hub"], "no dungeon instance is left");
  assert.equal(s.connections.size, 0);
  assert.equal(s.playerCount, 0);
  assert.equal(s.hub.size, 0);
  assert.equal(h.clock.pending, SCHEDULER_TIMERS, "no handshake timer is left");
  assert.equal(s.counters.connectionsOpened, total);
  assert.ok(dungeonsSeen.size >= 10, `dungeons were made and destroyed (${dungeonsSeen.size})`);
  assert.equal(s.counters.instancesCreated - s.counters.instancesDestroyed, 1, "the hub alone");
  for (const kind of KIND_NAMES) assert.ok(started.get(kind)! > 15, `${kind} cycles ran`);

  const expected: Record<string, number> = {};
  for (const kind of KIND_NAMES) {
    expected[KINDS[kind]] = (expected[KINDS[kind]] ?? 0) + started.get(kind)!;
  }
  const closes = Object.fromEntries(Object.entries(s.counters.closes).filter(([, n]) => n > 0));
  assert.deepEqual(closes, expected, "every cycle ended the way its kind ends");

  const app = createApp(s, { clientJs: () => Promise.resolve("") });
  const metrics = await (await app.request("/metrics")).text();
  assert.match(metrics, /^bh_connections\{process="single"\} 0$/m);
  assert.match(metrics, /^bh_players\{process="single"\} 0$/m);
  assert.match(metrics, /^bh_instances\{process="single",kind="hub"\} 1$/m);
  assert.match(metrics, /^bh_instances\{process="single",kind="dungeon"\} 0$/m);
  assert.match(
    metrics,
    new RegExp(`^bh_connections_opened_total\\{process="single"\\} ${total}$`, "m"),
  );
});
