/**
 * The HUD's state as signals, refreshed from the runtime once per frame. Setters
 * only write when a value changed, so Preact re-renders the parts that moved and
 * nothing else; the canvas never goes through here.
 */
import { batch, signal } from "@preact/signals";
import { CONTENT } from "../content/mod.ts";
import type { ClientRuntime } from "../net/client/mod.ts";
import type { Layout } from "./layout.ts";
import { PlayerFlag, StageCode } from "../net/wire/mod.ts";

/** The boss bar's contents. */
export interface BossHud {
  readonly bossId: number;
  readonly name: string;
  readonly phase: number;
  readonly phaseName: string;
  readonly hp: number;
  readonly maxHp: number;
  readonly folding: boolean;
  /** HP fractions where later phases begin (marks on the bar). */
  readonly markers: readonly number[];
}

/** One line of the player list. */
export interface RosterLine {
  readonly id: number;
  readonly name: string;
  readonly self: boolean;
  readonly hp: number;
  readonly status: "active" | "dead" | "escaped" | "away";
}

/** The current wave's remaining enemies and their HP. */
export interface WaveHud {
  readonly foes: number;
  readonly hp: number;
  readonly maxHp: number;
}

/** Figures of the netgraph. */
export interface NetgraphData {
  /** "WebTransport" or "WebSocket" (and why not WebTransport), "" before choosing. */
  readonly transport: string;
  readonly rttMs: number;
  readonly inKBps: number;
  readonly outKBps: number;
  readonly snapshotAgeMs: number;
  readonly correctionsPerSec: number;
  readonly bullets: number;
  readonly fps: number;
  readonly leadTicks: number;
  readonly drawP95Ms: number;
}

/** A centred banner (death, cleared). */
export interface Banner {
  readonly kind: "death" | "cleared";
  readonly title: string;
  readonly sub: string;
}

/** A short message that fades by itself. */
export interface Toast {
  readonly id: number;
  readonly text: string;
  readonly tone: "info" | "good" | "warn";
  readonly untilMs: number;
}

/** Every value the HUD shows. */
export class HudState {
  readonly worldKind = signal<"hub" | "dungeon" | "">("");
  /** The footer of the hub's controls help (from the world's words). */
  readonly help = signal("");
  readonly worldName = signal("");
  readonly stage = signal("");
  readonly wave = signal<WaveHud | null>(null);
  readonly hp = signal(0);
  readonly maxHp = signal(0);
  readonly selfStatus = signal<RosterLine["status"]>("away");
  readonly boss = signal<BossHud | null>(null);
  readonly channelling = signal(false);
  /** Escape channel progress, 0–1. */
  readonly escape = signal(0);
  /** Why the last escape stopped, shown under the bar for a moment. */
  readonly escapeNote = signal<{ text: string; untilMs: number } | null>(null);
  readonly roster = signal<readonly RosterLine[]>([]);
  readonly banner = signal<Banner | null>(null);
  readonly toasts = signal<readonly Toast[]>([]);
  readonly netgraphOn = signal(false);
  readonly net = signal<NetgraphData | null>(null);
  /** When the local ship was last hurt (ms), for the red flash. */
  readonly hurtAtMs = signal(0);
  /** Grazes this run, as the server counted them. */
  readonly grazes = signal(0);
  /** Where the arena and the HUD go (from the renderer's last frame). */
  readonly layout = signal<Layout | null>(null);
  #layoutKey = "";
  #rosterKey = "";
  #bossKey = "";
  #waveKey = "";
  #nextToast = 1;

  /** Shows a toast for `forMs`. */
  toast(text: string, opts: { tone?: Toast["tone"]; nowMs: number; forMs?: number }): void {
    const t: Toast = {
      id: this.#nextToast++,
      text,
      tone: opts.tone ?? "info",
      untilMs: opts.nowMs + (opts.forMs ?? 2600),
    };
    this.toasts.value = [...this.toasts.value.slice(-3), t];
  }

  /** Clears everything that belongs to one instance (on a transfer or a disconnect). */
  reset(): void {
    batch(() => {
      this.banner.value = null;
      this.boss.value = null;
      this.wave.value = null;
      this.escapeNote.value = null;
      this.channelling.value = false;
      this.grazes.value = 0;
      this.#bossKey = "";
      this.#waveKey = "";
    });
  }

  /** Pulls this frame's values from the runtime. */
  update(rt: ClientRuntime, nowMs: number): void {
    batch(() => {
      const world = rt.world;
      this.worldKind.value = world?.kind ?? "";
      this.help.value = world?.words.help ?? "";
      this.worldName.value = world?.name ?? "";
      const snap = rt.latest();
      const self = rt.selfSnapshot();
      this.maxHp.value = world?.player.maxHp ?? 0;
      this.hp.value = self?.hp ?? 0;
      this.selfStatus.value = self ? statusOf(self.flags) : "away";
      const channelling = self !== undefined && (self.flags & PlayerFlag.Channelling) !== 0;
      this.channelling.value = channelling;
      this.escape.value = channelling ? self.escape / 255 : 0;
      const note = this.escapeNote.value;
      if (note && note.untilMs < nowMs) this.escapeNote.value = null;

      const toasts = this.toasts.value;
      if (toasts.some((t) => t.untilMs < nowMs)) {
        this.toasts.value = toasts.filter((t) => t.untilMs >= nowMs);
      }

      // Stage and wave.
      if (!world || world.kind === "hub") {
        this.stage.value = world?.words.stage ?? "";
        this.#setWave(null);
      } else if (snap) {
        const enemies = snap.enemies;
        if (snap.stage === StageCode.waves) {
          const n = world.waves.length;
          const w = Math.min(snap.wave, n - 1) + 1;
          this.stage.value = enemies.length > 0
            ? `Wave ${w} of ${n}`
            : snap.wave < n
            ? `Wave ${w} of ${n} incoming…`
            : world.boss?.words.stirs ?? "";
        } else if (snap.stage === StageCode.boss) {
          this.stage.value = "Boss";
        } else if (snap.stage === StageCode.cleared) {
          this.stage.value = "Dungeon cleared";
        }
        if (enemies.length > 0) {
          let hp = 0;
          let maxHp = 0;
          for (const e of enemies) {
            hp += e.hp;
            maxHp += CONTENT.enemies[e.kind]?.hp ?? e.hp;
          }
          this.#setWave({ foes: enemies.length, hp, maxHp });
        } else {
          this.#setWave(null);
        }
      }

      // Boss bar.
      const b = snap?.boss ?? null;
      const def = b ? CONTENT.bosses[b.bossId] : undefined;
      const bossKey = b ? `${b.bossId}|${b.hp}|${b.maxHp}|${b.phase}|${b.folding}` : "";
      if (bossKey !== this.#bossKey) {
        this.#bossKey = bossKey;
        this.boss.value = b && def
          ? {
            bossId: b.bossId,
            name: def.name,
            phase: b.phase,
            phaseName: def.phases[b.phase]?.name ?? "",
            hp: b.hp,
            maxHp: b.maxHp,
            folding: b.folding,
            markers: def.phases.slice(1).map((p) => p.fromHpFrac),
          }
          : null;
      }

      // Players in this instance.
      const lines: RosterLine[] = [];
      for (const [id, name] of rt.roster) {
        const p = snap?.players.find((p) => p.id === id);
        lines.push({
          id,
          name,
          self: id === rt.playerId,
          hp: p?.hp ?? 0,
          status: p ? statusOf(p.flags) : "away",
        });
      }
      const rosterKey = lines.map((l) => `${l.id}:${l.name}:${l.hp}:${l.status}`).join("|");
      if (rosterKey !== this.#rosterKey) {
        this.#rosterKey = rosterKey;
        this.roster.value = lines;
      }
    });
  }

  /** Publishes the layout when it changed (a resize, a rotation, another arena). */
  setLayout(layout: Layout | undefined): void {
    if (!layout) return;
    const a = layout.arena;
    const key = `${layout.mode}|${layout.columnPx}|${layout.topPx}|${a.x}|${a.y}|${a.w}|${a.h}`;
    if (key === this.#layoutKey) return;
    this.#layoutKey = key;
    this.layout.value = layout;
  }

  #setWave(w: WaveHud | null): void {
    const key = w ? `${w.foes}|${w.hp}|${w.maxHp}` : "";
    if (key === this.#waveKey) return;
    this.#waveKey = key;
    this.wave.value = w;
  }
}

function statusOf(flags: number): RosterLine["status"] {
  if (flags & PlayerFlag.Dead) return "dead";
  if (flags & PlayerFlag.Escaped) return "escaped";
  if (flags & PlayerFlag.Active) return "active";
  return "away";
}
