package stats

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// pairs returns n paired samples with B/A = ratio·exp(σ·Z) per pair and a
// common drift per round.
func pairs(seed uint64, n int, ratio, sigma float64) (a, b []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	a, b = make([]float64, n), make([]float64, n)
	for i := range a {
		d := 1 + 0.3*rng.Float64()
		a[i] = 50 * d * math.Exp(sigma*rng.NormFloat64())
		b[i] = 50 * ratio * d * math.Exp(sigma*rng.NormFloat64())
	}
	return a, b
}

func hasWarning(ws []string, sub string) bool {
	for _, w := range ws {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

func TestBracketsTwelvePicksSortedTwoAndNine(t *testing.T) {
	r := []float64{1.07, 0.95, 1.00, 0.91, 1.11, 0.98, 1.02, 0.93, 1.05, 0.99, 1.01, 0.97}
	orig := slices.Clone(r)
	lo, hi := Brackets(r)
	s := slices.Sorted(slices.Values(r))
	if lo != s[2] || hi != s[9] {
		t.Errorf("Brackets = %v, %v, want sorted[2] = %v, sorted[9] = %v", lo, hi, s[2], s[9])
	}
	if lo != 0.95 || hi != 1.05 {
		t.Errorf("Brackets = %v, %v, want 0.95, 1.05", lo, hi)
	}
	if !slices.Equal(r, orig) {
		t.Errorf("Brackets modified its input: %v", r)
	}
}

func TestBracketsGeneralised(t *testing.T) {
	seq := func(n int) []float64 { // n..1, so sorted[i] = i+1
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(n - i)
		}
		return s
	}
	for _, tc := range []struct{ n, i, j int }{
		{1, 0, 0}, {2, 0, 1}, {6, 1, 4}, {12, 2, 9}, {23, 4, 18}, {24, 4, 19}, {100, 18, 81},
	} {
		lo, hi := Brackets(seq(tc.n))
		if lo != float64(tc.i+1) || hi != float64(tc.j+1) {
			t.Errorf("n=%d: Brackets = %v, %v, want indices %d, %d", tc.n, lo, hi, tc.i, tc.j)
		}
	}
	if lo, hi := Brackets(nil); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("Brackets(nil) = %v, %v, want NaN, NaN", lo, hi)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{5, 5, 1, 9, 9}, 5},
	} {
		orig := slices.Clone(tc.xs)
		if got := Median(tc.xs); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", orig, got, tc.want)
		}
		if !slices.Equal(tc.xs, orig) {
			t.Errorf("Median modified its input: %v, was %v", tc.xs, orig)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}

func TestDecideBoundaries(t *testing.T) {
	o := DefaultOptions()
	lower, upper := 1-o.MinGain, 1+o.MaxRegress
	below, above := math.Nextafter(lower, 0), math.Nextafter(upper, 2)
	nan := math.NaN()
	for _, tc := range []struct {
		lo, hi float64
		want   Verdict
	}{
		{0.90, below, Faster},
		{0.90, lower, Undecided}, // touching the margin is not below it
		{above, 1.2, Slower},
		{upper, 1.2, Undecided},
		{0.95, 1.05, Undecided}, // straddles both edges: not a tie
		{0.25, 1.74, Undecided},
		{0.995, 1.005, Tie},      // inside the band: a tie
		{lower, upper, Tie},      // the band's edges belong to it
		{0.90, 0.995, Undecided}, // below 1 but not below the margin
		{nan, nan, Undecided},
		{nan, 0.5, Faster}, // the rule reads only hi for Faster
	} {
		if got := Decide(tc.lo, tc.hi, o); got != tc.want {
			t.Errorf("Decide(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
	zero := o
	zero.MinGain, zero.MaxRegress = 0, 0
	if got := Decide(0.98, 0.999, zero); got != Faster {
		t.Errorf("Decide with no margin = %v, want faster", got)
	}
}

func TestPairedErrors(t *testing.T) {
	good := []float64{1, 2, 3}
	o := DefaultOptions()
	for name, tc := range map[string]struct{ a, b []float64 }{
		"length":   {good, []float64{1, 2}},
		"empty":    {nil, nil},
		"zero":     {good, []float64{1, 0, 3}},
		"negative": {[]float64{1, -2, 3}, good},
		"NaN":      {good, []float64{1, math.NaN(), 3}},
		"Inf":      {[]float64{math.Inf(1), 2, 3}, good},
	} {
		if _, err := Paired(tc.a, tc.b, o); err == nil {
			t.Errorf("Paired %s: no error", name)
		}
	}
	for name, bad := range map[string]func(*Options){
		"confidence 0":   func(o *Options) { o.Confidence = 0 },
		"confidence 1":   func(o *Options) { o.Confidence = 1 },
		"negative gain":  func(o *Options) { o.MinGain = -0.01 },
		"NaN regress":    func(o *Options) { o.MaxRegress = math.NaN() },
		"negative K":     func(o *Options) { o.OutlierK = -1 },
		"negative pairs": func(o *Options) { o.MinPairs = -1 },
	} {
		o := DefaultOptions()
		bad(&o)
		if _, err := Paired(good, good, o); err == nil {
			t.Errorf("Paired with %s: no error", name)
		}
	}
	if _, err := Unpaired(good, nil, o); err == nil {
		t.Error("Unpaired with empty b: no error")
	}
	if _, err := Unpaired([]float64{1, math.NaN()}, good, o); err == nil {
		t.Error("Unpaired with NaN: no error")
	}
}

func TestPairedNeverMutatesInputs(t *testing.T) {
	a, b := pairs(1, 12, 0.97, 0.005)
	b[4] *= 1.4 // a spike, so the screen runs
	ca, cb := slices.Clone(a), slices.Clone(b)
	c, err := Paired(a, b, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, ca) || !slices.Equal(b, cb) {
		t.Fatal("Paired modified its inputs")
	}
	c.Ratios[0] = -1 // a fresh slice: writing it touches nothing of the caller's
	if !slices.Equal(a, ca) || !slices.Equal(b, cb) {
		t.Fatal("Comparison.Ratios aliases an input")
	}
	if _, err := Unpaired(a, b, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, ca) || !slices.Equal(b, cb) {
		t.Fatal("Unpaired modified its inputs")
	}
}

func TestPairedDeterministic(t *testing.T) {
	a, b := pairs(2, 12, 0.98, 0.01)
	c1, _ := Paired(a, b, DefaultOptions())
	c2, _ := Paired(a, b, DefaultOptions())
	if !reflect.DeepEqual(c1, c2) {
		t.Errorf("Paired not deterministic:\n%+v\n%+v", c1, c2)
	}
}

func TestPairedRatiosAndInterval(t *testing.T) {
	// 12 pairs with known log-ratios; the interval must be the 14th and 65th
	// of the 78 sorted Walsh averages (c = 13 at 95 %), the estimate their
	// median, independently of how the code forms them.
	x := []float64{-0.031, -0.024, -0.027, -0.019, -0.035, -0.022, -0.026, -0.018, -0.029, -0.025, -0.02, -0.03}
	a, b := make([]float64, len(x)), make([]float64, len(x))
	for i, v := range x {
		a[i] = 100 + float64(i)
		b[i] = a[i] * math.Exp(v)
	}
	c, err := Paired(a, b, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var w []float64
	for i := range x {
		for j := range x {
			if i <= j {
				w = append(w, (x[i]+x[j])/2)
			}
		}
	}
	slices.Sort(w)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-12 }
	if !near(c.Lo, math.Exp(w[13])) || !near(c.Hi, math.Exp(w[64])) {
		t.Errorf("interval = [%v, %v], want [%v, %v]", c.Lo, c.Hi, math.Exp(w[13]), math.Exp(w[64]))
	}
	if !near(c.Estimate, math.Exp((w[38]+w[39])/2)) {
		t.Errorf("estimate = %v, want %v", c.Estimate, math.Exp((w[38]+w[39])/2))
	}
	if !near(c.Level, 1-2*87.0/4096) {
		t.Errorf("level = %v, want 1 − 2·87/4096", c.Level)
	}
	for i := range a {
		if c.Ratios[i] != b[i]/a[i] {
			t.Fatalf("Ratios[%d] = %v, want b/a = %v", i, c.Ratios[i], b[i]/a[i])
		}
	}
	if c.N != 12 || c.Verdict != Faster || len(c.Warnings) != 0 || c.Outliers != nil {
		t.Errorf("got N=%d verdict=%s warnings=%q outliers=%v, want 12 faster none none", c.N, c.Verdict, c.Warnings, c.Outliers)
	}
	if !(c.Lo <= c.Median && c.Median <= c.Hi && c.BracketLo <= c.Median && c.Median <= c.BracketHi) {
		t.Errorf("median %v outside [%v, %v] or brackets [%v, %v]", c.Median, c.Lo, c.Hi, c.BracketLo, c.BracketHi)
	}
	if got, want := NoiseFloor(c), (c.Hi-c.Lo)/2; got != want {
		t.Errorf("NoiseFloor = %v, want %v", got, want)
	}
}

func TestSignedRankDistributionMatchesEnumeration(t *testing.T) {
	for n := 1; n <= 12; n++ {
		count := make([]float64, n*(n+1)/2+1)
		for mask := range 1 << n {
			s := 0
			for k := range n {
				if mask&(1<<k) != 0 {
					s += k + 1
				}
			}
			count[s]++
		}
		cdf := signedRankCDF(n)
		cum := 0.0
		for tt, k := range count {
			cum += k
			if got, want := cdf(tt), cum/float64(int(1)<<n); math.Abs(got-want) > 1e-12 {
				t.Fatalf("n=%d: P(T ≤ %d) = %v, want %v", n, tt, got, want)
			}
		}
	}
}

func TestRankSumDistributionMatchesEnumeration(t *testing.T) {
	for _, nm := range [][2]int{{1, 1}, {2, 3}, {4, 4}, {5, 3}, {6, 7}} {
		n, m := nm[0], nm[1]
		count := make([]float64, n*m+1)
		total := 0.0
		// every placement of n x's among n+m positions: U = Σ over x of the
		// y's before it.
		for mask := range 1 << (n + m) {
			if popcount(mask) != n {
				continue
			}
			u, ys := 0, 0
			for p := range n + m {
				if mask&(1<<p) != 0 {
					u += ys
				} else {
					ys++
				}
			}
			count[u]++
			total++
		}
		cdf := rankSumCDF(n, m)
		cum := 0.0
		for u, k := range count {
			cum += k
			if got, want := cdf(u), cum/total; math.Abs(got-want) > 1e-12 {
				t.Fatalf("n=%d m=%d: P(U ≤ %d) = %v, want %v", n, m, u, got, want)
			}
		}
	}
	if c, _, _ := critical(rankSumCDF(12, 12), 0.025); c != 37 {
		t.Errorf("Mann–Whitney critical value for 12×12 at 95%% = %d, want 37", c)
	}
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func TestPairedCoverage(t *testing.T) {
	// Normal, spike-free log-ratios at n = 12: the interval must cover the
	// true ratio in about 95.75 % of runs, screen on.
	const trials = 2000
	covered := 0
	for s := range trials {
		a, b := pairs(uint64(1000+s), 12, 0.97, 0.01)
		c, err := Paired(a, b, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if c.Lo <= 0.97 && 0.97 <= c.Hi {
			covered++
		}
	}
	if rate := float64(covered) / trials; rate < 0.94 || rate > 0.975 {
		t.Errorf("coverage = %.3f, want ≈ 0.957", rate)
	}
}

func TestPairedTooFewPairs(t *testing.T) {
	o := DefaultOptions()
	half := func(n int) (a, b []float64) {
		a, b = make([]float64, n), make([]float64, n)
		for i := range a {
			a[i], b[i] = 10+float64(i), 5+float64(i)/2+0.01*float64(i%3)
		}
		return a, b
	}
	a, b := half(5) // n = 5 can't reach 95 %, even with MinPairs lowered
	o.MinPairs = 1
	c, err := Paired(a, b, o)
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != Undecided || !hasWarning(c.Warnings, "too few pairs to decide") {
		t.Errorf("n=5: verdict %s, warnings %q; want undecided and 'too few pairs to decide'", c.Verdict, c.Warnings)
	}
	a, b = half(6)
	if c, _ = Paired(a, b, DefaultOptions()); c.Verdict != Faster || len(c.Warnings) != 0 {
		t.Errorf("n=6: verdict %s, warnings %q; want faster, none", c.Verdict, c.Warnings)
	}
	o = DefaultOptions()
	o.MinPairs = 8
	if c, _ = Paired(a, b, o); c.Verdict != Undecided || !hasWarning(c.Warnings, "too few pairs to decide") {
		t.Errorf("n=6 < MinPairs 8: verdict %s, warnings %q; want undecided and 'too few pairs to decide'", c.Verdict, c.Warnings)
	}
	a, b = half(1)
	if c, _ = Paired(a, b, DefaultOptions()); c.Verdict != Undecided || c.Lo != c.Hi {
		t.Errorf("n=1: verdict %s, [%v, %v]; want undecided, a point", c.Verdict, c.Lo, c.Hi)
	}
}

func TestPairedSpikeScreen(t *testing.T) {
	a, b := pairs(3, 12, 0.98, 0.005)
	b[7] *= 1.35 // B spiked in round 7
	c, err := Paired(a, b, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Outliers, []int{7}) || c.Verdict != Faster || !hasWarning(c.Warnings, "left out 1 spiked pair") {
		t.Errorf("screened: outliers %v, verdict %s, warnings %q; want [7], faster, a warning", c.Outliers, c.Verdict, c.Warnings)
	}
	off := DefaultOptions()
	off.OutlierK = 0
	u, _ := Paired(a, b, off)
	if u.Outliers != nil || !(u.Hi > c.Hi) {
		t.Errorf("unscreened: outliers %v, Hi %v; want none and Hi above the screened %v", u.Outliers, u.Hi, c.Hi)
	}
	// Five of twelve far out (7 and four more): not spikes, nothing is left out.
	for _, i := range []int{0, 2, 5, 11} {
		b[i] *= 1.3
	}
	h, _ := Paired(a, b, DefaultOptions())
	if h.Outliers != nil || !hasWarning(h.Warnings, "too many to be spikes") {
		t.Errorf("heavy tails: outliers %v, warnings %q; want none left out and a warning", h.Outliers, h.Warnings)
	}
}

func TestUnpaired(t *testing.T) {
	a := []float64{100, 101, 99, 100.5, 99.5, 100.2}
	b := []float64{110, 111, 109, 110.5, 109.5, 110.2, 110.1}
	c, err := Unpaired(a, b, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != Slower || c.N != 6 || c.Ratios != nil || !math.IsNaN(c.BracketLo) {
		t.Errorf("got %+v; want slower, N = 6, no ratios, NaN brackets", c)
	}
	if !(c.Lo < 1.1 && 1.1 < c.Hi) {
		t.Errorf("interval [%v, %v] misses 1.1", c.Lo, c.Hi)
	}
	if want := Median(b) / Median(a); c.Median != want {
		t.Errorf("Median = %v, want %v", c.Median, want)
	}
}

func TestWeightedTotal(t *testing.T) {
	o := DefaultOptions()
	cells := func(ratio float64) []Weighted {
		var cs []Weighted
		for i, w := range []float64{10, 3, 0.5} {
			a, b := pairs(uint64(10+i), 12, ratio, 0.005)
			for j := range a { // cells of different size
				a[j] *= float64(i + 1)
				b[j] *= float64(i + 1)
			}
			cs = append(cs, Weighted{Weight: w, A: a, B: b})
		}
		return cs
	}
	cs := cells(0.9)
	orig := make([]Weighted, len(cs))
	for i, c := range cs {
		orig[i] = Weighted{Weight: c.Weight, A: slices.Clone(c.A), B: slices.Clone(c.B)}
	}
	tot, err := WeightedTotal(cs, o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cs, orig) {
		t.Fatal("WeightedTotal modified its cells")
	}
	var wa, wb float64
	for _, c := range cs {
		wa += c.Weight * Median(c.A)
		var r []float64
		for i := range c.A {
			r = append(r, c.B[i]/c.A[i])
		}
		wb += c.Weight * Median(c.A) * Median(r)
	}
	if tot.A != wa || tot.B != wb || tot.Ratio != wb/wa {
		t.Errorf("A, B, Ratio = %v, %v, %v; want %v, %v, %v", tot.A, tot.B, tot.Ratio, wa, wb, wb/wa)
	}
	if tot.Verdict != Faster || !(tot.Lo < 0.9 && 0.9 < tot.Hi) {
		t.Errorf("ratio 0.9: verdict %s, [%v, %v]; want faster around 0.9", tot.Verdict, tot.Lo, tot.Hi)
	}
	again, _ := WeightedTotal(cs, o)
	if !reflect.DeepEqual(tot, again) {
		t.Error("WeightedTotal not deterministic with the same seed")
	}
	o2 := o
	o2.Seed++
	if other, _ := WeightedTotal(cs, o2); other.Lo == tot.Lo && other.Hi == tot.Hi {
		t.Error("a different seed gave the same interval")
	}
	if aa, _ := WeightedTotal(cells(1), o); aa.Verdict != Tie {
		t.Errorf("ratio 1: verdict %s [%v, %v], want tie", aa.Verdict, aa.Lo, aa.Hi)
	}

	few := append(cells(0.9), Weighted{Weight: 1, A: []float64{1, 2, 3}, B: []float64{1, 2, 3}})
	if f, _ := WeightedTotal(few, o); f.Verdict != Undecided || !hasWarning(f.Warnings, "too few pairs to decide") {
		t.Errorf("cell of 3 pairs: verdict %s, warnings %q; want undecided and a warning", f.Verdict, f.Warnings)
	}
	few[len(few)-1].Weight = 0 // a cell that carries no weight doesn't count
	if f, _ := WeightedTotal(few, o); f.Verdict != Faster || len(f.Warnings) != 0 {
		t.Errorf("weightless cell of 3 pairs: verdict %s, warnings %q; want faster, none", f.Verdict, f.Warnings)
	}

	ok := []float64{1, 2}
	for name, bad := range map[string][]Weighted{
		"no cells":        nil,
		"negative weight": {{Weight: -1, A: ok, B: ok}},
		"NaN weight":      {{Weight: math.NaN(), A: ok, B: ok}},
		"all zero":        {{Weight: 0, A: ok, B: ok}},
		"B longer than A": {{Weight: 1, A: []float64{1}, B: ok}},
		"empty":           {{Weight: 1}},
		"bad sample":      {{Weight: 1, A: ok, B: []float64{1, -2}}},
	} {
		if _, err := WeightedTotal(bad, o); err == nil {
			t.Errorf("WeightedTotal %s: no error", name)
		}
	}
	o.Resamples = 0
	if _, err := WeightedTotal(cells(1), o); err == nil {
		t.Error("WeightedTotal with 0 resamples: no error")
	}
}

// TestWeightedTotalCancelsDrift: B is 6 % slower than A; a slow ±40 %
// drift moves both together, and each side has 3 % noise of its own, so the
// median of a and the median of b come from different rounds. Only a total
// built from per-round ratios sees through the drift and says slower.
func TestWeightedTotalCancelsDrift(t *testing.T) {
	var cs []Weighted
	for c := 0; c < 3; c++ {
		w := Weighted{Weight: float64(10 * (c + 1))}
		for r := 0; r < 12; r++ {
			drift := 1 + 0.4*math.Sin(float64(r)/3+float64(c))
			base := 100 * float64(c+1) * drift
			w.A = append(w.A, base*(1+0.03*math.Sin(float64(11*r+5*c))))
			w.B = append(w.B, 1.06*base*(1+0.03*math.Cos(float64(7*r+2*c))))
		}
		cs = append(cs, w)
	}
	tot, err := WeightedTotal(cs, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if tot.Verdict != Slower || tot.Lo < 1.02 || tot.Hi > 1.10 {
		t.Fatalf("total %+v, want slower with an interval around 1.06", tot)
	}
}

func TestWalshSelectMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 2, 3, 7, 12, 40, 150, 401} {
		for trial := range 4 {
			x := make([]float64, n)
			for i := range x {
				switch trial {
				case 0:
					x[i] = rng.NormFloat64()
				case 1: // many ties
					x[i] = float64(rng.IntN(5)) / 4
				case 2: // all equal
					x[i] = 0.25
				default: // heavy tails
					x[i] = rng.NormFloat64() / (0.05 + rng.Float64())
				}
			}
			var w []float64
			for i := range x {
				for j := i; j < n; j++ {
					w = append(w, (x[i]+x[j])/2)
				}
			}
			slices.Sort(w)
			s := slices.Sorted(slices.Values(x))
			for _, k := range []int{0, 1, len(w) / 3, len(w) / 2, len(w) - 2, len(w) - 1} {
				if k < 0 || k >= len(w) {
					continue
				}
				if got := walshSelect(s, k); got != w[k] {
					t.Fatalf("n=%d trial %d: walshSelect(%d) = %v, want %v", n, trial, k, got, w[k])
				}
				if c := walshCount(s, w[k]); c <= k || (k+1 < len(w) && w[k+1] > w[k] && c != k+1) {
					t.Fatalf("n=%d trial %d: walshCount(w[%d]) = %d", n, trial, k, c)
				}
			}
		}
	}
}
