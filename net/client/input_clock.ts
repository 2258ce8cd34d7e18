/**
 * The client's clock against the server's. It estimates the server's tick now (the
 * least-delayed recent snapshot plus half the RTT) and how far ahead the client must
 * name its input for it to arrive before its tick runs: RTT/2, twice the RTT's spread,
 * a margin, and whatever recent late frames asked for (a snapshot whose ack trails its
 * tick means the server coasted). The lead moves gently, so the prediction runs a few
 * percent fast or slow instead of skipping or repeating ticks. Imports content/ and sim/.
 */
import { INPUT_LEAD_MARGIN_TICKS, LATE_INPUT, LEAD_SLEW } from "../../content/net_tuning.ts";
import { TICK_MS } from "../../sim/mod.ts";

const OFFSET_WINDOW_MS = 3000;
const RTT_SAMPLES = 10;

/** Where the client stands in time against the server. */
export class InputClock {
  /** Smoothed round trip, ms (0 until the first sample). */
  rttMs = 0;
  readonly #rttSamples: number[] = [];
  /** Samples of (server tick − local ms / tick): the largest is the least delayed. */
  #offsets: { atMs: number; value: number }[] = [];
  readonly #late: { atMs: number; ticks: number }[] = [];
  /** The lead applied now, in ticks over the server's estimated tick. */
  #leadTicks = 0;
  #leadAtMs = -Infinity;

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
    this.#leadTicks = this.wantedLeadTicks(nowMs);
    this.#leadAtMs = nowMs;
  }

  /**
   * A snapshot of `tick` arrived; `lateTicks` frames before it were missing when
   * their ticks ran (its tick minus its ack, 0 when on time).
   */
  snapshot(tick: number, opts: { nowMs: number; lateTicks: number }): void {
    const { nowMs } = opts;
    this.#offsets.push({ atMs: nowMs, value: tick - nowMs / TICK_MS });
    while (this.#offsets.length > 1 && this.#offsets[0].atMs < nowMs - OFFSET_WINDOW_MS) {
      this.#offsets.shift();
    }
    if (opts.lateTicks > 0) this.#late.push({ atMs: nowMs, ticks: opts.lateTicks });
  }

  /** The server tick now, estimated from the least-delayed recent sample. */
  serverTickNow(nowMs: number): number {
    let best = -Infinity;
    for (const o of this.#offsets) if (o.value > best) best = o.value;
    return best + nowMs / TICK_MS + this.rttMs / 2 / TICK_MS;
  }

  /** The lead the link asks for now, in ticks. */
  wantedLeadTicks(nowMs: number): number {
    while (this.#late.length > 0 && this.#late[0].atMs < nowMs - LATE_INPUT.windowMs) {
      this.#late.shift();
    }
    let late = 0;
    for (const l of this.#late) late = Math.max(late, l.ticks + LATE_INPUT.marginTicks);
    return (this.rttMs / 2 + 2 * this.jitterMs) / TICK_MS + INPUT_LEAD_MARGIN_TICKS +
      Math.min(late, LATE_INPUT.maxTicks);
  }

  /** The lead applied now, in ticks. */
  get leadTicks(): number {
    return this.#leadTicks;
  }

  /**
   * The tick whose input should be sampled now: the server's tick plus the lead, which
   * moves toward the wanted lead by at most LEAD_SLEW per second.
   */
  targetTick(nowMs: number): number {
    const wanted = this.wantedLeadTicks(nowMs);
    const dtS = Number.isFinite(this.#leadAtMs) ? Math.max(0, nowMs - this.#leadAtMs) / 1000 : 0;
    this.#leadAtMs = nowMs;
    const rate = wanted > this.#leadTicks ? LEAD_SLEW.raisePerSec : LEAD_SLEW.lowerPerSec;
    const step = rate * dtS;
    this.#leadTicks += Math.max(-step, Math.min(step, wanted - this.#leadTicks));
    return this.serverTickNow(nowMs) + this.#leadTicks;
  }
}
