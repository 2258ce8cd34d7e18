/**
 * The client runtime shared by the browser and headless bots: prediction,
 * reconciliation, interpolation, the bullet replica, the links (WebSocket and
 * WebTransport) with the choice between them, and the bot. Imports net/wire/, sim/ and content/; never net/server/.
 */
export * from "./runtime.ts";
export * from "./replica.ts";
export * from "./ws_client.ts";
export * from "./connect.ts";
export * from "./bot.ts";
