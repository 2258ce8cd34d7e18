/**
 * Signed tokens: what verifies, and every way a token is refused (a changed
 * byte, another secret, another purpose, expiry, garbage), plus one-shot ids.
 */
import assert from "node:assert/strict";
import {
  MIN_SECRET_BYTES,
  OnceSet,
  parseSecret,
  randomId,
  randomSecret,
  TokenSigner,
} from "../../../net/server/tokens.ts";

const SECRET = new Uint8Array(MIN_SECRET_BYTES).map((_, i) => i * 7 + 1);

Deno.test("a token verifies with its secret and purpose before it expires, payload intact", () => {
  const signer = new TokenSigner(SECRET);
  const payload = { sid: "abc", gen: 3, nested: [1, "two"] };
  const token = signer.sign("resume", { payload, expiresAtMs: 10_000 });
  assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
  assert.deepEqual(signer.verify("resume", token, 9_999), {
    ok: true,
    payload,
    expiresAtMs: 10_000,
  });
  // Another signer with the same secret (another process sharing TOKEN_SECRET) agrees.
  assert.equal(new TokenSigner(SECRET.slice()).verify("resume", token, 0).ok, true);
});

Deno.test("a token is refused once its time has come, not a millisecond earlier", () => {
  const signer = new TokenSigner(SECRET);
  const token = signer.sign("resume", { payload: 1, expiresAtMs: 5000 });
  assert.equal(signer.verify("resume", token, 4999).ok, true);
  assert.deepEqual(signer.verify("resume", token, 5000), { ok: false, refusal: "expired" });
});

Deno.test("changing any character of the body or the tag to any other breaks the token", () => {
  const signer = new TokenSigner(SECRET);
  const token = signer.sign("resume", { payload: { gen: 1 }, expiresAtMs: 1e12 });
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  let tried = 0;
  for (let i = 0; i < token.length; i++) {
    if (token[i] === ".") continue;
    for (const c of alphabet) {
      if (c === token[i]) continue;
      const forged = token.slice(0, i) + c + token.slice(i + 1);
      const check = signer.verify("resume", forged, 0);
      if (check.ok) assert.fail(`accepted with ${c} at ${i}`);
      assert.ok(["signature", "malformed"].includes(check.refusal), check.refusal);
      tried++;
    }
  }
  assert.equal(tried, (token.length - 1) * 63);
});

Deno.test("a token signed with another secret, or for another purpose, is refused", () => {
  const signer = new TokenSigner(SECRET);
  const stranger = new TokenSigner(randomSecret());
  const theirs = stranger.sign("resume", { payload: { gen: 1 }, expiresAtMs: 1e12 });
  assert.deepEqual(signer.verify("resume", theirs, 0), { ok: false, refusal: "signature" });
  const ticket = signer.sign("transfer", { payload: { gen: 1 }, expiresAtMs: 1e12 });
  assert.deepEqual(signer.verify("resume", ticket, 0), { ok: false, refusal: "purpose" });
});

Deno.test("garbage is refused as malformed, never thrown", () => {
  const signer = new TokenSigner(SECRET);
  const good = signer.sign("resume", { payload: 1, expiresAtMs: 1e12 });
  const body = good.split(".")[0];
  for (
    const bad of [
      "",
      ".",
      "abc",
      "abc.",
      ".abc",
      "a.b.c",
      `${body}.${"A".repeat(21)}`,
      `${body}.${"A".repeat(23)}`,
      `${body}.!!!!!!!!!!!!!!!!!!!!!!`,
      "€€€.€€€",
    ]
  ) {
    const check = signer.verify("resume", bad, 0);
    assert.equal(check.ok, false, JSON.stringify(bad));
  }
  // Correctly signed but not the [purpose, expiry, payload] shape: made by hand here.
  assert.deepEqual(signer.verify("resume", "e30.AAAAAAAAAAAAAAAAAAAAAA", 0), {
    ok: false,
    refusal: "signature",
  });
});

Deno.test("a secret shorter than 32 bytes is refused at construction", () => {
  assert.throws(() => new TokenSigner(new Uint8Array(31)), /at least 32 needed/);
});

Deno.test("parseSecret() reads hex and base64 and refuses short or foreign text", () => {
  const hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
  assert.equal(parseSecret(hex).byteLength, 32);
  assert.equal(parseSecret(hex)[1], 0x11);
  const b64 = btoa(String.fromCharCode(...SECRET));
  assert.deepEqual(parseSecret(b64), SECRET);
  assert.throws(() => parseSecret("abcd"), /at least 32 random bytes/);
  assert.throws(() => parseSecret("not a secret at all, just words!!"), /at least 32/);
});

Deno.test("OnceSet claims an id once, and forgets it after it expires", () => {
  const once = new OnceSet();
  assert.equal(once.claim("t1", { expiresAtMs: 100, nowMs: 0 }), true);
  assert.equal(once.claim("t1", { expiresAtMs: 100, nowMs: 50 }), false, "reuse");
  assert.equal(once.claim("t2", { expiresAtMs: 200, nowMs: 50 }), true);
  assert.equal(once.size, 2);
  once.prune(100);
  assert.equal(once.size, 1, "t1 expired and was forgotten; t2 is still held");
});

Deno.test("randomId() gives distinct url-safe ids", () => {
  const ids = new Set(Array.from({ length: 1000 }, () => randomId()));
  assert.equal(ids.size, 1000);
  for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{16}$/);
});
