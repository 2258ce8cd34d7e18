/**
 * Certificates for WebTransport. A browser accepts a self-signed certificate only
 * through `serverCertificateHashes`, and only if it is ECDSA and valid for at most
 * 14 days; so without an operator's certificate (TLS_CERT/TLS_KEY) the server makes
 * its own here, short-lived, and rotates it. WebCrypto and a few lines of DER: no
 * dependency, no openssl. Pure apart from WebCrypto; the clock is passed in.
 */

/** A certificate and key in PEM, with what the page needs to trust it. */
export interface CertificatePair {
  readonly certPem: string;
  readonly keyPem: string;
  /** SHA-256 of the DER certificate, for `serverCertificateHashes` (self-signed only). */
  readonly sha256: Uint8Array;
  readonly notAfterMs: number;
  /** True for a certificate made here: the page must pin its hash. */
  readonly selfSigned: boolean;
}

const DAY_MS = 86_400_000;
/** The browser's limit for a certificate trusted by hash. */
export const MAX_HASHED_CERT_DAYS = 14;

/** Makes a self-signed ECDSA P-256 certificate valid from `nowMs` − 1 h for `validityDays`. */
export async function selfSignedCertificate(
  nowMs: number,
  opts: { validityDays: number; hostnames: readonly string[] },
): Promise<CertificatePair> {
  // The browser counts the whole span, back-dating included.
  const spanMs = opts.validityDays * DAY_MS;
  if (spanMs > MAX_HASHED_CERT_DAYS * DAY_MS) {
    throw new RangeError(`Cannot make a ${opts.validityDays}-day certificate: browsers allow 14`);
  }
  const notBefore = nowMs - 3_600_000;
  const notAfter = notBefore + spanMs;
  const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", keys.publicKey));
  const name = seq(set(seq(oid(OID.commonName), utf8("Warden of the Fold"))));
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] &= 0x7f; // a positive INTEGER
  serial[0] |= 0x01; // and no leading zero byte to strip
  const tbs = seq(
    explicit(0, integer(new Uint8Array([2]))), // v3
    integer(serial),
    seq(oid(OID.ecdsaWithSha256)),
    name,
    seq(time(notBefore), time(notAfter)),
    name,
    spki,
    explicit(3, seq(subjectAltName(opts.hostnames))),
  );
  const p1363 = new Uint8Array(
    await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, keys.privateKey, tbs),
  );
  const der = seq(tbs, seq(oid(OID.ecdsaWithSha256)), bitString(ecdsaSignatureDer(p1363)));
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  return {
    certPem: pem("CERTIFICATE", der),
    keyPem: pem("PRIVATE KEY", pkcs8),
    sha256: new Uint8Array(await crypto.subtle.digest("SHA-256", der)),
    notAfterMs: notAfter,
    selfSigned: true,
  };
}

/** The DER bytes of the first certificate in a PEM file. */
export function pemToDer(pemText: string): Uint8Array {
  const m = pemText.match(/-----BEGIN CERTIFICATE-----([^-]+)-----END CERTIFICATE-----/);
  if (!m) throw new TypeError("Cannot read certificate: no PEM CERTIFICATE block");
  return Uint8Array.from(atob(m[1].replace(/\s+/g, "")), (c) => c.charCodeAt(0));
}

/** Base64 of bytes (the form the page receives hashes in). */
export function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

// ---------------------------------------------------------------- DER

const OID = {
  commonName: "2.5.4.3",
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  subjectAltName: "2.5.29.17",
} as const;

function tlv(tag: number, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const n = body.byteLength;
  const len = n < 0x80
    ? [n]
    : n < 0x100
    ? [0x81, n]
    : n < 0x10000
    ? [0x82, n >> 8, n & 0xff]
    : [0x83, n >> 16, (n >> 8) & 0xff, n & 0xff];
  const out = new Uint8Array(1 + len.length + n);
  out[0] = tag;
  out.set(len, 1);
  out.set(body, 1 + len.length);
  return out;
}

function concat(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

const seq = (...parts: Uint8Array[]) => tlv(0x30, concat(parts));
const set = (...parts: Uint8Array[]) => tlv(0x31, concat(parts));
const explicit = (n: number, inner: Uint8Array) => tlv(0xa0 | n, inner);
const utf8 = (s: string) => tlv(0x0c, new TextEncoder().encode(s));
const bitString = (bytes: Uint8Array) => tlv(0x03, concat([new Uint8Array([0]), bytes]));

/** An unsigned big-endian INTEGER: leading zeros dropped, a 0 added if the top bit is set. */
function integer(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const v = bytes.subarray(i);
  return tlv(0x02, v[0] & 0x80 ? concat([new Uint8Array([0]), v]) : v);
}

function oid(dotted: string): Uint8Array {
  const arcs = dotted.split(".").map(Number);
  const out = [arcs[0] * 40 + arcs[1]];
  for (const arc of arcs.slice(2)) {
    const base128 = [arc & 0x7f];
    for (let v = arc >> 7; v > 0; v >>= 7) base128.unshift((v & 0x7f) | 0x80);
    out.push(...base128);
  }
  return tlv(0x06, new Uint8Array(out));
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 §4.1.2.5). */
function time(ms: number): Uint8Array {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  const rest = `${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}` +
    `${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  const y = d.getUTCFullYear();
  return y < 2050
    ? tlv(0x17, new TextEncoder().encode(`${p(y % 100)}${rest}`))
    : tlv(0x18, new TextEncoder().encode(`${y}${rest}`));
}

/** subjectAltName: DNS names, and IPv4 addresses as iPAddress. */
function subjectAltName(hostnames: readonly string[]): Uint8Array {
  const names = hostnames.map((h) => {
    const ip4 = h.match(/^(\d+)\.(\d+)\.(\d+)\.(\d+)$/);
    return ip4
      ? tlv(0x87, new Uint8Array(ip4.slice(1).map(Number)))
      : tlv(0x82, new TextEncoder().encode(h));
  });
  return seq(oid(OID.subjectAltName), tlv(0x04, seq(...names)));
}

/** WebCrypto signs as r‖s (IEEE P1363); X.509 wants SEQUENCE { INTEGER r, INTEGER s }. */
function ecdsaSignatureDer(p1363: Uint8Array): Uint8Array {
  const half = p1363.byteLength / 2;
  return seq(integer(p1363.subarray(0, half)), integer(p1363.subarray(half)));
}

function pem(label: string, der: Uint8Array): string {
  const b64 = toBase64(der).replace(/.{1,64}/g, "$&\n");
  return `-----BEGIN ${label}-----\n${b64}-----END ${label}-----\n`;
}
