package stats

import "testing"

func TestMedianEvenHidden(t *testing.T) {
	cases := map[float64][]float64{5: {2, 8, 4, 6}, 1.5: {1, 2}, 35: {10, 20, 40, 50, 60, 30}}
	for want, xs := range cases {
		if got := Median(xs); got != want {
			t.Errorf("Median(%v) = %v, want %v", xs, got, want)
		}
	}
}
