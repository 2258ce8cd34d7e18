/**
 * `deno task fairness` in CI: the real server and client runtimes through the link
 * simulator at 150 ± 50 ms each way with a 250 ms stall about every 4 s, for the four
 * minutes of play the task runs (in-process, on a ManualClock and seeded links: a few
 * seconds of CPU, and the same figures every run), held to the targets.
 */
import assert from "node:assert/strict";
import { parseLinkSpec } from "../../net/link/mod.ts";
import { CONDITIONS, runFairness } from "../../tools/fairness.ts";

Deno.test("at 150 ± 50 ms with stalls: shots at the muzzle, hits and contact as drawn, smooth allies and their shots, hits felt and kills seen as made", () => {
  const link = CONDITIONS[CONDITIONS.length - 1];
  assert.equal(link, "150±50,stall=250/4000", "the last line is the hard one");
  for (const seed of [1]) {
    const { line, detail } = runFairness(parseLinkSpec(link), { seconds: 240, seed });
    console.log(JSON.stringify(line), JSON.stringify(detail));
    assert.ok(
      detail.shots > 600 && detail.hits > 100 && detail.contacts > 5,
      "enough was measured",
    );
    assert.ok(line.ownShotSpawnPx <= 20, `seed ${seed}: spawn ${line.ownShotSpawnPx} px`);
    assert.ok(line.shotOvershootP90Px <= 24, `seed ${seed}: overshoot ${line.shotOvershootP90Px}`);
    assert.ok(line.contactGapMaxPx <= 16, `seed ${seed}: contact gap ${line.contactGapMaxPx}`);
    assert.ok(line.remoteJumpMaxPx <= 16, `seed ${seed}: remote jump ${line.remoteJumpMaxPx}`);
    assert.ok(line.correctionsPerMin <= 2, `seed ${seed}: ${line.correctionsPerMin}/min`);
    // The ally's shots leave the ally's drawn muzzle (on the present timeline: 470 px off).
    assert.ok(detail.allyShots > 300, `${detail.allyShots} ally shots drawn`);
    assert.ok(detail.allyShotSpawnP90Px <= 8, `ally shots ${detail.allyShotSpawnP90Px} px out`);
    // Even the ones a stall held back past their birth there (~140 px out, mid-flight, when
    // fast-forwarded), and the ones fired while the ally is drawn gliding back after one.
    assert.ok(detail.allyShotSpawnMaxPx <= 20, `an ally shot ${detail.allyShotSpawnMaxPx} px out`);
    // Hits are felt as the shot vanishes on the drawn enemy, not ~0.7 s later when the
    // server's word comes; and the strikes the server never agreed with stay rare.
    assert.ok(
      detail.ownHitsFeltAtStrike >= 0.9 * detail.ownHitsHeard,
      `${detail.ownHitsFeltAtStrike} of ${detail.ownHitsHeard} hits felt at the strike`,
    );
    assert.ok(detail.hitFeltMedianMs <= 17, `hits felt ${detail.hitFeltMedianMs} ms late`);
    assert.ok(
      detail.strikesUnclaimed <= 0.05 * detail.strikes,
      `${detail.strikesUnclaimed} of ${detail.strikes} strikes unclaimed`,
    );
    // An enemy the player kills is gone as the killing shot vanishes (it stayed drawn
    // ~0.7 s, until the server's word, before the runtime counted the strikes' damage).
    assert.ok(detail.kills >= 10, `${detail.kills} kills`);
    assert.ok(detail.killSeenMedianMs <= 50, `kills seen ${detail.killSeenMedianMs} ms late`);
  }
});
