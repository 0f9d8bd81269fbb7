package costpower

import (
	"fmt"

	"splitplan/hw"
)

// GPUPurchaseUSD is the default purchase price of one GPU of each GPU spec
// (package hw) with its share of the server around it (CPUs, memory,
// NICs, chassis): a system price divided by its GPUs. A100: NVIDIA's
// DGX A100 launch price, $199,000 for 8 GPUs (May 2020). H100: DGX H100
// street prices reported near $300,000 for 8 (2023). The newer GPUs are
// splitplan's assumptions, in about the proportion of their rental prices
// (GPUPriceUSDPerH) to the H100's. All are assumptions a planner should
// replace with a quote: a plan's [[machine]] table sets purchase_usd.
var GPUPurchaseUSD = map[string]float64{
	"a100_sxm": 24875,
	"h100_sxm": 37500,
	"h200_sxm": 43000,
	"b200_sxm": 59000,
	"b300_sxm": 71000,
	"gb200":    71000,
	"gb300":    83000,
	"l40s":     12000,
	"mi300x":   31500,
}

// HardwarePriceUSD is the machine's purchase price in dollars: its
// PurchaseUSD when set, else its GPUs × GPUPurchaseUSD of its GPU spec (or
// of the spec its GPU names). A power cap does not change it. It is 0 when
// neither is known.
func (m Machine) HardwarePriceUSD() float64 {
	if m.PurchaseUSD > 0 {
		return m.PurchaseUSD
	}
	g, err := hw.Lookup(m.GPUSpecName())
	if err != nil {
		return 0
	}
	return float64(m.GPUs) * GPUPurchaseUSD[g.Name]
}

// Ownership is what owning a fleet costs beyond its purchase: how long the
// hardware is amortized over, the site's power usage effectiveness and
// electricity price, and an operating cost per GPU.
type Ownership struct {
	// AmortizeYears is the period the purchase price is spread over.
	AmortizeYears float64
	// PUE is the site's power usage effectiveness: facility energy per
	// unit of IT energy (at least 1).
	PUE float64
	// ElectricityUSDPerKWh is the price of a kilowatt-hour.
	ElectricityUSDPerKWh float64
	// OpexUSDPerGPUH is the operating cost per GPU-hour beyond energy
	// (space, maintenance, network, staff).
	OpexUSDPerGPUH float64
}

// DefaultOwnership are the defaults of optimize's ownership flags, each an
// assumption with its source: 4 years of amortization (GPU servers are
// commonly depreciated over 4 to 6 years; the shorter end, as GPU
// generations turn over fast); a PUE of 1.3 (between the Uptime Institute's
// 2023 survey average of 1.58 and the ~1.1 hyperscalers report for their
// newest sites); $0.08/kWh (the US EIA's 2023 average industrial price,
// 8.0 ¢/kWh); and $0.10 per GPU-hour of operating cost (splitplan's
// assumption: about $900 a GPU a year for space, support and network).
func DefaultOwnership() Ownership {
	return Ownership{AmortizeYears: 4, PUE: 1.3, ElectricityUSDPerKWh: 0.08, OpexUSDPerGPUH: 0.10}
}

// HoursPerYear is 365.25 days of hours.
const HoursPerYear = 365.25 * 24

// The ownership figures' bounds, far beyond any site's (PUE 1.1–1.6,
// electricity $0.05–0.40/kWh, servers amortized over 3–6 years), so that
// a typo's 1e300 or 1e-300 is refused rather than priced.
const (
	MinAmortizeYears        = 1.0 / 12
	MaxAmortizeYears        = 50.0
	MaxPUE                  = 5.0
	MaxElectricityUSDPerKWh = 10.0
)

// OwnershipField is one figure of Ownership with its bounds: its flag
// (optimize's), what it must be (a format of the most it may be), the
// least and most it may be, and its value.
type OwnershipField struct {
	Flag, What string
	Min, Max   float64
	Get        func(Ownership) float64
}

// OwnershipFields are Ownership's figures and their bounds, the one list
// Validate and optimize's flags check.
var OwnershipFields = []OwnershipField{
	{"amortize-years", "a number of years from 1/12 (a month) to %g", MinAmortizeYears, MaxAmortizeYears, func(o Ownership) float64 { return o.AmortizeYears }},
	{"pue", "a number from 1 to %g (facility energy per unit of IT energy)", 1, MaxPUE, func(o Ownership) float64 { return o.PUE }},
	{"electricity-price", "zero or a positive number of $/kWh up to %g", 0, MaxElectricityUSDPerKWh, func(o Ownership) float64 { return o.ElectricityUSDPerKWh }},
	{"opex-per-gpu-h", "zero or a positive number of $ per GPU-hour up to %g", 0, MaxGPUHourUSD, func(o Ownership) float64 { return o.OpexUSDPerGPUH }},
}

// Check returns an error naming f's flag when its value in o is not a
// finite number within its bounds.
func (f OwnershipField) Check(o Ownership) error {
	if v := f.Get(o); !(v >= f.Min && v <= f.Max) { // (NaN and ±Inf too: the bounds are finite)
		return fmt.Errorf("--%s must be %s, got %v", f.Flag, fmt.Sprintf(f.What, f.Max), v)
	}
	return nil
}

// Validate checks every figure is finite and in range; the error names
// the first that is not by its flag.
func (o Ownership) Validate() error {
	for _, f := range OwnershipFields {
		if err := f.Check(o); err != nil {
			return fmt.Errorf("ownership: %w", err)
		}
	}
	return nil
}

// FixedUSDPerH is what owning one machine of type m costs an hour whatever
// it draws: its price amortized over AmortizeYears plus its operating cost.
func (o Ownership) FixedUSDPerH(m Machine) float64 {
	return m.HardwarePriceUSD()/(o.AmortizeYears*HoursPerYear) + o.OpexUSDPerGPUH*float64(m.GPUs)
}

// EnergyUSDPerH is the electricity bill an hour of IT equipment drawing
// averageKW on average: averageKW × PUE × ElectricityUSDPerKWh.
func (o Ownership) EnergyUSDPerH(averageKW float64) float64 {
	return averageKW * o.PUE * o.ElectricityUSDPerKWh
}

// ClusterFixedUSDPerH is FixedUSDPerH over cl's machines.
func (o Ownership) ClusterFixedUSDPerH(cl Cluster) float64 {
	return float64(cl.Prompt)*o.FixedUSDPerH(cl.PromptType) + float64(cl.Token)*o.FixedUSDPerH(cl.TokenType)
}
