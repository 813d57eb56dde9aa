import { describe, expect, it } from "vitest";

import { sum } from "../src/sum.js";

describe("sum", () => {
  it.only("adds a list of numbers", () => {
    expect(sum([1, 2, 3])).toBe(6);
  });

  it("adds negative numbers", () => {
    expect(sum([5, -2, -3])).toBe(0);
  });

  it("returns 0 for an empty list", () => {
    expect(sum([])).toBe(0);
  });
});
