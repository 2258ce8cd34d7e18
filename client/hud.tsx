/**
 * The heads-up display over the canvas: HP, boss bar, escape channel, players,
 * wave/stage, banners, toasts, hub controls help and the netgraph. Reads
 * HudState signals only; `data-testid`s are what the browser test asserts on.
 */
import { phaseColor } from "./draw_world.ts";
import type { Game } from "./game.ts";
import type { HudState } from "./hud_state.ts";

/** Everything drawn over the play view: in side columns (wide) or bands (tall), never on the arena. */
export function Hud({ game }: { game: Game }) {
  const hud = game.hud;
  const layout = hud.layout.value;
  const touch = game.touch.value;
  const hub = hud.worldKind.value === "hub";
  if (!layout) return null;
  const a = layout.arena;
  const style = {
    "--col": `${layout.columnPx}px`,
    "--top": `${layout.topPx}px`,
    "--below": `${Math.round(a.y + a.h)}px`,
    "--ax": `${Math.round(a.x)}px`,
    "--aw": `${Math.round(a.w)}px`,
  };
  const help = hub && <ControlsHelp touch={touch} foot={hud.help.value} />;
  return (
    <div class={`hud ${layout.mode}${touch ? " touch" : ""}`} style={style}>
      {layout.mode === "wide"
        ? (
          <>
            <div class="col left" data-hud-region>
              <StagePanel hud={hud} />
              <Toasts hud={hud} />
              {hud.netgraphOn.value && <Netgraph hud={hud} />}
              <Spacer stick={touch && "MOVE"} />
              <EscapeBar hud={hud} touch={touch} />
              <HpPips hud={hud} />
              <Settings game={game} />
            </div>
            <div class="col right" data-hud-region>
              <BossBar hud={hud} />
              <Roster hud={hud} />
              {help}
              <Spacer stick={touch && "AIM + FIRE"} />
              <TouchButtons game={game} />
            </div>
          </>
        )
        : (
          <>
            <div class="band top" data-hud-region>
              <div class="row">
                <StagePanel hud={hud} />
                <Roster hud={hud} />
              </div>
              <BossBar hud={hud} />
            </div>
            <div class="band bottom" data-hud-region>
              <div class="row">
                <HpPips hud={hud} />
                <EscapeBar hud={hud} touch={touch} />
                <div class="buttons">
                  <Settings game={game} />
                  <TouchButtons game={game} />
                </div>
              </div>
              <Toasts hud={hud} />
              {hud.netgraphOn.value && <Netgraph hud={hud} />}
              {help}
            </div>
          </>
        )}
      <BannerView hud={hud} />
      <HurtFlash hud={hud} />
    </div>
  );
}

/**
 * The free space of a side column. On touch screens it shows the stick's hint there,
 * in the gap between panels rather than under them (hidden when the gap is too small).
 */
function Spacer({ stick }: { stick: string | false }) {
  return (
    <div class={stick ? "grow stick-slot" : "grow"}>
      {stick && <div class="stick-hint">{stick}</div>}
    </div>
  );
}

/** Sound and screen shake, each remembered. */
function Settings({ game }: { game: Game }) {
  return (
    <div class="buttons settings">
      <button
        type="button"
        class="hud-btn"
        data-testid="mute"
        aria-pressed={game.muted.value}
        title="Sound on/off (M)"
        onClick={() => game.toggleMute()}
      >
        {game.muted.value ? "sound off" : "sound on"}
      </button>
      <button
        type="button"
        class="hud-btn"
        data-testid="calm"
        aria-pressed={game.calm.value}
        title="Screen shake on/off"
        onClick={() => game.toggleCalm()}
      >
        {game.calm.value ? "shake off" : "shake on"}
      </button>
    </div>
  );
}

/** On touch screens in a dungeon: the focus toggle and the escape button, off the arena. */
function TouchButtons({ game }: { game: Game }) {
  if (!game.touch.value || game.hud.worldKind.value !== "dungeon") return null;
  const t = game.input.touch;
  return (
    <div class="buttons">
      <button
        type="button"
        class={`hud-btn big${game.focusOn.value ? " on" : ""}`}
        data-testid="focus"
        aria-pressed={game.focusOn.value}
        onClick={() => game.toggleFocus()}
      >
        focus
      </button>
      <button
        type="button"
        class="hud-btn big escape-btn"
        data-testid="escape-button"
        onPointerDown={(e) => {
          e.preventDefault();
          t.escape = true;
        }}
        onPointerUp={() => t.escape = false}
        onPointerCancel={() => t.escape = false}
        onPointerLeave={() => t.escape = false}
      >
        hold to escape
      </button>
    </div>
  );
}

function StagePanel({ hud }: { hud: HudState }) {
  const wave = hud.wave.value;
  if (!hud.worldName.value) return null;
  return (
    <div class="panel stage" data-testid="stage">
      <div class="world-name">{hud.worldName.value}</div>
      <div class="stage-label">{hud.stage.value}</div>
      {wave && (
        <div class="wave" data-testid="wave-hp" data-hp={wave.hp} data-foes={wave.foes}>
          <div class="wave-text">
            {wave.foes} {wave.foes === 1 ? "foe" : "foes"} · {wave.hp} / {wave.maxHp} HP
          </div>
          <div class="bar thin">
            <div class="fill foe" style={{ width: `${(100 * wave.hp) / wave.maxHp}%` }} />
          </div>
        </div>
      )}
    </div>
  );
}

function BossBar({ hud }: { hud: HudState }) {
  const b = hud.boss.value;
  if (!b) return null;
  const color = phaseColor(b.bossId, b.phase);
  const frac = b.maxHp > 0 ? Math.max(0, b.hp / b.maxHp) : 0;
  return (
    <div class={`panel boss${b.folding ? " folding" : ""}`} data-testid="boss" data-hp={b.hp}>
      <div class="boss-name">{b.name}</div>
      <div class="boss-head">
        <span class="boss-phase" style={{ color }}>
          {b.phase + 1}. {b.phaseName}
          {b.folding ? " — folding" : ""}
        </span>
        <span class="boss-hp">{b.hp} / {b.maxHp}</span>
      </div>
      <div class="bar boss-bar">
        <div class="fill" style={{ width: `${frac * 100}%`, background: color }} />
        {b.markers.map((m) => <div key={m} class="marker" style={{ left: `${m * 100}%` }} />)}
      </div>
    </div>
  );
}

function Toasts({ hud }: { hud: HudState }) {
  return (
    <div class="toasts" aria-live="polite">
      {hud.toasts.value.map((t) => <div key={t.id} class={`toast ${t.tone}`}>{t.text}</div>)}
    </div>
  );
}

/** Names listed at most; a crowded hub lists you and those near you, and counts the rest. */
const ROSTER_LINES_MAX = 10;

function Roster({ hud }: { hud: HudState }) {
  const lines = hud.roster.value;
  if (lines.length === 0) return null;
  // Ships out of interest range are "away" (not in your snapshots): list the near ones first.
  const shown = lines.length <= ROSTER_LINES_MAX
    ? lines
    : [...lines].sort((a, b) => rank(a) - rank(b)).slice(0, ROSTER_LINES_MAX);
  const more = lines.length - shown.length;
  return (
    <div class="panel roster" data-testid="roster">
      <div class="panel-title">Players here ({lines.length})</div>
      <ul>
        {shown.map((l) => (
          <li
            key={l.id}
            class={`${l.self ? "self " : ""}${l.status}`}
            data-name={l.name}
          >
            <span class="pname">{l.name}{l.self && <span class="you">(you)</span>}</span>
            <span class="pstate">
              {l.status === "dead" ? "down" : l.status === "escaped" ? "escaped" : `${l.hp} HP`}
            </span>
          </li>
        ))}
        {more > 0 && <li class="more" data-testid="roster-more">and {more} more in this hub</li>}
      </ul>
    </div>
  );
}

function rank(l: { self: boolean; status: string }): number {
  return l.self ? 0 : l.status === "away" ? 2 : 1;
}

function HpPips({ hud }: { hud: HudState }) {
  const max = hud.maxHp.value;
  if (max === 0) return null;
  const hp = hud.hp.value;
  const grazes = hud.grazes.value;
  return (
    <div class="panel hp" data-testid="hp" data-hp={hp}>
      <span class="hp-label">HP</span>
      {Array.from({ length: max }, (_, i) => <span key={i} class={i < hp ? "pip on" : "pip"} />)}
      {hud.worldKind.value === "dungeon" && (
        <span key={grazes} class="graze" data-testid="grazes" data-grazes={grazes}>
          graze {grazes}
        </span>
      )}
    </div>
  );
}

function EscapeBar({ hud, touch }: { hud: HudState; touch: boolean }) {
  if (hud.worldKind.value !== "dungeon") return null;
  const note = hud.escapeNote.value;
  if (hud.channelling.value) {
    return (
      <div class="panel escape" data-testid="escape">
        <div class="escape-text">Escaping… keep holding {touch ? "the button" : "Q"}</div>
        <div class="bar">
          <div class="fill esc" style={{ width: `${hud.escape.value * 100}%` }} />
        </div>
      </div>
    );
  }
  if (note) {
    return (
      <div class="panel escape cancelled" data-testid="escape-cancelled">
        {note.text}
      </div>
    );
  }
  // The button says it on touch screens; the hint is for keyboards.
  if (hud.selfStatus.value !== "active" || touch) return null;
  return (
    <div class="escape-hint" data-testid="escape-hint">
      Hold Q to escape (3 s, a hit cancels) · Shift: focus
    </div>
  );
}

function ControlsHelp({ touch, foot }: { touch: boolean; foot: string }) {
  return (
    <div class="panel help" data-testid="help">
      <div class="panel-title">Controls</div>
      {touch
        ? (
          <dl>
            <dt>Left thumb</dt>
            <dd>move</dd>
            <dt>Right thumb</dt>
            <dd>aim and fire</dd>
            <dt>Focus</dt>
            <dd>slow, shows hitbox</dd>
            <dt>Escape</dt>
            <dd>hold the button</dd>
          </dl>
        )
        : (
          <dl>
            <dt>WASD / arrows</dt>
            <dd>move</dd>
            <dt>Mouse</dt>
            <dd>aim</dd>
            <dt>Click / Space</dt>
            <dd>hold to fire</dd>
            <dt>Shift</dt>
            <dd>focus (slow)</dd>
            <dt>Q</dt>
            <dd>hold to escape</dd>
            <dt>M</dt>
            <dd>sound</dd>
            <dt>F3 or `</dt>
            <dd>netgraph</dd>
            <dt>Gamepad</dt>
            <dd>LB focus, B escape</dd>
          </dl>
        )}
      {foot && <div class="help-foot">{foot}</div>}
    </div>
  );
}

function BannerView({ hud }: { hud: HudState }) {
  const b = hud.banner.value;
  if (!b) return null;
  return (
    <div class={`banner ${b.kind}`} data-testid="banner" role="status">
      <div class="banner-title">{b.title}</div>
      <div class="banner-sub">{b.sub}</div>
    </div>
  );
}

function HurtFlash({ hud }: { hud: HudState }) {
  const at = hud.hurtAtMs.value;
  // A new key restarts the CSS animation on every hit.
  return at > 0 ? <div key={at} class="hurt" /> : null;
}

function Netgraph({ hud }: { hud: HudState }) {
  const n = hud.net.value;
  if (!n) return <div class="panel netgraph">netgraph…</div>;
  const rows: [string, string][] = [
    ["via", n.transport || "…"],
    ["RTT", `${n.rttMs.toFixed(0)} ms`],
    ["in", `${n.inKBps.toFixed(1)} KB/s`],
    ["out", `${n.outKBps.toFixed(1)} KB/s`],
    ["snap age", `${n.snapshotAgeMs.toFixed(0)} ms`],
    ["corr/s", n.correctionsPerSec.toFixed(1)],
    ["bullets", String(n.bullets)],
    ["FPS", n.fps.toFixed(0)],
    ["lead", `${n.leadTicks} ticks`],
    ["draw p95", `${n.drawP95Ms.toFixed(2)} ms`],
  ];
  return (
    <div class="panel netgraph" data-testid="netgraph">
      {rows.map(([k, v]) => (
        <div key={k} class="ng-row">
          <span>{k}</span>
          <span>{v}</span>
        </div>
      ))}
    </div>
  );
}
