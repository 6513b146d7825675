package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// The simulation of issue 8: the sequential rule on a shared 2-core machine.
//
// Model. A run is up to R rounds of the interleaved protocol; round r times
// A and B one after the other (order ABBA by round, as package measure
// does), so the run has 2R sample slots. Every sample is
//
//	t = base · ratio · d_s · pos · exp(σ·Z) · spike
//
// where d_s is the machine's slowdown in slot s, a smooth swing plus wander
// that spans up to ±40 % over the run and moves between the two samples of a
// round too:
//
//	d_s = clamp(1 + 0.35·sin(2π·f·s/(2R) + φ) + W_s, 0.6, 1.4),
//
// f ~ U[0.5, 3] cycles per run, φ ~ U[0, 2π), W a random walk with steps
// N(0, (0.1/√(2R))²); pos = 1 + Position for the first sample of a round (a
// cold start); σ is the per-sample log-normal noise, and spike = U[SpikeLo,
// SpikeHi] with probability SpikeP (another tenant took the core), else 1.
//
// The noise of this machine (docs/rounds.md): 130 cells of A/A runs of the
// CPU reference tile (64_128_2, two threads on two shared cores) gave per-
// pair log-ratios with a robust SD (1.4826·MAD) of 0.049–0.50, median 0.14,
// upper quartile 0.18; 1.5 % (median) to 9 % of pairs lay beyond 5 robust
// SDs; the first sample of a round was about 2 % slower than the second.
// "machine" is the median cell: σ = 0.10 per sample (a log-ratio robust SD
// of about 0.14), 5 % of samples spiked by 20–100 %, a 2 % position effect;
// "noisy" is the upper quartile (σ = 0.125), "heavy" twice the median.
type seqNoise struct {
	Name             string
	Sigma            float64
	SpikeP           float64
	SpikeLo, SpikeHi float64
	Position         float64
	Swing, Walk      float64
}

var (
	quietNoise   = seqNoise{Name: "quiet", Sigma: 0.02, SpikeP: 0.03, SpikeLo: 1.2, SpikeHi: 1.5, Position: 0.01, Swing: 0.35, Walk: 0.1}
	machineNoise = seqNoise{Name: "machine", Sigma: 0.10, SpikeP: 0.05, SpikeLo: 1.2, SpikeHi: 2.0, Position: 0.02, Swing: 0.35, Walk: 0.1}
	noisyNoise   = seqNoise{Name: "noisy", Sigma: 0.125, SpikeP: 0.05, SpikeLo: 1.2, SpikeHi: 2.0, Position: 0.02, Swing: 0.35, Walk: 0.1}
	heavyNoise   = seqNoise{Name: "heavy", Sigma: 0.20, SpikeP: 0.05, SpikeLo: 1.2, SpikeHi: 2.0, Position: 0.02, Swing: 0.35, Walk: 0.1}
)

// run draws R paired rounds with true ratio B/A = ratio.
func (m seqNoise) run(rng *rand.Rand, ratio float64, rounds int) (a, b []float64) {
	slots := 2 * rounds
	f := 0.5 + 2.5*rng.Float64()
	phi := 2 * math.Pi * rng.Float64()
	step := m.Walk / math.Sqrt(float64(slots))
	w := 0.0
	level := func(s int) float64 {
		w += step * rng.NormFloat64()
		return min(max(1+m.Swing*math.Sin(2*math.Pi*f*float64(s)/float64(slots)+phi)+w, 0.6), 1.4)
	}
	sample := func(r float64, d float64, first bool) float64 {
		t := 100 * r * d * math.Exp(m.Sigma*rng.NormFloat64())
		if first {
			t *= 1 + m.Position
		}
		if rng.Float64() < m.SpikeP {
			t *= m.SpikeLo + (m.SpikeHi-m.SpikeLo)*rng.Float64()
		}
		return t
	}
	a, b = make([]float64, rounds), make([]float64, rounds)
	for r := range rounds {
		d0, d1 := level(2*r), level(2*r+1)
		if r%4 == 0 || r%4 == 3 { // A first (measure.Order for two candidates)
			a[r], b[r] = sample(1, d0, true), sample(ratio, d1, false)
		} else {
			b[r], a[r] = sample(ratio, d0, true), sample(1, d1, false)
		}
	}
	return a, b
}

// seqOutcome is the result of many trials of one scenario.
type seqOutcome struct {
	rate             map[Verdict]float64
	meanPairs        float64
	medianPairs      int
	p90Pairs         int
	trials, maxPairs int
}

// simulateSequential runs trials seeded trials of the sequential rule on
// runs of at most maxPairs rounds (the budget) at the true ratio.
func simulateSequential(t testing.TB, m seqNoise, ratio float64, maxPairs, trials int, o SequentialOptions) seqOutcome {
	t.Helper()
	count := map[Verdict]int{}
	pairs := make([]int, 0, trials)
	sum := 0
	for trial := range trials {
		rng := rand.New(rand.NewPCG(uint64(trial), math.Float64bits(ratio)^0x5e9))
		a, b := m.run(rng, ratio, maxPairs)
		c, err := Sequential(a, b, o)
		if err != nil {
			t.Fatal(err)
		}
		count[c.Verdict]++
		pairs = append(pairs, c.Pairs)
		sum += c.Pairs
	}
	out := seqOutcome{rate: map[Verdict]float64{}, trials: trials, maxPairs: maxPairs}
	for v, k := range count {
		out.rate[v] = float64(k) / float64(trials)
	}
	sortInts(pairs)
	out.meanPairs = float64(sum) / float64(trials)
	out.medianPairs = pairs[len(pairs)/2]
	out.p90Pairs = pairs[len(pairs)*9/10]
	return out
}

func sortInts(xs []int) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// TestSequentialSimulation asserts the rule's two promises under the noise
// measured on the 2-core machine (machineNoise), with a budget of 3072
// pairs: on A/A with ±40 % drift and spikes at most 5 % of comparisons end
// in a false verdict (faster or slower), and a 3 % change either way is
// found in at least 90 % of runs with at most 5 % wrong verdicts. On quiet
// noise an A/A must end in tie (the rule can say "equal within 1 %").
func TestSequentialSimulation(t *testing.T) {
	const trials = 300
	const budget = 3072
	o := DefaultSequentialOptions()
	aa := simulateSequential(t, machineNoise, 1.00, budget, trials, o)
	slow := simulateSequential(t, machineNoise, 1.03, budget, trials, o)
	fast := simulateSequential(t, machineNoise, 1/1.03, budget, trials, o)
	quiet := simulateSequential(t, quietNoise, 1.00, budget, trials, o)
	t.Logf("A/A:      %v, pairs median %d", aa.rate, aa.medianPairs)
	t.Logf("+3%%:      %v, pairs median %d", slow.rate, slow.medianPairs)
	t.Logf("-3%%:      %v, pairs median %d", fast.rate, fast.medianPairs)
	t.Logf("A/A quiet: %v, pairs median %d", quiet.rate, quiet.medianPairs)
	if f := aa.rate[Faster] + aa.rate[Slower]; f > 0.05 {
		t.Errorf("A/A false-verdict rate %.3f, want ≤ 0.05", f)
	}
	if slow.rate[Slower] < 0.9 || slow.rate[Faster]+slow.rate[Tie] > 0.05 {
		t.Errorf("3%% slower: %v, want slower ≥ 0.9 and wrong verdicts ≤ 0.05", slow.rate)
	}
	if fast.rate[Faster] < 0.9 || fast.rate[Slower]+fast.rate[Tie] > 0.05 {
		t.Errorf("3%% faster: %v, want faster ≥ 0.9 and wrong verdicts ≤ 0.05", fast.rate)
	}
	if quiet.rate[Tie] < 0.95 {
		t.Errorf("quiet A/A: %v, want tie ≥ 0.95", quiet.rate)
	}
}

// TestSequentialSimulationTable prints the table of docs/rounds.md. It runs
// only with TILEFIT_SIM_TABLE=1 (it takes about a minute):
//
//	TILEFIT_SIM_TABLE=1 CGO_ENABLED=0 go test ./stats -run TestSequentialSimulationTable -v
func TestSequentialSimulationTable(t *testing.T) {
	if os.Getenv("TILEFIT_SIM_TABLE") == "" {
		t.Skip("set TILEFIT_SIM_TABLE=1 to print the simulation table of docs/rounds.md")
	}
	const trials = 1000
	o := DefaultSequentialOptions()
	var sb strings.Builder
	fmt.Fprintln(&sb, "| noise | true B/A | budget (pairs) | faster | slower | tie | undecided | false | pairs: mean | median | 90th pct |")
	fmt.Fprintln(&sb, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, m := range []seqNoise{quietNoise, machineNoise, noisyNoise, heavyNoise} {
		for _, budget := range []int{1536, 6144} {
			for _, ratio := range []float64{1.00, 1.005, 1.01, 1.02, 1.03, 1 / 1.03, 1.05, 1.10} {
				r := simulateSequential(t, m, ratio, budget, trials, o)
				fmt.Fprintf(&sb, "| %s σ=%.3f | %.3f | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.0f | %d | %d |\n",
					m.Name, m.Sigma, ratio, budget, r.rate[Faster], r.rate[Slower], r.rate[Tie], r.rate[Undecided],
					falseRate(r.rate, ratio, o.Options), r.meanPairs, r.medianPairs, r.p90Pairs)
			}
		}
	}
	t.Log("\n" + sb.String())
}

// falseRate is the fraction of verdicts that are wrong at the true ratio:
// faster unless ratio < 1 − MinGain, slower unless ratio > 1 + MaxRegress,
// tie unless ratio is inside the band.
func falseRate(rate map[Verdict]float64, ratio float64, o Options) float64 {
	f := 0.0
	if !(ratio < 1-o.MinGain) {
		f += rate[Faster]
	}
	if !(ratio > 1+o.MaxRegress) {
		f += rate[Slower]
	}
	if !(ratio >= 1-o.MinGain && ratio <= 1+o.MaxRegress) {
		f += rate[Tie]
	}
	return f
}
