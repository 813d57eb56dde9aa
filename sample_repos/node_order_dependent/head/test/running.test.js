import assert from "node:assert/strict";
import { test } from "node:test";

import { median } from "../src/median.js";

// seen collects the values the tests below add, in order.
const seen = [];

test("running median after the first two values", () => {
  seen.push(1, 3);
  assert.equal(median(seen), 2);
});

test("running median after four values", () => {
  seen.push(5, 7);
  assert.equal(median(seen), 4);
});
