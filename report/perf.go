package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/analytic"
)

// ValidationCSVColumns is the header of WriteValidationCSV.
var ValidationCSVColumns = []string{"model", "hardware", "tp", "prompt_mape_pct", "token_mape_pct", "test_rows", "train_rows",
	"compat_prompt_mape_pct", "compat_token_mape_pct"}

// WriteValidationCSV writes validation rows as CSV, percentages to 4
// decimal places (empty where no row was held out: NaN).
func WriteValidationCSV(w io.Writer, v []perf.ValidationRow) error {
	cw := csv.NewWriter(w)
	cw.Write(ValidationCSVColumns)
	f := func(x float64) string { return fixedOr(x, 4, "") }
	for _, r := range v {
		cw.Write([]string{r.Model, r.Hardware, strconv.Itoa(r.TP), f(r.PromptMAPEPct), f(r.TokenMAPEPct),
			strconv.Itoa(r.TestRows), strconv.Itoa(r.TrainRows), f(r.CompatPromptMAPEPct), f(r.CompatTokenMAPEPct)})
	}
	cw.Flush()
	return cw.Error()
}

// ReadValidationCSV reads a file written by WriteValidationCSV (name is the
// file's name for messages). Its percentages are those of the file: rounded
// to 4 decimal places by the writer.
func ReadValidationCSV(r io.Reader, name string) ([]perf.ValidationRow, error) {
	t, err := readCSVFrom(r, name, ValidationCSVColumns, "a validation CSV (perf validate --format csv)")
	if err != nil {
		return nil, err
	}
	out := make([]perf.ValidationRow, 0, len(t.rows))
	for i := range t.rows {
		c := t.row(i)
		v := perf.ValidationRow{Model: c.str("model"), Hardware: c.str("hardware"), TP: c.integer("tp"),
			PromptMAPEPct: c.num("prompt_mape_pct", true), TokenMAPEPct: c.num("token_mape_pct", true),
			TestRows: c.integer("test_rows"), TrainRows: c.integer("train_rows"),
			CompatPromptMAPEPct: c.num("compat_prompt_mape_pct", true), CompatTokenMAPEPct: c.num("compat_token_mape_pct", true)}
		switch {
		case v.Model == "":
			c.fail("model", "a model name")
		case v.Hardware == "":
			c.fail("hardware", "a hardware name")
		}
		if c.err != nil {
			return nil, c.err
		}
		out = append(out, v)
	}
	return out, nil
}

// WriteValidationTable writes validation rows as an aligned table.
func WriteValidationTable(w io.Writer, v []perf.ValidationRow, path string, seed uint64) error {
	fmt.Fprintf(w, "MAPE of the default fit on a held-out 20%% of each pair's rows (%s, seed %d)\n\n", path, seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\thardware\ttp\tprompt MAPE %\ttoken MAPE %\ttest rows\tcompat prompt %\tcompat token %\t")
	pct := func(x float64) string { return fixedOr(x, 2, "—") } // —: no row held out
	for _, r := range v {
		tp := strconv.Itoa(r.TP)
		if r.Model == perf.AllPairs {
			tp = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t\n", r.Model, r.Hardware, tp,
			pct(r.PromptMAPEPct), pct(r.TokenMAPEPct), r.TestRows, pct(r.CompatPromptMAPEPct), pct(r.CompatTokenMAPEPct))
	}
	return tw.Flush()
}

// WriteTransfer writes the analytic model's transfer check: fitted on one
// GPU's profile rows, its error on another GPU's rows it never saw.
func WriteTransfer(w io.Writer, tr analytic.TransferResult) error {
	_, err := fmt.Fprintf(w, "\nanalytic model fitted on the %s rows (in-sample MAPE %.1f%% prompt, %.1f%% decode),\n"+
		"predicting the %s rows it never saw (held-out, %d iterations each): MAPE %.1f%% prompt, %.1f%% decode\n",
		tr.From, tr.InPromptMAPE, tr.InDecodeMAPE, tr.To, tr.Samples, tr.PromptMAPE, tr.DecodeMAPE)
	return err
}
