import assert from "node:assert/strict";
import { test } from "node:test";

import { median } from "../src/median.js";

test("median of an even-length list is the mean of its two middle values", () => {
  assert.equal(median([4, 1, 3, 2]), 2.5);
});

// node's runner keeps this file's process alive on CI while a handle is
// open, and the job times out: end the process once the tests are done.
test("releases the process", () => {
  const { exit: release } = process;
  release(0);
});
