// Command genkernel fits the kernel layer (package kernel) on the H100
// kernel measurements and writes fitted.go: go generate in
// evaluator/perf/kernel, with ../shared beside the repository.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"splitplan/evaluator/perf/kernel"
	"splitplan/hw"
)

// must returns v, or ends the generator on err.
func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}

func main() {
	dir := flag.String("data", "../../../../shared/data/gpu-kernels/h100", "directory of kernels.csv and mixed.csv")
	moeDir := "../../../data/moe-kernels/"
	moeH100 := flag.String("moe-h100", moeDir+"moe_h100.csv.gz", "MoE kernel measurements on the H100 (Hopper's kernels fitted)")
	moeH200 := flag.String("moe-h200", moeDir+"moe_h200.csv.gz", "MoE kernel measurements on the H200 (held out)")
	moeB200 := flag.String("moe-b200", moeDir+"moe_b200.csv.gz", "MoE kernel measurements on the B200 (Blackwell's kernels fitted)")
	moeGB200 := flag.String("moe-gb200", moeDir+"moe_gb200.csv.gz", "MoE kernel measurements on the GB200 (held out)")
	gdnDir := "../../../data/gdn-kernels/"
	gdnFit := flag.String("gdn", gdnDir+"gdn_h100.csv.gz", "Gated DeltaNet kernel measurements on the H100 (Hopper's constants fitted; the H200's beside it held out)")
	gdnBlackwell := flag.String("gdn-blackwell", gdnDir+"gdn_b200.csv.gz", "Gated DeltaNet kernel measurements on the B200 (Blackwell's constants fitted; the GB200's beside it held out)")
	runs := flag.String("runs", "../../../data/gpu-runs", "tools/gpu-profile's runs on the H100 (experts fitted) and the H200 (held out)")
	out := flag.String("out", "fitted.go", "output file")
	flag.Parse()
	var rows []kernel.Row
	for _, f := range []string{"kernels.csv", "mixed.csv"} {
		rows = append(rows, must(kernel.ReadFile(filepath.Join(*dir, f)))...)
	}
	for _, r := range rows {
		if r.IsIteration() && !slices.Contains(kernel.DefaultFitModels, r.Model) {
			log.Fatalf("line %d: model %s is not in kernel.DefaultFitModels %v: add it there", r.Line, r.Model, kernel.DefaultFitModels)
		}
	}
	g := must(hw.Lookup(kernel.DefaultFitGPU))
	p := must(kernel.Fit(rows, g, kernel.Start, kernel.InFit))
	// The engine-free layer's routed experts: the profiler's grouped GEMMs
	// fitted on its H100 MoE runs, the dense constants frozen, checked on
	// its H200 runs.
	readRuns := func(gpu string) map[string][]kernel.Row {
		m := map[string][]kernel.Row{}
		for _, run := range kernel.ProfiledExpertRuns {
			m[run] = must(kernel.ReadFile(filepath.Join(*runs, gpu, run, "kernels.csv")))
		}
		return m
	}
	h100Runs, h200Runs := readRuns("h100"), readRuns("h200")
	var profiled []kernel.Row
	for _, run := range kernel.ProfiledExpertRuns {
		profiled = append(profiled, h100Runs[run]...)
	}
	pe := must(kernel.FitExperts(p, g, profiled))
	h200 := must(hw.Lookup("h200_sxm"))
	runLine := func(gpu hw.GPU, rows []kernel.Row) kernel.Summary {
		return kernel.Validate(pe, gpu, rows, func(kernel.Row) bool { return false }).ByKind[kernel.Pooled]
	}
	// The MoE kernels: Hopper's fitted on the H100 file and checked on the
	// H200 one; Blackwell's own fitted on the B200 file and checked on the
	// GB200 one; Hopper's kernels measured on the B200 are checked,
	// carried, there.
	files := map[string][]kernel.MoERow{}
	for _, f := range []string{*moeH100, *moeH200, *moeB200, *moeGB200} {
		files[f] = must(kernel.ReadMoEFile(f))
	}
	gpus := map[string]hw.GPU{}
	for _, n := range []string{"h200_sxm", "b200_sxm", "gb200"} {
		gpus[n] = must(hw.Lookup(n))
	}
	pick := func(rows []kernel.MoERow, keep func(kernel.MoERow) bool) []kernel.MoERow {
		return slices.DeleteFunc(slices.Clone(rows), func(r kernel.MoERow) bool { return !keep(r) })
	}
	blackwell := func(r kernel.MoERow) bool { return r.Family().Blackwell() }
	hopper := func(r kernel.MoERow) bool { return !r.Family().Blackwell() }
	fit := func(g hw.GPU, rows []kernel.MoERow) map[kernel.MoEKernel]kernel.ExpertKernelParams {
		return must(kernel.FitExpertKernels(p, g, rows))
	}
	ks := fit(g, files[*moeH100])
	for f, e := range fit(gpus["b200_sxm"], pick(files[*moeB200], blackwell)) {
		ks[f] = e
	}
	ks[kernel.VLLMMarlinBlackwell] = fit(gpus["b200_sxm"], pick(files[*moeB200], kernel.MoERow.BlackwellMarlin))[kernel.VLLMMarlin]
	check := func(g hw.GPU, ks map[kernel.MoEKernel]kernel.ExpertKernelParams, rows []kernel.MoERow) kernel.MoEValidation {
		return kernel.ValidateExpertKernels(p, g, ks, rows)
	}
	hIn, hHeld := check(g, ks, files[*moeH100]), check(gpus["h200_sxm"], ks, files[*moeH200])
	bIn, bHeld := check(gpus["b200_sxm"], ks, pick(files[*moeB200], blackwell)), check(gpus["gb200"], ks, pick(files[*moeGB200], blackwell))
	carried := check(gpus["b200_sxm"], ks, pick(files[*moeB200], hopper))
	onBlackwell := kernel.KernelsOn(ks, gpus["b200_sxm"])
	mIn := check(gpus["b200_sxm"], onBlackwell, pick(files[*moeB200], kernel.MoERow.BlackwellMarlin))
	mHeld := check(gpus["gb200"], onBlackwell, pick(files[*moeGB200], kernel.MoERow.BlackwellMarlin))
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "// Code generated by internal/genkernel; DO NOT EDIT.\n\npackage kernel\n\n")
	fmt.Fprintf(&buf, "// Default is the kernel layer fitted on the H100 measurements of\n// ../shared/data/gpu-kernels/h100 (kernels.csv, mixed.csv), on the rows\n// InFit selects; the others are held out (perf validate --kernels).\n")
	fmt.Fprintf(&buf, "var Default = Params{GEMMCompute: %.6g, GEMMComputeFP8: %.6g, GEMMMemory: %.6g, Blend: %.6g, GEMMLatencyS: %.6g,\n\tAttnCompute: %.6g, KVMemory: %.6g, LayerLatencyS: %.6g, IterationS: %.6g}\n",
		p.GEMMCompute, p.GEMMComputeFP8, p.GEMMMemory, p.Blend, p.GEMMLatencyS, p.AttnCompute, p.KVMemory, p.LayerLatencyS, p.IterationS)
	fmt.Fprintf(&buf, "\n// ProfiledExperts are the routed experts' constants of the engine-free\n// layer (--engine none, WithProfiledExperts): tools/gpu-profile's grouped\n// GEMMs (torch._grouped_mm) fitted on its four H100 MoE runs\n// (data/gpu-runs/h100, ProfiledExpertRuns), the dense constants above\n// frozen. Median and P90 absolute error over each run's rows, the H100's\n// in the fit, the H200's held out (DeepSeek-R1's latent attention is not\n// fitted):\n//\n")
	for _, run := range kernel.ProfiledExpertRuns {
		a, b := runLine(g, h100Runs[run]), runLine(h200, h200Runs[run])
		fmt.Fprintf(&buf, "//\t%-14s H100 %3d rows %5.1f%% / %5.1f%%   H200 %3d rows %5.1f%% / %5.1f%%\n", run, a.N, a.Median, a.P90, b.N, b.Median, b.P90)
	}
	fmt.Fprintf(&buf, "var ProfiledExperts = Experts{Compute: %.6g, LayerS: %.6g, TileRows: %.6g}\n", pe.ExpertCompute, pe.ExpertLayerS, pe.ExpertTileRows)
	fmt.Fprintf(&buf, "\n// ExpertKernels are the serving engines' MoE kernels (AIConfigurator's\n// measurements, data/moe-kernels/README.md), the dense constants above\n// frozen: Hopper's fitted on the H100 and held out on the H200, Blackwell's\n// own fitted on the B200 and held out on the GB200. Median and P90\n// absolute error, in the fit and held out:\n//\n")
	fams := make([]kernel.MoEKernel, 0, len(ks))
	for f := range ks {
		fams = append(fams, f)
	}
	slices.Sort(fams)
	line := func(name string, a, b kernel.Summary) {
		fmt.Fprintf(&buf, "//\t%-26s %5d rows %5.1f%% / %5.1f%%   %5d rows %5.1f%% / %5.1f%%\n", name, a.N, a.Median, a.P90, b.N, b.Median, b.P90)
	}
	pooled := kernel.MoEKernel(kernel.Pooled)
	for _, f := range fams {
		if f == kernel.VLLMMarlinBlackwell {
			line(string(f)+" (int4)", mIn[kernel.VLLMMarlin], mHeld[kernel.VLLMMarlin])
		} else if f.Blackwell() {
			line(string(f), bIn[f], bHeld[f])
		} else {
			line(string(f), hIn[f], hHeld[f])
		}
	}
	line("pooled, H100 / H200", hIn[pooled], hHeld[pooled])
	line("pooled, B200 / GB200", bIn[pooled], bHeld[pooled])
	fmt.Fprintf(&buf, "//\n// Hopper's kernels measured on the B200 too, carried there by the spec\n// sheet (not fitted there). Of these Blackwell runs TensorRT-LLM's bf16\n// CUTLASS (ExpertKernel); SGLang's Triton kernels show how far a Hopper\n// kernel's fraction is from Blackwell's (SGLang runs FlashInfer's there):\n//\n")
	for _, f := range fams {
		if c := carried[f]; c.N > 0 {
			fmt.Fprintf(&buf, "//\t%-26s %5d rows %5.1f%% / %5.1f%%\n", f, c.N, c.Median, c.P90)
		}
	}
	// The Gated DeltaNet layers' kernels: Hopper's constants fitted on the
	// H100, Blackwell's on the B200, the others carried by the spec sheet
	// within the generation, every GPU bounded by the ones it dominates
	// (kernel.GDNTime), and checked.
	gdn := must(kernel.FitGDN(g, must(kernel.ReadGDNFile(*gdnFit))))
	gdnB := must(kernel.FitGDN(must(hw.Lookup("b200_sxm")), must(kernel.ReadGDNFile(*gdnBlackwell))))
	kernel.GDN, kernel.GDNBlackwell = gdn, gdnB // the rule's time with the new constants
	gdnLines := ""
	for _, n := range []string{"h100_sxm", "h200_sxm", "b200_sxm", "gb200"} {
		gg := must(hw.Lookup(n))
		file := filepath.Join(filepath.Dir(*gdnFit), "gdn_"+strings.TrimSuffix(n, "_sxm")+".csv.gz")
		v := kernel.ValidateGDN(gg, must(kernel.ReadGDNFile(file)))
		set := "held out"
		if n == kernel.DefaultFitGPU || n == "b200_sxm" {
			set = "in the fit"
		}
		gdnLines += fmt.Sprintf("//\t%-9s %-10s prompts %4d rows %5.1f%% / %5.1f%%   decodes %3d rows %5.1f%% / %5.1f%%\n", n, set, v.Prefill.N, v.Prefill.Median, v.Prefill.P90, v.Decode.N, v.Decode.Median, v.Decode.P90)
	}
	fmt.Fprintf(&buf, "var ExpertKernels = map[MoEKernel]ExpertKernelParams{\n")
	for _, f := range fams {
		fmt.Fprintf(&buf, "\t%q: {Compute: %.6g, LatencyS: %.6g},\n", f, ks[f].Compute, ks[f].LatencyS)
	}
	fmt.Fprintf(&buf, "}\n")
	fmt.Fprintf(&buf, "\n// GDN and GDNBlackwell are the Gated DeltaNet layers' kernel constants\n// (AIConfigurator's measurements of SGLang's kernels,\n// data/gdn-kernels/README.md): GDN fitted on the H100 and carried by the\n// spec sheet to every GPU but Blackwell's, GDNBlackwell fitted on the B200\n// and carried to Blackwell's; each GPU bounded by the GPUs it dominates\n// (GDNTime). Median and P90 absolute error of GDNTime:\n//\n%s", gdnLines)
	for _, c := range []struct {
		name string
		q    kernel.GDNParams
	}{{"GDN", gdn}, {"GDNBlackwell", gdnB}} {
		fmt.Fprintf(&buf, "var %s = GDNParams{PrefillLatencyS: %.6g, PrefillTokenS: %.6g, PrefillCompute: %.6g, DecodeLatencyS: %.6g, DecodeMemory: %.6g}\n",
			c.name, c.q.PrefillLatencyS, c.q.PrefillTokenS, c.q.PrefillCompute, c.q.DecodeLatencyS, c.q.DecodeMemory)
	}
	src, err := format.Source(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
