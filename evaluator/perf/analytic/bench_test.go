package analytic

import (
	"testing"

	"splitplan/arch"
	"splitplan/evaluator/perf"
	"splitplan/hw"
)

var sink float64

// benchModels returns the analytic model of bloom-176b on 8 H100s (the
// roofline and the kernel physics) and the profiled (default) model of
// the same pair, for comparison.
func benchModels(b *testing.B) (analytic, kernels, profiled perf.IterationModel) {
	a, err := arch.Lookup("bloom-176b")
	if err != nil {
		b.Fatal(err)
	}
	g, err := hw.Lookup("h100")
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(Config{Arch: a, GPU: g, TP: 8, Eff: DefaultEfficiency})
	if err != nil {
		b.Fatal(err)
	}
	k, err := New(Config{Arch: a, GPU: g, TP: 8, Eff: Efficiency{Kernels: true, OverheadS: 1e-3, LayerOverheadS: 20e-6, SequenceOverheadS: 20e-6}})
	if err != nil {
		b.Fatal(err)
	}
	p, err := perf.Builtin().Lookup("bloom-176b", "h100-80gb", 8)
	if err != nil {
		b.Fatal(err)
	}
	return m, k, p.Model()
}

func BenchmarkPromptTime(b *testing.B) {
	an, kn, pr := benchModels(b)
	for _, c := range []struct {
		name string
		m    perf.IterationModel
	}{{"analytic", an}, {"kernels", kn}, {"profiled", pr}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				y, _ := c.m.PromptTime(100 + i&4095)
				sink += y
				i++
			}
		})
	}
}

func BenchmarkDecodeTime(b *testing.B) {
	an, kn, pr := benchModels(b)
	for _, c := range []struct {
		name string
		m    perf.IterationModel
	}{{"analytic", an}, {"kernels", kn}, {"profiled", pr}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				batch := 1 + i&127
				y, _ := c.m.DecodeTime(batch, int64(batch)*int64(600+i&2047))
				sink += y
				i++
			}
		})
	}
}

func BenchmarkMixedTimeMoE(b *testing.B) {
	a, _ := arch.Lookup("deepseek-v3")
	g, _ := hw.Lookup("b200")
	for _, eff := range []Efficiency{DefaultEfficiency, {Kernels: true}} {
		m, err := New(Config{Arch: a, GPU: g, TP: 8, Weights: arch.FP8, KV: arch.FP8, Eff: eff})
		if err != nil {
			b.Fatal(err)
		}
		name := "roofline"
		if eff.Kernels {
			name = "kernels"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				batch := 1 + i&127
				y, _ := m.MixedTime(512+i&1023, batch, int64(batch)*int64(600+i&2047))
				sink += y
				i++
			}
		})
	}
}
