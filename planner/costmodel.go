package planner

import (
	"fmt"
	"math"
)

// Check refuses cost parameters the model cannot use: latency must be
// positive and finite, bandwidths positive and finite, the sieve window
// non-negative.
func (c CostParams) Check() error {
	ok := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }
	switch {
	case !ok(c.Latency):
		return fmt.Errorf("planner: cost model latency %g s, want > 0", c.Latency)
	case !ok(c.ReaderBW):
		return fmt.Errorf("planner: cost model reader bandwidth %g B/s, want > 0", c.ReaderBW)
	case !ok(c.AggBW):
		return fmt.Errorf("planner: cost model aggregate bandwidth %g B/s, want > 0", c.AggBW)
	case c.Sieve < 0:
		return fmt.Errorf("planner: cost model sieve window %d bytes, want >= 0", c.Sieve)
	}
	return nil
}
