import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { median } from "../src/median.js";

describe("median of an even-length list", () => {
  test("is the mean of its two middle values", () => {
    assert.equal(median([2, 8, 4, 6]), 5);
    assert.equal(median([1, 2]), 1.5);
  });

  test("does not depend on the order given", () => {
    assert.equal(median([60, 10, 50, 20, 40, 30]), 35);
  });
});

test("median of a single negative value is that value", () => {
  assert.equal(median([-3]), -3);
});
