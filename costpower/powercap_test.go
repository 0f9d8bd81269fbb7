package costpower

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestParseCaps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []float64
	}{
		{"0.5:1.0:0.1", []float64{0.5, 0.6, 0.7, 0.8, 0.9, 1}},
		{"0.5:1:0.05", nil},
		{"1,0.7, 0.7", []float64{0.7, 1}},
		{"0.7", []float64{0.7}},
	} {
		got, err := ParseCaps(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if c.want == nil {
			if len(got) != 11 || got[0] != 0.5 || got[10] != 1 {
				t.Errorf("%q: %v, want 11 caps from 0.5 to 1", c.in, got)
			}
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %v, want %v", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"", "0.5:1", "1:0.5:0.1", "0.5:1:0", "0,0.5", "1.2", "x", "0.5:1:y"} {
		if _, err := ParseCaps(bad); err == nil || !strings.Contains(err.Error(), "caps") && bad != "" {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

func TestWithCap(t *testing.T) {
	t.Parallel()
	cat := Default()
	h, _ := cat.Machine("DGX-H100")
	hc, _ := cat.Machine("DGX-H100cap")
	v, err := h.WithCap(0.5)
	if err != nil {
		t.Fatal(err)
	}
	// The paper's DGX-H100cap provision from DGX-H100's.
	if math.Abs(v.PowerKW-hc.PowerKW) > 1e-9 || v.Name != "DGX-H100@50" || v.GPUPowerCap != 0.5 || v.PerfPowerCap != 1 || v.CostUSDPerH != h.CostUSDPerH {
		t.Errorf("DGX-H100 at 0.5: %+v", v)
	}
	if v.GPULabel() != "H100@50" || hc.GPULabel() != "H100cap" {
		t.Errorf("labels %q, %q", v.GPULabel(), hc.GPULabel())
	}
	// A variant of a variant keeps the base's profile cap and name.
	w, _ := v.WithCap(0.7)
	if w.Name != "DGX-H100@70" || w.PerfPowerCap != 1 || math.Abs(w.PowerKW-h.PowerKW*(1-NodeGPUShare*0.3)) > 1e-9 {
		t.Errorf("DGX-H100@50 at 0.7: %+v", w)
	}
	// DGX-H100cap uncapped is about a DGX-H100's provision.
	u, _ := hc.WithCap(1)
	if math.Abs(u.PowerKW-h.PowerKW) > 1e-9 || u.PerfPowerCap != 0.5 {
		t.Errorf("DGX-H100cap at 1: %+v", u)
	}
	if _, err := h.WithCap(0); err == nil {
		t.Error("cap 0 accepted")
	}
	if CapSuffix(0.725) != "@72.5" {
		t.Errorf("suffix %q", CapSuffix(0.725))
	}
}

func TestAddCappedDesigns(t *testing.T) {
	t.Parallel()
	cat := Default()
	names, err := cat.AddCappedDesigns([]string{"HH", "Baseline-A100"}, []float64{0.6, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Splitwise-HH", "Splitwise-HH@100-60", "Splitwise-HH@60-100", "Splitwise-HH@60-60", "Baseline-A100", "Baseline-A100@60"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("designs %v, want %v", names, want)
	}
	cl, err := cat.NewCluster("Splitwise-HH@100-60", 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if cl.PromptType.Name != "DGX-H100" || cl.TokenType.Name != "DGX-H100@60" || !(cl.PowerKW() < 5*11.375) {
		t.Errorf("HH@100-60: %s / %s, %v kW", cl.PromptType.Name, cl.TokenType.Name, cl.PowerKW())
	}
}

func TestOwnership(t *testing.T) {
	t.Parallel()
	o := DefaultOwnership()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	cat := Default()
	a, _ := cat.Machine("DGX-A100")
	if a.HardwarePriceUSD() != 199000 {
		t.Errorf("DGX-A100 price %v, want the launch price 199000", a.HardwarePriceUSD())
	}
	want := 199000/(4*HoursPerYear) + 0.8
	if got := o.FixedUSDPerH(a); math.Abs(got-want) > 1e-9 {
		t.Errorf("fixed %v $/h, want %v", got, want)
	}
	if got := o.EnergyUSDPerH(10); math.Abs(got-10*1.3*0.08) > 1e-12 {
		t.Errorf("energy %v $/h", got)
	}
	for _, bad := range []Ownership{{AmortizeYears: 0, PUE: 1.2}, {AmortizeYears: 4, PUE: 0.9}, {AmortizeYears: 4, PUE: 1.2, ElectricityUSDPerKWh: -1}, {AmortizeYears: math.Inf(1), PUE: 1.2}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
