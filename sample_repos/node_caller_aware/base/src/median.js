/**
 * The middle value of a list of numbers.
 * @param {number[]} values a non-empty list, in any order
 * @returns {number}
 */
export function median(values) {
  if (values.length === 0) {
    throw new RangeError("median of an empty list");
  }
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
