/**
 * Player names: normalised (NFKC, runs of spaces folded), limited to letters, marks,
 * digits, space and `_ . -`, with invisible characters (Hangul fillers, zero-width
 * and other default-ignorable code points) refused, and a lookalike key so that two
 * players cannot wear names that read the same ("Nova", "nova", "Nοva" with a Greek
 * omicron, "N o v a"). Imports nothing.
 */

/** Why a name was refused, or the name as it will be shown. */
export type NameCheck =
  | { readonly ok: true; readonly name: string; readonly key: string }
  | { readonly ok: false; readonly reason: string };

const ALLOWED = /^[\p{L}\p{M}\p{N} _.\-]+$/u;
/** Hangul fillers and the like are letters (Lo) that draw nothing: refused by name. */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\u115F\u1160\u3164\uFFA0\u2800]/u;
const LATIN = /\p{Script=Latin}/u;
const CYRILLIC = /\p{Script=Cyrillic}/u;
const GREEK = /\p{Script=Greek}/u;
/** More than two combining marks in a row is decoration stacked to spill over other names. */
const MARK_RUN = /\p{M}{3,}/u;

/** Validates and normalises a name a player typed. */
export function checkName(raw: string, maxLength: number): NameCheck {
  const name = raw.normalize("NFKC").trim().replace(/\s+/gu, " ");
  const rule = `1–${maxLength} letters, digits, spaces, _ . -`;
  if (name.length === 0) return { ok: false, reason: `name must be ${rule}` };
  if (INVISIBLE.test(name)) return { ok: false, reason: "name has invisible characters" };
  if ([...name].length > maxLength) return { ok: false, reason: `name must be ${rule}` };
  if (!ALLOWED.test(name) || /^\p{M}/u.test(name) || MARK_RUN.test(name)) {
    return { ok: false, reason: `name must be ${rule}` };
  }
  // Latin, Cyrillic and Greek share lookalike letters: one name, one of them.
  const scripts = [LATIN, CYRILLIC, GREEK].filter((s) => s.test(name)).length;
  if (scripts > 1) return { ok: false, reason: "name mixes Latin, Cyrillic or Greek letters" };
  const key = nameKey(name);
  if (key.length === 0) return { ok: false, reason: `name must be ${rule}` };
  return { ok: true, name, key };
}

/**
 * Letters that read as another in most fonts, mapped to one representative. Cyrillic
 * and Greek capitals and smalls that look Latin, and digits that look like letters.
 */
const LOOKALIKE: Readonly<Record<string, string>> = {
  // Cyrillic (lower-cased first)
  "а": "a",
  "в": "b",
  "е": "e",
  "ё": "e",
  "к": "k",
  "м": "m",
  "н": "h",
  "о": "o",
  "р": "p",
  "с": "c",
  "т": "t",
  "у": "y",
  "х": "x",
  "ѕ": "s",
  "і": "l",
  "ї": "l",
  "ј": "j",
  "ԁ": "d",
  "ԛ": "q",
  "ԝ": "w",
  "һ": "h",
  // Greek
  "α": "a",
  "β": "b",
  "ε": "e",
  "η": "n",
  "ι": "l",
  "κ": "k",
  "μ": "u",
  "ν": "v",
  "ο": "o",
  "ρ": "p",
  "τ": "t",
  "υ": "u",
  "χ": "x",
  "ω": "w",
  "ζ": "z",
  // Latin and digits that pass for each other
  "0": "o",
  "1": "l",
  "i": "l",
  "|": "l",
  "5": "s",
  "ı": "l",
};

/**
 * The key two names collide under: lower case without accents, lookalikes folded,
 * separators (space _ . -) dropped, "rn" read as "m" and "vv" as "w".
 */
export function nameKey(name: string): string {
  const bare = name.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
  let out = "";
  for (const ch of bare) {
    if (ch === " " || ch === "_" || ch === "." || ch === "-") continue;
    out += LOOKALIKE[ch] ?? ch;
  }
  return out.replace(/rn/g, "m").replace(/vv/g, "w");
}
