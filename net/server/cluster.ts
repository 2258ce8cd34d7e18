/**
 * One process of a cluster: several game processes sharing one registry (Redis
 * or Deno KV). It announces this process and its instances on a heartbeat,
 * places players anywhere in the cluster (a hub with room, the portal's dungeon,
 * the way back), and admits players other processes send here with a signed,
 * short-lived, single-use ticket. A registry outage blocks new placements only:
 * instances keep ticking, and players already placed can still go back to the
 * hub they came from.
 */
import { CONTENT, worldByKey } from "../../content/mod.ts";
import { EnterReason } from "../wire/protocol.ts";
import { CLUSTER_TIMING, CREW_OFFER_MS } from "../../content/net_tuning.ts";
import {
  type ClaimRequest,
  type CrewRecord,
  type InstanceRecord,
  leastLoaded,
  type Placement,
  type ProcessRecord,
  type Registry,
} from "./registry/mod.ts";
import { CloseCode, type ResultsMsg } from "../wire/protocol.ts";
import type { Instance } from "./instance.ts";
import type { Connection, ForeignResume, GameServer, Placer } from "./server.ts";
import { OnceSet, randomId, type TokenSigner } from "./tokens.ts";

/** What a cluster node needs besides its server. */
export interface ClusterOptions {
  readonly registry: Registry;
  /** Signs and checks tickets: every process of the cluster shares its secret. */
  readonly signer: TokenSigner;
  /** This process's id (the prefix of its instance ids). */
  readonly processId: string;
  /** Base http(s) URL other processes send players to ("" when it hosts no games). */
  readonly publicUrl: string;
  /**
   * False for a process that only places players (Deno Deploy in front of game
   * servers): it announces no capacity and no instances, and sends every player on.
   */
  readonly hostsGames?: boolean;
  /** Wall-clock ms: tickets and records are compared across processes. */
  readonly wallNow: () => number;
  readonly timing?: Partial<typeof CLUSTER_TIMING>;
}

/**
 * A transfer ticket's payload, an array to keep the hello short: the target
 * process's boot id, the instance id, its world (its index in CONTENT.worlds), the party id
 * (seats held in the registry), the Enter reason, the hub the player came from
 * ("" if none), a nonce (a ticket is admitted once), and the crew: to a hub, the
 * dungeon run the player left (its crew record may yet bring them the offer of
 * "again") and 1 if they saw its results already; to a crew's dungeon ("again"), the
 * crew it is reserved for ("" and 0: none).
 */
type Ticket = [
  boot: string,
  instanceId: string,
  worldId: number,
  partyId: string,
  reason: number,
  homeHubId: string,
  nonce: string,
  crew: string,
  crewSeen: number,
];

const MAX_ENTER_REASON = Math.max(...Object.values(EnterReason));

const TICKET_PURPOSE = "transfer";

/** Counters for /metrics. */
export interface ClusterStats {
  /** True while the last registry call succeeded. */
  registryUp: boolean;
  registryErrors: number;
  placements: number;
  ticketsRefused: number;
  /** Resume tokens of other processes, handed over to the process that holds the session. */
  resumesForwarded: number;
}

/** Places players across the cluster; plugs into GameServer as its Placer. */
export class ClusterNode implements Placer {
  /**
   * Random per start (the server's process life): tickets and resume tokens name it, so a
   * restart voids every one minted for the old process.
   */
  readonly boot: string;
  readonly processId: string;
  readonly publicUrl: string;
  readonly timing: typeof CLUSTER_TIMING;
  readonly hostsGames: boolean;
  readonly stats: ClusterStats = {
    registryUp: false,
    registryErrors: 0,
    placements: 0,
    ticketsRefused: 0,
    resumesForwarded: 0,
  };
  readonly #server: GameServer;
  readonly #registry: Registry;
  readonly #signer: TokenSigner;
  readonly #wallNow: () => number;
  readonly #once = new OnceSet();
  /** Live processes as of the last heartbeat: the way back to a hub works without the registry. */
  #processes = new Map<string, ProcessRecord>();
  /** Per instance, party members admitted (party id → count, kept while the party lives). */
  readonly #arrived = new Map<string, Map<string, { count: number; expMs: number }>>();
  readonly #createdAt = new Map<string, number>();
  /** Portal parties waiting for a dungeon, per hub; one claim in flight per process. */
  readonly #portalQueue: { party: Connection[]; from: Instance; world: string }[] = [];
  #placingDungeon = false;
  #timer: number | undefined;
  #beating: Promise<void> | undefined;
  #stopped = false;
  /** Draining: announced so (nobody is placed here), yet still found by resumes. */
  #draining = false;

  constructor(server: GameServer, opts: ClusterOptions) {
    this.#server = server;
    this.#registry = opts.registry;
    this.#signer = opts.signer;
    this.#wallNow = opts.wallNow;
    this.processId = opts.processId;
    this.publicUrl = opts.publicUrl.replace(/\/+$/, "");
    this.timing = { ...CLUSTER_TIMING, ...opts.timing };
    this.hostsGames = opts.hostsGames ?? true;
    this.boot = server.epoch;
    server.placer = this;
  }

  /** Announces this process now and then on every heartbeat. */
  start(): Promise<void> {
    this.#stopped = false;
    return this.#beat();
  }

  /** Stops the heartbeat and removes this process's records (best effort, bounded). */
  async stop(opts: { withdrawWithinMs?: number } = {}): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#server.clock.clearTimer(this.#timer);
    this.#timer = undefined;
    await this.#beating;
    const withdraw = this.#registry.withdraw({
      processId: this.processId,
      instanceIds: [...this.#server.instances.keys()],
    }).catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      withdraw,
      new Promise((r) => timer = setTimeout(r, opts.withdrawWithinMs ?? 1000)),
    ]);
    clearTimeout(timer);
  }

  /**
   * The process is going (a drain before a restart): from now on it is announced as
   * draining, with no room and no instance taking anyone, so nobody is placed here; yet
   * its record stays until stop(), so a player whose link drops mid-run is still handed
   * back here by whichever process the load balancer gives the resume to.
   */
  drain(): Promise<void> {
    if (this.#draining || this.#stopped) return Promise.resolve();
    this.#draining = true;
    return this.#announce();
  }

  /** Renews this process's records, then schedules the next heartbeat. */
  #beat(): Promise<void> {
    this.#beating = this.#announce().finally(() => {
      this.#beating = undefined;
      if (this.#stopped) return;
      this.#timer = this.#server.clock.setTimer(() => {
        this.#timer = undefined;
        this.#beat();
      }, this.timing.heartbeatMs);
    });
    return this.#beating;
  }

  async #announce(): Promise<void> {
    const server = this.#server;
    const nowMs = this.#wallNow();
    const hosted = this.hostsGames ? [...server.instances.values()] : [];
    const draining = this.#draining;
    const instances = hosted.map((i) => ({
      id: i.id,
      kind: i.kind,
      world: i.worldKey,
      players: i.size,
      // A crew's reserved dungeon takes nobody else; a draining process nobody new.
      accepting: !draining &&
        (i.kind === "hub" || (i.world.acceptsPlayers && i.reservedFor === undefined)),
      createdAtMs: this.#createdAt.get(i.id) ?? this.#noteCreated(i.id, nowMs),
      arrived: this.#arrivals(i.id, nowMs),
    }));
    for (const id of this.#createdAt.keys()) {
      if (!server.instances.has(id)) this.#createdAt.delete(id);
    }
    try {
      await this.#registry.announce({
        id: this.processId,
        url: this.publicUrl,
        boot: this.boot,
        players: server.playerCount,
        capacity: this.hostsGames && !draining ? server.limits.maxConnections : 0,
        tickMeanMs: server.tickWindow.mean(),
        draining,
      }, instances);
      this.#processes = new Map((await this.#registry.processes()).map((p) => [p.id, p]));
      this.#registryOk();
    } catch (err) {
      this.#registryFailed("heartbeat", err);
      return;
    }
    // Players back in a hub here from a run elsewhere: has its crew record come? One
    // read per run, however many of its crew wait here.
    const waiting = new Map<string, Connection[]>();
    for (const conn of this.#server.connections) {
      const id = conn.pendingCrew?.id;
      if (id === undefined) continue;
      const crew = waiting.get(id);
      if (crew) crew.push(conn);
      else waiting.set(id, [conn]);
    }
    await Promise.all([...waiting].map(([id, conns]) => this.#pollCrew(id, conns)));
  }

  #noteCreated(id: string, nowMs: number): number {
    this.#createdAt.set(id, nowMs);
    return nowMs;
  }

  #arrivals(instanceId: string, nowMs: number): Record<string, number> {
    const parties = this.#arrived.get(instanceId);
    if (!parties) return {};
    const out: Record<string, number> = {};
    for (const [id, p] of parties) {
      if (p.expMs <= nowMs) parties.delete(id);
      else out[id] = p.count;
    }
    if (parties.size === 0) this.#arrived.delete(instanceId);
    return out;
  }

  #registryOk(): void {
    if (!this.stats.registryUp) this.#server.log("registry_up", { process: this.processId });
    this.stats.registryUp = true;
  }

  #registryFailed(what: string, err: unknown): void {
    this.stats.registryErrors++;
    if (this.stats.registryUp || this.stats.registryErrors === 1) {
      // Once per outage: instances keep ticking, only new placements wait for it.
      this.#server.log("registry_down", {
        process: this.processId,
        during: what,
        error: String(err),
      });
    }
    this.stats.registryUp = false;
  }

  // ---------------------------------------------------------------- Placer

  admit(conn: Connection): void {
    if (conn.ticket === undefined) {
      this.#server.welcome(conn);
      this.#placeInHub(conn, EnterReason.Join);
      return;
    }
    const nowMs = this.#wallNow();
    const checked = this.#signer.verify<Ticket>(TICKET_PURPOSE, conn.ticket, nowMs);
    const refuse = (why: string) => {
      this.stats.ticketsRefused++;
      conn.close(CloseCode.BadTicket, `transfer ticket refused: ${why}; connect without it`);
    };
    if (!this.hostsGames) return refuse("this process hosts no games");
    if (!checked.ok) return refuse(checked.refusal);
    const t = checked.payload;
    if (!isTicket(t)) return refuse("malformed");
    const [boot, instanceId, worldId, partyId, reason, homeHubId, nonce, crew, crewSeen] = t;
    if (boot !== this.boot || !instanceId.startsWith(`${this.processId}/`)) {
      return refuse("meant for another process");
    }
    if (!this.#once.claim(nonce, { expiresAtMs: checked.expiresAtMs, nowMs })) {
      return refuse("already used");
    }
    const server = this.#server;
    server.welcome(conn);
    server.counters.transfersIn++;
    conn.homeHubId = homeHubId || undefined;
    const world = CONTENT.worlds[worldId].key;
    let target = crew !== "" && reason === EnterReason.Retry
      ? server.crewDungeon(instanceId, { crewId: crew, world })
      : server.instanceFor(instanceId, world);
    if (target.kind === "dungeon" && !target.world.acceptsPlayers) {
      // The fight began while they travelled: a hub here rather than a fight they cannot join.
      target = server.hubFor(conn);
    }
    this.#noteArrival(target.id, partyId, nowMs);
    server.move(conn, target, reason as EnterReason);
    if (crew !== "" && target.kind === "hub") {
      conn.pendingCrew = { id: crew, seen: crewSeen === 1 };
      this.#pollCrew(crew, [conn]);
    }
  }

  toDungeon(party: readonly Connection[], opts: { from: Instance; world: string }): void {
    this.#portalQueue.push({ party: [...party], from: opts.from, world: opts.world });
    this.#drainPortal();
  }

  toHub(conn: Connection, reason: EnterReason, crew?: { id: string; seen: boolean }): void {
    const home = conn.homeHubId;
    const server = this.#server;
    if (home !== undefined) {
      const local = server.instances.get(home);
      if (local && local.size < server.limits.hubCapacity) {
        server.move(conn, local, reason);
        return;
      }
      // Their hub is elsewhere: a ticket needs no registry, only the process's last known URL.
      const proc = this.#processes.get(processOf(home));
      if (!local && proc && proc.id !== this.processId && !proc.draining) {
        this.#send(conn, {
          instanceId: home,
          world: CONTENT.home,
          process: proc,
          partyId: randomId(6),
          reason,
          crew,
        });
        return;
      }
    }
    this.#placeInHub(conn, reason, crew);
  }

  runEnded(from: Instance, opts: { results: ResultsMsg; next: string }): void {
    if (!this.hostsGames) return;
    this.#registry.putCrew({
      id: from.id,
      world: from.worldKey,
      next: opts.next,
      members: opts.results.rows.map((r) => r.name),
      results: opts.results,
      expiresAtMs: this.#wallNow() + CREW_OFFER_MS,
    }).catch((err) => this.#registryFailed("crew record", err));
  }

  again(conn: Connection, crew: { id: string; next: string; world: string }): void {
    const inHub = () => conn.state === "playing" && conn.instance?.kind === "hub";
    this.#lookUpProcess(processOf(crew.next)).then((proc) => {
      if (!inHub()) return; // gone, or moved on meanwhile
      if (!proc || proc.draining || !proc.url) {
        // The crew's process is gone or going: they stay in the hub they stand in, told why.
        this.#server.log("crew_again_lost", { player: conn.playerId, crew: crew.id });
        conn.instance?.announce({
          type: "portalRefused",
          playerId: conn.playerId,
          reason: "your crew's server is gone or restarting: no run together this time",
        });
        return;
      }
      this.#send(conn, {
        instanceId: crew.next,
        world: crew.world,
        process: proc,
        partyId: randomId(6),
        reason: EnterReason.Retry,
        crew: { id: crew.id, seen: true },
      });
    });
  }

  /**
   * Reads the crew record of run `id`, which `conns` (players in a hub here) left on
   * another process: found, each gets its results (unless seen) and the offer; the run's
   * dungeon gone with no record, nothing will come; else it is read again on the next
   * heartbeat. A registry outage just leaves it for later (the record lapses with the offer).
   */
  async #pollCrew(id: string, conns: readonly Connection[]): Promise<void> {
    const waiting = conns.filter((conn) => {
      if (conn.pendingCrew?.id !== id || conn.state !== "playing") return false;
      const where = conn.instance?.kind;
      if (where === "dungeon") conn.pendingCrew = undefined; // fighting elsewhere: no offer
      return where === "hub";
    });
    if (waiting.length === 0) return;
    let run: InstanceRecord | undefined;
    let crew: CrewRecord<ResultsMsg> | undefined;
    try {
      // The instance first: its host writes the crew record before withdrawing it.
      run = await this.#registry.instance(id);
      crew = await this.#registry.crew<ResultsMsg>(id);
      this.#registryOk();
    } catch (err) {
      this.#registryFailed("crew lookup", err);
      return;
    }
    const nowMs = this.#wallNow();
    for (const conn of waiting) {
      const pending = conn.pendingCrew;
      if (pending?.id !== id) continue; // moved on meanwhile
      if (crew) {
        conn.pendingCrew = undefined;
        if (crew.expiresAtMs <= nowMs || !crew.members.includes(conn.name)) continue;
        this.#server.offerCrew(conn, {
          id: crew.id,
          world: crew.world,
          next: crew.next,
          results: crew.results,
          offerMs: crew.expiresAtMs - nowMs,
          seen: pending.seen,
        });
      } else if (!run) conn.pendingCrew = undefined;
    }
  }

  resumeElsewhere(conn: Connection, resume: ForeignResume): void {
    this.#lookUpProcess(resume.processId).then((proc) => {
      if (conn.state !== "handshake") return; // the client gave up meanwhile
      if (
        !proc || proc.boot !== resume.epoch || proc.id === this.processId || !proc.url ||
        !this.#server.accepting
      ) {
        resume.gone();
        return;
      }
      this.stats.resumesForwarded++;
      this.#server.log("resume_forwarded", { conn: conn.id, to: proc.id });
      // The token is the ticket: the holder checks it as any resume (expiry on its clock).
      this.#server.handOff(conn, {
        url: wsUrl(proc.url),
        ticket: resume.token,
        reason: EnterReason.Resume,
      });
    });
  }

  /** A live process's record, fresh from the registry, else as of the last heartbeat. */
  async #lookUpProcess(id: string): Promise<ProcessRecord | undefined> {
    try {
      const proc = await this.#registry.process(id);
      this.#registryOk();
      return proc;
    } catch (err) {
      this.#registryFailed("resume lookup", err);
      return this.#processes.get(id);
    }
  }

  instanceGone(id: string): void {
    this.#arrived.delete(id);
    this.#createdAt.delete(id);
    this.#registry.withdraw({ instanceIds: [id] }).catch((err) =>
      this.#registryFailed("withdraw", err)
    );
  }

  // ---------------------------------------------------------------- placement

  /** The fullest hub with room anywhere; this process's own hub if the registry is down. */
  #placeInHub(
    conn: Connection,
    reason: EnterReason,
    crew?: { id: string; seen: boolean },
  ): void {
    const server = this.#server;
    const fallback = (why: string) => {
      if (conn.state !== "playing") return;
      if (!this.hostsGames) {
        conn.close(CloseCode.ServerFull, `no game server can take you right now (${why})`);
        return;
      }
      server.log("placement_local", { player: conn.playerId, reason: why });
      server.move(conn, server.hubFor(conn), reason);
    };
    this.#claim({
      kind: "hub",
      world: CONTENT.home,
      members: [conn.name],
      capacity: server.limits.hubCapacity,
    })
      .then((placed) => {
        if (conn.state !== "playing" || conn.instance) return;
        if (!placed) return fallback("no process can take another player");
        this.#send(conn, {
          instanceId: placed.instance.id,
          world: CONTENT.home,
          process: placed.process,
          partyId: placed.party.id,
          reason,
          crew,
        });
      })
      .catch((err) => {
        this.#registryFailed("hub placement", err);
        fallback(`registry unreachable: ${(err as Error).message}`);
      });
  }

  /** Places waiting portal parties one claim at a time, so a party is never split by a race. */
  #drainPortal(): void {
    if (this.#placingDungeon) return;
    const next = this.#portalQueue.shift();
    if (!next) return;
    const { from, world } = next;
    const max = this.#server.limits.maxPlayersPerDungeon;
    // Who entered this hub's portal while the last claim was in flight travels with them.
    for (let i = 0; i < this.#portalQueue.length && next.party.length < max;) {
      const q = this.#portalQueue[i];
      if (q.from !== from || q.world !== world || q.party.length + next.party.length > max) {
        i++;
        continue;
      }
      next.party.push(...q.party);
      this.#portalQueue.splice(i, 1);
    }
    const party = next.party.filter((c) => c.state === "playing" && c.instance === from);
    if (party.length === 0) return this.#drainPortal();
    this.#placingDungeon = true;
    this.#claim({
      kind: "dungeon",
      world,
      members: party.map((c) => c.name),
      capacity: max,
    }).then((placed) => {
      const here = party.filter((c) => c.state === "playing" && c.instance === from);
      if (!placed) {
        for (const c of here) {
          this.#server.refusePortal(c, "no game process has room for a dungeon");
        }
        return;
      }
      for (const c of here) {
        this.#send(c, {
          instanceId: placed.instance.id,
          world,
          process: placed.process,
          partyId: placed.party.id,
          reason: EnterReason.Portal,
        });
      }
    }).catch((err) => {
      this.#registryFailed("dungeon placement", err);
      for (const c of party) {
        if (c.state === "playing" && c.instance === from) {
          this.#server.refusePortal(
            c,
            "dungeons are unavailable: the game registry cannot be reached. Try again shortly",
          );
        }
      }
    }).finally(() => {
      this.#placingDungeon = false;
      this.#drainPortal();
    });
  }

  async #claim(
    req: Pick<ClaimRequest, "kind" | "world" | "members" | "capacity">,
  ): Promise<Placement | undefined> {
    const placed = await this.#registry.claim({
      ...req,
      partyId: randomId(6),
      prefer: req.kind === "hub" ? "fullest" : "newest",
      preferProcessId: this.processId,
      pickProcess: (loads) =>
        leastLoaded(loads, {
          seats: req.members.length,
          tickBudgetMs: this.timing.tickBudgetMs,
          tickQuietMs: this.timing.tickQuietMs,
          preferId: this.processId,
        }),
      newInstanceId: (p) => `${p.id}/${req.kind}-${randomId(4)}`,
    });
    this.#registryOk();
    if (placed) this.stats.placements++;
    return placed;
  }

  /** Moves a player into a placed instance: here at once, elsewhere with a ticket. */
  #send(
    conn: Connection,
    to: {
      instanceId: string;
      /** The key of the instance's world. */
      world: string;
      process: ProcessRecord;
      partyId: string;
      reason: EnterReason;
      /** To a hub: the run the player left; to a crew's dungeon: that crew. */
      crew?: { id: string; seen: boolean };
    },
  ): void {
    const server = this.#server;
    const nowMs = this.#wallNow();
    if (to.process.id === this.processId) {
      const target = to.crew && to.reason === EnterReason.Retry
        ? server.crewDungeon(to.instanceId, { crewId: to.crew.id, world: to.world })
        : server.instanceFor(to.instanceId, to.world);
      this.#noteArrival(target.id, to.partyId, nowMs);
      server.move(conn, target, to.reason);
      return;
    }
    const from = conn.instance;
    const payload: Ticket = [
      to.process.boot,
      to.instanceId,
      worldByKey(to.world).id,
      to.partyId,
      to.reason,
      from?.kind === "hub" ? from.id : conn.homeHubId ?? "",
      randomId(6),
      to.crew?.id ?? "",
      to.crew?.seen ? 1 : 0,
    ];
    const ticket = this.#signer.sign(TICKET_PURPOSE, {
      payload,
      expiresAtMs: nowMs + this.timing.ticketTtlMs,
    });
    server.handOff(conn, { url: wsUrl(to.process.url), ticket, reason: to.reason });
  }

  #noteArrival(instanceId: string, partyId: string, nowMs: number): void {
    let parties = this.#arrived.get(instanceId);
    if (!parties) this.#arrived.set(instanceId, parties = new Map());
    const p = parties.get(partyId) ?? { count: 0, expMs: nowMs + this.timing.partyTtlMs };
    p.count++;
    parties.set(partyId, p);
  }
}

/** The process part of an instance id (`p1/dungeon-3` → `p1`). */
function processOf(instanceId: string): string {
  const slash = instanceId.indexOf("/");
  return slash < 0 ? "" : instanceId.slice(0, slash);
}

/** The game socket of a process: its public URL with ws(s): and /ws. */
export function wsUrl(publicUrl: string): string {
  const u = new URL(publicUrl);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  u.pathname = u.pathname.replace(/\/+$/, "") + "/ws";
  return u.toString();
}

function isTicket(t: unknown): t is Ticket {
  if (!Array.isArray(t) || t.length !== 9) return false;
  const [boot, instanceId, kind, partyId, reason, home, nonce, crew, crewSeen] = t;
  return typeof boot === "string" && typeof instanceId === "string" &&
    Number.isInteger(kind) && CONTENT.worlds[kind] !== undefined &&
    typeof partyId === "string" && Number.isInteger(reason) && reason >= 0 &&
    reason <= MAX_ENTER_REASON && typeof home === "string" && typeof nonce === "string" &&
    typeof crew === "string" && (crewSeen === 0 || crewSeen === 1);
}
