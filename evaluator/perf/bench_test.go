package perf

import "testing"

func benchModel(b *testing.B, compat bool) IterationModel {
	t := Builtin()
	p, err := t.Lookup("bloom-176b", "h100-80gb", 8)
	if err != nil {
		b.Fatal(err)
	}
	return bothModels(p)[compatIndex(compat)]
}

var sink float64

func BenchmarkPromptTime(b *testing.B) {
	for _, mode := range []struct {
		name   string
		compat bool
	}{{"default", false}, {"compat", true}} {
		b.Run(mode.name, func(b *testing.B) {
			m := benchModel(b, mode.compat)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				y, _ := m.PromptTime(100 + i&4095)
				sink += y
				i++
			}
		})
	}
}

func BenchmarkDecodeTime(b *testing.B) {
	for _, mode := range []struct {
		name   string
		compat bool
	}{{"default", false}, {"compat", true}} {
		b.Run(mode.name, func(b *testing.B) {
			m := benchModel(b, mode.compat)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				batch := 1 + i&127
				y, _ := m.DecodeTime(batch, int64(batch)*int64(600+i&2047))
				sink += y
				i++
			}
		})
	}
}

func BenchmarkCurveAt(b *testing.B) {
	c := Builtin().Pairs[0].PromptCurve()
	b.ReportAllocs()
	x := 0.0
	for b.Loop() {
		y, _ := c.At(x)
		sink += y
		x += 7
		if x > 40000 {
			x = 0
		}
	}
}
