/**
 * Where the headless browser lives and how it is started, for the browser tests and
 * the render benchmark: Debian's Chromium driven by playwright-core (no browser download).
 */
import { type BrowserContext, chromium } from "playwright-core";

/** The browser; CHROMIUM_PATH overrides it. */
export const CHROMIUM_PATH = Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium";

/** Flags that keep Chromium quiet on a machine with no network but loopback. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** True when the browser binary is there. */
export function hasChromium(): boolean {
  try {
    return Deno.statSync(CHROMIUM_PATH).isFile;
  } catch {
    return false;
  }
}

/** Starts headless Chromium with a fresh profile in `dir`. */
export function launchChromium(
  dir: string,
  opts: {
    viewport?: { width: number; height: number };
    deviceScaleFactor?: number;
    /** Emulate a phone or tablet: touch events and a coarse pointer. */
    hasTouch?: boolean;
    isMobile?: boolean;
  } = {},
): Promise<BrowserContext> {
  return chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    ...opts,
  });
}
