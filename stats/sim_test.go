package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The simulation of issue 4: two synthetic kernels on a shared machine whose
// slowdown drifts by up to ±40 % over a run, 12 paired rounds, 200 seeded
// trials per scenario.
//
// Model. A run takes 24 sample slots (~1 ms each). The machine's slowdown is
// a level d_r per window of two consecutive slots (one round of the
// interleaved protocol):
//
//	d_r = clamp(1 + 0.35·sin(2π·f·r/12 + φ) + W_r, 0.6, 1.4)
//
// f ~ U[0.5, 1.5] cycles per run, φ ~ U[0, 2π), W a random walk with steps
// N(0, 0.02²): a smooth swing plus wander, spanning up to ±40 %. The level
// moves between windows and holds within one; what the machine does
// differently between the two samples of a window is in the independent
// per-sample noise. On top, every sample gets
//
//	t = base · d · exp(σ·Z) · spike,  σ = 0.5 %, Z ~ N(0, 1),
//	spike = 1 + U[0.2, 0.5] with probability 3 %, else 1.
//
// The interleaved protocol (package measure) times A and B in the same
// window, round r in window r, order alternating by round (which in this
// model changes nothing). The naive protocol of throw-away benchmarks times
// A's 12 samples first (windows 0..5), then B's (windows 6..11).
//
// Why σ = 0.5 % and not 1 %: "faster" needs the whole interval below 0.99
// while the truth is 0.98, so the interval's half-width plus the estimate's
// error must stay under 1 %. With σ per sample the log-ratio's SD is σ·√2;
// at n = 12 even an oracle t interval on spike-free normal data certifies
// the 2 % gain in only ~99 % of trials at σ = 0.5 %, ~81 % at 0.75 % and
// ~54 % at 1 % (measured with this model). That limit is information, not
// method: at σ = 1 % a 2 % gain needs more rounds. What the method does
// control is the spikes: without the screen (OutlierK = 0) the signed-rank
// interval alone gives faster in 86.5 % of trials here, the seeds' brackets
// (sign-test interval) 88.5 %; with it 98 %.
type simModel struct {
	swing, walk  float64 // sinusoid amplitude, random-walk step SD
	noise        float64 // per-sample log-normal SD
	spikeP       float64 // probability a sample is spiked
	spikeLo, Hi  float64 // spike size range (relative)
	rounds, base float64
}

var model = simModel{swing: 0.35, walk: 0.02, noise: 0.005, spikeP: 0.03, spikeLo: 0.2, Hi: 0.5, rounds: 12, base: 100}

const simTrials = 200

// levels draws the window levels d_0..d_{rounds−1}.
func (m simModel) levels(rng *rand.Rand) []float64 {
	n := int(m.rounds)
	f := 0.5 + rng.Float64()
	phi := 2 * math.Pi * rng.Float64()
	d := make([]float64, n)
	w := 0.0
	for r := range d {
		w += m.walk * rng.NormFloat64()
		d[r] = min(max(1+m.swing*math.Sin(2*math.Pi*f*float64(r)/m.rounds+phi)+w, 0.6), 1.4)
	}
	return d
}

// sample is one timed sample of a kernel of true time base·ratio at level d.
func (m simModel) sample(rng *rand.Rand, ratio, d float64) float64 {
	t := m.base * ratio * d * math.Exp(m.noise*rng.NormFloat64())
	if rng.Float64() < m.spikeP {
		t *= 1 + m.spikeLo + (m.Hi-m.spikeLo)*rng.Float64()
	}
	return t
}

// interleaved returns paired samples: round r of A and B in window r, order
// alternating.
func (m simModel) interleaved(rng *rand.Rand, ratio float64) (a, b []float64) {
	d := m.levels(rng)
	a, b = make([]float64, len(d)), make([]float64, len(d))
	for r, lv := range d {
		if r%2 == 0 {
			a[r] = m.sample(rng, 1, lv)
			b[r] = m.sample(rng, ratio, lv)
		} else {
			b[r] = m.sample(rng, ratio, lv)
			a[r] = m.sample(rng, 1, lv)
		}
	}
	return a, b
}

// naive returns A's samples taken first (two per window over the first
// half of the run), then B's (second half).
func (m simModel) naive(rng *rand.Rand, ratio float64) (a, b []float64) {
	d := m.levels(rng)
	n := len(d)
	a, b = make([]float64, n), make([]float64, n)
	for k := range n {
		a[k] = m.sample(rng, 1, d[k/2])
	}
	for k := range n {
		b[k] = m.sample(rng, ratio, d[n/2+k/2])
	}
	return a, b
}

// rates runs simTrials seeded trials and returns the fraction of each
// verdict.
func rates(t *testing.T, gen func(*rand.Rand) (a, b []float64), analyse func(a, b []float64, o Options) (Comparison, error), o Options) map[Verdict]float64 {
	t.Helper()
	count := map[Verdict]int{}
	for trial := range simTrials {
		rng := rand.New(rand.NewPCG(uint64(trial), 0x5eed))
		a, b := gen(rng)
		c, err := analyse(a, b, o)
		if err != nil {
			t.Fatal(err)
		}
		count[c.Verdict]++
	}
	got := map[Verdict]float64{}
	for v, k := range count {
		got[v] = float64(k) / simTrials
	}
	return got
}

func TestSimulationPairedSurvivesDrift(t *testing.T) {
	o := DefaultOptions()
	tie := rates(t, func(r *rand.Rand) ([]float64, []float64) { return model.interleaved(r, 1.00) }, Paired, o)
	fast := rates(t, func(r *rand.Rand) ([]float64, []float64) { return model.interleaved(r, 0.98) }, Paired, o)
	t.Logf("paired, true ratio 1.00: %v", tie)
	t.Logf("paired, true ratio 0.98: %v", fast)
	if tie[Tie] < 0.95 {
		t.Errorf("paired tie rate at ratio 1.00 = %.3f, want ≥ 0.95", tie[Tie])
	}
	if fast[Faster] < 0.95 {
		t.Errorf("paired faster rate at ratio 0.98 = %.3f, want ≥ 0.95", fast[Faster])
	}
}

func TestSimulationUnpairedMissesSpeedup(t *testing.T) {
	// The same interleaved data, analysed ignoring the pairing: drift widens
	// the interval past the 2 % gain.
	o := DefaultOptions()
	got := rates(t, func(r *rand.Rand) ([]float64, []float64) { return model.interleaved(r, 0.98) }, Unpaired, o)
	t.Logf("unpaired interleaved, true ratio 0.98: %v", got)
	if miss := 1 - got[Faster]; miss < 0.95 {
		t.Errorf("unpaired analysis missed the 2%% speedup in %.3f of trials, want ≥ 0.95", miss)
	}
}

func TestSimulationNaiveProtocolFailsTie(t *testing.T) {
	// A's 12 samples, then B's, on the same drifting machine: drift between
	// the halves reads as a difference between the kernels.
	o := DefaultOptions()
	got := rates(t, func(r *rand.Rand) ([]float64, []float64) { return model.naive(r, 1.00) }, Unpaired, o)
	t.Logf("naive sequential, true ratio 1.00: %v", got)
	if wrong := got[Faster] + got[Slower]; wrong <= 0.05 {
		t.Errorf("naive protocol gave false verdicts in %.3f of trials, want > 0.05", wrong)
	}
}
