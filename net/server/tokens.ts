/**
 * Signed, expiring tokens: a JSON payload, the time it expires and a purpose,
 * under an HMAC-SHA256 tag. Resume tokens use them; so can transfer tickets
 * between processes that share the secret (TOKEN_SECRET). Server-only: imports
 * node:crypto, never sim/, net/client/ or the DOM.
 *
 *   token = base64url(JSON [purpose, expiresAtMs, payload]) "." base64url(tag)
 *   tag   = first 16 bytes of HMAC-SHA256(secret, "warden-token/1\n" + body)
 *
 * node:crypto rather than WebCrypto: `crypto.subtle` is async only, and a hello
 * that waits on a promise would make admission depend on the event loop, which
 * the in-process tests on a ManualClock cannot pump. The primitive is the same.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** Bytes of HMAC-SHA256 kept in a token: 128 bits, as RFC 2104 allows. */
const TAG_BYTES = 16;
/** Shortest secret accepted, in bytes (the HMAC block gives no benefit past 64). */
export const MIN_SECRET_BYTES = 32;
const DOMAIN = "warden-token/1\n";

/** Why a token was not accepted. */
export type TokenRefusal = "malformed" | "signature" | "purpose" | "expired";

/** The outcome of verifying a token. */
export type TokenCheck<T> =
  | { readonly ok: true; readonly payload: T; readonly expiresAtMs: number }
  | { readonly ok: false; readonly refusal: TokenRefusal };

/** A fresh random secret (for one process when no shared secret is configured). */
export function randomSecret(): Uint8Array {
  return new Uint8Array(randomBytes(MIN_SECRET_BYTES));
}

/** Unguessable random id, base64url (`bytes` of entropy). */
export function randomId(bytes = 12): string {
  return toBase64Url(new Uint8Array(randomBytes(bytes)));
}

/**
 * Signs and verifies tokens under one secret. Times are whatever clock the caller
 * and the verifier share: the monotonic clock within a process, `Date.now()` across
 * processes. Verification is constant-time in the tag.
 */
export class TokenSigner {
  readonly #secret: Uint8Array;

  constructor(secret: Uint8Array) {
    if (secret.byteLength < MIN_SECRET_BYTES) {
      throw new RangeError(
        `Cannot sign with a ${secret.byteLength}-byte secret: at least ${MIN_SECRET_BYTES} needed`,
      );
    }
    this.#secret = secret.slice();
  }

  /** A token for `payload`, valid for `purpose` until `expiresAtMs`. */
  sign(purpose: string, opts: { payload: unknown; expiresAtMs: number }): string {
    const body = toBase64Url(
      new TextEncoder().encode(JSON.stringify([purpose, opts.expiresAtMs, opts.payload])),
    );
    return `${body}.${toBase64Url(this.#tag(body))}`;
  }

  /**
   * Checks a token's tag, purpose and expiry at `nowMs`. The payload is returned as
   * signed: its shape is the caller's to check, but nobody without the secret made it.
   */
  verify<T>(purpose: string, token: string, nowMs: number): TokenCheck<T> {
    const dot = token.indexOf(".");
    if (dot <= 0 || dot !== token.lastIndexOf(".")) return { ok: false, refusal: "malformed" };
    const body = token.slice(0, dot);
    const tag = fromBase64Url(token.slice(dot + 1));
    if (!tag || tag.byteLength !== TAG_BYTES) return { ok: false, refusal: "malformed" };
    if (!timingSafeEqual(tag, this.#tag(body))) return { ok: false, refusal: "signature" };
    let parsed: unknown;
    try {
      const raw = fromBase64Url(body);
      if (!raw) return { ok: false, refusal: "malformed" };
      parsed = JSON.parse(new TextDecoder().decode(raw));
    } catch {
      return { ok: false, refusal: "malformed" };
    }
    if (!Array.isArray(parsed) || parsed.length !== 3 || typeof parsed[1] !== "number") {
      return { ok: false, refusal: "malformed" };
    }
    if (parsed[0] !== purpose) return { ok: false, refusal: "purpose" };
    if (!(nowMs < parsed[1])) return { ok: false, refusal: "expired" };
    return { ok: true, payload: parsed[2] as T, expiresAtMs: parsed[1] };
  }

  #tag(body: string): Uint8Array {
    const mac = createHmac("sha256", this.#secret).update(DOMAIN).update(body).digest();
    return new Uint8Array(mac.buffer, mac.byteOffset, TAG_BYTES);
  }
}

/**
 * Ids that may be used once until they expire (one-shot tickets). Memory stays
 * bounded by the ids still unexpired: expired ones are pruned as time passes.
 */
export class OnceSet {
  readonly #expiries = new Map<string, number>();

  /** True the first time `id` is claimed before `expiresAtMs`; false on any reuse. */
  claim(id: string, opts: { expiresAtMs: number; nowMs: number }): boolean {
    this.prune(opts.nowMs);
    if (this.#expiries.has(id)) return false;
    this.#expiries.set(id, opts.expiresAtMs);
    return true;
  }

  /** Forgets ids whose tokens have expired (they can no longer verify anyway). */
  prune(nowMs: number): void {
    for (const [id, at] of this.#expiries) if (at <= nowMs) this.#expiries.delete(id);
  }

  get size(): number {
    return this.#expiries.size;
  }
}

/** Parses a secret given as hex (64+ digits) or base64/base64url (43+ characters). */
export function parseSecret(text: string): Uint8Array {
  const s = text.trim();
  const bytes = /^(?:[0-9a-fA-F]{2})+$/.test(s)
    ? new Uint8Array(s.match(/../g)!.map((h) => parseInt(h, 16)))
    : fromBase64Url(s.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""));
  if (!bytes || bytes.byteLength < MIN_SECRET_BYTES) {
    throw new RangeError(
      `must be at least ${MIN_SECRET_BYTES} random bytes as hex or base64 (try: openssl rand -hex 32)`,
    );
  }
  return bytes;
}

function toBase64Url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
  // Canonical only: unused low bits set in the last character would make two spellings.
  return toBase64Url(bytes) === text ? bytes : undefined;
}
