package costpower

import (
	"math"
	"strings"
	"testing"
)

func TestKVBytesPerToken(t *testing.T) {
	t.Parallel()
	c := Default()
	for _, tc := range []struct {
		model  string
		compat bool
		want   int64
	}{
		{"bloom-176b", false, 4_014_080},
		{"bloom-176b", true, 4_014_080},
		{"llama2-70b", false, 327_680},
		{"llama2-70b", true, 2_621_440},
	} {
		m, err := c.Model(tc.model)
		if err != nil {
			t.Fatal(err)
		}
		got := m.KVBytesPerToken()
		if tc.compat {
			got = m.ReferenceKVBytesPerToken()
		}
		if got != tc.want {
			t.Errorf("%s compat=%v: %d bytes per token, want %d", tc.model, tc.compat, got, tc.want)
		}
	}
}

func TestKVCapacity(t *testing.T) {
	t.Parallel()
	c := Default()
	bloom, _ := c.Model("BLOOM-176B")
	a100, _ := c.Machine("dgx-a100")
	// The reference simulator's rule: 8 × 80 GiB − 329e9 bytes of
	// weights = 358,194,767,360 bytes.
	if got := bloom.ReferenceKVCapacityBytes(a100); got != 8*80*GiB-329e9 {
		t.Errorf("capacity %d bytes", got)
	}
	if got := bloom.ReferenceKVCapacityBytes(a100) / bloom.ReferenceKVBytesPerToken(); got != 89_234 {
		t.Errorf("BLOOM on DGX-A100: %d tokens, want 89,234 (≈ 89k, SPEC §2)", got)
	}
	// The memory model: per GPU 80 GiB × 0.9 − the reserve − the bf16
	// weights of BLOOM-176B's 176.2 B parameters (352.5 GB, not the
	// reference's 329e9) / 8, over 70 × 2 × 14336 × 2 / 8 bytes per token
	// per GPU.
	if w := bloom.WeightBytes; w < 352e9 || w > 353e9 {
		t.Errorf("BLOOM-176B weights %d bytes, want its bf16 parameters' 352.5 GB", w)
	}
	b, err := bloom.Memory(a100)
	if err != nil {
		t.Fatal(err)
	}
	want := int64((80*GiB*0.9 - b.Reserve - float64(bloom.WeightBytes)/8) / (70 * 2 * 14336 * 2 / 8))
	if got := bloom.KVCapacityTokens(a100); got != want || got != b.Tokens {
		t.Errorf("BLOOM on DGX-A100: %d tokens, want %d", got, want)
	}
	if got := bloom.KVCapacityBytes(a100); got != want*bloom.KVBytesPerToken() {
		t.Errorf("BLOOM on DGX-A100: %d bytes, want %d tokens' worth", got, want)
	}
	// A plan's own weights are the reference's too.
	own := bloom
	own.WeightBytes = 300e9
	if got := own.ReferenceKVCapacityBytes(a100); got != 8*80*GiB-300e9 {
		t.Errorf("changed weights: reference capacity %d bytes, want the memory less 300e9", got)
	}
	huge := Model{Name: "huge", Layers: 1, Hidden: 8, Heads: 1, KVHeads: 1, WeightBytes: 1e15}
	if got := huge.KVCapacityTokens(a100); got != 0 {
		t.Errorf("weights larger than memory: %d tokens, want 0", got)
	}
}

func TestClusterCostPower(t *testing.T) {
	t.Parallel()
	c := Default()
	for _, tc := range []struct {
		design        string
		prompt, token int
		cost, power   float64
	}{
		{"Baseline-H100", 40, 0, 40 * 38.0, 40 * 11.375},
		{"hh", 35, 5, 40 * 38.0, 40 * 11.375},
		{"HA", 25, 15, 25*38.0 + 15*17.6, 25*11.375 + 15*6.5},
		{"HHCAP", 10, 10, 20 * 38.0, 10*11.375 + 10*1.23*6.5},
		{"a100", 3, 0, 3 * 17.6, 3 * 6.5},
	} {
		cl, err := c.NewCluster(tc.design, tc.prompt, tc.token)
		if err != nil {
			t.Fatalf("%s: %v", tc.design, err)
		}
		if math.Abs(cl.CostUSDPerH()-tc.cost) > 1e-9 || math.Abs(cl.PowerKW()-tc.power) > 1e-9 {
			t.Errorf("%v: cost %v power %v, want %v %v", cl, cl.CostUSDPerH(), cl.PowerKW(), tc.cost, tc.power)
		}
	}
}

func TestNewClusterErrors(t *testing.T) {
	t.Parallel()
	c := Default()
	for _, tc := range []struct {
		design        string
		prompt, token int
		want          string
	}{
		{"nope", 1, 1, `unknown design "nope"`},
		{"HH", 0, 5, "at least 1 prompt and 1 token machine"},
		{"HH", 5, -1, "at least 1 prompt and 1 token machine"},
		{"Baseline-A100", 0, 0, "at least 1 machine"},
		{"Baseline-A100", 4, 2, "no token pool"},
	} {
		_, err := c.NewCluster(tc.design, tc.prompt, tc.token)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %d/%d: error %v, want it to say %q", tc.design, tc.prompt, tc.token, err, tc.want)
		}
	}
}

func TestLinkBetween(t *testing.T) {
	t.Parallel()
	c := Default()
	a, _ := c.Machine("DGX-A100")
	h, _ := c.Machine("DGX-H100")
	bw, lw := LinkBetween(h, a)
	if bw != 25e9 || lw != 0.008 {
		t.Errorf("H100↔A100: %v B/s, %v s; want the slower end: 25e9 B/s, 0.008 s", bw, lw)
	}
	bw, lw = LinkBetween(h, h)
	if bw != 50e9 || lw != 0.005 {
		t.Errorf("H100↔H100: %v B/s, %v s", bw, lw)
	}
}

func TestExtendAndValidate(t *testing.T) {
	t.Parallel()
	c := Default()
	h200 := Machine{Name: "DGX-H200-custom", GPU: "H200", GPUs: 8, GPUMemoryGiB: 141, LinkGbps: 400,
		CostUSDPerH: 50, PowerKW: 12, GPUPowerCap: 1, PerfHardware: "h200", TensorParallel: 8}
	c.Machines = append(c.Machines, h200)
	c.Designs = append(c.Designs, Design{Name: "Splitwise-H200A", Aliases: []string{"XA"}, Kind: KindSplitwise, Prompt: "DGX-H200-custom", Token: "DGX-A100"})
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewCluster("xa", 2, 3); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		add  Catalog
		want string
	}{
		{Catalog{Designs: []Design{{Name: "X", Kind: KindSplitwise, Prompt: "DGX-A100"}}}, "needs both prompt and token"},
		{Catalog{Designs: []Design{{Name: "X", Kind: KindSplitwise, Prompt: "DGX-A100", Token: "TPU"}}}, `token: unknown machine type "TPU"`},
		{Catalog{Designs: []Design{{Name: "X", Kind: "magic", Machine: "DGX-A100"}}}, `kind must be "baseline" or "splitwise"`},
		{Catalog{Designs: []Design{{Name: "X", Aliases: []string{"hh"}, Kind: KindBaseline, Machine: "DGX-A100"}}}, `alias "hh" is already used`},
		{Catalog{Machines: []Machine{{Name: "M", GPUs: 0}}}, "gpus must be at least 1"},
		{Catalog{Machines: []Machine{{Name: "M", GPUs: 8, GPUMemoryGiB: 80, LinkGbps: 100, CostUSDPerH: 1, PowerKW: 1, GPUPowerCap: 1, TensorParallel: 8}}}, "perf_hardware is missing"},
		{Catalog{Machines: []Machine{{Name: "M", GPUs: 8, GPUMemoryGiB: 80, LinkGbps: 100, CostUSDPerH: 0, PowerKW: 1, GPUPowerCap: 1, PerfHardware: "x", TensorParallel: 8}}}, `machine "M": cost_usd_per_h must be a positive`},
		{Catalog{Machines: []Machine{{Name: "M", GPUs: 8, GPUMemoryGiB: 80, LinkGbps: 100, CostUSDPerH: 1, PowerKW: 0, GPUPowerCap: 1, PerfHardware: "x", TensorParallel: 8}}}, `machine "M": power_kw must be a positive`},
		{Catalog{Models: []Model{{Name: "m", Layers: 2, Hidden: 10, Heads: 3, KVHeads: 1, WeightBytes: 1}}}, "heads must be a positive divisor"},
	} {
		c := Default()
		c.Machines = append(c.Machines, tc.add.Machines...)
		c.Models = append(c.Models, tc.add.Models...)
		c.Designs = append(c.Designs, tc.add.Designs...)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("adding %+v: error %v, want it to say %q", tc.add, err, tc.want)
		}
	}
}

func TestDefaultValid(t *testing.T) {
	t.Parallel()
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
	// Default returns a fresh catalog: changing one leaves the next alone.
	c := Default()
	c.Designs[0].Aliases[0] = "changed"
	if Default().Designs[0].Aliases[0] == "changed" {
		t.Error("Default shares alias slices between calls")
	}
}

// TestMinCounts: a baseline's smallest cluster is one machine, a Splitwise
// design's one of each pool, for every design of the default catalog.
func TestMinCounts(t *testing.T) {
	t.Parallel()
	for _, d := range Default().Designs {
		p, tk := d.MinCounts()
		want := 1
		if d.IsBaseline() {
			want = 0
		}
		if p != 1 || tk != want {
			t.Errorf("%s: MinCounts = (%d, %d), want (1, %d)", d.Name, p, tk, want)
		}
	}
}
