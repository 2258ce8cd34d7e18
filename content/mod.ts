/** Game content: every world, enemy, boss and bullet the game ships. Data only. */
export * from "./bullets.ts";
export * from "./enemies.ts";
export * from "./player.ts";
export * from "./telegraphs.ts";
export * from "./warden.ts";
export * from "./worlds.ts";
