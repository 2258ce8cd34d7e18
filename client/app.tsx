/**
 * The page's screens: connect (name + Play, and the server's reason when it says
 * no), the play view (canvas + HUD + touch sticks) and the disconnected state
 * with Reconnect. Which one shows is Game.screen.
 */
import { useEffect, useRef, useState } from "preact/hooks";
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
      {inGame && <Hud game={game} />}
      {screen === "playing" && game.touch.value && (
        <TouchControls
          touch={game.input.touch}
          escape={game.hud.worldKind.value === "dungeon"}
        />
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
        <div class="title-kicker">co-op bullet-hell</div>
        <h1>Warden of the Fold</h1>
        <p class="lede">
          Up to four ships. Two waves. One boss that folds space into bullets.
        </p>
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
        <p class="hint">
          WASD move · mouse aim · hold click or Space to fire · gamepad and touch work too
        </p>
      </form>
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
