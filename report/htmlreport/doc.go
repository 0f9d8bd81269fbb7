// Package htmlreport writes one self-contained HTML file of a run's
// answer (optimize, sweep, evaluate, simulate --report): the question, the
// answer, the tables the run's CSV writers write (embedded once as JSON,
// cell for cell the CSV's text) and interactive figures drawn as inline
// SVG with a few lines of embedded script for hover and click.
//
// The file needs no network at view time: styles and script are embedded,
// fonts are the system's. The same inputs give byte-identical HTML (no
// timestamps, every order fixed).
package htmlreport
