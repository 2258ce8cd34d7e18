/** The game's own words and the ships' colours. Data only. */
import type { GameWords, ShipLook } from "./types.ts";

/** The connect screen. */
export const GAME = {
  title: "Warden of the Fold",
  kicker: "co-op bullet-hell",
  lede:
    "Up to four ships. Two dungeons, each two waves and a boss that fills the room with bullets.",
} as const satisfies GameWords;

/** Your ship in cyan; everyone else's by id. */
export const SHIPS = {
  self: "#5ff4ff",
  allies: ["#ffd166", "#b48cff", "#7dff8a", "#ff8fab", "#8fd3ff"],
} as const satisfies ShipLook;
