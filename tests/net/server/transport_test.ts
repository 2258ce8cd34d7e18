/**
 * Newest wins on the server's side of a WebSocket: a snapshot is skipped while an
 * earlier tick's frame is still queued on the socket (it could sit behind a stale
 * snapshot), never because of what this very tick sends; events always go out, and
 * a tick's messages leave as one frame.
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

Deno.test("sendLatest() skips a snapshot while an earlier tick's frame waits on the socket", () => {
  const ws = new FakeSocket();
  const t = new WebSocketTransport(ws);
  const events = new Uint8Array(300);
  const snap = (n: number) => new Uint8Array(60).fill(n);

  // One tick: its events, then its snapshot; they leave together, as one frame.
  t.sendReliable(events);
  assert.equal(t.sendLatest(snap(1)), true, "sent behind this tick's events");
  t.flush();
  assert.deepEqual(ws.sent.map((d) => d.byteLength), [360], "one frame for the tick");

  // The socket has not drained: the next snapshot would queue behind snapshot 1.
  assert.equal(t.sendLatest(snap(2)), false, "skipped while the last one still waits");
  t.sendReliable(events); // events are never skipped
  t.flush();
  assert.deepEqual(ws.sent.map((d) => d.byteLength), [360, 300]);

  ws.bufferedAmount = 0; // drained
  assert.equal(t.sendLatest(snap(3)), true);
  t.flush();
  assert.equal(ws.sent.at(-1)![0], 3, "the newest snapshot, not the skipped one");
  t.flush();
  assert.equal(ws.sent.length, 3, "a tick that sends nothing sends no frame");
});

Deno.test("sendLatest() sends nothing on a socket that is not open", () => {
  const ws = new FakeSocket();
  ws.readyState = 2;
  assert.equal(new WebSocketTransport(ws).sendLatest(new Uint8Array(8)), false);
  assert.equal(ws.sent.length, 0);
});
