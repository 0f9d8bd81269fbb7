package study

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
)

// The merged table as JSON: {"columns": [...], "rows": [{column: value}]},
// each row's keys in column order. A value is a JSON number where its CSV
// text is a JSON number literal (written as that text), true or false
// where it is that word, and a string otherwise, so ReadJSON gives back
// the CSV's text exactly.

var jsonNumberRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// WriteJSON writes the merged CSV table merged (as Merge returns it) as JSON.
func WriteJSON(w io.Writer, merged []byte) error {
	recs, err := csv.NewReader(bytes.NewReader(merged)).ReadAll()
	if err != nil {
		return fmt.Errorf("study: merged table: %w", err)
	}
	if len(recs) == 0 {
		recs = [][]string{{}}
	}
	bw := bufio.NewWriter(w)
	cols, _ := json.Marshal(recs[0])
	fmt.Fprintf(bw, "{\n  \"columns\": %s,\n  \"rows\": [", cols)
	for i, r := range recs[1:] {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n    {")
		for k, v := range r {
			if k > 0 {
				bw.WriteString(", ")
			}
			key, _ := json.Marshal(recs[0][k])
			bw.Write(key)
			bw.WriteString(": ")
			switch {
			case jsonNumberRE.MatchString(v), v == "true", v == "false":
				bw.WriteString(v)
			default:
				s, _ := json.Marshal(v)
				bw.Write(s)
			}
		}
		bw.WriteString("}")
	}
	if len(recs) > 1 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
}

// ReadJSON reads a table written by WriteJSON and returns its records as
// the CSV holds them: the columns, then one record per row.
func ReadJSON(r io.Reader) ([][]string, error) {
	var doc struct {
		Columns []string                     `json:"columns"`
		Rows    []map[string]json.RawMessage `json:"rows"`
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("study: JSON table: %w", err)
	}
	out := [][]string{doc.Columns}
	for i, row := range doc.Rows {
		if len(row) != len(doc.Columns) {
			return nil, fmt.Errorf("study: JSON table: row %d has %d values, want %d columns", i+1, len(row), len(doc.Columns))
		}
		rec := make([]string, len(doc.Columns))
		for k, c := range doc.Columns {
			raw, ok := row[c]
			if !ok {
				return nil, fmt.Errorf("study: JSON table: row %d has no %q", i+1, c)
			}
			var s string
			switch {
			case len(raw) > 0 && raw[0] == '"':
				if err := json.Unmarshal(raw, &s); err != nil {
					return nil, fmt.Errorf("study: JSON table: row %d, %q: %w", i+1, c, err)
				}
			case jsonNumberRE.Match(raw), string(raw) == "true", string(raw) == "false":
				s = string(raw)
			default:
				return nil, fmt.Errorf("study: JSON table: row %d, %q: %s is not a string, number or boolean", i+1, c, raw)
			}
			rec[k] = s
		}
		out = append(out, rec)
	}
	return out, nil
}
