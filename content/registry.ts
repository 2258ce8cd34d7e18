/**
 * The registry: everything the game ships, in the order the wire names it (a world's
 * id is its index in `worlds`, a boss's in `bosses`, …). Checked when it loads — a
 * bad value stops start-up with a ContentError naming the object and the field — and
 * hashed: the hash joins PROTOCOL_VERSION in the handshake, so a client built from
 * other content is refused instead of misreading the ids. Data only.
 */
import { BULLET_KINDS } from "./bullets.ts";
import { CHASER, GUNNER, SPINNER } from "./enemies.ts";
import { GAME, SHIPS } from "./game.ts";
import type { Content, WorldContent } from "./types.ts";
import { checkedContent } from "./validate.ts";
import { CANTOR, CHOIR } from "./choir.ts";
import { WARDEN } from "./warden.ts";
import { FOLD, HUB } from "./worlds.ts";

/** Everything the game ships, checked. */
export const CONTENT: Content = checkedContent({
  game: GAME,
  home: HUB.key,
  worlds: [HUB, FOLD, CHOIR],
  bosses: [WARDEN, CANTOR],
  enemies: [SPINNER, GUNNER, CHASER],
  bulletKinds: BULLET_KINDS,
  ships: SHIPS,
});

/** A 32-bit FNV-1a digest of the content's every value, in declaration order. */
export function contentHash(content: Content): number {
  const text = JSON.stringify(content);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The shipped content's hash, as the hello carries it. */
export const CONTENT_HASH = contentHash(CONTENT);

/** The world named `key`, and its wire id. */
export function worldByKey(key: string): { world: WorldContent; id: number } {
  const id = CONTENT.worlds.findIndex((w) => w.key === key);
  if (id < 0) throw new RangeError(`Cannot find world "${key}"`);
  return { world: CONTENT.worlds[id], id };
}
