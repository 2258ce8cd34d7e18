/**
 * Tells a lossy datagram link from a clean one by what the client acknowledges:
 * each input datagram names the newest snapshot received, so a snapshot tick the
 * acknowledgements skip over was (almost always) lost. Over a lossy link each
 * snapshot datagram is then sent twice, a tick apart: losing both copies of two
 * snapshots in a row is rare enough that snapshots keep coming every 50–100 ms,
 * and a clean link pays nothing. Pure: ticks and times in.
 */
import { SNAPSHOT_REPEAT } from "../../content/net_tuning.ts";

/** Snapshots sent over datagrams and whether the client acknowledged them. */
export class SnapshotLossMeter {
  readonly #sent: { tick: number; atMs: number; acked: boolean }[] = [];
  #lossAtMs = -Infinity;

  /** A snapshot of `tick` went out at `nowMs`. */
  sent(tick: number, nowMs: number): void {
    this.#sent.push({ tick, atMs: nowMs, acked: false });
    // Judge the ones old enough that their acknowledgement would be here by now.
    while (this.#sent.length > 0 && this.#sent[0].atMs < nowMs - SNAPSHOT_REPEAT.settleMs) {
      const s = this.#sent.shift()!;
      if (!s.acked) this.#lossAtMs = nowMs;
    }
  }

  /**
   * An Enter went out: the client drops snapshots of the world before it (their epoch
   * is not its own), so the ones still unacknowledged are not evidence of loss.
   */
  entered(): void {
    this.#sent.length = 0;
  }

  /** The client says `tick` is the newest snapshot it holds. */
  acked(tick: number): void {
    for (const s of this.#sent) if (s.tick === tick) s.acked = true;
  }

  /** True while snapshots should go twice: a loss was seen within the hold time. */
  lossy(nowMs: number): boolean {
    return nowMs - this.#lossAtMs < SNAPSHOT_REPEAT.holdMs;
  }
}
