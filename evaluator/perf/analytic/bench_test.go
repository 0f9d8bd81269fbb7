package analytic

import (
	"testing"

	"splitplan/arch"
	"splitplan/evaluator/perf"
	"splitplan/hw"
)

var sink float64

// benchModels returns the analytic model of bloom-176b on 8 H100s and the
// profiled (default) model of the same pair, for comparison.
func benchModels(b *testing.B) (analytic, profiled perf.IterationModel) {
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
	p, err := perf.Builtin().Lookup("bloom-176b", "h100-80gb", 8)
	if err != nil {
		b.Fatal(err)
	}
	return m, p.Model(false)
}

func BenchmarkPromptTime(b *testing.B) {
	an, pr := benchModels(b)
	for _, c := range []struct {
		name string
		m    perf.IterationModel
	}{{"analytic", an}, {"profiled", pr}} {
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
	an, pr := benchModels(b)
	for _, c := range []struct {
		name string
		m    perf.IterationModel
	}{{"analytic", an}, {"profiled", pr}} {
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
	m, err := New(Config{Arch: a, GPU: g, TP: 8, Weights: arch.FP8, KV: arch.FP8, Eff: DefaultEfficiency})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		batch := 1 + i&127
		y, _ := m.MixedTime(512+i&1023, batch, int64(batch)*int64(600+i&2047))
		sink += y
		i++
	}
}
