/**
 * Browser entry: injects the stylesheet, builds the Game for this page's server
 * (WebTransport if offered and it opens within 1 s, else the WebSocket at /ws;
 * `?ws=1` skips WebTransport) and mounts the screens. `?bench=N`
 * skips networking and draws a synthetic scene of N bullets for
 * tools/render_bench.ts (`&flush=1` also times the rasteriser).
 */
import { render } from "preact";
import { App } from "./app.tsx";
import { Game } from "./game.ts";
import { CSS } from "./styles.ts";

const style = document.createElement("style");
style.textContent = CSS;
document.head.append(style);

const params = new URLSearchParams(location.search);
const game = new Game({
  pageUrl: location.href,
  webSocketOnly: params.get("ws") === "1",
  storage: globalThis.localStorage,
  tabStorage: globalThis.sessionStorage,
});

render(<App game={game} />, document.getElementById("app")!);
// Say goodbye properly so the server frees the ship at once, not on a socket timeout.
addEventListener("pagehide", () => game.dispose());

const bench = Number(params.get("bench") ?? 0);
if (bench > 0) game.startBench(Math.floor(bench), { flush: params.get("flush") === "1" });

/**
 * Debug handle for tests only (tests/e2e/browser_test.ts, tools/render_bench.ts):
 * `__bh.runtime` is the live ClientRuntime, `__bh.renderer` the canvas renderer
 * (camera, last own-ship screen position, draw timings), `__bh.effects` the pending
 * warnings and sparks, `__bh.sound` the audio. Nothing in the game reads it.
 */
Object.assign(globalThis, {
  __bh: {
    get runtime() {
      return game.runtime;
    },
    get renderer() {
      return game.renderer;
    },
    get effects() {
      return game.effects;
    },
    get sound() {
      return game.sound;
    },
  },
});
