package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"splitplan/evaluator/perf"
)

// WriteValidationCSV writes validation rows as CSV.
func WriteValidationCSV(w io.Writer, v []perf.ValidationRow) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"model", "hardware", "tp", "prompt_mape_pct", "token_mape_pct", "test_rows", "train_rows",
		"compat_prompt_mape_pct", "compat_token_mape_pct"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
	for _, r := range v {
		cw.Write([]string{r.Model, r.Hardware, strconv.Itoa(r.TP), f(r.PromptMAPEPct), f(r.TokenMAPEPct),
			strconv.Itoa(r.TestRows), strconv.Itoa(r.TrainRows), f(r.CompatPromptMAPEPct), f(r.CompatTokenMAPEPct)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteValidationTable writes validation rows as an aligned table.
func WriteValidationTable(w io.Writer, v []perf.ValidationRow, path string, seed uint64) error {
	fmt.Fprintf(w, "MAPE of the default fit on a held-out 20%% of each pair's rows (%s, seed %d)\n\n", path, seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\thardware\ttp\tprompt MAPE %\ttoken MAPE %\ttest rows\tcompat prompt %\tcompat token %\t")
	for _, r := range v {
		tp := strconv.Itoa(r.TP)
		if r.Model == perf.AllPairs {
			tp = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.2f\t%d\t%.2f\t%.2f\t\n", r.Model, r.Hardware, tp,
			r.PromptMAPEPct, r.TokenMAPEPct, r.TestRows, r.CompatPromptMAPEPct, r.CompatTokenMAPEPct)
	}
	return tw.Flush()
}
