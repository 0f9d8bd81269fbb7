package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
)

// serveMaxBody is the largest request body serve reads: a form of a few
// fields is far smaller.
const serveMaxBody = 16 << 10

// serveFields are the optimize flags the page may change, in the form's
// order: the question, never an output path.
var serveFields = []struct{ name, label, def, hint string }{
	{"goal", "goal", "cost", "cost, power, energy, tco, throughput or batch"},
	{"rps", "rate (req/s)", "70", "for cost, power, energy and tco"},
	{"power-budget", "power budget (kW)", "", "for throughput and batch"},
	{"cost-budget", "cost budget ($/h)", "", "for throughput and batch"},
	{"workload", "workload", "coding", "coding or conversation"},
	{"model", "model", "bloom-176b", "splitplan catalog lists them"},
	{"designs", "designs", "all", "e.g. HH,HA,Baseline-H100"},
	{"slo-ttft", "TTFT limits (P50,P90,P99 ×)", "2,3,6", "slowdowns"},
	{"slo-tbt", "TBT limits (P50,P90,P99 ×)", "1.25,1.5,5", "slowdowns"},
	{"slo-e2e", "E2E limits (P50,P90,P99 ×)", "1.25,1.5,5", "slowdowns"},
	{"verify", "verify over", "15m", "every optimum checked over this much of the same traffic (a scenario's points too); 0 checks none"},
	{"confidence", "confidence (robust plan)", "", "e.g. 0.9, for cost and power: error bars, about 30× the search's time (each scenario's points checked as the optima)"},
	{"scenarios", "scenarios", "", "with a confidence; default 32"},
	{"sensitivity", "sensitivity (yes or no)", "", "yes: the search again with each input moved ±10% and ±25%, about 10× its time"},
}

// serveSwitches are the fields of serveFields that are switches: yes or
// no (true or false), passed as --NAME=true or --NAME=false.
var serveSwitches = map[string]bool{"sensitivity": true}

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "a local web page where optimize's question (goal, rate or budget, workload, model, SLOs, designs, confidence) can be changed and re-run; the answer is the --report page",
		UsageText: "splitplan serve [--addr 127.0.0.1:8080]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", Usage: "`HOST:PORT` to listen on (loopback by default: the page runs searches on this machine)"},
		},
		Action: serve,
	}
}

func serve(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	addr := c.String("addr")
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return badInputf("--addr %s: expected HOST:PORT, e.g. 127.0.0.1:8080: %v", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return badInputf("--addr %s: %v", addr, err)
	}
	srv := &http.Server{Handler: newServeHandler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(c.App.Writer, "serving   http://%s/ (Ctrl-C stops)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-c.Context.Done():
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(ctx)
	case err := <-done:
		return err
	}
}

// serveHandler answers the page: GET / the form, POST / a run of optimize
// with the form's values, its report with the form above it.
type serveHandler struct {
	mu sync.Mutex // one search at a time: each uses every CPU
}

// newServeHandler is serve's HTTP handler.
func newServeHandler() http.Handler { return &serveHandler{} }

func (h *serveHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; form-action 'self'")
	switch r.Method {
	case http.MethodGet:
		vals := map[string]string{}
		for _, f := range serveFields {
			vals[f.name] = f.def
		}
		writeServePage(w, http.StatusOK, vals, "", "")
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, serveMaxBody)
		if err := r.ParseForm(); err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, fmt.Sprintf("request body over %d bytes", serveMaxBody), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.run(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
	}
}

// run runs optimize with the form's values; the run stops when the page
// goes away (the request's context ends).
func (h *serveHandler) run(w http.ResponseWriter, r *http.Request) {
	vals := map[string]string{}
	args := []string{"splitplan", "optimize"}
	for _, f := range serveFields {
		v := strings.TrimSpace(r.PostForm.Get(f.name))
		vals[f.name] = v
		switch {
		case v == "":
		case serveSwitches[f.name]:
			switch strings.ToLower(v) {
			case "yes", "y", "on":
				v = "true"
			case "no", "n", "off":
				v = "false"
			}
			args = append(args, "--"+f.name+"="+v)
		default:
			args = append(args, "--"+f.name, v)
		}
	}
	dir, err := os.MkdirTemp("", "splitplan-serve")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "report.html")
	args = append(args, "--report", path)
	h.mu.Lock()
	var stdout, stderr bytes.Buffer
	code := runContext(r.Context(), args, &stdout, &stderr)
	h.mu.Unlock()
	if r.Context().Err() != nil {
		return // the page went away: the search was cancelled
	}
	if code != 0 {
		status := http.StatusInternalServerError
		if code == 2 {
			status = http.StatusBadRequest
		}
		writeServePage(w, status, vals, strings.TrimSpace(stderr.String()), "")
		return
	}
	rep, err := os.ReadFile(path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeServePage(w, http.StatusOK, vals, "", string(rep))
}

// writeServePage writes the form with vals, an error when the run failed,
// and the run's report (the form goes at the top of its main element).
func writeServePage(w http.ResponseWriter, status int, vals map[string]string, errText, report string) {
	var f strings.Builder
	f.WriteString(`<form method="post" action="/" id="question-form" style="display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:6px 14px;margin:0 0 12px;padding:10px;border:1px solid #d0d0d0;border-radius:4px">`)
	for _, fl := range serveFields {
		fmt.Fprintf(&f, `<label style="display:flex;flex-direction:column;font-size:.85em">%s<input name="%s" value="%s" title="%s" style="font:inherit;padding:3px"></label>`,
			html.EscapeString(fl.label), fl.name, html.EscapeString(vals[fl.name]), html.EscapeString(fl.hint))
	}
	f.WriteString(`<button type="submit" id="run" style="align-self:end;padding:5px 12px;font:inherit">Run (about a second)</button></form>`)
	if errText != "" {
		fmt.Fprintf(&f, `<pre id="error" style="white-space:pre-wrap;background:#fff4e0;padding:8px">%s</pre>`, html.EscapeString(errText))
	}
	page := report
	if page == "" {
		page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>splitplan serve</title>\n</head>\n<body style=\"font:15px/1.45 system-ui,sans-serif;margin:0\">\n<main style=\"max-width:1320px;margin:0 auto;padding:16px 20px\">\n<h1 style=\"font-size:1.4em\">splitplan: ask optimize</h1>\n</main>\n</body>\n</html>\n"
	}
	// The form follows the page's title.
	if i := strings.Index(page, "</h1>"); i >= 0 {
		page = page[:i+5] + "\n" + f.String() + page[i+5:]
	} else {
		page = f.String() + page
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, page)
}
