/**
 * The shared instance registry: which processes are alive (public URL, load,
 * heartbeat), which instances they host (kind, players, accepting), and which
 * parties are on their way into which instance. Any number of game processes
 * share one; each writes only its own process and instance records, with a time
 * to live its heartbeat keeps renewing, so a process that dies vanishes within
 * one TTL. Placement claims seats atomically: two processes placing parties at
 * once can never overfill an instance. Engine-neutral: see store.ts.
 *
 * Namespaces: `proc/<processId>`, `inst/<instanceId>` (written by the host),
 * `seats/<instanceId>` (parties holding seats, written by placers), `party/<partyId>`
 * and `crew/<dungeonId>` (a finished run's crew, written by its host).
 */
import type { RegistryStore, StoredEntry, Write } from "./store.ts";
import { RegistryUnavailable } from "./store.ts";

/** A live game process. */
export interface ProcessRecord {
  readonly id: string;
  /** Base http(s) URL other processes send clients to (its `/ws` is the game socket). */
  readonly url: string;
  /** Random per start: tickets name it, so a restarted process refuses its predecessor's. */
  readonly boot: string;
  readonly players: number;
  /** Players it takes at most (its connection limit). */
  readonly capacity: number;
  /**
   * Mean tick duration over the last 10 s, ms: the CPU the process spends. (A p99 of
   * wall time on a shared machine measures the neighbours' preemptions as much.)
   */
  readonly tickMeanMs: number;
  readonly heartbeatAtMs: number;
  /**
   * Going away (a drain before a restart): nobody is placed there, but the sessions it
   * still holds may be resumed there.
   */
  readonly draining?: boolean;
}

/** An instance as its host reports it. */
export interface InstanceRecord {
  readonly id: string;
  readonly kind: "hub" | "dungeon";
  /** The key of its world in the content registry (several dungeons share a kind). */
  readonly world?: string;
  readonly processId: string;
  readonly players: number;
  /** False once a dungeon's boss has appeared. */
  readonly accepting: boolean;
  readonly createdAtMs: number;
  /** Party members admitted so far, by party id: seats they no longer hold. */
  readonly arrived: Readonly<Record<string, number>>;
}

/** A group placed together, travelling to one instance. */
export interface PartyRecord {
  readonly id: string;
  readonly instanceId: string;
  readonly processId: string;
  readonly members: readonly string[];
  readonly createdAtMs: number;
}

/**
 * A finished run's crew, written by the process that hosted the run so that members
 * already on other processes (sent home there) get the results and the offer of
 * "again": their process reads it, and their "again" goes to `next` on the host.
 * `R` is the results message (the registry does not know the wire format).
 */
export interface CrewRecord<R = unknown> {
  /** The finished dungeon's instance id (the crew's id). */
  readonly id: string;
  /** The key of the world the crew played, which "again" plays once more. */
  readonly world: string;
  /** The dungeon the crew regroups in, on the host (made by the first to arrive). */
  readonly next: string;
  /** Every member's name (results rows). */
  readonly members: readonly string[];
  readonly results: R;
  /** Wall-clock ms after which the offer has lapsed. */
  readonly expiresAtMs: number;
}

interface SeatsRecord {
  readonly parties: Readonly<Record<string, { readonly seats: number; readonly expMs: number }>>;
}

/** Timing of a registry. */
export interface RegistryTiming {
  /** Wall-clock ms (records are compared across processes). */
  readonly now: () => number;
  /** Lifetime of process and instance records; heartbeats renew them well before. */
  readonly heartbeatTtlMs: number;
  /** How long a party holds its seats while its members travel. */
  readonly partyTtlMs: number;
}

/** What a placement asks for. */
export interface ClaimRequest {
  readonly kind: "hub" | "dungeon";
  /** Only instances of this world (its content key) will do; a new one is of this world. */
  readonly world?: string;
  readonly partyId: string;
  readonly members: readonly string[];
  /** Most players an instance of this kind takes. */
  readonly capacity: number;
  /** Which instance with room wins: the newest (dungeons) or the fullest (hubs). */
  readonly prefer: "newest" | "fullest";
  /** Among equals, an instance of this process wins (no hop for the player). */
  readonly preferProcessId?: string;
  /** Picks the process for a new instance when none has room; undefined: none can take it. */
  readonly pickProcess: (loads: readonly ProcessLoad[]) => ProcessRecord | undefined;
  /** Names a new instance on `process` (unique across the deployment). */
  readonly newInstanceId: (process: ProcessRecord) => string;
}

/** A live process and the seats its instances fill or hold. */
export interface ProcessLoad {
  readonly process: ProcessRecord;
  /** Players in its instances plus seats held for parties on their way. */
  readonly seats: number;
}

/** Where a party goes. */
export interface Placement {
  readonly instance: InstanceRecord;
  readonly process: ProcessRecord;
  readonly party: PartyRecord;
  /** True when the instance is new: its host creates it when the first ticket arrives. */
  readonly created: boolean;
}

const MAX_ATTEMPTS = 8;

/** The registry, on any store. Every method rejects with RegistryUnavailable on an outage. */
export class Registry {
  readonly #store: RegistryStore;
  readonly #t: RegistryTiming;

  constructor(store: RegistryStore, timing: RegistryTiming) {
    this.#store = store;
    this.#t = timing;
  }

  get timing(): RegistryTiming {
    return this.#t;
  }

  /** Writes this process's record and every instance it hosts, renewing their TTL. */
  async announce(
    proc: Omit<ProcessRecord, "heartbeatAtMs">,
    instances: readonly Omit<InstanceRecord, "processId">[],
  ): Promise<void> {
    const ttlMs = this.#t.heartbeatTtlMs;
    const writes: Write[] = [{
      ns: "proc",
      id: proc.id,
      value: { ...proc, heartbeatAtMs: this.#t.now() } satisfies ProcessRecord,
      ttlMs,
    }];
    for (const i of instances) {
      writes.push({
        ns: "inst",
        id: i.id,
        value: { ...i, processId: proc.id } satisfies InstanceRecord,
        ttlMs,
      });
    }
    await this.#store.commit([], writes);
  }

  /** Removes instances at once (destroyed, or the process is shutting down). */
  async withdraw(ids: { processId?: string; instanceIds: readonly string[] }): Promise<void> {
    const writes: Write[] = ids.instanceIds.flatMap((id) => [
      { ns: "inst", id, value: null, ttlMs: 0 },
      { ns: "seats", id, value: null, ttlMs: 0 },
    ]);
    if (ids.processId) writes.push({ ns: "proc", id: ids.processId, value: null, ttlMs: 0 });
    if (writes.length > 0) await this.#store.commit([], writes);
  }

  /** Live processes. */
  async processes(): Promise<ProcessRecord[]> {
    return (await this.#store.list("proc")).map((e) => e.value as ProcessRecord);
  }

  /** One live process, or undefined. */
  async process(id: string): Promise<ProcessRecord | undefined> {
    return (await this.#store.get("proc", id))?.value as ProcessRecord | undefined;
  }

  /** Live instances of live processes. */
  async instances(): Promise<InstanceRecord[]> {
    const [procs, insts] = await Promise.all([this.#store.list("proc"), this.#store.list("inst")]);
    const alive = new Set(procs.map((e) => e.id));
    return insts.map((e) => e.value as InstanceRecord).filter((i) => alive.has(i.processId));
  }

  /** A party still travelling, or undefined once it has expired. */
  async party(id: string): Promise<PartyRecord | undefined> {
    return (await this.#store.get("party", id))?.value as PartyRecord | undefined;
  }

  /** One live instance record, or undefined (its host withdrew it, or died). */
  async instance(id: string): Promise<InstanceRecord | undefined> {
    return (await this.#store.get("inst", id))?.value as InstanceRecord | undefined;
  }

  /** Publishes a finished run's crew until its offer lapses. */
  async putCrew<R>(crew: CrewRecord<R>): Promise<void> {
    const ttlMs = Math.max(1, crew.expiresAtMs - this.#t.now());
    await this.#store.commit([], [{ ns: "crew", id: crew.id, value: crew, ttlMs }]);
  }

  /** A finished run's crew while its offer stands, or undefined. */
  async crew<R>(id: string): Promise<CrewRecord<R> | undefined> {
    return (await this.#store.get("crew", id))?.value as CrewRecord<R> | undefined;
  }

  /**
   * Claims seats for a whole party in one instance of `kind` with room for all of
   * them (chosen by `prefer`), or registers a new instance on the process
   * `pickProcess` chooses. Undefined when no live process can take it.
   */
  async claim(req: ClaimRequest): Promise<Placement | undefined> {
    const seatsWanted = req.members.length;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const nowMs = this.#t.now();
      const [procEntries, instEntries, seatEntries] = await Promise.all([
        this.#store.list("proc"),
        this.#store.list("inst"),
        this.#store.list("seats"),
      ]);
      const procs = new Map(procEntries.map((e) => [e.id, e.value as ProcessRecord]));
      const seatsById = new Map(seatEntries.map((e) => [e.id, e]));
      const loads = new Map<string, number>();
      let best: { inst: InstanceRecord; filled: number } | undefined;
      for (const e of instEntries) {
        const inst = e.value as InstanceRecord;
        if (!procs.has(inst.processId)) continue;
        const filled = inst.players + heldSeats(seatsById.get(inst.id), { inst, nowMs });
        loads.set(inst.processId, (loads.get(inst.processId) ?? 0) + filled);
        if (inst.kind !== req.kind || !inst.accepting || procs.get(inst.processId)!.draining) {
          continue;
        }
        if (req.world !== undefined && inst.world !== req.world) continue;
        if (filled + seatsWanted > req.capacity) continue;
        if (!best || better(req, { inst, filled }, best)) best = { inst, filled };
      }
      if (best) {
        const placed = await this.#hold(req, {
          inst: best.inst,
          proc: procs.get(best.inst.processId)!,
          seats: seatsById.get(best.inst.id),
          nowMs,
        });
        if (placed) return placed;
        continue;
      }
      const proc = req.pickProcess(
        [...procs.values()].map((p) => ({
          process: p,
          seats: Math.max(p.players, loads.get(p.id) ?? 0),
        })),
      );
      if (!proc) return undefined;
      const inst: InstanceRecord = {
        id: req.newInstanceId(proc),
        kind: req.kind,
        world: req.world,
        processId: proc.id,
        players: 0,
        accepting: true,
        createdAtMs: nowMs,
        arrived: {},
      };
      const placed = await this.#hold(req, { inst, proc, seats: undefined, nowMs, create: true });
      if (placed) return placed;
    }
    throw new RegistryUnavailable(`placement kept conflicting after ${MAX_ATTEMPTS} attempts`);
  }

  /** Adds the party to the instance's held seats, if nobody changed them meanwhile. */
  async #hold(
    req: ClaimRequest,
    at: {
      inst: InstanceRecord;
      proc: ProcessRecord;
      seats: StoredEntry | undefined;
      nowMs: number;
      create?: boolean;
    },
  ): Promise<Placement | undefined> {
    const { inst, proc, nowMs } = at;
    const partyTtlMs = this.#t.partyTtlMs;
    const parties: Record<string, { seats: number; expMs: number }> = {};
    for (
      const [id, p] of Object.entries((at.seats?.value as SeatsRecord | undefined)?.parties ?? {})
    ) {
      if (p.expMs > nowMs) parties[id] = p;
    }
    parties[req.partyId] = { seats: req.members.length, expMs: nowMs + partyTtlMs };
    const party: PartyRecord = {
      id: req.partyId,
      instanceId: inst.id,
      processId: proc.id,
      members: req.members,
      createdAtMs: nowMs,
    };
    const writes: Write[] = [
      { ns: "seats", id: inst.id, value: { parties } satisfies SeatsRecord, ttlMs: partyTtlMs },
      { ns: "party", id: party.id, value: party, ttlMs: partyTtlMs },
    ];
    const checks = [{ ns: "seats", id: inst.id, version: at.seats?.version ?? null }];
    if (at.create) {
      checks.push({ ns: "inst", id: inst.id, version: null });
      writes.push({ ns: "inst", id: inst.id, value: inst, ttlMs: this.#t.heartbeatTtlMs });
    }
    if (!await this.#store.commit(checks, writes)) return undefined;
    return { instance: inst, process: proc, party, created: at.create ?? false };
  }

  /** Releases the store's connections. */
  close(): Promise<void> {
    return this.#store.close();
  }
}

/** Seats parties still hold in an instance: their size less the members already in. */
function heldSeats(
  entry: StoredEntry | undefined,
  at: { inst: InstanceRecord; nowMs: number },
): number {
  if (!entry) return 0;
  let held = 0;
  for (const [id, p] of Object.entries((entry.value as SeatsRecord).parties)) {
    if (p.expMs > at.nowMs) held += Math.max(0, p.seats - (at.inst.arrived[id] ?? 0));
  }
  return held;
}

function better(
  req: ClaimRequest,
  a: { inst: InstanceRecord; filled: number },
  b: { inst: InstanceRecord; filled: number },
): boolean {
  if (req.prefer === "fullest" && a.filled !== b.filled) return a.filled > b.filled;
  const aHere = a.inst.processId === req.preferProcessId;
  if (aHere !== (b.inst.processId === req.preferProcessId)) return aHere;
  if (a.inst.createdAtMs !== b.inst.createdAtMs) return a.inst.createdAtMs > b.inst.createdAtMs;
  return a.inst.id > b.inst.id;
}

/**
 * The least-loaded process that can take `seats` more players: load is the share
 * of its player capacity in use plus, once its mean tick passes `tickQuietMs`
 * (below that it is scheduling noise, not load), how far it has gone towards
 * `tickBudgetMs`. Ties go to `preferId` (no hop), then to the smaller id.
 */
export function leastLoaded(
  loads: readonly ProcessLoad[],
  opts: { seats: number; tickBudgetMs: number; tickQuietMs?: number; preferId?: string },
): ProcessRecord | undefined {
  const quietMs = opts.tickQuietMs ?? 0;
  let best: { p: ProcessRecord; score: number } | undefined;
  for (const { process: p, seats } of loads) {
    if (seats + opts.seats > p.capacity) continue;
    const busy = Math.max(0, p.tickMeanMs - quietMs) / Math.max(1e-9, opts.tickBudgetMs - quietMs);
    const score = seats / p.capacity + busy;
    const wins = !best || score < best.score - 1e-9 ||
      (Math.abs(score - best.score) <= 1e-9 &&
        (p.id === opts.preferId || (best.p.id !== opts.preferId && p.id < best.p.id)));
    if (wins) best = { p, score };
  }
  return best?.p;
}
