/**
 * The wire: message kinds, field tables and typed events (protocol.ts), the table
 * machinery (fields.ts), their CBOR encoding with the hand-packed hot paths
 * (codec.ts, volley_codec.ts, bytes.ts), and the slabs messages are written into
 * (slab.ts). Shared by server,
 * browser and bots. Imports sim/ and content/ only.
 */
export * from "./protocol.ts";
export * from "./fields.ts";
export * from "./codec.ts";
export * from "./volley_codec.ts";
export * from "./decisions.ts";
export * from "./frames.ts";
export * from "./snapshot_delta.ts";
export * from "./slab.ts";
