/**
 * A worker for hostile_test.ts: opens one socket per hostile frame, one after another,
 * says hello on every other one first, sends the frame and reports how the server
 * closed it. It runs in its own isolate so that the thousands of client-side sockets it
 * opens and drops are collected on their own heap and thread, not between the server's
 * ticks: the test judges the server's loop, not its own clients' garbage.
 */
/// <reference lib="deno.worker" />
import { LiveSocket } from "../net/_harness.ts";

/** What the test sends: the server's URL and the frames, each with its kind. */
export interface HostileBatch {
  readonly url: string;
  readonly frames: readonly { readonly category: string; readonly bytes: Uint8Array }[];
}

/**
 * What the worker answers ("ready" once loaded, then this per batch): one close per frame,
 * in order, or why it could not go on.
 */
export type HostileReport =
  | { readonly ok: true; readonly closes: readonly { code: number; reason: string }[] }
  | { readonly ok: false; readonly error: string };

self.onmessage = async (e: MessageEvent<HostileBatch>) => {
  const { url, frames } = e.data;
  const closes: { code: number; reason: string }[] = [];
  try {
    for (const [i, { bytes }] of frames.entries()) {
      const s = new LiveSocket(url);
      await s.opened;
      if (i % 2 === 0) s.hello(`Hostile ${i}`);
      s.ws.send(bytes);
      const closed = await s.closed;
      closes.push({ code: closed.code, reason: closed.reason });
    }
    self.postMessage({ ok: true, closes } satisfies HostileReport);
  } catch (err) {
    self.postMessage({ ok: false, error: String(err) } satisfies HostileReport);
  }
};

self.postMessage("ready");
