// Package stats holds small summaries of lists of numbers.
package stats

import "sort"

// Median is the middle value of xs; for an even count, the mean of the two
// middle values; 0 for none.
func Median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	return s[n/2]
}

// Mean is the average of xs; 0 for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	total := 0.0
	for _, x := range xs {
		total += x
	}
	return total / float64(len(xs))
}
