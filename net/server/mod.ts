/**
 * The server runtime: connections, instances, the one fixed-step loop, transports,
 * metrics and configuration. Imports net/wire/, sim/ and content/; never net/client/.
 */
export * from "./server.ts";
export * from "./instance.ts";
export * from "./scheduler.ts";
export * from "./transport.ts";
export * from "./webtransport.ts";
export * from "./certs.ts";
export * from "./metrics.ts";
export * from "./config.ts";
export * from "./malloc.ts";
export * from "./tokens.ts";
export * from "./cluster.ts";
export * from "./tick_window.ts";
export * from "./admission.ts";
export * from "./names.ts";
export * from "./session.ts";
export * from "./connection.ts";
export * from "./front_door.ts";
export * from "./native_tcp.ts";
export { PriorityGuard, raiseLoopPriority, ThreadScheduling } from "./loop_priority.ts";
export * from "./server_socket.ts";
export * from "./stream_audit.ts";
