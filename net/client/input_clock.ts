/**
 * The client's clock against the server's. It estimates the server's tick now (the
 * least-delayed recent snapshot plus half the RTT) and how far ahead the client must
 * name its input for it to arrive before its tick runs: RTT/2, twice the RTT's spread,
 * a margin, and what late frames asked for (a snapshot whose ack trails its tick means
 * the server coasted). Lateness is measured against the lead of the moment, so what it
 * asks for is that lead plus the shortfall; the demand then fades slowly, a tick every
 * LATE_INPUT.fadeTicksPerSec⁻¹ seconds, so a link that stalls every few seconds keeps
 * its lead instead of being late once per forgetting. The other way, the server reports
 * how early the frames that made their tick arrived (their slack), so the client knows
 * the least lead each would have needed (the lead of the moment less its slack): after a
 * window of LEAD_TRIM.windowMs with none late, the lead is held to the most any needed
 * plus LEAD_TRIM.keepTicks, and a report that needs more raises that cap at once. The
 * lead itself moves gently: the prediction runs a few percent fast or slow, never
 * skipping or repeating a tick.
 * Imports content/ and sim/.
 */
import {
  INPUT_LEAD_MARGIN_TICKS,
  LATE_INPUT,
  LEAD_SLEW,
  LEAD_TRIM,
} from "../../content/net_tuning.ts";
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
  /**
   * The most lead the slack shows the link needs (Infinity: no window has shown it yet):
   * the wanted lead is held to it.
   */
  #capTicks = Infinity;
  /** Whether the late frames' raise (while it lasts) came from the link, not the settling. */
  #linkLate = false;
  /** Slack the cap leaves: one more each time a capped lead turned out late. */
  #keepTicks: number = LEAD_TRIM.keepTicks;
  /** The window of slack reports now open: since when, and the most lead one needed. */
  #windowFromMs = 0;
  #neededMax = -Infinity;
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
    // The cap holds (the link is the same), its window starts over with the new clock.
    this.#openSlackWindow(nowMs);
  }

  /** Whether the first moments in an instance, while the clock follows at once, are over. */
  settled(nowMs: number): boolean {
    return nowMs >= this.#settledAtMs;
  }

  /** The cap on the lead the slack has shown (Infinity: none yet, or a frame was late). */
  get capTicks(): number {
    return this.#capTicks;
  }

  /**
   * A snapshot of `tick` arrived, acknowledging input up to `ackTick` and reporting
   * that frames which missed their tick arrived up to `lateTicks` late, and that those
   * which made it were early by at least `slackTicks` (undefined: none arrived). A
   * frame still missing shows as the ack trailing the tick; its lateness, once it
   * arrives, in the report (or, failing that, as the gap once the ack catches up: an
   * over-estimate by under a snapshot interval, on the safe side). `counts`: false
   * while the client had not sent those frames yet (it just arrived). `settled`: false
   * while they were named before the clock settled in this instance (their lateness
   * still raises the lead, but says nothing of the link: slack may take it back).
   */
  snapshot(
    tick: number,
    opts: {
      nowMs: number;
      ackTick: number;
      lateTicks: number;
      slackTicks?: number;
      counts: boolean;
      settled?: boolean;
    },
  ): void {
    const { nowMs } = opts;
    this.#offsets.push({ atMs: nowMs, value: tick - nowMs / TICK_MS });
    while (this.#offsets.length > 1 && this.#offsets[0].atMs < nowMs - OFFSET_WINDOW_MS) {
      this.#offsets.shift();
    }
    if (!opts.counts || opts.ackTick < 0) {
      this.#gapFrom = undefined;
      this.#openSlackWindow(nowMs);
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
      // Short by `short` with the extra lead of the moment: ask for that much more. A lead
      // the cap held down counts what the cap took as negative extra: what it lacked may
      // be less than that, and then lifting the cap is all it takes.
      const lead = this.leadTicks;
      this.#fadeLate(nowMs);
      const base = this.#baseLeadTicks();
      const held = this.#capTicks < base + this.#lateTicks;
      const extra = Number.isFinite(lead) ? (held ? lead - base : Math.max(0, lead - base)) : 0;
      this.#lateTicks = Math.min(
        LATE_INPUT.maxTicks,
        Math.max(this.#lateTicks, extra + short + LATE_INPUT.marginTicks),
      );
      // Frames were late under the cap, whatever made them so: it goes.
      this.#capTicks = Infinity;
      if (opts.settled ?? true) {
        // The link made them late: the raise is cover for its next stall, kept at the
        // fade's pace. And if the slack had promised more than the link gave, the next
        // cap keeps a tick more.
        this.#linkLate = true;
        if (held) this.#keepTicks = Math.min(LEAD_TRIM.maxKeepTicks, this.#keepTicks + 1);
      }
      this.#openSlackWindow(nowMs);
      return;
    }
    this.#watchSlack(nowMs, opts.slackTicks);
  }

  /**
   * A report with nothing late. The least lead its frames needed is the lead of the
   * moment less their slack (the lead moves slowly: what it was when they left is within
   * a tick of it). One that needs more than the cap leaves raises the cap at once; a
   * window that ends holds the lead to the most any needed in it. No window runs while
   * a raise for frames the link made late lasts: that raise is cover for the next
   * stall, which a window of slack cannot foresee, so a link that has stalled keeps the
   * fade's pace. A raise for frames named while the clock was settling is not cover for
   * anything, and the slack may take it back.
   */
  #watchSlack(nowMs: number, slack: number | undefined): void {
    this.#fadeLate(nowMs);
    if (this.#lateTicks === 0) this.#linkLate = false;
    if (this.#linkLate) {
      this.#openSlackWindow(nowMs);
      return;
    }
    const lead = this.leadTicks;
    if (slack !== undefined && Number.isFinite(lead)) {
      const needed = lead - slack;
      this.#neededMax = Math.max(this.#neededMax, needed);
      if (needed + this.#keepTicks > this.#capTicks) this.#capTicks = needed + this.#keepTicks;
    }
    if (nowMs - this.#windowFromMs < LEAD_TRIM.windowMs) return;
    // A window in which no frame arrived (none sent) says nothing: no cap from it.
    const excess = lead - (this.#neededMax + this.#keepTicks);
    if (Number.isFinite(excess) && excess > 0) {
      this.#capTicks = Math.min(this.#capTicks, lead - excess);
    }
    this.#openSlackWindow(nowMs);
  }

  #openSlackWindow(nowMs: number): void {
    this.#windowFromMs = nowMs;
    this.#neededMax = -Infinity;
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

  /**
   * The lead the link asks for now, in ticks: the round trip's estimate and what late
   * frames asked for, held to the cap the slack has shown, but never under the ticks a
   * frame waits to be sent plus the slack kept.
   */
  wantedLeadTicks(nowMs: number): number {
    this.#fadeLate(nowMs);
    const estimate = this.#baseLeadTicks() + this.#lateTicks;
    const floor = this.extraLeadTicks + this.#keepTicks;
    return Math.min(estimate, Math.max(floor, this.#capTicks));
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
