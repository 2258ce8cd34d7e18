/**
 * Several GameServers sharing one registry (the memory store), in process on one
 * ManualClock: the portal places a party on the least-loaded process and hands
 * each member a Transfer; the target admits each signed ticket once and puts the
 * party in one dungeon; forged, expired and misdirected tickets are refused with
 * 4012; a registry outage refuses the portal with a clear message while every
 * instance keeps ticking; a process that stops beating vanishes from the registry.
 * Also hub shards on one process. Real codec, real server paths; no sockets.
 */
import assert from "node:assert/strict";
import { CONTENT_HASH, HUB } from "../../../content/mod.ts";
import { TRANSFER_DELAYS } from "../../../content/net_tuning.ts";
import { ClusterNode } from "../../../net/server/cluster.ts";
import { renderMetrics } from "../../../net/server/metrics.ts";
import { MemoryStore, Registry } from "../../../net/server/registry/mod.ts";
import { ManualClock } from "../../../net/server/scheduler.ts";
import { GameServer, type ServerOptions } from "../../../net/server/server.ts";
import { TokenSigner } from "../../../net/server/tokens.ts";
import { encodeClientMessage, MessageEncoder } from "../../../net/wire/codec.ts";
import {
  Choice,
  ClientKind,
  CloseCode,
  type EnterMsg,
  EnterReason,
  NoticeCode,
  type NoticeMsg,
  Outcome,
  PROTOCOL_VERSION,
  type ResultsMsg,
  ServerKind,
  type TransferMsg,
} from "../../../net/wire/protocol.ts";
import { TICK_MS } from "../../../sim/mod.ts";
import { deadlyRoom, frame, RawClient } from "../_harness.ts";

const SECRET = new Uint8Array(32).fill(7);
const WALL_BASE_MS = 1_700_000_000_000;

/** A process of the test cluster. */
interface Proc {
  readonly id: string;
  readonly server: GameServer;
  readonly node: ClusterNode;
}

class Cluster {
  readonly clock = new ManualClock();
  readonly store = new MemoryStore({ now: () => this.wallNow() });
  readonly registry = new Registry(this.store, {
    now: () => this.wallNow(),
    heartbeatTtlMs: 5000,
    partyTtlMs: 15_000,
  });
  readonly procs: Proc[] = [];
  /** Clients that send an idle input frame every tick (so a dungeon does not park their ship). */
  readonly feeding = new Set<RawClient>();
  #ip = 1;

  wallNow(): number {
    return WALL_BASE_MS + this.clock.now();
  }

  async add(
    id: string,
    opts: { hostsGames?: boolean; worldDef?: ServerOptions["worldDef"] } = {},
  ): Promise<Proc> {
    const server = new GameServer({
      worldDef: opts.worldDef,
      clock: this.clock,
      seed: this.procs.length + 1,
      instancePrefix: `${id}/`,
      processId: id,
      limits: { maxConnectionsPerIp: 1000 },
      // Every process of a cluster shares TOKEN_SECRET: resume tokens verify anywhere.
      tokenSecret: SECRET,
    });
    const node = new ClusterNode(server, {
      registry: this.registry,
      signer: new TokenSigner(SECRET),
      processId: id,
      publicUrl: `http://${id}.test:8000`,
      wallNow: () => this.wallNow(),
      hostsGames: opts.hostsGames,
    });
    server.start();
    await node.start();
    const proc = { id, server, node };
    this.procs.push(proc);
    return proc;
  }

  /** Lets `ms` pass, a tick at a time, letting registry calls complete between ticks. */
  async run(ms: number): Promise<void> {
    for (let t = 0; t < ms; t += TICK_MS) {
      this.clock.advance(TICK_MS);
      for (const c of this.feeding) {
        const world = c.conn.state === "playing" ? c.conn.instance?.world : undefined;
        if (world) c.input([frame(world.tick + 1)]);
      }
      await settle();
    }
  }

  /** A player saying hello to `proc` (with a transfer ticket, if given). */
  join(proc: Proc, name: string, ticket?: string): RawClient {
    return this.#hello(proc, { name, ticket });
  }

  /** A player coming back to `proc` with a resume token (a load balancer chose `proc`). */
  resumeAt(proc: Proc, opts: { name: string; token: string }): RawClient {
    return this.#hello(proc, { name: opts.name, resume: opts.token });
  }

  #hello(proc: Proc, hello: { name: string; ticket?: string; resume?: string }): RawClient {
    const c = new RawClient(proc.server, `10.1.0.${this.#ip++}`);
    c.send(encodeClientMessage(new MessageEncoder(), {
      kind: ClientKind.Hello,
      version: PROTOCOL_VERSION,
      content: CONTENT_HASH,
      ...hello,
    }));
    return c;
  }

  procOf(url: string): Proc {
    const p = this.procs.find((p) => url === `ws://${p.id}.test:8000/ws`);
    assert.ok(p, `no process answers ${url}`);
    return p;
  }

  async stop(): Promise<void> {
    for (const p of this.procs) {
      await p.node.stop({ withdrawWithinMs: 10 });
      p.server.shutdown("test over");
    }
  }
}

/** Lets pending promise callbacks (registry calls on the memory store) run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

function lastEnter(c: RawClient): EnterMsg | undefined {
  return c.transport.messages().filter((m): m is EnterMsg => m.kind === ServerKind.Enter).at(-1);
}

/** The newest resume token the server gave `c` (its Welcome, or a Token since). */
function tokenOf(c: RawClient): string {
  const token = c.transport.messages().flatMap((m) =>
    m.kind === ServerKind.Welcome || m.kind === ServerKind.Token ? [m.resume] : []
  ).at(-1);
  assert.ok(token, "the Welcome carried a resume token");
  return token;
}

function noticesOf(c: RawClient): NoticeMsg[] {
  return c.transport.messages().filter((m): m is NoticeMsg => m.kind === ServerKind.Notice);
}

function transferOf(c: RawClient): TransferMsg | undefined {
  return c.transport.messages().find((m): m is TransferMsg => m.kind === ServerKind.Transfer);
}

/** Puts a player's ship on the portal of the hub it stands in. */
function onPortal(c: RawClient): void {
  const hub = c.conn.instance!;
  const ship = hub.world.players.get(c.conn.playerId)!;
  [ship.x, ship.y] = [HUB.portals[0].x, HUB.portals[0].y];
}

Deno.test("a portal party on A lands together in a new dungeon on the idle process B, by ticket", async () => {
  const cluster = new Cluster();
  const a = await cluster.add("a");
  const b = await cluster.add("b");
  const party = ["Ann", "Bob", "Cy"].map((n) => cluster.join(a, n));
  await cluster.run(50);
  for (const c of party) assert.equal(lastEnter(c)?.instanceId, "a/hub", "joined A's own hub");

  for (const c of party) onPortal(c);
  await cluster.run(50);
  const transfers = party.map(transferOf);
  for (const t of transfers) {
    assert.ok(t, "each member was handed a Transfer");
    assert.equal(t.url, "ws://b.test:8000/ws", "A hosts 3 players, B none: B takes the dungeon");
    assert.equal(t.reason, EnterReason.Portal);
  }
  for (const c of party) {
    assert.equal(c.transport.closedWith?.code, CloseCode.Transferred);
    assert.equal(c.conn.state, "closed");
  }
  assert.equal(a.server.hub.size, 0, "they left A's hub");

  const arrived = transfers.map((t, i) => cluster.join(b, ["Ann", "Bob", "Cy"][i], t!.ticket));
  const enters = arrived.map(lastEnter);
  assert.ok(enters[0]);
  assert.match(enters[0].instanceId, /^b\/dungeon-/);
  for (const e of enters) {
    assert.equal(e?.instanceId, enters[0].instanceId, "the party stays together");
    assert.equal(e?.reason, EnterReason.Portal);
  }
  assert.equal(b.server.instances.get(enters[0].instanceId)?.size, 3);
  assert.equal(b.server.counters.transfersIn, 3);
  assert.equal(a.server.counters.transfersOut, 3);

  // A fourth player from A's hub joins them: the newest dungeon with room, on B.
  const dee = cluster.join(a, "Dee");
  await cluster.run(50);
  onPortal(dee);
  await cluster.run(50);
  const deeTransfer = transferOf(dee);
  assert.equal(deeTransfer?.url, "ws://b.test:8000/ws");
  const deeThere = cluster.join(b, "Dee", deeTransfer!.ticket);
  assert.equal(lastEnter(deeThere)?.instanceId, enters[0].instanceId);
  await cluster.stop();
});

Deno.test("a ticket is admitted once; forged, expired and misdirected ones get 4012, nobody else notices", async () => {
  const cluster = new Cluster();
  const a = await cluster.add("a");
  const b = await cluster.add("b");
  const c = await cluster.add("c");
  const bystander = cluster.join(b, "Bystander");
  const ann = cluster.join(a, "Ann");
  await cluster.run(50);
  onPortal(ann);
  await cluster.run(50);
  const t = transferOf(ann)!;
  const target = cluster.procOf(t.url);
  const other = target === b ? c : b;

  const refused = (client: RawClient, why: RegExp) => {
    assert.equal(client.transport.closedWith?.code, CloseCode.BadTicket);
    assert.match(client.transport.closedWith!.reason, why);
    const reject = client.transport.messages().find((m) => m.kind === ServerKind.Reject);
    assert.ok(reject, "a Reject says why before the close");
    assert.equal(client.transport.messages().some((m) => m.kind === ServerKind.Welcome), false);
  };
  refused(cluster.join(other, "Ann", t.ticket), /meant for another process/);
  const [body, tag] = t.ticket.split(".");
  refused(cluster.join(target, "Ann", `${body}.${tag.slice(0, -2)}AA`), /signature|malformed/);
  refused(cluster.join(target, "Ann", "e30.AAAAAAAAAAAAAAAAAAAAAA"), /malformed|signature/);
  // A well-formed ticket for this very process, signed with another secret.
  const forged = new TokenSigner(new Uint8Array(32).fill(9)).sign("transfer", {
    payload: [target.node.boot, `${target.id}/dungeon-x`, 1, "p", EnterReason.Portal, "", "n"],
    expiresAtMs: cluster.wallNow() + 5000,
  });
  refused(cluster.join(target, "Mallory", forged), /signature/);

  const first = cluster.join(target, "Ann", t.ticket);
  assert.match(lastEnter(first)?.instanceId ?? "", new RegExp(`^${target.id}/dungeon-`));
  refused(cluster.join(target, "Ann", t.ticket), /already used/);

  const bob = cluster.join(a, "Bob");
  await cluster.run(50);
  onPortal(bob);
  await cluster.run(50);
  const late = transferOf(bob)!;
  await cluster.run(10_500); // past the ticket's 10 s
  refused(cluster.join(cluster.procOf(late.url), "Bob", late.ticket), /expired/);

  assert.equal(bystander.conn.state, "playing");
  assert.equal(bystander.transport.closedWith, undefined);
  await cluster.stop();
});

Deno.test("a resume the load balancer gives another process is handed over to the one holding the session", async () => {
  const cluster = new Cluster();
  const a = await cluster.add("a");
  const b = await cluster.add("b");
  const ann = cluster.join(a, "Ann");
  await cluster.run(50);
  const id = ann.playerId;
  const token = tokenOf(ann);
  ann.hangUp("1006", "link lost");
  await cluster.run(1000);
  assert.equal(a.server.playerCount, 1, "Ann's ship waits on A for her resume");

  const atB = cluster.resumeAt(b, { name: "Ann", token });
  // While B looks A up in the registry, the client's ping waits for nothing and is dropped.
  atB.ping();
  const closedEarly = atB.transport.closedWith;
  assert.equal(closedEarly, undefined, "not taken for a bad client");
  await cluster.run(50);
  const t = transferOf(atB);
  assert.ok(t, "B hands the resume over");
  assert.equal(t.url, "ws://a.test:8000/ws");
  assert.equal(t.reason, EnterReason.Resume);
  assert.equal(t.ticket, token, "the token itself travels: A checks it as any resume");
  assert.equal(atB.transport.closedWith?.code, CloseCode.Transferred);
  assert.equal(atB.transport.messages().some((m) => m.kind === ServerKind.Welcome), false);
  assert.equal(b.server.playerCount, 0, "nothing of Ann was made on B");
  assert.equal(b.node.stats.resumesForwarded, 1);
  assert.match(renderMetrics(b.server), /^bh_resumes_forwarded_total(\{[^}]*\})? 1$/m);

  const back = cluster.resumeAt(a, { name: "Ann", token: t.ticket });
  const enter = lastEnter(back);
  assert.equal(enter?.reason, EnterReason.Resume);
  assert.equal(enter?.instanceId, "a/hub");
  assert.equal(back.playerId, id, "the same player id");
  assert.equal(a.server.counters.resumes, 1);
  assert.deepEqual(noticesOf(back), [], "no notice: nothing was lost");

  // A second hello while the lookup is under way is a bad client.
  const twice = cluster.resumeAt(b, { name: "Twice", token });
  twice.hello("Twice");
  assert.equal(twice.transport.closedWith?.code, CloseCode.BadMessage);
  assert.match(twice.transport.closedWith!.reason, /duplicate hello/);

  // Forwarded or not, a token is single-use: once the resumed connection has spoken, a
  // replay through B comes to A and is refused there.
  back.ping();
  const replay = cluster.resumeAt(b, { name: "Thief", token });
  await cluster.run(50);
  const thief = cluster.resumeAt(a, { name: "Thief", token: transferOf(replay)!.ticket });
  assert.equal(noticesOf(thief)[0]?.code, NoticeCode.ResumeRefused);
  assert.match(noticesOf(thief)[0].text, /already used/);
  assert.notEqual(thief.playerId, id);
  assert.equal(back.conn.state, "playing", "Ann plays on");
  await cluster.stop();
});

Deno.test("a resume for a process that restarted or left starts afresh where it landed, told why", async () => {
  const cluster = new Cluster();
  const a = await cluster.add("a");
  const b = await cluster.add("b");
  const ann = cluster.join(a, "Ann");
  await cluster.run(50);
  const token = tokenOf(ann);
  // A goes for good (its record withdrawn, as a stop does).
  await a.node.stop({ withdrawWithinMs: 10 });
  a.server.shutdown("test over");
  const atB = cluster.resumeAt(b, { name: "Ann", token });
  await cluster.run(50);
  assert.equal(transferOf(atB), undefined, "no hand-over to a process that is gone");
  assert.equal(atB.conn.state, "playing");
  assert.equal(lastEnter(atB)?.instanceId, "b/hub", "a fresh start in B's hub");
  const [notice] = noticesOf(atB);
  assert.equal(notice?.code, NoticeCode.ResumeExpired);
  assert.match(notice.text, /server that held your game has stopped/);
  assert.equal(b.server.counters.resumeRefusals.expired, 1);
  assert.equal(b.node.stats.resumesForwarded, 0);

  // A process id that came back as a new life (a restart) voids the old life's tokens.
  const a2 = await cluster.add("a");
  await cluster.run(50);
  assert.notEqual(a2.node.boot, a.node.boot);
  const again = cluster.resumeAt(b, { name: "Ann2", token });
  await cluster.run(50);
  assert.equal(transferOf(again), undefined, "not handed to the new life");
  assert.equal(noticesOf(again)[0]?.code, NoticeCode.ResumeExpired);
  // And the new life itself says the run ended with the restart.
  const atA2 = cluster.resumeAt(a2, { name: "Ann3", token });
  assert.match(noticesOf(atA2)[0]?.text ?? "", /server restarted, ending any run in progress/);
  await cluster.stop();
});

Deno.test("a draining process places nobody, yet a resume of one of its runs is still handed to it", async () => {
  const cluster = new Cluster();
  const a = await cluster.add("a");
  const b = await cluster.add("b");
  const bob = cluster.join(b, "Bob");
  const ann = cluster.join(b, "Ann");
  await cluster.run(50);
  onPortal(ann);
  await cluster.run(50);
  // B holds two players, A none: A takes Ann's dungeon.
  const t = transferOf(ann)!;
  assert.equal(t.url, "ws://a.test:8000/ws");
  const fighter = cluster.join(a, "Ann", t.ticket);
  const dungeon = lastEnter(fighter)!.instanceId;
  const token = tokenOf(fighter);

  a.server.drain();
  await a.node.drain();
  const rec = (await cluster.registry.processes()).find((p) => p.id === "a");
  assert.equal(rec?.draining, true, "A stays in the registry, announced as draining");
  assert.equal(rec?.capacity, 0);

  onPortal(bob);
  await cluster.run(50);
  assert.equal(transferOf(bob), undefined, "Bob's dungeon is not put on draining A");
  assert.match(bob.conn.instance?.id ?? "", /^b\/dungeon-/);

  fighter.hangUp("1006", "link lost");
  await cluster.run(200);
  const atB = cluster.resumeAt(b, { name: "Ann", token });
  await cluster.run(50);
  assert.equal(transferOf(atB)?.url, "ws://a.test:8000/ws", "handed back to draining A");
  const back = cluster.resumeAt(a, { name: "Ann", token });
  assert.equal(lastEnter(back)?.reason, EnterReason.Resume);
  assert.equal(lastEnter(back)?.instanceId, dungeon, "back in her run in progress");
  await cluster.stop();
});

Deno.test("a registry outage refuses the portal with a clear message; every instance keeps ticking", async () => {
  const cluster = new Cluster();
  const a = await cluster.add("a");
  const b = await cluster.add("b");
  const [ann, bob] = ["Ann", "Bob"].map((n) => cluster.join(a, n));
  await cluster.run(50);
  onPortal(ann);
  await cluster.run(50);
  const fighter = cluster.join(b, "Ann", transferOf(ann)!.ticket);
  const dungeon = b.server.instances.get(lastEnter(fighter)!.instanceId)!;
  const dungeonTick = dungeon.world.tick;

  cluster.store.down = true;
  onPortal(bob);
  await cluster.run(1500);
  assert.equal(transferOf(bob), undefined, "no placement without the registry");
  assert.equal(bob.conn.state, "playing");
  assert.equal(bob.conn.instance, a.server.hub, "still in the hub");
  assert.equal(a.server.hub.world.players.get(bob.conn.playerId)?.status, "active", "free to move");
  const refusal = bob.transport.messages().flatMap((m) =>
    m.kind === ServerKind.Events ? m.events : []
  ).find((e) => e.type === "portalRefused");
  assert.ok(refusal && refusal.type === "portalRefused");
  assert.equal(refusal.playerId, bob.conn.playerId);
  assert.match(refusal.reason, /registry cannot be reached/);
  assert.ok(dungeon.world.tick >= dungeonTick + 80, "B's dungeon ran on through the outage");
  assert.equal(a.node.stats.registryUp, false);
  assert.equal(a.server.counters.portalRefusals, 1);

  cluster.store.down = false;
  await cluster.run(1100); // the next heartbeat finds it back
  assert.equal(a.node.stats.registryUp, true);
  onPortal(bob);
  await cluster.run(50);
  assert.ok(transferOf(bob) || bob.conn.instance?.kind === "dungeon", "placed once it is back");
  await cluster.stop();
});

Deno.test("a process that stops beating leaves the registry within the TTL; its URL gets nobody", async () => {
  const cluster = new Cluster();
  const a = await cluster.add("a");
  const b = await cluster.add("b");
  await cluster.run(100);
  assert.deepEqual((await cluster.registry.processes()).map((p) => p.id).sort(), ["a", "b"]);
  // b "dies": its heartbeat stops and its process is never heard from again.
  await b.node.stop({ withdrawWithinMs: 0 }).catch(() => {});
  b.server.scheduler.stop();
  await cluster.run(5200);
  const live = await cluster.registry.processes();
  assert.deepEqual(live.map((p) => p.id), ["a"]);
  assert.ok((await cluster.registry.instances()).every((i) => i.processId === "a"));
  const ann = cluster.join(a, "Ann");
  await cluster.run(50);
  onPortal(ann);
  await cluster.run(50);
  assert.equal(ann.conn.instance?.id.startsWith("a/dungeon-"), true, "placed here, not on dead b");
  await cluster.stop();
});

Deno.test("a placement-only process (Deno Deploy) sends every player on and hosts nothing", async () => {
  const cluster = new Cluster();
  const front = await cluster.add("front", { hostsGames: false });
  const game = await cluster.add("game");
  await cluster.run(50);
  const procs = await cluster.registry.processes();
  assert.equal(procs.find((p) => p.id === "front")?.capacity, 0);
  assert.ok((await cluster.registry.instances()).every((i) => i.processId === "game"));
  const ann = cluster.join(front, "Ann");
  await cluster.run(50);
  const t = transferOf(ann);
  assert.equal(t?.url, "ws://game.test:8000/ws");
  assert.equal(cluster.join(game, "Ann", t!.ticket).conn.instance?.id, "game/hub");
  assert.equal(front.server.hub.size, 0);

  await game.node.stop({ withdrawWithinMs: 10 });
  const bob = cluster.join(front, "Bob");
  await cluster.run(50);
  assert.equal(bob.transport.closedWith?.code, CloseCode.ServerFull, "no game server: told so");
  assert.match(bob.transport.closedWith!.reason, /no game server can take you/);
  await cluster.stop();
});

Deno.test("one process shards its hub at the cap: players fill the fullest hub, empty shards go", () => {
  const clock = new ManualClock();
  const server = new GameServer({ clock, seed: 1, limits: { hubCapacity: 3 } });
  const clients = Array.from({ length: 7 }, (_, i) => {
    const c = new RawClient(server, `10.2.0.${i}`);
    c.hello(`P${i}`);
    return c;
  });
  const ids = clients.map((c) => c.conn.instance!.id);
  assert.deepEqual(ids, ["hub", "hub", "hub", "hub-2", "hub-2", "hub-2", "hub-3"]);
  const enter = lastEnter(clients[4])!;
  assert.deepEqual(
    enter.roster.map((r) => r.name).sort(),
    ["P3", "P4"],
    "the roster is your own hub",
  );
  for (const c of clients.slice(3, 6)) c.hangUp();
  assert.equal(server.instances.has("hub-2"), false, "an empty shard is destroyed");
  assert.equal(server.instances.has("hub"), true, "the first hub stays");
  const late = new RawClient(server, "10.2.0.99");
  late.hello("Late");
  assert.equal(late.conn.instance!.id, "hub-3", "the fullest hub with room");
  server.shutdown("test over");
});

// ---------------------------------------------------------------- "again" across processes

const deadly: ServerOptions["worldDef"] = (kind) => kind === "dungeon" ? deadlyRoom() : undefined;

function resultsOf(c: RawClient): ResultsMsg[] {
  return c.transport.messages().filter((m): m is ResultsMsg => m.kind === ServerKind.Results);
}

function transfersOf(c: RawClient): TransferMsg[] {
  return c.transport.messages().filter((m): m is TransferMsg => m.kind === ServerKind.Transfer);
}

function choose(c: RawClient, choice: Choice): void {
  c.send(encodeClientMessage(new MessageEncoder(), { kind: ClientKind.Choice, choice }));
}

/** Puts a player's ship on the boss of the dungeon it fights in (one touch kills it). */
function onBoss(c: RawClient): void {
  const world = c.conn.instance!.world;
  assert.ok(world.boss, "the boss is up");
  const ship = world.players.get(c.conn.playerId)!;
  [ship.x, ship.y, ship.iframeTicks] = [world.boss.def.x, world.boss.def.y, 0];
}

/** Follows the newest Transfer `c` got: the same player says hello there with its ticket. */
function follow(cluster: Cluster, c: RawClient, name: string): RawClient {
  const t = transfersOf(c).at(-1);
  assert.ok(t, `${name} was handed a Transfer`);
  const there = cluster.join(cluster.procOf(t.url), name, t.ticket);
  cluster.feeding.add(there);
  return there;
}

/** Ann, Bo and Cy from A's hub, in one dungeon on B (the idle process), its boss up. */
async function crewOnB(cluster: Cluster): Promise<{ a: Proc; b: Proc; crew: RawClient[] }> {
  const a = await cluster.add("a", { worldDef: deadly });
  const b = await cluster.add("b", { worldDef: deadly });
  const names = ["Ann", "Bo", "Cy"];
  const home = names.map((n) => cluster.join(a, n));
  await cluster.run(50);
  for (const c of home) onPortal(c);
  await cluster.run(50);
  const crew = home.map((c, i) => follow(cluster, c, names[i]));
  for (const c of crew) cluster.feeding.add(c);
  const dungeon = lastEnter(crew[0])!.instanceId;
  assert.match(dungeon, /^b\/dungeon-/);
  for (const c of crew) assert.equal(lastEnter(c)?.instanceId, dungeon, "one dungeon on B");
  await cluster.run(5100);
  assert.equal(crew[0].conn.instance?.world.stage, "boss");
  return { a, b, crew };
}

Deno.test("a crew member sent home to another process gets the results and 'again' there, and regroups on the host", async () => {
  const cluster = new Cluster();
  const { a, b, crew } = await crewOnB(cluster);
  const [annB, boB, cyB] = crew;
  const dungeon = annB.conn.instance!.id;

  // Ann falls first: she goes home to A's hub while Bo and Cy fight on.
  onBoss(annB);
  await cluster.run(TRANSFER_DELAYS.deathReturnTicks * TICK_MS + 100);
  const ann = follow(cluster, annB, "Ann");
  assert.equal(lastEnter(ann)?.instanceId, "a/hub");
  await cluster.run(1500);
  assert.equal(resultsOf(ann).length, 0, "no results while the run goes on");

  // The wipe: B's own get the results at once; Ann's process reads them on its heartbeat.
  onBoss(boB);
  onBoss(cyB);
  await cluster.run(100);
  for (const c of [boB, cyB]) assert.equal(resultsOf(c).length, 1);
  assert.equal(resultsOf(ann).length, 0, "not before A's next heartbeat");
  await cluster.run(a.node.timing.heartbeatMs + 100);
  const [annResults] = resultsOf(ann);
  assert.ok(annResults, "Ann, in a hub on another process, got the results");
  assert.equal(annResults.outcome, Outcome.Wiped);
  assert.deepEqual(annResults.rows.map((r) => r.name).sort(), ["Ann", "Bo", "Cy"]);
  assert.deepEqual(
    annResults.rows.filter((r) => r.id === ann.playerId).map((r) => r.name),
    ["Ann"],
    "her row carries her id on A",
  );
  assert.deepEqual(
    annResults.rows.map((r) => r.damageDealt),
    resultsOf(boB)[0].rows.map((r) => r.damageDealt),
  );

  // "Again": a ticket to the crew's new dungeon on B, reserved for the crew.
  choose(ann, Choice.Again);
  await cluster.run(50);
  const retry = transfersOf(ann).at(-1);
  assert.equal(retry?.reason, EnterReason.Retry);
  assert.equal(retry?.url, "ws://b.test:8000/ws");
  const annAgain = follow(cluster, ann, "Ann");
  const again = lastEnter(annAgain)!;
  assert.equal(again.reason, EnterReason.Retry);
  assert.match(again.instanceId, /^b\/dungeon-/);
  assert.notEqual(again.instanceId, dungeon);
  const next = b.server.instances.get(again.instanceId)!;
  assert.equal(next.reservedFor, dungeon, "the crew's dungeon takes no strangers");
  assert.equal(next.world.stage, "waves", "a fresh run");

  // Bo and Cy saw the results on B, then went home to A: the offer follows them, the
  // results screen (still up on their clients) is not sent again.
  await cluster.run(TRANSFER_DELAYS.deathReturnTicks * TICK_MS + 100);
  const [bo, cy] = [follow(cluster, boB, "Bo"), follow(cluster, cyB, "Cy")];
  for (const c of [bo, cy]) assert.equal(lastEnter(c)?.instanceId, "a/hub");
  await cluster.run(50);
  for (const c of [bo, cy]) assert.equal(resultsOf(c).length, 0, "no second results screen");
  choose(bo, Choice.Again);
  choose(cy, Choice.Hub);
  await cluster.run(50);
  const boAgain = follow(cluster, bo, "Bo");
  assert.equal(lastEnter(boAgain)?.instanceId, again.instanceId, "the crew is together again");
  assert.equal(next.size, 2);
  assert.equal(transfersOf(cy).length, 0, "'back to hub' leaves Cy where she is");
  assert.equal(cy.conn.instance?.id, "a/hub");
  assert.equal(cy.transport.closedWith, undefined);

  // The offer was answered: another "again" is no ticket anywhere.
  choose(cy, Choice.Again);
  await cluster.run(a.node.timing.heartbeatMs + 100);
  assert.equal(transfersOf(cy).length, 0);
  await cluster.stop();
});

Deno.test("a registry outage at the run's end: the offer does not reach the other process, nothing breaks", async () => {
  const cluster = new Cluster();
  const { a, b, crew } = await crewOnB(cluster);
  const [annB, boB] = crew;
  onBoss(annB);
  await cluster.run(TRANSFER_DELAYS.deathReturnTicks * TICK_MS + 100);
  const ann = follow(cluster, annB, "Ann");
  assert.equal(lastEnter(ann)?.instanceId, "a/hub");

  cluster.store.down = true;
  for (const c of crew.slice(1)) onBoss(c);
  await cluster.run(100);
  assert.equal(resultsOf(boB).length, 1, "the host's own players get theirs");
  const ticks = [a, b].map((p) => p.server.scheduler.stats.ticks);
  await cluster.run(3 * a.node.timing.heartbeatMs);
  cluster.store.down = false;
  await cluster.run(2 * a.node.timing.heartbeatMs);
  assert.equal(resultsOf(ann).length, 0, "no crew record was written: no offer");
  choose(ann, Choice.Again);
  await cluster.run(100);
  assert.equal(transfersOf(ann).length, 0, "an 'again' without an offer goes nowhere");
  assert.equal(ann.transport.closedWith, undefined, "and is no offence");
  assert.equal(ann.conn.instance?.id, "a/hub");
  [a, b].forEach((p, i) => assert.ok(p.server.scheduler.stats.ticks > ticks[i] + 200));
  assert.ok(a.node.stats.registryErrors > 0);
  await cluster.stop();
});

Deno.test("'again' when the crew's process has gone since the offer: the player stays in the hub", async () => {
  const cluster = new Cluster();
  const { a, b, crew } = await crewOnB(cluster);
  const [annB, ...rest] = crew;
  onBoss(annB);
  await cluster.run(TRANSFER_DELAYS.deathReturnTicks * TICK_MS + 100);
  const ann = follow(cluster, annB, "Ann");
  for (const c of rest) onBoss(c);
  await cluster.run(a.node.timing.heartbeatMs + 200);
  assert.equal(resultsOf(ann).length, 1, "the offer reached A");

  await b.node.stop({ withdrawWithinMs: 10 });
  b.server.shutdown("test over");
  await cluster.run(a.node.timing.heartbeatMs + 100);
  choose(ann, Choice.Again);
  await cluster.run(100);
  assert.equal(transfersOf(ann).length, 0, "no ticket to a process that is gone");
  const told = ann.transport.messages().flatMap((m) =>
    m.kind === ServerKind.Events
      ? m.events.filter((e) => e.type === "portalRefused" && e.playerId === ann.playerId)
      : []
  );
  assert.equal(told.length, 1, "told why, as a refused portal is");
  assert.equal(ann.conn.instance?.id, "a/hub");
  assert.equal(ann.transport.closedWith, undefined);
  await a.node.stop({ withdrawWithinMs: 10 });
  a.server.shutdown("test over");
});

Deno.test("'again' from another process after the crew's dungeon met its boss: a fresh one for the crew, not a hub", async () => {
  const cluster = new Cluster();
  const { b, crew } = await crewOnB(cluster);
  for (const c of crew) onBoss(c);
  await cluster.run(100);
  const first = crew[0].conn.instance!.id;
  // All three saw the results on B, then went home to A: the offer follows each.
  await cluster.run(TRANSFER_DELAYS.deathReturnTicks * TICK_MS + 100);
  const [ann, bo] = crew.slice(0, 2).map((c, i) => follow(cluster, c, ["Ann", "Bo"][i]));
  await cluster.run(50);
  choose(ann, Choice.Again);
  await cluster.run(50);
  const annAgain = follow(cluster, ann, "Ann");
  const next = b.server.instances.get(lastEnter(annAgain)!.instanceId)!;
  await cluster.run(5100);
  assert.equal(next.world.stage, "boss", "Ann's fight has begun without Bo");

  choose(bo, Choice.Again);
  await cluster.run(50);
  const boAgain = follow(cluster, bo, "Bo");
  const enter = lastEnter(boAgain)!;
  assert.equal(enter.reason, EnterReason.Retry);
  assert.match(enter.instanceId, /^b\/dungeon-/, "a dungeon, not B's hub");
  assert.notEqual(enter.instanceId, next.id);
  assert.equal(b.server.instances.get(enter.instanceId)?.reservedFor, first);
  assert.equal(b.server.instances.get(enter.instanceId)?.world.stage, "waves", "a fresh run");
  await cluster.stop();
});
