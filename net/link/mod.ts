/**
 * The link simulator: a network path with delay, jitter (order kept, as TCP does),
 * stalls and scripted outages, set from one string (`LINK_SIM=150±50,stall=250/4000`).
 * `LinkPath`/`LinkPipe` run on an injected clock (tests use ManualClock); the server
 * wraps connections with them in dev, and `LinkRelay` puts the same link between a
 * real browser and a real server over TCP. Imports sim/ only (its PRNG).
 */
export * from "./spec.ts";
export * from "./path.ts";
export * from "./relay.ts";
