/**
 * Tells a lossy datagram link from a clean one by what the client acknowledges:
 * each input datagram names the newest snapshot received and which of the 8 before
 * it arrived too, so a snapshot the client says it lacks, once two later ones have
 * arrived, was lost (not merely overtaken). Only what the client says counts: late
 * acknowledgements (a page or a bot whose loop stalled) prove nothing and judge
 * nothing. Over a lossy link each snapshot datagram is then sent twice, a tick apart:
 * losing both copies of two snapshots in a row is rare enough that snapshots keep
 * coming every 50–100 ms, and a clean link pays nothing. After an Enter, judging starts
 * at the first snapshot of the new world the client acknowledges: the ones before it
 * may have overtaken the Enter and been dropped. Pure: ticks and times in.
 */
import { SNAPSHOT_REPEAT, TICKS_PER_SNAPSHOT } from "../../content/net_tuning.ts";

/** Snapshots an acknowledgement describes besides its newest (its bit mask). */
export const SNAPSHOTS_HELD_BITS = 8;

/** Snapshots sent over datagrams that no acknowledgement has accounted for yet. */
export class SnapshotLossMeter {
  readonly #pending: { tick: number; atMs: number }[] = [];
  #lossAtMs = -Infinity;
  /** The first snapshot tick of the current world (NaN: none sent since the Enter). */
  #worldFrom = -Infinity;
  /** The client has acknowledged a snapshot of the current world. */
  #settled = true;

  /** A snapshot of `tick` went out at `nowMs` (its second copy changes nothing). */
  sent(tick: number, nowMs: number): void {
    if (Number.isNaN(this.#worldFrom)) this.#worldFrom = tick;
    if (this.#pending.at(-1)?.tick !== tick) this.#pending.push({ tick, atMs: nowMs });
    // Too old for any acknowledgement to describe: forgotten, not judged.
    while (this.#pending.length > 0 && this.#pending[0].atMs < nowMs - SNAPSHOT_REPEAT.forgetMs) {
      this.#pending.shift();
    }
  }

  /**
   * The client holds `newest` and, for each bit k set in `heldMask`, the snapshot
   * TICKS_PER_SNAPSHOT·(k+1) ticks before it; it lacks the others of those 8.
   */
  acked(newest: number, heldMask: number, nowMs: number): void {
    const pending = this.#pending;
    // An acknowledgement of the world before the Enter says nothing about this one.
    if (!(newest >= this.#worldFrom)) return;
    if (!this.#settled) {
      // The first of the new world: the ones before it may have overtaken the Enter
      // (a datagram is not held behind the stream) and been dropped as another world's.
      this.#settled = true;
      while (pending.length > 0 && pending[0].tick < newest) pending.shift();
    }
    for (let i = pending.length - 1; i >= 0; i--) {
      const age = newest - pending[i].tick;
      if (age < 0) continue; // newer than this acknowledgement: still on its way
      const back = age / TICKS_PER_SNAPSHOT;
      if (age === 0 || (Number.isInteger(back) && back <= SNAPSHOTS_HELD_BITS)) {
        const held = age === 0 || (heldMask & (1 << (back - 1))) !== 0;
        // Lacking one with two newer ones in hand: lost, not overtaken.
        if (!held && back < 2) continue;
        if (!held) this.#lossAtMs = nowMs;
        pending.splice(i, 1);
      } else if (age > SNAPSHOTS_HELD_BITS * TICKS_PER_SNAPSHOT) {
        pending.splice(i, 1); // beyond what the mask describes: unjudged
      }
    }
  }

  /**
   * An Enter went out: the client drops snapshots of the world before it (their epoch
   * is not its own), so the ones still unacknowledged are not evidence of loss.
   */
  entered(): void {
    this.#pending.length = 0;
    this.#worldFrom = NaN;
    this.#settled = false;
  }

  /** True while snapshots should go twice: a loss was seen within the hold time. */
  lossy(nowMs: number): boolean {
    return nowMs - this.#lossAtMs < SNAPSHOT_REPEAT.holdMs;
  }
}
