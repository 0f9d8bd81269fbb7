package evaluator

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// csvCases are small simulations whose CSVs exercise every column: transfers,
// borrowing and pool moves (a tight Splitwise cluster), preemptions (a
// baseline with little KV-cache memory), machines of one role each (a
// lightly loaded Splitwise cluster).
func csvCases(t *testing.T) map[string]*Result {
	t.Helper()
	return map[string]*Result{
		"HH 2P/1T": mustEval(t, mustCluster(t, "HH", 2, 1, "bloom-176b", false),
			randomRequests(200, 30, 3000, 200, 3), Options{RecordBatchTokens: true, Energy: true}),
		"Baseline-H100 tight memory": mustEval(t, mustCluster(t, "Baseline-H100", 2, 0, "bloom-176b", true),
			randomRequests(200, 20, 4000, 300, 7), Options{Compat: true, KVCapacityTokens: 9000, RecordBatchTokens: true, Energy: true}),
		"HA 2P/3T light load": mustEval(t, mustCluster(t, "HA", 2, 3, "llama2-70b", false),
			randomRequests(60, 2, 2000, 100, 5), Options{RecordBatchTokens: true, Energy: true}),
	}
}

func TestRequestsCSVRoundTrip(t *testing.T) {
	t.Parallel()
	var transferred, borrowed, preempted, multiToken, oneToken int
	for name, res := range csvCases(t) {
		var buf bytes.Buffer
		if err := WriteRequestsCSV(&buf, res); err != nil {
			t.Fatal(err)
		}
		written := buf.String()
		got, err := ReadRequestsCSV(strings.NewReader(written), name+".csv")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(res.Requests) {
			t.Fatalf("%s: read %d requests, wrote %d", name, len(got), len(res.Requests))
		}
		for i, want := range res.Requests {
			// Every field, floats compared exactly: the writer's 'g' -1
			// is the shortest representation that parses back to the
			// same float64.
			if !reflect.DeepEqual(got[i], want) {
				t.Fatalf("%s: request %d read back as\n%+v\nwrote\n%+v", name, i, got[i], want)
			}
			if want.Transferred {
				transferred++
			}
			if want.Borrowed {
				borrowed++
			}
			if want.Preemptions > 0 {
				preempted++
			}
			if want.OutputTokens > 1 {
				multiToken++
			} else {
				// No gap between tokens: tbt_s and max_gap_s are empty,
				// not a TBT of 0 s.
				oneToken++
				if rec := strings.Split(strings.Split(written, "\n")[i+1], ","); rec[6] != "" || rec[8] != "" {
					t.Errorf("%s: request %d of one output token written with tbt_s %q, max_gap_s %q", name, i, rec[6], rec[8])
				}
			}
		}
		// Writing what was read gives the same bytes.
		var again bytes.Buffer
		if err := WriteRequestsCSV(&again, &Result{Requests: got}); err != nil {
			t.Fatal(err)
		}
		if again.String() != written {
			t.Errorf("%s: rewriting the rows read changed the file", name)
		}
	}
	// The cases must exercise the columns, or the test checks zeros.
	if transferred == 0 || borrowed == 0 || preempted == 0 || multiToken == 0 || oneToken == 0 {
		t.Errorf("cases too tame: %d transferred, %d borrowed, %d preempted, %d multi-token and %d one-token requests",
			transferred, borrowed, preempted, multiToken, oneToken)
	}
}

func TestMachinesCSVRoundTrip(t *testing.T) {
	t.Parallel()
	roles, pools, moves := map[Role]bool{}, map[Pool]bool{}, 0
	for name, res := range csvCases(t) {
		var buf bytes.Buffer
		if err := WriteMachinesCSV(&buf, res); err != nil {
			t.Fatal(err)
		}
		written := buf.String()
		got, err := ReadMachinesCSV(strings.NewReader(written), name+"-machines.csv")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(res.Machines) {
			t.Fatalf("%s: read %d machines, wrote %d", name, len(got), len(res.Machines))
		}
		for i, want := range res.Machines {
			if len(want.BatchTokens) == 0 {
				t.Errorf("%s: machine %d has no batch-token times: did it run?", name, i)
			}
			want.BatchTokens = nil // not in the CSV
			if !reflect.DeepEqual(got[i], want) {
				t.Fatalf("%s: machine %d read back as\n%+v\nwrote\n%+v", name, i, got[i], want)
			}
			roles[want.Role], pools[want.Pool] = true, true
			moves += want.PoolMoves
		}
		var again bytes.Buffer
		if err := WriteMachinesCSV(&again, &Result{Machines: got, EnergyKnown: res.EnergyKnown}); err != nil {
			t.Fatal(err)
		}
		if again.String() != written {
			t.Errorf("%s: rewriting the machines read changed the file", name)
		}
	}
	if len(pools) < 3 || moves == 0 || len(roles) < 2 {
		t.Errorf("cases too tame: pools %v, roles %v, %d pool moves", pools, roles, moves)
	}
}

func TestReadRequestsCSVErrors(t *testing.T) {
	t.Parallel()
	row := "3,1.5,100,20,0.25,0.5,0.04,0.038,0.09,1.3,0,1,true,0.01,false,2,0.3"
	if got, err := ReadRequestsCSV(strings.NewReader(RequestsCSVHeader+"\n"+row+"\n"), "ok.csv"); err != nil || len(got) != 1 {
		t.Fatalf("a valid row: %v, %v", got, err)
	} else if want := (RequestResult{ID: 3, ArrivalS: 1.5, PromptTokens: 100, OutputTokens: 20, QueueS: 0.25, TTFTS: 0.5,
		TBTS: 0.04, TBTReferenceS: 0.038, MaxGapS: 0.09, E2ES: 1.3, PromptMachine: 0, TokenMachine: 1, Transferred: true,
		TransferS: 0.01, Borrowed: false, Preemptions: 2, SchedDelayS: 0.3}); got[0] != want {
		t.Fatalf("read %+v, want %+v", got[0], want)
	}
	field := func(i int, v string) string {
		f := strings.Split(row, ",")
		f[i] = v
		return RequestsCSVHeader + "\n" + row + "\n" + strings.Join(f, ",") + "\n"
	}
	noCol := strings.Replace(RequestsCSVHeader, ",ttft_s", "", 1)
	noCol = strings.Replace(noCol, ",borrowed", "", 1)
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"empty", "", []string{"r.csv", "empty file", "request_id,arrival_s"}},
		{"missing columns", noCol + "\n", []string{"r.csv:1", "lacks the columns ttft_s, borrowed"}},
		{"extra column", RequestsCSVHeader + ",note\n", []string{"r.csv:1", `unexpected columns "note"`}},
		{"reordered", strings.Replace(RequestsCSVHeader, "queue_s,ttft_s", "ttft_s,queue_s", 1) + "\n",
			[]string{"r.csv:1", "column 5 is ttft_s, expected queue_s"}},
		{"other file", "model,hardware,tp\nx,y,1\n", []string{"r.csv:1", "lacks the columns request_id"}},
		{"short row", RequestsCSVHeader + "\n1,2,3\n", []string{"r.csv:2", "3 fields, expected 17"}},
		{"float", field(5, "fast"), []string{"r.csv:3:", "column 6 (ttft_s)", `"fast"`, "finite number of seconds"}},
		{"negative", field(9, "-1"), []string{"r.csv:3:", "column 10 (e2e_s)", "zero or more"}},
		{"NaN", field(1, "NaN"), []string{"r.csv:3:", "column 2 (arrival_s)", "finite"}},
		{"infinite", field(13, "+Inf"), []string{"column 14 (transfer_s)", "finite"}},
		{"integer", field(2, "1.5"), []string{"r.csv:3:", "column 3 (prompt_tokens)", "whole number"}},
		{"negative machine", field(11, "-2"), []string{"column 12 (token_machine)", "zero or more"}},
		{"huge integer", field(0, "99999999999999999999"), []string{"column 1 (request_id)", "value out of range"}},
		{"bool", field(12, "yes"), []string{"r.csv:3:", "column 13 (transferred)", "true or false"}},
		{"quote", RequestsCSVHeader + "\n\"3,1\n", []string{"r.csv:2", "column"}},
	} {
		_, err := ReadRequestsCSV(strings.NewReader(tc.in), "r.csv")
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
	}
}

func TestReadMachinesCSVErrors(t *testing.T) {
	t.Parallel()
	row := "0,DGX-H100,prompt,mixed,2,12.5,40,300,7,1000,5000,profiled (a/b/tp8; held-out MAPE 1% prompt; 2% token),,,30"
	if got, err := ReadMachinesCSV(strings.NewReader(MachinesCSVHeader+"\n"+row+"\n"), "ok.csv"); err != nil || len(got) != 1 {
		t.Fatalf("a valid row: %v, %v", got, err)
	} else if want := (MachineResult{ID: 0, Type: "DGX-H100", Pool: PoolPrompt, Role: RoleMixed, PoolMoves: 2, BusyS: 12.5,
		PromptIters: 40, DecodeIters: 300, MixedIters: 7, PeakMemoryBytes: 1000, CapacityBytes: 5000,
		Provenance: "profiled (a/b/tp8; held-out MAPE 1% prompt; 2% token)", PoweredS: 30}); !reflect.DeepEqual(got[0], want) {
		t.Fatalf("read %+v, want %+v", got[0], want)
	}
	field := func(i int, v string) string {
		f := strings.Split(row, ",")
		f[i] = v
		return MachinesCSVHeader + "\n" + strings.Join(f, ",") + "\n"
	}
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"missing column", strings.Replace(MachinesCSVHeader, ",busy_s", "", 1) + "\n", []string{"m.csv:1", "lacks the columns busy_s"}},
		{"requests file", RequestsCSVHeader + "\n", []string{"m.csv:1", "lacks the columns machine,"}},
		{"pool", field(2, "spare"), []string{"m.csv:2:", "column 3 (pool)", "one of baseline, prompt, token, mixed"}},
		{"role", field(3, "busy"), []string{"column 4 (role)", "one of idle, prompt, token, mixed"}},
		{"type", field(1, ""), []string{"column 2 (type)", "machine type"}},
		{"busy", field(5, "-0.5"), []string{"column 6 (busy_s)", "zero or more"}},
		{"iterations", field(7, "3e2"), []string{"column 8 (decode_iterations)", "whole number"}},
		{"energy", field(12, "-3"), []string{"column 13 (energy_j)", "joules, zero or more"}},
		{"idle energy", strings.Replace(field(13, "x"), ",,x", ",5,x", 1), []string{"column 14 (idle_energy_j)", "joules"}},
		{"memory over capacity", field(9, "6000"), []string{"m.csv:2:", "column 10 (peak_kv_bytes)", "at most kv_capacity_bytes (5000)"}},
	} {
		_, err := ReadMachinesCSV(strings.NewReader(tc.in), "m.csv")
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
	}
}

// FuzzReadRequestsCSV: the reader never panics, and whatever it accepts
// writes back to a file that reads as the same rows.
func FuzzReadRequestsCSV(f *testing.F) {
	res := mustEval(f, mustCluster(f, "HH", 1, 1, "bloom-176b", false), randomRequests(5, 10, 500, 20, 1), Options{})
	var buf bytes.Buffer
	if err := WriteRequestsCSV(&buf, res); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.String())
	f.Add(RequestsCSVHeader + "\n")
	f.Add(RequestsCSVHeader + "\r\n1,1e-3,2,3,0,0.5,0,0,0,1,0,0,false,0,true,0,-0\r\n")
	f.Add("\ufeff" + RequestsCSVHeader + "\n\"1\",2,3\n")
	f.Add("request_id\n1\n")
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ReadRequestsCSV(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		var out bytes.Buffer
		if err := WriteRequestsCSV(&out, &Result{Requests: rows}); err != nil {
			t.Fatal(err)
		}
		again, err := ReadRequestsCSV(bytes.NewReader(out.Bytes()), "rewritten.csv")
		if err != nil {
			t.Fatalf("rewritten rows do not read: %v\n%s", err, out.String())
		}
		if len(again) != len(rows) || (len(rows) > 0 && !reflect.DeepEqual(again, rows)) {
			t.Fatalf("rewritten rows read back as %+v, want %+v", again, rows)
		}
	})
}
