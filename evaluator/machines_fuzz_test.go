package evaluator

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"splitplan/internal/fuzzing"
)

// FuzzReadMachinesCSV: ReadMachinesCSV never panics, its errors name the
// file, every machine it accepts has finite non-negative figures and a
// peak KV-cache within its capacity, and the machines write back
// (WriteMachinesCSV) to a file that reads as the same machines.
func FuzzReadMachinesCSV(f *testing.F) {
	fuzzing.Seed(f, fuzzing.Heads(20, "../testdata/cli/*/machines.csv", "../testdata/cli/*.files/machines.csv")...)
	row := "0,DGX-H100,prompt,mixed,2,12.5,40,300,7,1000,5000,profiled (a/b/tp8; held-out MAPE 1% prompt; 2% token),,,30"
	fuzzing.Seed(f,
		MachinesCSVHeader+"\n"+row+"\n",
		MachinesCSVHeader+"\r\n0,H,token,token,0,0,0,0,0,0,0,\"x,\"\"y\"\"\",1.5,0.5,2\r\n",
		MachinesCSVHeader+"\n0,\"A,B\",prompt,mixed,2,12.5,40,300,7,1000,5000,p,,,30\n",
		MachinesCSVHeader+"\n0,H,prompt,mixed,2,NaN,40,300,7,1000,5000,p,,,30\n",
		MachinesCSVHeader+"\n0,H,prompt,mixed,2,1,40,300,7,6000,5000,p,,,30\n",
		MachinesCSVHeader+"\n0,H,prompt,mixed,2,1,40,300,7,1000,5000,p,1,,30\n",
		"\ufeff"+MachinesCSVHeader+"\n",
		MachinesCSVHeader+"\n1,2\n",
		"machine\n",
		"",
	)
	f.Fuzz(func(t *testing.T, in string) {
		ms, err := ReadMachinesCSV(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		energy := false
		for i, m := range ms {
			for _, v := range []float64{m.BusyS, m.EnergyJ, m.IdleEnergyJ, m.PoweredS} {
				if !(v >= 0) || math.IsInf(v, 0) {
					t.Fatalf("machine %d: a figure not finite and non-negative: %+v", i, m)
				}
			}
			if m.ID < 0 || m.PoolMoves < 0 || m.PromptIters < 0 || m.DecodeIters < 0 || m.MixedIters < 0 ||
				m.PeakMemoryBytes < 0 || m.PeakMemoryBytes > m.CapacityBytes || m.Type == "" {
				t.Fatalf("machine %d violates the invariants: %+v", i, m)
			}
			energy = energy || m.EnergyJ != 0 || m.IdleEnergyJ != 0
		}
		var out bytes.Buffer
		if err := WriteMachinesCSV(&out, &Result{Machines: ms, EnergyKnown: energy}); err != nil {
			t.Fatal(err)
		}
		again, err := ReadMachinesCSV(bytes.NewReader(out.Bytes()), "rewritten.csv")
		if err != nil {
			t.Fatalf("rewritten machines do not read: %v\n%s", err, out.String())
		}
		if len(again) != len(ms) || (len(ms) > 0 && !reflect.DeepEqual(again, ms)) {
			t.Fatalf("rewritten machines read back as %+v, want %+v", again, ms)
		}
	})
}
