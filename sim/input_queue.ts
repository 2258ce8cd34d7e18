/**
 * The single audit point for client input. A frame is applied on the server tick it
 * names; this queue decides which frames are kept and which frame a tick uses.
 * Must not import anything outside sim/.
 */
import { BUTTON_MASK, type InputFrame, type Mutable } from "./types.ts";
import { ANGLE_UNITS } from "./grid.ts";
import { MOVE_UNITS } from "./movement.ts";

/** Limits of the audit; the defaults live in content's net tuning. */
export interface InputQueueLimits {
  /** Furthest ahead of the current tick a frame may claim. */
  readonly maxLeadTicks: number;
  /** Most frames held at once. */
  readonly maxQueued: number;
  /** Ticks a silent client keeps its last input before it stops. */
  readonly coastTicks: number;
}

/** What `offer` did with a frame. Every verdict but "queued" is a drop. */
export type InputVerdict = "queued" | "replay" | "stale" | "future" | "flood" | "invalid";

/** Slots a queue starts with: a client on time keeps a few frames queued, not dozens. */
const INITIAL_SLOTS = 8;

/** A frame the queue owns: offered frames are copied in, so theirs die young. */
type Slot = Mutable<InputFrame> & { viewLag: number };

function blankFrame(): Slot {
  return { tick: 0, moveX: 0, moveY: 0, aim: 0, buttons: 0, viewLag: 0 };
}

function copyFrame(to: Slot, from: InputFrame): Slot {
  to.tick = from.tick;
  to.moveX = from.moveX;
  to.moveY = from.moveY;
  to.aim = from.aim;
  to.buttons = from.buttons;
  to.viewLag = from.viewLag ?? 0;
  return to;
}

/**
 * Holds one player's pending frames, in tick order, and tracks coasting. The frames
 * live in slots made once (a ring that doubles when full, up to `maxQueued`): a frame
 * waits here for several ticks, and a fresh object per frame would outlive the young
 * generation, so that every input a server hears would end up in the old one. The ring
 * starts small because a queue lives as long as its player stays in one instance: every
 * transfer makes one, and the slots a client never fills are old-generation garbage
 * once it leaves.
 */
export class InputQueue {
  readonly #limits: InputQueueLimits;
  /** Ring of slot objects: the queued frames are logical [0, size), from `#head`. */
  #ring: Slot[];
  #mask: number;
  #head = 0;
  #size = 0;
  /** The last frame applied (what coasting repeats), once there is one. */
  readonly #last = blankFrame();
  #hasLast = false;
  /** What take() returns: valid until the next take(). */
  readonly #out = blankFrame();
  #coasted = 0;
  /** Tick of the newest frame applied, -1 before the first. */
  lastInputTick = -1;
  /** The newest tick whose frame came too late, and the most any was late by since asked. */
  #lastLateTick = -1;
  #lateTicks = 0;
  /** The least a frame was early by since asked (Infinity: none came). */
  #slackTicks = Infinity;

  constructor(limits: InputQueueLimits) {
    this.#limits = limits;
    // A power of two long, so a slot's place is a mask, not a division.
    const length = Math.min(
      INITIAL_SLOTS,
      2 ** Math.ceil(Math.log2(Math.max(1, limits.maxQueued))),
    );
    this.#ring = Array.from({ length }, blankFrame);
    this.#mask = length - 1;
  }

  /**
   * The frame `take()` fills and returns: the same object for the queue's life, so a
   * reader may hold it and read each tick's input from it after each take.
   */
  get frame(): InputFrame {
    return this.#out;
  }

  /** Slots the ring holds now (grows by doubling as frames pile up). */
  get capacity(): number {
    return this.#ring.length;
  }

  /** Frames waiting for their tick. */
  get size(): number {
    return this.#size;
  }

  /** The slot of the k-th queued frame (0: the oldest). */
  #at(k: number): Slot {
    return this.#ring[(this.#head + k) & this.#mask];
  }

  /**
   * Audits a frame that arrived while the server is about to run `currentTick`. A
   * queued frame is copied: the caller's object is not kept.
   */
  offer(frame: InputFrame, currentTick: number): InputVerdict {
    if (!isWellFormed(frame)) return "invalid";
    if (frame.tick <= this.lastInputTick) return "replay";
    if (frame.tick < currentTick) {
      // Measured on its first copy only: the redundant ones come a tick or two later.
      if (frame.tick > this.#lastLateTick) {
        this.#lastLateTick = frame.tick;
        this.#lateTicks = Math.max(this.#lateTicks, currentTick - frame.tick);
      }
      return "stale";
    }
    if (frame.tick > currentTick + this.#limits.maxLeadTicks) return "future";
    // Sorted insert (frames mostly come in order: found from the back); redundant copies
    // of a queued tick are replays too.
    let i = this.#size;
    while (i > 0 && this.#at(i - 1).tick > frame.tick) i--;
    if (i > 0 && this.#at(i - 1).tick === frame.tick) return "replay";
    if (this.#size >= this.#limits.maxQueued) return "flood";
    // An insert needs the free slot past the end.
    if (this.#size === this.#ring.length) this.#grow();
    // The free slot past the end moves to place i; the later frames move up one.
    const ring = this.#ring;
    const mask = this.#mask;
    const free = this.#at(this.#size);
    for (let k = this.#size; k > i; k--) {
      ring[(this.#head + k) & mask] = ring[(this.#head + k - 1) & mask];
    }
    ring[(this.#head + i) & mask] = copyFrame(free, frame);
    this.#size++;
    // Measured on its first copy to arrive: a redundant one of a queued tick is a replay.
    this.#slackTicks = Math.min(this.#slackTicks, frame.tick - currentTick);
    return "queued";
  }

  /**
   * How late the frames that missed their tick arrived, in ticks: the most since the
   * last call that `reset`s (0: all on time). The client leads by more once it knows.
   */
  lateTicks(opts: { reset: boolean }): number {
    const late = this.#lateTicks;
    if (opts.reset) this.#lateTicks = 0;
    return late;
  }

  /**
   * How early the frames that made their tick arrived, in ticks: the least since the
   * last call that `reset`s (0: one arrived as its tick was about to run; undefined:
   * none arrived). What the client's lead could spare, and what it could not.
   */
  slackTicks(opts: { reset: boolean }): number | undefined {
    const slack = this.#slackTicks;
    if (opts.reset) this.#slackTicks = Infinity;
    return slack === Infinity ? undefined : slack;
  }

  /**
   * The input for `tick`: its own frame if it came, else the last one for a
   * bounded number of ticks, else neutral. Frames older than `tick` are discarded.
   * The frame returned is the queue's own, valid until the next call: read, don't keep.
   */
  take(tick: number): InputFrame {
    while (this.#size > 0 && this.#at(0).tick < tick) this.#dropOldest();
    const out = this.#out;
    if (this.#size > 0 && this.#at(0).tick === tick) {
      copyFrame(this.#last, this.#at(0));
      this.#dropOldest();
      this.#hasLast = true;
      this.#coasted = 0;
      this.lastInputTick = tick;
      return copyFrame(out, this.#last);
    }
    if (this.#hasLast && this.#coasted < this.#limits.coastTicks) {
      this.#coasted++;
      copyFrame(out, this.#last);
      out.tick = tick;
      return out;
    }
    out.tick = tick;
    out.moveX = 0;
    out.moveY = 0;
    out.aim = this.#hasLast ? this.#last.aim : 0;
    out.buttons = 0;
    out.viewLag = 0;
    return out;
  }

  /** Doubles the ring: the queued frames move to its front, in order; new slots follow. */
  #grow(): void {
    const ring = Array.from(
      { length: this.#ring.length * 2 },
      (_, k) => k < this.#size ? this.#at(k) : blankFrame(),
    );
    this.#ring = ring;
    this.#mask = ring.length - 1;
    this.#head = 0;
  }

  #dropOldest(): void {
    this.#head = (this.#head + 1) & this.#mask;
    this.#size--;
  }
}

function isWellFormed(f: InputFrame): boolean {
  return Number.isInteger(f.tick) && f.tick >= 0 &&
    Number.isInteger(f.moveX) && Math.abs(f.moveX) <= MOVE_UNITS &&
    Number.isInteger(f.moveY) && Math.abs(f.moveY) <= MOVE_UNITS &&
    Number.isInteger(f.aim) && f.aim >= 0 && f.aim < ANGLE_UNITS &&
    Number.isInteger(f.buttons) && (f.buttons & ~BUTTON_MASK) === 0 &&
    (f.viewLag === undefined || (Number.isInteger(f.viewLag) && f.viewLag >= 0));
}
