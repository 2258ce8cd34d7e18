/**
 * The page's screens: connect (name + Play, and the server's reason when it says
 * no), the play view (canvas + HUD + touch sticks), "reconnecting…" over the frozen
 * game while a dropped link is taken back, and the disconnected state with
 * Reconnect. Which one shows is Game.screen.
 */
import { CONTENT } from "../content/mod.ts";
import { useEffect, useRef, useState } from "preact/hooks";
import { Choice, Outcome, RunStatusCode } from "../net/wire/mod.ts";
import { TICK_S } from "../sim/mod.ts";
import type { ReconnectReason } from "../net/client/connect.ts";
import type { Game } from "./game.ts";
import { Hud } from "./hud.tsx";
import { TouchControls } from "./touch_controls.tsx";

/** The root component. */
export function App({ game }: { game: Game }) {
  const screen = game.screen.value;
  const inGame = screen === "playing" || screen === "disconnected";
  return (
    <>
      <GameCanvas game={game} />
      {screen === "playing" && game.touch.value && game.hud.layout.value && (
        <TouchControls
          touch={game.input.touch}
          escape={game.hud.worldKind.value === "dungeon"}
          layout={game.hud.layout.value}
        />
      )}
      {inGame && <Hud game={game} />}
      {screen === "playing" && game.results.value && <ResultsScreen game={game} />}
      {screen === "playing" && game.reconnecting.value && (
        <ReconnectingBanner why={game.reconnecting.value} />
      )}
      {(screen === "connect" || screen === "connecting") && <ConnectScreen game={game} />}
      {screen === "disconnected" && <DisconnectedScreen game={game} />}
    </>
  );
}

/** The one canvas; mounted once and handed to the game's renderer. */
function GameCanvas({ game }: { game: Game }) {
  const ref = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (ref.current) game.attachCanvas(ref.current);
  }, []);
  return (
    <canvas
      ref={ref}
      class="world"
      onContextMenu={(e) => e.preventDefault()}
    />
  );
}

function ConnectScreen({ game }: { game: Game }) {
  const [name, setName] = useState(game.name.value);
  const busy = game.screen.value === "connecting";
  const error = game.error.value;
  return (
    <div class="overlay connect">
      <form
        class="card"
        onSubmit={(e) => {
          e.preventDefault();
          if (!busy) game.play(name);
        }}
      >
        <div class="title-kicker">{CONTENT.game.kicker}</div>
        <h1>{CONTENT.game.title}</h1>
        <p class="lede">{CONTENT.game.lede}</p>
        <label for="pilot-name">Pilot name</label>
        <input
          id="pilot-name"
          name="name"
          maxLength={16}
          autoComplete="nickname"
          placeholder="e.g. Nova"
          autoFocus
          value={name}
          onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
          disabled={busy}
        />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Connecting…" : "Play"}
        </button>
        {error && <p class="error" role="alert" data-testid="connect-error">{error}</p>}
        <p class="hint" data-testid="connect-hint">
          {game.touch.value
            ? "Left thumb moves · right thumb aims and fires · focus and escape are buttons"
            : "WASD move · mouse aim · hold click or Space to fire · Shift focus · gamepad works too"}
        </p>
      </form>
    </div>
  );
}

/**
 * Over the frozen game while the link is being taken back, or while the server
 * restarts: no click needed either way.
 */
function ReconnectingBanner({ why }: { why: ReconnectReason }) {
  return (
    <div class="overlay reconnecting" role="status" aria-live="polite">
      <div class="card" data-testid="reconnecting" data-why={why}>
        {why === "restart"
          ? (
            <>
              <h2>Server restarting — reconnecting…</h2>
              <p class="reason">
                The server is restarting for an update. You will be back in a moment, by yourself.
              </p>
            </>
          )
          : (
            <>
              <h2>Reconnecting…</h2>
              <p class="reason">
                {why === "link"
                  ? "The connection dropped. Your ship is waiting, safe, where you left it."
                  : "The server is not answering. Still trying: you will be back as soon as it is."}
              </p>
            </>
          )}
      </div>
    </div>
  );
}

function DisconnectedScreen({ game }: { game: Game }) {
  return (
    <div class="overlay dim">
      <div class="card" data-testid="disconnected">
        <h2>Disconnected</h2>
        <p class="reason">{game.error.value || "The connection to the server was lost."}</p>
        <button type="button" class="primary" onClick={() => game.reconnect()} autoFocus>
          Reconnect
        </button>
      </div>
    </div>
  );
}

const STATUS_TEXT: Record<number, string> = {
  [RunStatusCode.active]: "standing",
  [RunStatusCode.dead]: "fell",
  [RunStatusCode.escaped]: "escaped",
  [RunStatusCode.portal]: "standing",
  [RunStatusCode.left]: "left",
};

/** A run's length as m:ss. */
function clock(ticks: number): string {
  const s = Math.round(ticks * TICK_S);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** After a clear or a wipe: who did what, then again with this crew or back to the hub. */
function ResultsScreen({ game }: { game: Game }) {
  const r = game.results.value;
  if (!r) return null;
  const cleared = r.outcome === Outcome.Cleared;
  const world = CONTENT.worlds[r.worldId];
  // The boss's own last words: the banner that said them gives way to this card at once.
  const defeated = world?.boss?.words.defeated;
  const selfId = game.runtime?.playerId;
  const inHub = game.hud.worldKind.value === "hub";
  const rows = [...r.rows].sort((a, b) => b.damageDealt - a.damageDealt);
  return (
    <div class="overlay results-overlay">
      <div class={`card results ${cleared ? "cleared" : "wiped"}`} data-testid="results">
        <div class="title-kicker">{world?.name ?? "The dungeon"}</div>
        <h2>{cleared ? defeated?.title ?? "Dungeon cleared!" : "The crew has fallen"}</h2>
        {cleared && defeated && <p class="lede">{defeated.sub}</p>}
        <p class="lede">Run time {clock(r.durationTicks)}</p>
        <table>
          <thead>
            <tr>
              <th>Pilot</th>
              <th>Damage</th>
              <th>Hits</th>
              <th>Grazes</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.id} class={row.id === selfId ? "self" : ""} data-name={row.name}>
                <td>
                  {row.name}
                  <span class="status">{STATUS_TEXT[row.status] ?? ""}</span>
                </td>
                <td>{Math.round(row.damageDealt)}</td>
                <td>{row.hitsTaken}</td>
                <td>{row.grazes}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <div class="choices">
          <button
            type="button"
            class="primary"
            data-testid="again"
            autoFocus
            onClick={() => game.choose(Choice.Again)}
          >
            Again with this crew
          </button>
          <button
            type="button"
            class="secondary"
            data-testid="to-hub"
            onClick={() => game.choose(Choice.Hub)}
          >
            {inHub ? "Stay in the hub" : "Back to hub"}
          </button>
        </div>
      </div>
    </div>
  );
}
