/** InputQueue: which client frames are kept, and which frame each tick uses. */
import assert from "node:assert/strict";
import { Button, type InputFrame, InputQueue, type InputQueueLimits } from "../../sim/mod.ts";

const LIMITS: InputQueueLimits = { maxLeadTicks: 10, maxQueued: 4, coastTicks: 3 };

function frame(tick: number, extra: Partial<InputFrame> = {}): InputFrame {
  return { tick, moveX: 0, moveY: 0, aim: 0, buttons: 0, viewLag: 0, ...extra };
}

Deno.test("offer() queues a well-formed frame for the current tick or a little ahead", () => {
  const q = new InputQueue(LIMITS);
  assert.equal(q.offer(frame(100), 100), "queued");
  assert.equal(q.offer(frame(110), 100), "queued");
  assert.equal(q.size, 2);
});

Deno.test("offer() drops a frame that replays a consumed tick", () => {
  const q = new InputQueue(LIMITS);
  q.offer(frame(5), 5);
  q.take(5);
  assert.equal(q.lastInputTick, 5);
  // Even with the server clock rewound to let it through the stale check.
  assert.equal(q.offer(frame(5), 0), "replay");
  assert.equal(q.offer(frame(3), 0), "replay");
  assert.equal(q.size, 0);
});

Deno.test("offer() drops a redundant copy of a frame that is still queued as a replay", () => {
  const q = new InputQueue(LIMITS);
  assert.equal(q.offer(frame(12, { moveX: 10 }), 10), "queued");
  assert.equal(q.offer(frame(12, { moveX: -10 }), 10), "replay");
  assert.equal(q.size, 1);
  assert.equal(q.take(12).moveX, 10, "the first copy wins");
});

Deno.test("offer() drops a frame for a tick the server has already run as stale", () => {
  const q = new InputQueue(LIMITS);
  assert.equal(q.offer(frame(99), 100), "stale");
  assert.equal(q.offer(frame(0), 100), "stale");
  assert.equal(q.size, 0);
});

Deno.test("offer() drops a frame further ahead than maxLeadTicks as future", () => {
  const q = new InputQueue(LIMITS);
  assert.equal(q.offer(frame(100 + LIMITS.maxLeadTicks), 100), "queued");
  assert.equal(q.offer(frame(100 + LIMITS.maxLeadTicks + 1), 100), "future");
  assert.equal(q.offer(frame(1_000_000), 100), "future");
  assert.equal(q.size, 1);
});

Deno.test("offer() drops frames beyond maxQueued as flood", () => {
  const q = new InputQueue(LIMITS);
  for (let i = 0; i < LIMITS.maxQueued; i++) assert.equal(q.offer(frame(50 + i), 50), "queued");
  assert.equal(q.offer(frame(50 + LIMITS.maxQueued), 50), "flood");
  assert.equal(q.size, LIMITS.maxQueued);
  // Taking one frees a slot.
  q.take(50);
  assert.equal(q.offer(frame(50 + LIMITS.maxQueued), 51), "queued");
});

Deno.test("offer() drops frames with non-integer or non-finite fields as invalid", () => {
  const q = new InputQueue(LIMITS);
  const bad: Partial<InputFrame>[] = [
    { moveX: NaN },
    { moveY: NaN },
    { aim: NaN },
    { buttons: NaN },
    { moveX: 0.5 },
    { aim: 12.25 },
    { moveY: Infinity },
    { moveX: -Infinity },
  ];
  for (const extra of bad) {
    assert.equal(q.offer(frame(3, extra), 3), "invalid", JSON.stringify(extra));
  }
  assert.equal(q.offer(frame(NaN), 3), "invalid");
  assert.equal(q.offer(frame(3.5), 3), "invalid");
  assert.equal(q.offer(frame(-1), 0), "invalid");
  assert.equal(q.size, 0);
});

Deno.test("offer() drops frames with move or aim out of range as invalid", () => {
  const q = new InputQueue(LIMITS);
  assert.equal(q.offer(frame(3, { moveX: 101 }), 3), "invalid");
  assert.equal(q.offer(frame(3, { moveX: -101 }), 3), "invalid");
  assert.equal(q.offer(frame(3, { moveY: 101 }), 3), "invalid");
  assert.equal(q.offer(frame(3, { moveY: -101 }), 3), "invalid");
  assert.equal(q.offer(frame(3, { aim: -1 }), 3), "invalid");
  assert.equal(q.offer(frame(3, { aim: 65536 }), 3), "invalid");
  assert.equal(q.size, 0);
  // The edges of the ranges are fine.
  assert.equal(q.offer(frame(3, { moveX: -100, moveY: 100, aim: 65535 }), 3), "queued");
});

Deno.test("offer() drops frames with unknown button bits as invalid", () => {
  const q = new InputQueue(LIMITS);
  assert.equal(q.offer(frame(3, { buttons: 8 }), 3), "invalid");
  assert.equal(q.offer(frame(3, { buttons: Button.Fire | 64 }), 3), "invalid");
  assert.equal(q.offer(frame(3, { buttons: -1 }), 3), "invalid");
  assert.equal(q.size, 0);
  const all = Button.Fire | Button.Escape | Button.Focus;
  assert.equal(q.offer(frame(3, { buttons: all }), 3), "queued");
});

Deno.test("take() hands out frames in tick order whatever order they arrived in", () => {
  const q = new InputQueue(LIMITS);
  for (const t of [13, 11, 14, 12]) q.offer(frame(t, { moveX: t }), 11);
  for (const t of [11, 12, 13, 14]) {
    const f = q.take(t);
    assert.equal(f.tick, t);
    assert.equal(f.moveX, t);
  }
  assert.equal(q.size, 0);
});

Deno.test("take() discards queued frames older than the tick it is asked for", () => {
  const q = new InputQueue(LIMITS);
  q.offer(frame(20, { moveX: 20 }), 20);
  q.offer(frame(21, { moveX: 21 }), 20);
  q.offer(frame(23, { moveX: 23 }), 20);
  assert.equal(q.take(23).moveX, 23);
  assert.equal(q.size, 0);
  assert.equal(q.lastInputTick, 23);
});

Deno.test("take() coasts on the last frame for exactly coastTicks, then goes neutral", () => {
  const q = new InputQueue(LIMITS);
  const held = { moveX: 70, moveY: -20, aim: 4000, buttons: Button.Fire };
  q.offer(frame(1, held), 1);
  assert.deepEqual(q.take(1), frame(1, held));
  for (let k = 1; k <= LIMITS.coastTicks; k++) {
    assert.deepEqual(q.take(1 + k), frame(1 + k, held), `coast tick ${k}`);
  }
  const neutral = q.take(2 + LIMITS.coastTicks);
  assert.deepEqual(neutral, frame(2 + LIMITS.coastTicks, { aim: held.aim }));
  assert.deepEqual(q.take(50), frame(50, { aim: held.aim }), "still neutral, aim kept");
  assert.equal(q.lastInputTick, 1, "coasting is not a consumed frame");
});

Deno.test("take() restarts the coasting budget when a real frame arrives again", () => {
  const q = new InputQueue(LIMITS);
  q.offer(frame(1, { moveX: 10 }), 1);
  q.take(1);
  q.take(2);
  q.take(3);
  q.offer(frame(4, { moveX: 40 }), 4);
  assert.equal(q.take(4).moveX, 40);
  for (let k = 1; k <= LIMITS.coastTicks; k++) assert.equal(q.take(4 + k).moveX, 40);
  assert.equal(q.take(5 + LIMITS.coastTicks).moveX, 0);
});

Deno.test("take() before any input is neutral", () => {
  const q = new InputQueue(LIMITS);
  assert.deepEqual(q.take(7), frame(7));
  assert.equal(q.lastInputTick, -1);
});

Deno.test("a late frame for a tick that was coasted through is stale, not applied", () => {
  const q = new InputQueue(LIMITS);
  q.offer(frame(1, { moveX: 10 }), 1);
  q.take(1);
  assert.equal(q.take(2).moveX, 10);
  assert.equal(q.offer(frame(2, { moveX: 99 }), 3), "stale");
  assert.equal(q.take(3).moveX, 10);
});

Deno.test("a frame that missed its tick is measured on its first copy, until asked", () => {
  const q = new InputQueue(LIMITS);
  q.offer(frame(10), 10);
  q.take(10);
  for (let t = 11; t <= 15; t++) q.take(t); // 11–15 ran without their frames: coasted
  assert.equal(q.lateTicks({ reset: false }), 0, "nothing has arrived late yet");
  // Frame 11 arrives while tick 16 is due: 5 ticks late; its redundant copies later on
  // (and frames 12, 13 with it) must not make it look later than it was.
  assert.equal(q.offer(frame(11), 16), "stale");
  assert.equal(q.offer(frame(12), 16), "stale");
  assert.equal(q.offer(frame(11), 17), "stale");
  assert.equal(q.lateTicks({ reset: false }), 5);
  assert.equal(q.lateTicks({ reset: true }), 5, "reported once…");
  assert.equal(q.lateTicks({ reset: false }), 0, "…then forgotten");
  assert.equal(q.offer(frame(16), 16), "queued", "on time again");
  assert.equal(q.lateTicks({ reset: false }), 0);
});

Deno.test("how early the frames that made their tick arrived: the least, until asked", () => {
  const q = new InputQueue(LIMITS);
  assert.equal(q.slackTicks({ reset: false }), undefined, "nothing has arrived yet");
  // A batch: its oldest frame is the one with the least to spare.
  assert.equal(q.offer(frame(106), 100), "queued");
  assert.equal(q.offer(frame(104), 100), "queued");
  assert.equal(q.offer(frame(107), 100), "queued");
  assert.equal(q.slackTicks({ reset: false }), 4);
  // A redundant copy arriving later is a replay: it says nothing of the link.
  assert.equal(q.offer(frame(104), 104), "replay");
  // Neither does a frame that missed its tick, or one refused.
  q.take(104);
  q.take(105);
  q.take(106);
  q.take(107);
  q.take(108);
  assert.equal(q.offer(frame(108), 109), "stale");
  assert.equal(q.offer(frame(200), 109), "future");
  assert.equal(q.slackTicks({ reset: true }), 4, "reported once…");
  assert.equal(q.slackTicks({ reset: false }), undefined, "…then forgotten");
  // One that arrives as its tick is about to run had nothing to spare.
  assert.equal(q.offer(frame(109), 109), "queued");
  assert.equal(q.slackTicks({ reset: false }), 0);
});

Deno.test("offer() refuses a frame whose view lag is not a whole number of ticks", () => {
  const q = new InputQueue(LIMITS);
  assert.equal(q.offer(frame(1, { viewLag: -1 }), 1), "invalid");
  assert.equal(q.offer(frame(1, { viewLag: 2.5 }), 1), "invalid");
  assert.equal(q.offer(frame(1, { viewLag: 30 }), 1), "queued");
});

Deno.test("offer() keeps a copy: the caller's frame object can change after", () => {
  const q = new InputQueue(LIMITS);
  const f = { ...frame(5), moveX: 30 };
  q.offer(f, 5);
  f.moveX = -30;
  assert.equal(q.take(5).moveX, 30);
});

Deno.test("frames stay in tick order while the queue wraps around its slots many times", () => {
  const q = new InputQueue(LIMITS);
  // Pairs arrive swapped (t+1 before t) and the queue runs near full, past its slot count.
  for (let t = 0; t < 40; t += 2) {
    assert.equal(q.offer(frame(t + 1, { moveX: t + 1 }), t), "queued");
    assert.equal(q.offer(frame(t, { moveX: t }), t), "queued");
    assert.equal(q.size, 2);
    assert.equal(q.take(t).moveX, t);
    assert.equal(q.take(t + 1).moveX, t + 1);
  }
  for (const t of [43, 41, 42, 40]) q.offer(frame(t, { moveX: t }), 40);
  assert.equal(q.size, LIMITS.maxQueued);
  assert.deepEqual([40, 41, 42, 43].map((t) => q.take(t).moveX), [40, 41, 42, 43]);
});

Deno.test("the ring starts small and grows as frames pile up, keeping them in tick order", () => {
  const limits: InputQueueLimits = { maxLeadTicks: 100, maxQueued: 48, coastTicks: 3 };
  const q = new InputQueue(limits);
  assert.equal(q.capacity, 8);
  // Wrapped first (head mid-ring), then filled in a shuffled order past two doublings.
  for (let t = 0; t < 5; t++) {
    q.offer(frame(t), t);
    q.take(t);
  }
  const ticks = Array.from({ length: 40 }, (_, i) => 5 + i);
  const shuffled = ticks.map((_, i) => ticks[(i * 17) % ticks.length]);
  assert.deepEqual([...shuffled].sort((a, b) => a - b), ticks);
  for (const t of shuffled) assert.equal(q.offer(frame(t, { moveX: t % 100 }), 5), "queued");
  assert.equal(q.size, 40);
  assert.equal(q.capacity, 64);
  assert.deepEqual(ticks.map((t) => q.take(t).moveX), ticks.map((t) => t % 100));
  // Bounded all the same: maxQueued, then flood.
  for (let t = 45; t < 45 + 48; t++) assert.equal(q.offer(frame(t), 45), "queued");
  assert.equal(q.offer(frame(45 + 48), 45), "flood");
  assert.equal(q.capacity, 64);
});
