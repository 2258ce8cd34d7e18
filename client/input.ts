/**
 * Input adapters: keyboard + mouse, a gamepad as twin stick, and the touch sticks'
 * shared state, merged into one InputSample when the runtime asks for a tick.
 * The page sends nothing but these samples (through the runtime).
 */
import type { InputSample } from "../net/client/mod.ts";
import { Button, MOVE_UNITS, quantizeAngle } from "../sim/mod.ts";

/** Left-stick deflection ignored as drift. */
const MOVE_DEADZONE = 0.2;
/** Right-stick deflection that starts aiming, and that also fires. */
const AIM_DEADZONE = 0.3;
const FIRE_DEADZONE = 0.5;

/** Standard-mapping gamepad buttons. */
const PAD = { B: 1, LB: 4, RB: 5, LT: 6, RT: 7 } as const;

const MOVE_KEYS: Record<string, readonly [number, number]> = {
  KeyW: [0, -1],
  ArrowUp: [0, -1],
  KeyS: [0, 1],
  ArrowDown: [0, 1],
  KeyA: [-1, 0],
  ArrowLeft: [-1, 0],
  KeyD: [1, 0],
  ArrowRight: [1, 0],
};
const FOCUS_KEYS = ["ShiftLeft", "ShiftRight"];
const GAME_KEYS = new Set([...Object.keys(MOVE_KEYS), ...FOCUS_KEYS, "Space", "KeyQ"]);
/** Keys that show or hide the netgraph. */
const NETGRAPH_KEYS = new Set(["F3", "Backquote"]);

/** What the on-screen thumbsticks report; written by the touch controls. */
export interface TouchState {
  /** Left stick, each axis in [-1, 1]. */
  moveX: number;
  moveY: number;
  /** Right stick direction, and whether it is held past its deadzone. */
  aimX: number;
  aimY: number;
  aiming: boolean;
  escape: boolean;
  /** The focus toggle button's state. */
  focus: boolean;
}

/** Collects raw input and turns it into samples. */
export class InputController {
  readonly #keys = new Set<string>();
  readonly #mouse = { x: 0, y: 0, seen: false, down: false };
  #aimRad = -Math.PI / 2;
  /** Which device aimed last: a mouse at rest must not override a stick. */
  #aimSource: "mouse" | "pad" | "touch" = "mouse";
  readonly touch: TouchState = {
    moveX: 0,
    moveY: 0,
    aimX: 0,
    aimY: 0,
    aiming: false,
    escape: false,
    focus: false,
  };
  readonly #onToggleNetgraph: () => void;
  readonly #onToggleMute: () => void;
  readonly #listeners: [string, (e: Event) => void][];
  /** The aim of the newest sample, in angle units. */
  lastAimUnits = quantizeAngle(-Math.PI / 2);
  /** The buttons of the newest sample. */
  lastButtons = 0;

  constructor(opts: { onToggleNetgraph: () => void; onToggleMute: () => void }) {
    this.#onToggleNetgraph = opts.onToggleNetgraph;
    this.#onToggleMute = opts.onToggleMute;
    this.#listeners = [
      ["keydown", (e) => this.#keyDown(e as KeyboardEvent)],
      ["keyup", (e) => this.#keys.delete((e as KeyboardEvent).code)],
      ["blur", () => this.#release()],
      ["mousemove", (e) => this.#mouseMove(e as MouseEvent)],
      ["mousedown", (e) => this.#mouseButton(e as MouseEvent, true)],
      ["mouseup", (e) => this.#mouseButton(e as MouseEvent, false)],
    ];
  }

  /** Starts listening on the window. */
  attach(): void {
    for (const [type, fn] of this.#listeners) globalThis.addEventListener(type, fn);
  }

  /** Stops listening and forgets held keys. */
  detach(): void {
    for (const [type, fn] of this.#listeners) globalThis.removeEventListener(type, fn);
    this.#release();
  }

  #release(): void {
    // Keys released while the window had no focus never send keyup: forget them all.
    this.#keys.clear();
    this.#mouse.down = false;
  }

  #keyDown(e: KeyboardEvent): void {
    if (isTextField(e.target)) return;
    if (NETGRAPH_KEYS.has(e.code)) {
      e.preventDefault();
      if (!e.repeat) this.#onToggleNetgraph();
      return;
    }
    if (e.code === "KeyM") {
      if (!e.repeat) this.#onToggleMute();
      return;
    }
    if (!GAME_KEYS.has(e.code)) return;
    e.preventDefault(); // Space and arrows would scroll; nothing here should
    this.#keys.add(e.code);
  }

  #mouseMove(e: MouseEvent): void {
    this.#mouse.x = e.clientX;
    this.#mouse.y = e.clientY;
    this.#mouse.seen = true;
    this.#aimSource = "mouse";
  }

  #mouseButton(e: MouseEvent, down: boolean): void {
    if (e.button !== 0) return;
    if (down && !(e.target instanceof HTMLCanvasElement)) return; // clicks on HUD buttons
    this.#mouse.down = down;
    this.#mouseMove(e);
  }

  /**
   * The player's intent now. `ship` is the own ship's position on screen (CSS px),
   * so the mouse aims from the ship wherever the camera has put it.
   */
  sample(ship: { x: number; y: number } | undefined): InputSample {
    let mx = 0;
    let my = 0;
    for (const code of this.#keys) {
      const v = MOVE_KEYS[code];
      if (v) {
        mx += v[0];
        my += v[1];
      }
    }
    let fire = this.#keys.has("Space") || this.#mouse.down;
    let escape = this.#keys.has("KeyQ");
    let focus = FOCUS_KEYS.some((k) => this.#keys.has(k));

    const pad = firstGamepad();
    if (pad) {
      const lx = pad.axes[0] ?? 0;
      const ly = pad.axes[1] ?? 0;
      const lm = Math.hypot(lx, ly);
      if (lm > MOVE_DEADZONE) {
        // Rescale past the deadzone so small deflections still creep.
        const k = Math.min(1, (lm - MOVE_DEADZONE) / (1 - MOVE_DEADZONE)) / lm;
        mx = lx * k;
        my = ly * k;
      }
      const rx = pad.axes[2] ?? 0;
      const ry = pad.axes[3] ?? 0;
      const rm = Math.hypot(rx, ry);
      if (rm > AIM_DEADZONE) {
        this.#aimRad = Math.atan2(ry, rx);
        this.#aimSource = "pad";
      }
      fire ||= rm > FIRE_DEADZONE || pressed(pad, PAD.RT);
      escape ||= pressed(pad, PAD.B) || pressed(pad, PAD.LT);
      focus ||= pressed(pad, PAD.LB) || pressed(pad, PAD.RB);
    }

    const t = this.touch;
    if (t.moveX !== 0 || t.moveY !== 0) {
      mx = t.moveX;
      my = t.moveY;
    }
    if (t.aiming) {
      this.#aimRad = Math.atan2(t.aimY, t.aimX);
      this.#aimSource = "touch";
      fire = true;
    }
    escape ||= t.escape;
    focus ||= t.focus;

    if (this.#aimSource === "mouse" && this.#mouse.seen && ship) {
      const dx = this.#mouse.x - ship.x;
      const dy = this.#mouse.y - ship.y;
      if (dx * dx + dy * dy > 4) this.#aimRad = Math.atan2(dy, dx);
    }
    const aim = quantizeAngle(this.#aimRad);
    this.lastAimUnits = aim;
    const len = Math.hypot(mx, my);
    if (len > 1) {
      mx /= len;
      my /= len;
    }
    const buttons = (fire ? Button.Fire : 0) | (escape ? Button.Escape : 0) |
      (focus ? Button.Focus : 0);
    this.lastButtons = buttons;
    return { moveX: Math.round(mx * MOVE_UNITS), moveY: Math.round(my * MOVE_UNITS), aim, buttons };
  }
}

function isTextField(target: EventTarget | null): boolean {
  return target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement;
}

function firstGamepad(): Gamepad | undefined {
  const pads = typeof navigator.getGamepads === "function" ? navigator.getGamepads() : [];
  for (const p of pads) if (p && p.connected) return p;
  return undefined;
}

function pressed(pad: Gamepad, index: number): boolean {
  const b = pad.buttons[index];
  return b !== undefined && (b.pressed || b.value > 0.5);
}
