/**
 * Add up a list of numbers.
 * @param {number[]} values
 * @returns {number}
 */
export function sum(values) {
  return values.reduce((total, value) => total + value);
}
