package stats

import "testing"

// seen collects the values the tests below add, in order.
var seen []float64

func TestRunningAddFirst(t *testing.T) {
	seen = append(seen, 1, 3)
	if got := Median(seen); got != 2 {
		t.Fatalf("Median(%v) = %v, want 2", seen, got)
	}
}

func TestRunningAddSecond(t *testing.T) {
	seen = append(seen, 5, 7)
	if got := Median(seen); got != 4 {
		t.Fatalf("Median(%v) = %v, want 4", seen, got)
	}
}
