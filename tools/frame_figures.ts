/**
 * A page's animation-frame intervals as `deno task tour` reports them. Headless Chromium
 * holds a frame up while it captures a screenshot; that stall is the tool's, not the
 * game's, so frames that overlap a screenshot are counted apart and left out of the
 * figures.
 */

/** One animation frame: when the one before it began, and how long until this one (ms). */
export type FrameInterval = readonly [from: number, ms: number];

/** When a screenshot held the page up, on the page's clock (ms). */
export type ShotSpan = readonly [from: number, to: number];

/** Frame intervals without the screenshots' (ms), and how many were the screenshots'. */
export interface FrameFigures {
  p50: number;
  p95: number;
  max: number;
  /** Intervals over 50 ms: three frames or more missed at 60 Hz. */
  over50: number;
  frames: number;
  /** Intervals left out because they overlap a screenshot. */
  atScreenshots: number;
}

/** A frame this close to a screenshot's span is counted as the screenshot's (ms). */
export const SHOT_MARGIN_MS = 20;

/** The figures of `frames` (the first, which starts the count, is dropped). */
export function frameFigures(
  frames: readonly FrameInterval[],
  shots: readonly ShotSpan[],
): FrameFigures {
  const atShot = ([from, ms]: FrameInterval) =>
    shots.some(([a, b]) => from < b + SHOT_MARGIN_MS && from + ms > a - SHOT_MARGIN_MS);
  const measured = frames.slice(1);
  const s = measured.filter((f) => !atShot(f)).map(([, ms]) => ms).sort((a, b) => a - b);
  const q = (p: number) =>
    Number((s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0).toFixed(1));
  return {
    p50: q(0.5),
    p95: q(0.95),
    max: q(1),
    over50: s.filter((x) => x > 50).length,
    frames: s.length,
    atScreenshots: measured.length - s.length,
  };
}
