/**
 * Newest wins on the server's side of a WebSocket: a snapshot is skipped while an
 * earlier turn's bytes are still queued on the socket (it could sit behind a stale
 * snapshot), never because of what this very turn sent; events always go out.
 */
import assert from "node:assert/strict";
import { type SocketLike, WebSocketTransport } from "../../../net/server/transport.ts";

/** A socket whose queue the test sets by hand. */
class FakeSocket implements SocketLike {
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: Uint8Array[] = [];
  send(data: Uint8Array): void {
    this.sent.push(data);
    this.bufferedAmount += data.byteLength;
  }
  close(): void {
    this.readyState = 3;
  }
}

/** Lets the current turn of the event loop end (its microtasks run). */
const nextTurn = () => new Promise<void>((r) => queueMicrotask(r));

Deno.test("sendLatest() skips a snapshot while an earlier turn's bytes wait on the socket", async () => {
  const ws = new FakeSocket();
  const t = new WebSocketTransport(ws);
  const events = new Uint8Array(300);
  const snap = (n: number) => new Uint8Array(60).fill(n);

  // One turn: the events of a tick, then its snapshot. The events' own bytes do not count.
  t.sendReliable(events);
  assert.equal(t.sendLatest(snap(1)), true, "sent behind this turn's events");
  await nextTurn();

  // The socket has not drained: the next snapshot would queue behind snapshot 1.
  assert.equal(t.sendLatest(snap(2)), false, "skipped while the last one still waits");
  t.sendReliable(events); // events are never skipped
  assert.deepEqual(ws.sent.map((d) => d.byteLength), [300, 60, 300]);
  await nextTurn();

  ws.bufferedAmount = 0; // drained
  assert.equal(t.sendLatest(snap(3)), true);
  assert.equal(ws.sent.at(-1)![0], 3, "the newest snapshot, not the skipped one");
});

Deno.test("sendLatest() sends nothing on a socket that is not open", () => {
  const ws = new FakeSocket();
  ws.readyState = 2;
  assert.equal(new WebSocketTransport(ws).sendLatest(new Uint8Array(8)), false);
  assert.equal(ws.sent.length, 0);
});
