/**
 * Netcode and server numbers: rates, the input audit's limits, prediction
 * thresholds and abuse limits. Operators override some through environment
 * variables (see main.ts); everything else is tuned here. Data only.
 */
import { ticks } from "../sim/mod.ts";

/** Snapshots per second sent to each client. */
export const SNAPSHOT_HZ = 20;
/** Server ticks between two snapshots. */
export const TICKS_PER_SNAPSHOT = 60 / SNAPSHOT_HZ;

/** The input audit's limits. */
export const INPUT_LIMITS = {
  maxLeadTicks: ticks(0.5),
  maxQueued: 24,
  coastTicks: ticks(0.25),
} as const;

/** Most input frames one input message may carry (the newest and its redundant copies). */
export const INPUT_FRAMES_PER_MESSAGE = 3;

/** Delays of server decisions. */
export const TRANSFER_DELAYS = {
  /** A dead player watches for this long before returning to the hub. */
  deathReturnTicks: ticks(2.5),
  /**
   * After the boss dies, the crew reads the results and picks "again" or "hub"; whoever
   * has not picked by then returns to the hub.
   */
  resultsReturnTicks: ticks(45),
} as const;

/** How long a finished run's crew may still choose "again with this crew", in ms. */
export const CREW_OFFER_MS = 120_000;

/** Scheduler: how far behind the loop may fall before it drops ticks instead of catching up. */
export const MAX_CATCHUP_TICKS = 5;

/** Prediction: errors above this snap, smaller ones are smoothed away. */
export const SNAP_THRESHOLD_PX = 24;
/** Fraction of the remaining visual error removed per rendered tick. */
export const SMOOTHING_PER_TICK = 0.2;
/** Reconciled errors below this are not counted as corrections. */
export const CORRECTION_EPSILON_PX = 0.5;
/** How far in the past remote actors are drawn, in ticks (two snapshot intervals). */
export const INTERPOLATION_DELAY_TICKS = 2 * TICKS_PER_SNAPSHOT + 1;
/** Extra lead of the client's input clock over its RTT estimate, in ticks. */
export const INPUT_LEAD_MARGIN_TICKS = 2;

/** Abuse limits and their defaults (main.ts may override from the environment). */
export const LIMITS = {
  maxClientFrameBytes: 256,
  maxNameLength: 16,
  handshakeTimeoutMs: 5000,
  /** Messages per second a connection may send, averaged over a burst window. */
  maxMessagesPerSec: 120,
  maxBytesPerSec: 8192,
  burstSeconds: 2,
  maxConnectionsPerIp: 8,
  maxConnections: 200,
  maxPlayersPerDungeon: 4,
} as const;
