package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"splitplan/costpower"
	"splitplan/evaluator/perf"
)

// PrintCatalog prints the machine types, models, designs and performance
// profiles. Every column holds one unit, named in its header: per-GPU
// figures (memory, bf16 dense tensor TFLOP/s, memory bandwidth, board
// power, NVLink or PCIe bandwidth one way) and per-machine ones (network,
// cost, provisioned power). KV tokens come from the memory model (package
// memory) at each machine type's engine memory utilization.
func PrintCatalog(w io.Writer, cat *costpower.Catalog, table *perf.Table) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MACHINE\tGPU\tGPUs\tHBM GiB/GPU\tbf16 dense TFLOP/s/GPU\tHBM GB/s/GPU\tW/GPU\tpower cap\tNVLink GB/s/GPU\tnetwork Gbit/s\tlayer-wise s\t$/h\tkW\tperformance model")
	for _, m := range cat.Machines {
		model := "analytic (spec sheet)"
		if table != nil && table.HasHardware(m.PerfHardware) {
			model = fmt.Sprintf("profile %s/tp%d", m.PerfHardware, m.TensorParallel)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.4g\t%.0f\t%.0f\t%g\t%.0f\t%.0f\t%g\t%g\t%g\t%s\n", m.Name, strings.ToUpper(m.GPUFamily()), m.GPUs, m.GPUMemoryGiB,
			m.GPUTFLOPs, m.HBMBandwidthGBs, m.GPUPowerW, m.GPUPowerCap, m.NVLinkGBs, m.LinkGbps, m.LayerwiseTransferS,
			m.CostUSDPerH, m.PowerKW, model)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "MODEL\tprecision\tlayers\thidden\theads\tKV heads\tweights GB\tKV B/token\tKV tokens per machine (memory model; no fit: the weights do not fit)")
	for _, m := range cat.Models {
		var caps []string
		for _, mc := range cat.Machines {
			b, err := m.Memory(mc)
			if err != nil {
				caps = append(caps, mc.Name+" no fit")
				continue
			}
			caps = append(caps, fmt.Sprintf("%s %d", mc.Name, b.Tokens*int64(mc.InstancesPerMachine())))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%.1f\t%d\t%s\n", m.Name, m.ServedPrecision(), m.Layers, m.Hidden, m.Heads, m.KVHeads,
			float64(m.WeightBytes)/1e9, m.KVBytesPerToken(), strings.Join(caps, ", "))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "DESIGN\taliases\tprompt machines\ttoken machines\t$/h per prompt+token machine\tkW per prompt+token machine")
	for _, d := range cat.Designs {
		pm, tm := d.Prompt, d.Token
		if d.IsBaseline() {
			pm, tm = d.Machine+" (both phases)", "—"
		}
		mp, mt := d.MinCounts()
		cl, err := cat.ClusterOf(d, mp, mt)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%g\t%g\n", d.Name, strings.Join(d.Aliases, " "), pm, tm, cl.CostUSDPerH(), cl.PowerKW())
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "GPU (--gpus, --price)\t$ per GPU-hour\tsource")
	seen := map[string]bool{}
	for _, m := range cat.Machines {
		f := m.GPUFamily()
		if seen[f] || m.NodeGPUs > 0 {
			continue
		}
		seen[f] = true
		src := costpower.GPUPriceSource[m.GPUSpec]
		if src == "" {
			src = "the plan's cost_usd_per_h"
		}
		fmt.Fprintf(tw, "%s\t%.4g\t%s\n", f, m.CostUSDPerH/float64(m.GPUs), src)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "PERFORMANCE PROFILE\tprompt knots\tdecode knots\tcontext knots\tmixed penalty")
	for _, pr := range table.Pairs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%g\n", pr.Name(), len(pr.PromptTokens), len(pr.DecodeBatch), len(pr.ContextTokens), pr.MixedPenalty)
	}
	return tw.Flush()
}
