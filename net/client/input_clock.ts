/**
 * The client's clock against the server's. It estimates the server's tick now (the
 * least-delayed recent snapshot plus half the RTT) and how far ahead the client must
 * name its input for it to arrive before its tick runs: RTT/2, twice the RTT's spread,
 * a margin, and what late frames asked for (a snapshot whose ack trails its tick means
 * the server coasted). Lateness is measured against the lead of the moment, so what it
 * asks for is that lead plus the shortfall; the demand then fades slowly, a tick every
 * LATE_INPUT.fadeTicksPerSec⁻¹ seconds, so a link that stalls every few seconds keeps
 * its lead instead of being late once per forgetting. The lead itself moves gently: the
 * prediction runs a few percent fast or slow, never skipping or repeating a tick.
 * Imports content/ and sim/.
 */
import { INPUT_LEAD_MARGIN_TICKS, LATE_INPUT, LEAD_SLEW } from "../../content/net_tuning.ts";
import { TICK_MS } from "../../sim/mod.ts";

const OFFSET_WINDOW_MS = 3000;
const RTT_SAMPLES = 10;

/** Where the client stands in time against the server. */
export class InputClock {
  /** Smoothed round trip, ms (0 until the first sample). */
  rttMs = 0;
  /**
   * Ticks a frame may wait on the client before it is sent (an input batch's first frame
   * waits for its last): the lead covers them too.
   */
  extraLeadTicks = 0;
  readonly #rttSamples: number[] = [];
  /** Samples of (server tick − local ms / tick): the largest is the least delayed. */
  #offsets: { atMs: number; value: number }[] = [];
  /** Extra ticks of lead late frames ask for (fading). */
  #lateTicks = 0;
  #lateAtMs = -Infinity;
  /** The first frame of a run the server had to coast past, while it lasts. */
  #gapFrom: number | undefined;
  /** The client's clock as applied: its tick minus local time in ticks (moves gently). */
  #offsetTicks = NaN;
  #offsetAtMs = 0;
  /** Until then (just arrived, the estimates still settling) the clock follows at once. */
  #settledAtMs = 0;

  /** A round trip measured: the hello's, then every ping's. */
  addRtt(sampleMs: number): void {
    this.#rttSamples.push(sampleMs);
    if (this.#rttSamples.length > RTT_SAMPLES) this.#rttSamples.shift();
    this.rttMs = this.rttMs === 0 ? sampleMs : this.rttMs * 0.8 + sampleMs * 0.2;
  }

  /** The spread of recent round trips (a standard deviation), ms. */
  get jitterMs(): number {
    const s = this.#rttSamples;
    if (s.length < 2) return 0;
    const mean = s.reduce((a, b) => a + b, 0) / s.length;
    return Math.sqrt(s.reduce((a, b) => a + (b - mean) ** 2, 0) / s.length);
  }

  /** A new instance, whose clock says `tick` now: the lead jumps to what it should be. */
  enter(tick: number, nowMs: number): void {
    this.#offsets = [{ atMs: nowMs, value: tick - nowMs / TICK_MS }];
    this.#offsetTicks = NaN;
    this.#settledAtMs = nowMs + LEAD_SLEW.warmUpMs;
  }

  /**
   * A snapshot of `tick` arrived, acknowledging input up to `ackTick` and reporting
   * that frames which missed their tick arrived up to `lateTicks` late. A frame still
   * missing shows as the ack trailing the tick; its lateness, once it arrives, in the
   * report (or, failing that, as the gap once the ack catches up: an over-estimate by
   * under a snapshot interval, on the safe side). `counts`: false while the client had
   * not sent those frames yet (it just arrived).
   */
  snapshot(
    tick: number,
    opts: { nowMs: number; ackTick: number; lateTicks: number; counts: boolean },
  ): void {
    const { nowMs } = opts;
    this.#offsets.push({ atMs: nowMs, value: tick - nowMs / TICK_MS });
    while (this.#offsets.length > 1 && this.#offsets[0].atMs < nowMs - OFFSET_WINDOW_MS) {
      this.#offsets.shift();
    }
    if (!opts.counts || opts.ackTick < 0) {
      this.#gapFrom = undefined;
      return;
    }
    const missing = tick - opts.ackTick;
    let short = opts.lateTicks;
    if (missing > 0) {
      this.#gapFrom ??= opts.ackTick + 1;
      short = Math.max(short, missing);
    } else if (this.#gapFrom !== undefined) {
      short = Math.max(short, tick - this.#gapFrom);
      this.#gapFrom = undefined;
    }
    if (short > 0) {
      // Short by `short` with the extra lead of the moment: ask for that much more.
      const lead = this.leadTicks;
      const extra = Number.isFinite(lead) ? Math.max(0, lead - this.#baseLeadTicks()) : 0;
      this.#fadeLate(nowMs);
      this.#lateTicks = Math.min(
        LATE_INPUT.maxTicks,
        Math.max(this.#lateTicks, extra + short + LATE_INPUT.marginTicks),
      );
    }
  }

  /** Lets the late frames' demand fade with time. */
  #fadeLate(nowMs: number): void {
    if (Number.isFinite(this.#lateAtMs)) {
      const dtS = Math.max(0, nowMs - this.#lateAtMs) / 1000;
      this.#lateTicks = Math.max(0, this.#lateTicks - LATE_INPUT.fadeTicksPerSec * dtS);
    }
    this.#lateAtMs = nowMs;
  }

  /** The server tick now, estimated from the least-delayed recent sample. */
  serverTickNow(nowMs: number): number {
    return nowMs / TICK_MS + this.#serverOffsetTicks();
  }

  /** The lead the round trip and its spread ask for, in ticks. */
  #baseLeadTicks(): number {
    return (this.rttMs / 2 + 2 * this.jitterMs) / TICK_MS + INPUT_LEAD_MARGIN_TICKS +
      this.extraLeadTicks;
  }

  /** The lead the link asks for now, in ticks. */
  wantedLeadTicks(nowMs: number): number {
    this.#fadeLate(nowMs);
    return this.#baseLeadTicks() + this.#lateTicks;
  }

  /** The lead applied now over the server's estimated tick, in ticks. */
  get leadTicks(): number {
    return this.#offsetTicks - this.#serverOffsetTicks();
  }

  /** The server's tick minus local time in ticks, as estimated now. */
  #serverOffsetTicks(): number {
    let best = -Infinity;
    for (const o of this.#offsets) if (o.value > best) best = o.value;
    return best + this.rttMs / 2 / TICK_MS;
  }

  /**
   * The tick whose input should be sampled now: the server's tick plus the wanted lead.
   * Both the estimate of the server's clock (its least-delayed sample changes as jitter
   * comes and goes) and the lead move the client's clock by at most LEAD_SLEW per
   * second, so the local ship never freezes or leaps; only a gap too large to be
   * jitter (a frozen page) is closed at once, and so is any in the first moments in an
   * instance, while the first snapshots teach the estimates what the Enter could not.
   */
  targetTick(nowMs: number): number {
    const wanted = this.#serverOffsetTicks() + this.wantedLeadTicks(nowMs);
    const dtS = Math.max(0, nowMs - this.#offsetAtMs) / 1000;
    this.#offsetAtMs = nowMs;
    const gap = wanted - this.#offsetTicks;
    const settling = nowMs < this.#settledAtMs;
    if (!Number.isFinite(this.#offsetTicks) || settling || Math.abs(gap) > LEAD_SLEW.snapTicks) {
      this.#offsetTicks = wanted;
    } else {
      const step = (gap > 0 ? LEAD_SLEW.raisePerSec : LEAD_SLEW.lowerPerSec) * dtS;
      this.#offsetTicks += Math.max(-step, Math.min(step, gap));
    }
    return nowMs / TICK_MS + this.#offsetTicks;
  }
}
