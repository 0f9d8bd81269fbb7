package htmlreport

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

//go:embed assets/style.css
var styleCSS string

//go:embed assets/script.js
var scriptJS string

// Field is one line of the question: a label and its text.
type Field struct {
	Label, Text string
}

// Table is one CSV table as a run's CSV writer writes it: its columns and
// its rows, every cell the CSV's own text (so the embedded data are the
// CSV's numbers, digit for digit).
type Table struct {
	// Name names the table ("optima", "points", "load", "machines").
	Name string `json:"name"`
	// Flag is the command's flag that writes the same CSV ("--out").
	Flag string `json:"csv_flag"`
	// Columns is the CSV's header.
	Columns []string `json:"columns"`
	// Rows are its records.
	Rows [][]string `json:"rows"`
}

// TableOf runs a CSV writer into memory and reads its output back as a
// Table.
func TableOf(name, flag string, write func(io.Writer) error) (Table, error) {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return Table{}, fmt.Errorf("htmlreport: table %s: %w", name, err)
	}
	recs, err := ReadCSV(&buf)
	if err != nil {
		return Table{}, fmt.Errorf("htmlreport: table %s: %w", name, err)
	}
	t := Table{Name: name, Flag: flag, Columns: []string{}, Rows: [][]string{}}
	if len(recs) > 0 {
		t.Columns, t.Rows = recs[0], recs[1:]
	}
	return t, nil
}

// ReadCSV reads every record of a CSV (rows of any length).
func ReadCSV(r io.Reader) ([][]string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	return cr.ReadAll()
}

// Figure is one figure of the report: a Chart, a Heatmap, Bars or a
// Tornado.
type Figure interface {
	// SVG draws the figure as inline SVG (and its legend as HTML).
	SVG() string
}

// Section is a titled group of figures.
type Section struct {
	// Title heads the section; Note explains it.
	Title, Note string
	// Figures are drawn in order, two to a row on a wide screen.
	Figures []Figure
}

// Report is everything one report file shows.
type Report struct {
	// Title heads the page ("splitplan optimize: ...").
	Title string
	// Question lists what was asked: goal, rate or budget, workload,
	// model, SLOs, designs, the provenance and validation error of every
	// performance model.
	Question []Field
	// Answer is the winner, in one sentence.
	Answer string
	// Tables are embedded as JSON; the first (the first Shown, when it is
	// above one) are shown as sortable tables (MarkColumn non-empty marks
	// their rows, e.g. bounded designs).
	Tables []Table
	// Shown is how many of the first tables are shown (0: one).
	Shown int
	// MarkColumn names a column of the first table whose non-empty cells
	// mark their row, with MarkLabel as the mark's meaning.
	MarkColumn, MarkLabel string
	// Sections hold the figures.
	Sections []Section
	// Command is the command line that reproduces the report; Version the
	// build's version.
	Command, Version string
}

// data is the embedded JSON.
type data struct {
	Command string  `json:"command"`
	Version string  `json:"version"`
	Tables  []Table `json:"tables"`
}

// DataJSON is the JSON the report embeds: the command, the version and
// every table.
func (r *Report) DataJSON() ([]byte, error) {
	tables := r.Tables
	if tables == nil {
		tables = []Table{}
	}
	return json.Marshal(data{Command: r.Command, Version: r.Version, Tables: tables})
}

// Write writes the report as one HTML document.
func (r *Report) Write(w io.Writer) error {
	js, err := r.DataJSON()
	if err != nil {
		return fmt.Errorf("htmlreport: %w", err)
	}
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", esc(r.Title), styleCSS)
	fmt.Fprintf(&b, "<h1>%s</h1>\n", esc(r.Title))
	if r.Answer != "" {
		fmt.Fprintf(&b, "<p class=\"answer\" id=\"answer\">%s</p>\n", esc(r.Answer))
	}
	b.WriteString("<section id=\"question\"><h2>The question</h2>\n<dl>\n")
	for _, f := range r.Question {
		fmt.Fprintf(&b, "<dt>%s</dt><dd>%s</dd>\n", esc(f.Label), esc(f.Text))
	}
	b.WriteString("</dl>\n</section>\n")
	for i := range min(max(r.Shown, 1), len(r.Tables)) {
		id := "table"
		if i > 0 {
			id = "table-" + r.Tables[i].Name
		}
		r.writeTable(&b, r.Tables[i], id)
	}
	for i, s := range r.Sections {
		fmt.Fprintf(&b, "<section class=\"figs\" id=\"figs%d\"><h2>%s</h2>\n", i, esc(s.Title))
		if s.Note != "" {
			fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", esc(s.Note))
		}
		b.WriteString("<div class=\"grid\">\n")
		for _, f := range s.Figures {
			writeFigure(&b, f)
		}
		b.WriteString("</div>\n</section>\n")
	}
	b.WriteString("<section id=\"reproduce\"><h2>Reproduce</h2>\n")
	fmt.Fprintf(&b, "<pre class=\"cmd\">%s</pre>\n<p class=\"note\">splitplan %s. The tables are embedded once as JSON (script#data), cell for cell the CSV files the same flags write", esc(r.Command), esc(r.Version))
	var flags []string
	for _, t := range r.Tables {
		flags = append(flags, fmt.Sprintf("%s: %s", t.Name, t.Flag))
	}
	if len(flags) > 0 {
		fmt.Fprintf(&b, " (%s)", esc(strings.Join(flags, "; ")))
	}
	b.WriteString(".</p>\n</section>\n</main>\n<div id=\"tip\" role=\"tooltip\" hidden></div>\n")
	fmt.Fprintf(&b, "<script type=\"application/json\" id=\"data\">%s</script>\n<script>\n%s</script>\n</body>\n</html>\n", js, scriptJS)
	_, err = io.WriteString(w, b.String())
	return err
}

// writeFigure writes one figure in its box.
func writeFigure(b *strings.Builder, f Figure) {
	var id, title, note string
	switch f := f.(type) {
	case *Chart:
		id, title, note = f.ID, f.Title, f.Note
	case *Heatmap:
		id, title, note = f.ID, f.Title, f.Note
	case *Bars:
		id, title, note = f.ID, f.Title, f.Note
	case *Tornado:
		id, title, note = f.ID, f.Title, f.Note
	}
	fmt.Fprintf(b, "<figure id=\"%s\"><figcaption>%s</figcaption>\n%s\n", esc(id), esc(title), f.SVG())
	if note != "" {
		fmt.Fprintf(b, "<p class=\"note\">%s</p>\n", esc(note))
	}
	b.WriteString("<div class=\"detail\" aria-live=\"polite\"></div></figure>\n")
}

// writeTable writes t as a sortable table (the page's script sorts it by
// a header's click) in a section of that id.
func (r *Report) writeTable(b *strings.Builder, t Table, id string) {
	mark := -1
	for i, c := range t.Columns {
		if c == r.MarkColumn && r.MarkColumn != "" {
			mark = i
		}
	}
	fmt.Fprintf(b, "<section id=\"%s\"><h2>Every result (%s, as %s writes it)</h2>\n", esc(id), esc(t.Name), esc(t.Flag))
	if mark >= 0 {
		fmt.Fprintf(b, "<p class=\"note\">Click a column to sort. Rows marked ⚑ are %s (column %s).</p>\n", esc(r.MarkLabel), esc(r.MarkColumn))
	} else {
		b.WriteString("<p class=\"note\">Click a column to sort.</p>\n")
	}
	b.WriteString("<div class=\"scroll\"><table class=\"sortable\">\n<thead><tr>")
	for _, c := range t.Columns {
		fmt.Fprintf(b, "<th scope=\"col\">%s</th>", esc(c))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, row := range t.Rows {
		cls := ""
		if mark >= 0 && mark < len(row) && row[mark] != "" {
			cls = " class=\"marked\""
		}
		fmt.Fprintf(b, "<tr%s>", cls)
		for i, c := range row {
			if i == 0 && cls != "" {
				c = "⚑ " + c
			}
			fmt.Fprintf(b, "<td>%s</td>", esc(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table></div>\n</section>\n")
}
