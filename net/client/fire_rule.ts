/**
 * The server's fire rule, replayed on the client so an own shot is drawn on the frame
 * its input is sampled (sim/world.ts decides the same way): fire held, no escape being
 * channelled, a fight rather than the hub, and the cooldown since the last shot run
 * out. Kept in step with the server by restarting, on every snapshot, from the last
 * shot the server confirmed. Imports sim/ only.
 */
import { Button, type InputFrame } from "../../sim/mod.ts";

/** When the local ship may fire next. */
export class FireRule {
  readonly #cooldownTicks: number;
  #serverLastTick = -Infinity;
  #nextTick = -Infinity;

  constructor(cooldownTicks: number) {
    this.#cooldownTicks = cooldownTicks;
  }

  /** Forgets everything (a new instance: a new ship, no cooldown). */
  reset(): void {
    this.#serverLastTick = -Infinity;
    this.#nextTick = -Infinity;
  }

  /** The server fired an own shot on `tick`. */
  serverFired(tick: number): void {
    if (tick > this.#serverLastTick) this.#serverLastTick = tick;
  }

  /** Starts over from the server's last shot, before replaying the unacknowledged frames. */
  restart(): void {
    this.#nextTick = this.#serverLastTick + this.#cooldownTicks;
  }

  /** True when `frame` fires a shot (the cooldown then starts); `armed`: in a fight. */
  fires(frame: InputFrame, armed: boolean): boolean {
    if (!armed || (frame.buttons & Button.Fire) === 0 || (frame.buttons & Button.Escape) !== 0) {
      return false;
    }
    if (frame.tick < this.#nextTick) return false;
    this.#nextTick = frame.tick + this.#cooldownTicks;
    return true;
  }
}
