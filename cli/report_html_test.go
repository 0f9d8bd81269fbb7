package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"splitplan/report/htmlreport"
)

// reportData is the JSON a report embeds (htmlreport.Report.DataJSON).
type reportData struct {
	Command string             `json:"command"`
	Version string             `json:"version"`
	Tables  []htmlreport.Table `json:"tables"`
}

// parseReport parses an HTML report with a real HTML parser and returns
// its embedded data and the document, failing on anything a browser would
// have to guess at: no doctype, no title, a script or style that is not
// inline, an element that loads something.
func parseReport(t *testing.T, path string) (reportData, *html.Node) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) {
		t.Fatalf("%s does not start with <!DOCTYPE html>", path)
	}
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var data reportData
	found, title, svgs := 0, "", 0
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if (a.Key == "src" || a.Key == "href") && a.Val != "" {
					t.Errorf("<%s %s=%q>: a report loads nothing", n.Data, a.Key, a.Val)
				}
			}
			switch n.Data {
			case "title":
				if n.FirstChild != nil {
					title = n.FirstChild.Data
				}
			case "svg":
				svgs++
			case "link", "iframe", "img", "object", "embed":
				t.Errorf("a report holds no <%s>", n.Data)
			case "script":
				for _, a := range n.Attr {
					if a.Key == "id" && a.Val == "data" {
						found++
						if err := json.Unmarshal([]byte(n.FirstChild.Data), &data); err != nil {
							t.Fatalf("embedded JSON: %v", err)
						}
					}
				}
			}
		}
	}
	if found != 1 {
		t.Fatalf("%d script#data elements, want 1", found)
	}
	if title == "" {
		t.Error("no <title>")
	}
	if svgs == 0 {
		t.Error("no figure (<svg>) in the report")
	}
	return data, doc
}

// csvRecords reads a CSV file written by the command.
func csvRecords(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := htmlreport.ReadCSV(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// wantTable fails unless the report's table name holds the CSV file's
// header and rows, cell for cell.
func wantTable(t *testing.T, data reportData, name, csvPath string) {
	t.Helper()
	recs := csvRecords(t, csvPath)
	for _, tb := range data.Tables {
		if tb.Name != name {
			continue
		}
		if !reflect.DeepEqual(tb.Columns, recs[0]) {
			t.Errorf("table %s: columns %q, the CSV's %q", name, tb.Columns, recs[0])
		}
		if len(tb.Rows) != len(recs)-1 {
			t.Fatalf("table %s: %d rows, the CSV %d", name, len(tb.Rows), len(recs)-1)
		}
		if len(tb.Rows) == 0 {
			t.Fatalf("table %s: no rows: the comparison tests nothing", name)
		}
		for i, row := range tb.Rows {
			if !reflect.DeepEqual(row, recs[i+1]) {
				t.Errorf("table %s row %d: %q, the CSV's %q", name, i, row, recs[i+1])
			}
		}
		return
	}
	t.Fatalf("no table %s in the report", name)
}

// checkDataGolden compares the report's embedded JSON, indented, with the
// golden file testdata/report/NAME.json (rewritten with -update).
func checkDataGolden(t *testing.T, data reportData, name string) {
	t.Helper()
	data.Command = "" // (names the test's temporary files)
	got, err := json.MarshalIndent(data, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "report", name+".json")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cli/ -run TestReport -update)", err)
	}
	if !bytes.Equal(got, want) {
		os.WriteFile(path+".got", got, 0o644)
		t.Errorf("%s: embedded data differ from the golden file; see %s.got", name, path)
	}
}

// TestReportOptimize: optimize --report writes a report that parses as
// HTML, whose embedded tables are the --out and --points CSVs of the same
// run cell for cell, whose data match the golden file, and which is the
// same bytes when run again.
func TestReportOptimize(t *testing.T) {
	dir := t.TempDir()
	rep, out, pts := filepath.Join(dir, "r.html"), filepath.Join(dir, "optima.csv"), filepath.Join(dir, "points.csv")
	args := []string{"optimize", "--goal", "cost", "--rps", "5", "--duration", "60s", "--designs", "Baseline-H100,HH", "--max-machines", "12"}
	if code, _, errs := runCLI(t, append(args, "--report", rep, "--out", out, "--points", pts)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, _ := parseReport(t, rep)
	wantTable(t, data, "optima", out)
	wantTable(t, data, "points", pts)
	if !strings.HasPrefix(data.Command, "splitplan optimize --goal cost ") || !strings.Contains(data.Command, " --rps 5") || !strings.Contains(data.Command, "--report "+rep) {
		t.Errorf("command %q does not reproduce the run", data.Command)
	}
	checkDataGolden(t, data, "optimize")
	first, _ := os.ReadFile(rep)
	if code, _, errs := runCLI(t, append(args, "--report", rep, "--out", out, "--points", pts)...); code != 0 {
		t.Fatalf("again: exit %d: %s", code, errs)
	}
	again, _ := os.ReadFile(rep)
	if !bytes.Equal(first, again) {
		t.Error("the same run wrote a different report")
	}
	// Without --points the report still holds every point (the search
	// keeps them for it) and is the same but for the command line.
	rep2 := filepath.Join(dir, "r2.html")
	if code, _, errs := runCLI(t, append(args, "--report", rep2)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	d2, _ := parseReport(t, rep2)
	if !reflect.DeepEqual(d2.Tables, data.Tables) {
		for i := range d2.Tables {
			for j := range d2.Tables[i].Rows {
				if j < len(data.Tables[i].Rows) && !reflect.DeepEqual(d2.Tables[i].Rows[j], data.Tables[i].Rows[j]) {
					t.Errorf("table %s row %d without --out/--points: %q, with: %q", d2.Tables[i].Name, j, d2.Tables[i].Rows[j], data.Tables[i].Rows[j])
				}
			}
		}
		t.Error("the report without --out/--points holds other tables")
	}
}

// TestReportLoadAndSimulate: sweep, evaluate and simulate --report, each
// table the CSV the same run writes.
func TestReportLoadAndSimulate(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, table, csvFlag string
		args                 []string
	}{
		{"sweep", "load", "--out", []string{"sweep", "--cluster", "HH:2:1", "--cluster", "Baseline-H100:3", "--rps", "2,4", "--duration", "30s"}},
		{"evaluate", "load", "--out", []string{"evaluate", "--cluster", "HH:2:1", "--rps", "3", "--duration", "30s"}},
		{"simulate", "machines", "--machines-out", []string{"simulate", "--design", "HH", "--prompt", "2", "--token", "1", "--rps", "2", "--duration", "30s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, csv := filepath.Join(dir, tc.name+".html"), filepath.Join(dir, tc.name+".csv")
			if code, _, errs := runCLI(t, append(tc.args, "--report", rep, tc.csvFlag, csv)...); code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			data, _ := parseReport(t, rep)
			wantTable(t, data, tc.table, csv)
			checkDataGolden(t, data, tc.name)
		})
	}
}

// TestReportSizeREADME: the report of the README's default optimize is at
// most 1 MB.
func TestReportSizeREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the README's default optimize searches for a few seconds")
	}
	rep := filepath.Join(t.TempDir(), "r.html")
	if code, _, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "70", "--report", rep); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	st, err := os.Stat(rep)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 1<<20 {
		t.Errorf("report is %d bytes, over 1 MB", st.Size())
	}
	parseReport(t, rep)
}

// TestReportBadFlag: --report refuses standard output, a name that is
// not .html and a missing directory, before any work, with exit 2; a
// failed run leaves no report behind.
func TestReportBadFlag(t *testing.T) {
	dir := t.TempDir()
	base := []string{"simulate", "--design", "HH", "--prompt", "2", "--token", "1", "--rps", "2", "--duration", "20s"}
	code, out, errs := runCLI(t, append(base, "--report", "-")...)
	wantBadInput(t, code, out, errs, "--report -", "not standard output")
	code, out, errs = runCLI(t, append(base, "--report", filepath.Join(dir, "r.csv"))...)
	wantBadInput(t, code, out, errs, "--report", "ending in .html")
	code, out, errs = runCLI(t, append(base, "--report", filepath.Join(dir, "no", "r.html"))...)
	wantBadInput(t, code, out, errs, "--report", "does not exist")
	rep := filepath.Join(dir, "r.html")
	code, out, errs = runCLI(t, "simulate", "--design", "HH", "--prompt", "2", "--token", "1", "--rps", "-1", "--report", rep)
	if code == 0 {
		t.Fatalf("a negative rate passed: %s", out)
	}
	if _, err := os.Stat(rep); err == nil {
		t.Error("a failed run left a report")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("left behind: %s", e.Name())
	}
	_ = errs
}

// TestReportOptimizeRobust: optimize --confidence --report writes a report
// whose shown tables are the robust CSV (what --out writes with
// --confidence) and the nominal optima, cell for cell; whose answer names
// the nominal and the robust plans; which draws every design's price of
// certainty and the spread of its scenario optima; and which is the same
// bytes when run again.
func TestReportOptimizeRobust(t *testing.T) {
	dir := t.TempDir()
	rep, out := filepath.Join(dir, "r.html"), filepath.Join(dir, "robust.csv")
	args := []string{"optimize", "--goal", "cost", "--rps", "5", "--duration", "60s", "--designs", "Baseline-H100,HH", "--max-machines", "12",
		"--confidence", "0.8", "--scenarios", "5", "--report", rep}
	code, text, errs := runCLI(t, append(args, "--out", out)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, doc := parseReport(t, rep)
	wantTable(t, data, "robust", out)
	if len(data.Tables) < 2 || data.Tables[0].Name != "robust" || data.Tables[1].Name != "optima" {
		t.Fatalf("tables %v: want robust, then optima", tableNames(data))
	}
	page, _ := os.ReadFile(rep)
	s := string(page)
	var pairs string
	for _, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(l, "GPU pairs scenarios won: "); ok {
			pairs = rest
		}
	}
	if pairs == "" {
		t.Fatalf("no GPU pairs line printed:\n%s", text)
	}
	for _, want := range []string{`id="table"`, `id="table-optima"`, `<figure id="certainty">`, `<figure id="spread">`, "How sure",
		"Robust at confidence 0.8:", "Nominal: ", "<dt>GPU pairs won</dt><dd>" + html.EscapeString(pairs) + "</dd>"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The answer's robust plan is the printed one.
	robustLine := ""
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "robust    ") && strings.Contains(l, "meets every SLO in ") {
			robustLine = l
		}
	}
	if robustLine == "" {
		t.Fatalf("no robust plan printed:\n%s", text)
	}
	design, _, _ := strings.Cut(strings.TrimPrefix(robustLine, "robust    "), ":")
	if answer := nodeText(findID(doc, "answer")); !strings.Contains(answer, "Robust at confidence 0.8: "+design+",") {
		t.Errorf("answer %q does not name the printed robust plan (%s)", answer, robustLine)
	}
	// Every design's price of certainty is drawn (the text run scans the
	// winner's alone): each design with a plan has a series.
	tips := tipsUnder(findID(doc, "certainty"))
	for _, d := range []string{"Baseline-H100", "Splitwise-HH"} {
		n := 0
		for _, tip := range tips {
			if strings.HasPrefix(tip, d+" at confidence ") {
				n++
			}
		}
		if n < 2 {
			t.Errorf("price of certainty: %d points of %s, want its whole curve (tips %q)", n, d, tips)
		}
	}
	// The flag on robust plans below their nominal optimum is in the
	// page exactly when the printed table has it.
	if inText, inPage := strings.Contains(text, "ROBUST below NOMINAL"), strings.Contains(s, "ROBUST below NOMINAL"); inText != inPage {
		t.Errorf("below-nominal note: printed %v, in the report %v", inText, inPage)
	}
	checkDataGolden(t, data, "optimize_robust")
	if code, _, errs := runCLI(t, append(args, "--out", out)...); code != 0 {
		t.Fatalf("again: exit %d: %s", code, errs)
	}
	again, _ := os.ReadFile(rep)
	if !bytes.Equal(page, again) {
		t.Error("the same run wrote a different report")
	}
	// A run whose robust plan is below its nominal optimum (few
	// scenarios): the note is printed and in the page.
	rep3 := filepath.Join(dir, "below.html")
	code, text, errs = runCLI(t, "optimize", "--goal", "power", "--rps", "20", "--designs", "HA", "--confidence", "0.9", "--scenarios", "4", "--report", rep3)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	page3, _ := os.ReadFile(rep3)
	if !strings.Contains(text, "(ROBUST below NOMINAL for Splitwise-HA:") || !strings.Contains(string(page3), "ROBUST below NOMINAL for Splitwise-HA:") {
		t.Errorf("the below-nominal note is missing from the text or the page:\n%s", text)
	}
}

// TestReportOptimizeSensitivity: optimize --sensitivity --report draws the
// tornado, one bar per input and step whose tip names the plan of that
// row of the CSV --sensitivity-out writes, and shows that CSV as a table,
// cell for cell, after the optima; with --confidence the robust table
// comes first and "How sure" before the tornado's section. The same run
// writes the same bytes; --sensitivity-out without --sensitivity is
// refused and writes nothing.
func TestReportOptimizeSensitivity(t *testing.T) {
	dir := t.TempDir()
	rep, sens := filepath.Join(dir, "s.html"), filepath.Join(dir, "s.csv")
	args := []string{"optimize", "--goal", "cost", "--rps", "5", "--duration", "60s", "--designs", "HH,Baseline-H100", "--max-machines", "12",
		"--sensitivity", "--sensitivity-out", sens, "--report", rep}
	code, text, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(text, "sensitivity  the best plan when one input moves") {
		t.Errorf("the sensitivity table is not printed:\n%s", text)
	}
	data, doc := parseReport(t, rep)
	wantTable(t, data, "sensitivity", sens)
	if names := tableNames(data); len(names) < 2 || names[0] != "optima" || names[1] != "sensitivity" {
		t.Fatalf("tables %v: want optima, then sensitivity", names)
	}
	recs := csvRecords(t, sens)
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	fig := findID(doc, "tornado")
	if fig == nil {
		t.Fatal("no tornado figure")
	}
	tips := tipsUnder(fig)
	if len(tips) != len(recs)-2 {
		t.Fatalf("%d bars in the tornado, want one per moved row of the CSV (%d): %q", len(tips), len(recs)-2, tips)
	}
	for _, rec := range recs[2:] {
		ch, err := strconv.ParseFloat(rec[col["change"]], 64)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%s %+g%%: %s, %sP/%sT", rec[col["input"]], 100*ch, rec[col["design"]], rec[col["prompt_machines"]], rec[col["token_machines"]])
		if rec[col["design"]] == "Baseline-H100" {
			want = fmt.Sprintf("%s %+g%%: %s, %s machines", rec[col["input"]], 100*ch, rec[col["design"]], rec[col["prompt_machines"]])
		}
		if !slices.ContainsFunc(tips, func(tip string) bool { return strings.HasPrefix(tip, want) }) {
			t.Errorf("no bar reads %q (tips %q)", want, tips)
		}
	}
	page, _ := os.ReadFile(rep)
	if code, _, errs := runCLI(t, args...); code != 0 {
		t.Fatalf("again: exit %d: %s", code, errs)
	}
	if again, _ := os.ReadFile(rep); !bytes.Equal(page, again) {
		t.Error("the same run wrote a different report")
	}
	// With --confidence: the robust table first, the sections in order.
	rep2 := filepath.Join(dir, "rs.html")
	code, _, errs = runCLI(t, "optimize", "--goal", "cost", "--rps", "5", "--duration", "60s", "--designs", "HH", "--max-machines", "12",
		"--confidence", "0.8", "--scenarios", "3", "--sensitivity", "--report", rep2)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data2, _ := parseReport(t, rep2)
	if names := tableNames(data2); len(names) < 3 || names[0] != "robust" || names[1] != "optima" || names[2] != "sensitivity" {
		t.Errorf("tables %v: want robust, optima, sensitivity", names)
	}
	page2, _ := os.ReadFile(rep2)
	s2 := string(page2)
	if i, j := strings.Index(s2, "<h2>How sure</h2>"), strings.Index(s2, "<h2>What the answer hinges on</h2>"); i < 0 || j < i {
		t.Errorf("sections: How sure at %d, What the answer hinges on at %d: want both, in that order", i, j)
	}
	out := filepath.Join(dir, "alone.csv")
	code, o, e := runCLI(t, "optimize", "--goal", "cost", "--rps", "5", "--duration", "60s", "--designs", "HH", "--sensitivity-out", out)
	wantBadInput(t, code, o, e, "--sensitivity-out", "--sensitivity")
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused run left a file")
	}
}

// tableNames lists the report's tables by name.
func tableNames(d reportData) []string {
	var out []string
	for _, t := range d.Tables {
		out = append(out, t.Name)
	}
	return out
}

// findID is the element of id under n, or nil.
func findID(n *html.Node, id string) *html.Node {
	for e := range n.Descendants() {
		if e.Type == html.ElementNode && slices.Contains(e.Attr, html.Attribute{Key: "id", Val: id}) {
			return e
		}
	}
	return nil
}

// tipsUnder lists the tooltips (data-tip) of the elements under n.
func tipsUnder(n *html.Node) []string {
	var tips []string
	for e := range n.Descendants() {
		for _, a := range e.Attr {
			if a.Key == "data-tip" {
				tips = append(tips, a.Val)
			}
		}
	}
	return tips
}

// nodeText is the text under n ("" for nil).
func nodeText(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}
