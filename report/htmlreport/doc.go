// Package htmlreport writes one self-contained HTML file of a run's
// answer (optimize, sweep, evaluate, simulate --report): the question, the
// answer, the tables the run's CSV writers write (embedded once as JSON,
// cell for cell the CSV's text) and interactive figures drawn as inline
// SVG with a few lines of embedded script for hover and click.
//
// The figures are inline SVG drawn here, with about sixty lines of
// embedded script for tooltips, click details and table sorting, rather
// than a vendored charting library (uPlot, Vega-Lite, ECharts): the
// figures are few and static (scatter, lines, step CDFs, heatmaps, bars),
// SVG keeps every mark a DOM element a test can find and hover, the
// output is byte-for-byte deterministic, and the report of the README's
// default optimize stays near 160 KB with nothing third-party to license.
// Colours are the Okabe–Ito colour-blind-safe palette; heatmaps use one
// hue from light to dark.
//
// The file needs no network at view time: styles and script are embedded,
// fonts are the system's. The same inputs give byte-identical HTML (no
// timestamps, every order fixed).
package htmlreport
