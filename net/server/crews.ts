/**
 * Crews: who played a finished run together, so "again with this crew" can put
 * them into one new dungeon. A crew is offered once per run end; each member
 * answers at most once; offers lapse after CREW_OFFER_MS. Pure bookkeeping: the
 * server owns the instances and carries out the moves.
 */

/** One finished run's party. */
interface Crew {
  /** The dungeon its members who chose "again" go to (made by the first of them). */
  next: string | undefined;
  /** Hosted by another process of the cluster: "again" travels there. */
  readonly remote: boolean;
  /** The key of the world the crew played, which "again" plays once more. */
  readonly world: string;
  readonly expiresAtMs: number;
}

/** Offers of a fresh run to the crews of finished ones. */
export class Crews {
  readonly #crews = new Map<string, Crew>();
  /** Each player's open offer: the crew they may rejoin. */
  readonly #offers = new Map<number, string>();
  readonly #offerMs: number;

  constructor(opts: { offerMs: number }) {
    this.#offerMs = opts.offerMs;
  }

  /**
   * Opens an offer to `members`, the crew of the run `crewId` in `world` that just ended:
   * `next` names the dungeon "again" makes, `remote` says another process hosts it, and
   * `offerMs` (default: the server's) how long the offer stands.
   */
  offer(
    crewId: string,
    opts: {
      members: Iterable<number>;
      world: string;
      nowMs: number;
      next?: string;
      remote?: boolean;
      offerMs?: number;
    },
  ): void {
    // A crew already known here (from its own run's end) stays as it is: another member's
    // offer read from the registry adds that member only.
    if (!opts.remote || !this.#crews.has(crewId)) {
      this.#crews.set(crewId, {
        next: opts.next,
        remote: opts.remote ?? false,
        world: opts.world,
        expiresAtMs: opts.nowMs + (opts.offerMs ?? this.#offerMs),
      });
    }
    for (const id of opts.members) this.#offers.set(id, crewId);
  }

  /** True when another process hosts the crew's "again". */
  remote(crewId: string): boolean {
    return this.#crews.get(crewId)?.remote ?? false;
  }

  /** The world the crew played. */
  world(crewId: string): string | undefined {
    return this.#crews.get(crewId)?.world;
  }

  /** Closes a player's open offer and returns its crew id (undefined: none, or lapsed). */
  take(playerId: number, nowMs: number): string | undefined {
    const crewId = this.#offers.get(playerId);
    this.#offers.delete(playerId);
    const crew = crewId === undefined ? undefined : this.#crews.get(crewId);
    return crew && crew.expiresAtMs > nowMs ? crewId : undefined;
  }

  /** True while `playerId` has an offer open. */
  has(playerId: number): boolean {
    return this.#offers.has(playerId);
  }

  /** The dungeon the crew regroups in, if one was made. */
  next(crewId: string): string | undefined {
    return this.#crews.get(crewId)?.next;
  }

  /** Records the dungeon made for the crew. */
  setNext(crewId: string, instanceId: string): void {
    const crew = this.#crews.get(crewId);
    if (crew) crew.next = instanceId;
  }

  /** Forgets a player who left the server. */
  forget(playerId: number): void {
    this.#offers.delete(playerId);
  }

  /** Drops lapsed crews and the offers that point at them. */
  prune(nowMs: number): void {
    if (this.#crews.size === 0) return;
    for (const [id, crew] of this.#crews) if (crew.expiresAtMs <= nowMs) this.#crews.delete(id);
    for (const [player, crewId] of this.#offers) {
      if (!this.#crews.has(crewId)) this.#offers.delete(player);
    }
  }

  /** Crews with an open offer (for tests and metrics). */
  get size(): number {
    return this.#crews.size;
  }
}
