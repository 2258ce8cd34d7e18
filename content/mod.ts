/**
 * Game content: the registry (CONTENT) of every world, portal, boss, enemy and bullet
 * kind the game ships, with their looks and words, checked at load. Data only.
 */
export * from "./bullets.ts";
export * from "./choir.ts";
export * from "./enemies.ts";
export * from "./game.ts";
export * from "./player.ts";
export * from "./registry.ts";
export * from "./telegraphs.ts";
export * from "./types.ts";
export * from "./validate.ts";
export * from "./warden.ts";
export * from "./worlds.ts";
