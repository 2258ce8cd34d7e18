/**
 * The simulation's public face: pure game logic shared by server, client and tests.
 * Nothing under sim/ imports from net/, routes/, client/ or any Deno or DOM API.
 */
export * from "./bullets.ts";
export * from "./emitters.ts";
export * from "./events.ts";
export * from "./geometry.ts";
export * from "./grid.ts";
export * from "./hash.ts";
export * from "./input_queue.ts";
export * from "./movement.ts";
export * from "./rng.ts";
export * from "./time.ts";
export * from "./types.ts";
export * from "./world.ts";
export * from "./enemy_motion.ts";
export * from "./player_view.ts";
