/**
 * Input over a path that loses messages (the datagram path; an ordered, reliable
 * WebSocket loses nothing and needs no copies): each message carries its tick's frame
 * and the ones before it, so a lost message costs no frame, and the server still
 * applies the player's every input on its own tick.
 */
import assert from "node:assert/strict";
import type { InputSample } from "../../../net/client/runtime.ts";
import { Button } from "../../../sim/mod.ts";
import { NetHarness } from "../_harness.ts";

/** Loses every other input message. */
const EVERY_OTHER = (n: number) => n % 2 === 0;

Deno.test("losing every other input message loses no frame: every tick's input is applied on its tick", () => {
  using h = new NetHarness({ seed: 5, link: { spec: "30", dropInput: EVERY_OTHER } });
  const c = h.connect("Lossy");
  h.runUntil(() => c.runtime.latest() !== undefined, { what: "a first snapshot" });
  h.pump(1500); // the clock and the input lead settle
  const sampled = new Set<number>();
  let recording = true;
  // A different input every tick: a lost frame cannot hide behind its neighbour.
  c.control = (tick): InputSample => {
    if (recording) sampled.add(tick);
    return {
      moveX: tick % 2 === 0 ? 100 : -100,
      moveY: (tick % 3) - 1,
      aim: (tick * 2731) % 65536,
      buttons: tick % 5 === 0 ? Button.Fire : 0,
    };
  };
  const before = { ...h.server.counters.inputVerdicts };
  const correctionsBefore = c.runtime.stats.corrections;
  h.pump(2000);
  recording = false;
  h.pump(500); // later messages carry the last recorded frames as their copies
  const ticks = [...sampled];
  assert.ok(ticks.length >= 100, `${ticks.length} ticks recorded`);

  // On the wire: half the messages were lost, yet every frame went out in another.
  const stats = c.link.stats;
  assert.ok(stats.inputsLost >= stats.inputsSent / 2 - 1, `${stats.inputsLost} lost`);
  const onWire = new Set(c.link.inputTicksSent);
  assert.deepEqual(ticks.filter((t) => !onWire.has(t)), [], "frames lost with their messages");

  // At the server: each recorded frame was queued and applied on its own tick, never coasted.
  const after = h.server.counters.inputVerdicts;
  assert.ok(after.queued - before.queued >= ticks.length, "every frame was queued");
  assert.equal(after.stale - before.stale, 0, "no frame arrived after its tick had run");
  assert.equal(c.runtime.stats.corrections - correctionsBefore, 0, "prediction never disagreed");
});
