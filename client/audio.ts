/**
 * Sound, synthesized with Web Audio: no files to download. The context is made on
 * the first user gesture (browsers refuse to start audio before one), and the mute
 * choice is remembered. Each cue is a few oscillators or a burst of noise through
 * an envelope; cues that could repeat fast (shots, grazes) are rate-limited.
 */

/** The cues the game plays. */
export type Cue = "shot" | "hit" | "hurt" | "graze" | "warn" | "phase" | "victory" | "death";

/** Where the mute choice is kept. */
const MUTE_KEY = "warden.muted";
const MASTER_GAIN = 0.32;
/** Least time between two plays of the same cue, in ms. */
const MIN_GAP_MS: Record<Cue, number> = {
  shot: 90,
  hit: 45,
  hurt: 150,
  graze: 60,
  warn: 120,
  phase: 400,
  victory: 1000,
  death: 1000,
};

type Wave = OscillatorType;

/** One tone: a frequency sweep under an attack-decay envelope. */
interface Tone {
  readonly wave: Wave;
  readonly fromHz: number;
  readonly toHz: number;
  readonly atS: number;
  readonly durS: number;
  readonly gain: number;
}

/** The tones and noise bursts of each cue. */
const CUES: Record<Cue, { tones: readonly Tone[]; noise?: { durS: number; gain: number } }> = {
  shot: { tones: [{ wave: "square", fromHz: 880, toHz: 440, atS: 0, durS: 0.045, gain: 0.06 }] },
  hit: { tones: [{ wave: "triangle", fromHz: 320, toHz: 180, atS: 0, durS: 0.05, gain: 0.12 }] },
  hurt: {
    tones: [{ wave: "sawtooth", fromHz: 220, toHz: 55, atS: 0, durS: 0.28, gain: 0.35 }],
    noise: { durS: 0.18, gain: 0.35 },
  },
  graze: { tones: [{ wave: "sine", fromHz: 1700, toHz: 2300, atS: 0, durS: 0.06, gain: 0.08 }] },
  warn: { tones: [{ wave: "sine", fromHz: 540, toHz: 560, atS: 0, durS: 0.09, gain: 0.07 }] },
  phase: {
    tones: [
      { wave: "sawtooth", fromHz: 140, toHz: 70, atS: 0, durS: 0.6, gain: 0.3 },
      { wave: "sine", fromHz: 660, toHz: 330, atS: 0.05, durS: 0.5, gain: 0.15 },
    ],
    noise: { durS: 0.4, gain: 0.2 },
  },
  victory: {
    tones: [523, 659, 784, 1047].map((hz, i) => ({
      wave: "triangle" as const,
      fromHz: hz,
      toHz: hz,
      atS: i * 0.12,
      durS: i === 3 ? 0.6 : 0.16,
      gain: 0.25,
    })),
  },
  death: {
    tones: [392, 311, 233, 156].map((hz, i) => ({
      wave: "triangle" as const,
      fromHz: hz,
      toHz: hz * 0.97,
      atS: i * 0.16,
      durS: i === 3 ? 0.7 : 0.2,
      gain: 0.25,
    })),
  },
};

/** The game's sound. */
export class Sound {
  #ctx: AudioContext | undefined;
  #master: GainNode | undefined;
  #noise: AudioBuffer | undefined;
  #muted: boolean;
  readonly #lastMs = new Map<Cue, number>();
  readonly #storage: Storage | undefined;
  readonly #unlock = () => this.#start();

  constructor(opts: { storage?: Storage }) {
    this.#storage = opts.storage;
    this.#muted = readMuted(opts.storage);
  }

  /** Waits for the first gesture to make the audio context. */
  attach(): void {
    for (const type of ["pointerdown", "keydown", "touchend"]) {
      globalThis.addEventListener(type, this.#unlock, { once: true, capture: true });
    }
  }

  /** Stops listening and closes the context. */
  detach(): void {
    for (const type of ["pointerdown", "keydown", "touchend"]) {
      globalThis.removeEventListener(type, this.#unlock, { capture: true });
    }
    void this.#ctx?.close();
    this.#ctx = undefined;
  }

  /** True once a gesture has started the audio context. */
  get started(): boolean {
    return this.#ctx !== undefined;
  }

  get muted(): boolean {
    return this.#muted;
  }

  /** Mutes or unmutes, and remembers it. */
  setMuted(muted: boolean): void {
    this.#muted = muted;
    try {
      this.#storage?.setItem(MUTE_KEY, muted ? "1" : "0");
    } catch {
      // storage refused: the choice lasts for this page only
    }
    if (this.#master) this.#master.gain.value = muted ? 0 : MASTER_GAIN;
  }

  #start(): void {
    if (this.#ctx || typeof AudioContext === "undefined") return;
    const ctx = new AudioContext();
    const master = ctx.createGain();
    master.gain.value = this.#muted ? 0 : MASTER_GAIN;
    master.connect(ctx.destination);
    // One second of white noise, reused by every burst (deterministic: no Math.random).
    const noise = ctx.createBuffer(1, ctx.sampleRate, ctx.sampleRate);
    const data = noise.getChannelData(0);
    let seed = 0x2545f491;
    for (let i = 0; i < data.length; i++) {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      data[i] = ((seed >>> 0) / 0xffffffff) * 2 - 1;
    }
    this.#ctx = ctx;
    this.#master = master;
    this.#noise = noise;
  }

  /** Plays a cue now (nothing before the first gesture, while muted, or too soon after itself). */
  play(cue: Cue, nowMs: number): void {
    const ctx = this.#ctx;
    const master = this.#master;
    if (!ctx || !master || this.#muted) return;
    const last = this.#lastMs.get(cue) ?? -Infinity;
    if (nowMs - last < MIN_GAP_MS[cue]) return;
    this.#lastMs.set(cue, nowMs);
    const t0 = ctx.currentTime;
    const def = CUES[cue];
    for (const tone of def.tones) {
      const osc = ctx.createOscillator();
      const env = ctx.createGain();
      osc.type = tone.wave;
      const at = t0 + tone.atS;
      osc.frequency.setValueAtTime(tone.fromHz, at);
      osc.frequency.exponentialRampToValueAtTime(Math.max(1, tone.toHz), at + tone.durS);
      envelope(env.gain, { at, durS: tone.durS, peak: tone.gain });
      osc.connect(env).connect(master);
      osc.start(at);
      osc.stop(at + tone.durS + 0.02);
    }
    if (def.noise && this.#noise) {
      const src = ctx.createBufferSource();
      src.buffer = this.#noise;
      const env = ctx.createGain();
      envelope(env.gain, { at: t0, durS: def.noise.durS, peak: def.noise.gain });
      src.connect(env).connect(master);
      src.start(t0);
      src.stop(t0 + def.noise.durS + 0.02);
    }
  }
}

/** A 5 ms attack, then an exponential fall to silence over `durS`. */
function envelope(gain: AudioParam, opts: { at: number; durS: number; peak: number }): void {
  gain.setValueAtTime(0.0001, opts.at);
  gain.exponentialRampToValueAtTime(opts.peak, opts.at + 0.005);
  gain.exponentialRampToValueAtTime(0.0001, opts.at + opts.durS);
}

function readMuted(storage: Storage | undefined): boolean {
  try {
    return storage?.getItem(MUTE_KEY) === "1";
  } catch {
    return false;
  }
}
