package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Skew says how the writes and reads of one market spread over the
// markets.
type Skew struct {
	name string
	// cdf[i] is the probability of a market index at most i; the last is 1.
	cdf []float64
}

// NewSkew returns the skew named kind over markets markets: "uniform";
// "hot", where market 0 gets a share hotShare (0-1) and the others share
// the rest evenly; or "zipf", where market i gets a weight 1/(i+1)^zipfS.
func NewSkew(kind string, markets int, hotShare, zipfS float64) (Skew, error) {
	if markets < 1 {
		return Skew{}, fmt.Errorf("skew: %d markets", markets)
	}
	w := make([]float64, markets)
	name := kind
	switch kind {
	case "uniform":
		for i := range w {
			w[i] = 1
		}
	case "hot":
		if !(hotShare > 0 && hotShare <= 1) {
			return Skew{}, fmt.Errorf("skew: hot share %v is not in (0, 1]", hotShare)
		}
		w[0] = hotShare
		for i := 1; i < markets; i++ {
			w[i] = (1 - hotShare) / float64(markets-1)
		}
		if markets == 1 {
			w[0] = 1
		}
		name = fmt.Sprintf("hot (market 0 gets %.0f%%)", 100*w[0])
	case "zipf":
		if !(zipfS > 0 && zipfS < 10) {
			return Skew{}, fmt.Errorf("skew: zipf exponent %v is not in (0, 10)", zipfS)
		}
		for i := range w {
			w[i] = 1 / math.Pow(float64(i+1), zipfS)
		}
		name = fmt.Sprintf("zipf (s=%v)", zipfS)
	default:
		return Skew{}, fmt.Errorf("skew: %q is not uniform, hot or zipf", kind)
	}
	var sum float64
	for _, x := range w {
		sum += x
	}
	cdf := make([]float64, markets)
	acc := 0.0
	for i, x := range w {
		acc += x / sum
		cdf[i] = acc
	}
	cdf[markets-1] = 1
	return Skew{name: name, cdf: cdf}, nil
}

// String names the skew.
func (s Skew) String() string { return s.name }

// pick draws a market index.
func (s Skew) pick(r *rand.Rand) int {
	i, _ := slices.BinarySearch(s.cdf, r.Float64())
	return min(i, len(s.cdf)-1)
}
