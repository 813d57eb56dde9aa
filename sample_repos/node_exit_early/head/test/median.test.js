import assert from "node:assert/strict";
import { test } from "node:test";

import { median } from "../src/median.js";

test("median of an odd-length list is its middle value", () => {
  assert.equal(median([3, 1, 2]), 2);
});

test("median of one value is that value", () => {
  assert.equal(median([7]), 7);
});

test("median of an empty list throws", () => {
  assert.throws(() => median([]), RangeError);
});
