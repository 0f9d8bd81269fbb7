package cli

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromiumPath is a headless-capable Chromium on this machine, or "".
func chromiumPath() string {
	if p := os.Getenv("SPLITPLAN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browserShotDir is where the browser test saves its screenshots: the
// committed testdata/report with -update (the README shows one), else a
// git-ignored folder beside it, for review.
func browserShotDir(t *testing.T) string {
	dir := filepath.Join("testdata", "report")
	if !*updateGolden {
		dir = filepath.Join(dir, "browser-out")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// reviewDir is the git-ignored folder of the screenshots saved for review
// only.
func reviewDir(t *testing.T) string {
	dir := filepath.Join("testdata", "report", "browser-out")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// page is a report opened in headless Chromium, with what the browser
// reported while it was open.
type page struct {
	ctx      context.Context
	mu       sync.Mutex
	errors   []string
	requests []string
}

// openReport opens path from a file:// URL in a fresh tab of the
// allocator's browser, at width × height CSS pixels, recording console
// errors, uncaught exceptions and every network request but the page's
// own.
func openReport(t *testing.T, alloc context.Context, path string, width, height int64, mobile bool) *page {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return openURL(t, alloc, "file://"+abs, "", "#data", width, height, mobile)
}

// openURL opens url as openReport does and waits for the element ready;
// requests to URLs starting with allow (when not empty) are the page's own.
func openURL(t *testing.T, alloc context.Context, url, allow, ready string, width, height int64, mobile bool) *page {
	t.Helper()
	var err error
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	p := &page{ctx: ctx}
	console := func(typ runtime.ConsoleAPICalledType, args []*runtime.RemoteObject) {
		if typ == runtime.ConsoleAPICalledTypeError || typ == runtime.ConsoleAPICalledTypeWarning || typ == runtime.ConsoleAPICalledTypeAssert {
			var vals []string
			for _, a := range args {
				vals = append(vals, fmt.Sprint(a.Value)+a.Description)
			}
			p.errors = append(p.errors, fmt.Sprintf("console.%s: %s", typ, strings.Join(vals, " ")))
		}
	}
	request := func(u string) {
		if u != url && (allow == "" || !strings.HasPrefix(u, allow)) {
			p.requests = append(p.requests, u)
		}
	}
	err = chromedp.Listen(ctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			console(ev.Type, ev.Args)
		case runtime.EventConsoleAPICalled:
			console(ev.Type, ev.Args)
		case *runtime.EventExceptionThrown:
			p.errors = append(p.errors, fmt.Sprintf("exception: %s", ev.ExceptionDetails.Text))
		case runtime.EventExceptionThrown:
			p.errors = append(p.errors, fmt.Sprintf("exception: %s", ev.ExceptionDetails.Text))
		case *network.EventRequestWillBeSent:
			request(ev.Request.URL)
		case network.EventRequestWillBeSent:
			request(ev.Request.URL)
		}
	})
	if err != nil {
		t.Fatalf("listening to the browser: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("enabling network events: %v", err)
	}
	emulate := chromedp.EmulateViewport(width, height)
	if mobile {
		emulate = chromedp.EmulateViewport(width, height, chromedp.EmulateMobile)
	}
	if err := chromedp.Do(ctx, emulate, chromedp.Navigate(url), chromedp.WaitReady(ready)); err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
	return p
}

// check fails on any console error, exception or network request the
// page made.
func (p *page) check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.errors {
		t.Errorf("browser: %s", e)
	}
	for _, r := range p.requests {
		t.Errorf("the report made a network request: %s", r)
	}
}

// hover scrolls the first element matching sel into view and moves the
// mouse onto its centre, returning that point.
func (p *page) hover(t *testing.T, sel string) []float64 {
	t.Helper()
	js := fmt.Sprintf(`(function () { var e = document.querySelector(%q); e.scrollIntoView({block: "center"}); var r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`, sel)
	box, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]float64](js))
	if err != nil || len(box) != 2 {
		t.Fatalf("no %s: %v", sel, err)
	}
	if err := chromedp.Do(p.ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box[0], box[1])); err != nil {
		t.Fatalf("hovering %s: %v", sel, err)
	}
	return box
}

// noSidewaysScroll fails when the page is wider than its window (only
// tables may scroll sideways, in their own boxes).
func (p *page) noSidewaysScroll(t *testing.T) {
	t.Helper()
	over, err := chromedp.Run(p.ctx, chromedp.Evaluate[float64](`document.documentElement.scrollWidth - window.innerWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if over > 0 {
		t.Errorf("the page scrolls sideways by %g px (only tables may)", over)
	}
}

// drawnJS counts, per figure, the marks drawn inside a chart box of some
// size: a blank figure has none.
const drawnJS = `Array.from(document.querySelectorAll("figure")).map(function (f) {
  var s = f.querySelector("svg.chart"); if (!s) { return f.id + ":no svg"; }
  var r = s.getBoundingClientRect();
  var marks = s.querySelectorAll("circle.pt, rect.cell, path.line, rect.bar").length;
  return f.id + ":" + (r.width > 200 && r.height > 100 ? marks : "tiny " + r.width + "x" + r.height);
})`

// TestReportInBrowser opens the reports of the README's default optimize
// and of a simulate in headless Chromium from file:// URLs: no console
// error, no network request, every figure drawn, the Pareto point's
// tooltip and click detail read back, no page-wide horizontal scroll on a
// 390 px phone; screenshots saved for review.
func TestReportInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test runs a search and Chromium for several seconds")
	}
	bin := chromiumPath()
	if bin == "" {
		t.Skip("no Chromium found (apt-get install chromium, or set SPLITPLAN_CHROMIUM): the report's browser test is skipped")
	}
	dir := t.TempDir()
	opt, sim := filepath.Join(dir, "optimize.html"), filepath.Join(dir, "simulate.html")
	if code, _, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "70", "--report", opt); code != 0 {
		t.Fatalf("optimize: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, "simulate", "--design", "HH", "--prompt", "35", "--token", "5", "--rps", "70", "--duration", "60s", "--report", sim); code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, errs)
	}
	shots := browserShotDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Flag("hide-scrollbars", true))...)
	defer cancelAlloc()

	// The listeners see what they must refuse: a page that logs an error,
	// throws and fetches over the network fails each check.
	t.Run("detects", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.html")
		html := `<!DOCTYPE html><html><head><title>bad</title></head><body><p>x</p>` +
			`<script>console.error("broken"); fetch("http://127.0.0.1:9/x").catch(function () {}); setTimeout(function () { null.f(); }, 0);</script>` +
			`<script type="application/json" id="data">{}</script></body></html>`
		if err := os.WriteFile(bad, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
		p := openReport(t, alloc, bad, 800, 600, false)
		if err := chromedp.Do(p.ctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.errors) < 2 || len(p.requests) == 0 {
			t.Errorf("a page with a console error, an exception and a fetch: errors %q, requests %q; the listeners miss them", p.errors, p.requests)
		}
	})

	t.Run("optimize", func(t *testing.T) {
		start := time.Now()
		p := openReport(t, alloc, opt, 1280, 800, false)
		t.Logf("opened in %s", time.Since(start).Round(time.Millisecond))
		// "Opens in under a second": the page's own load time, from the
		// navigation to the end of its load event.
		loadMS, err := chromedp.Run(p.ctx, chromedp.Evaluate[float64](`performance.getEntriesByType("navigation")[0].loadEventEnd`))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("the page loaded in %.0f ms", loadMS)
		if loadMS <= 0 || loadMS > 1000 {
			t.Errorf("the report took %.0f ms to load, want under a second", loadMS)
		}
		drawn, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](drawnJS))
		if err != nil {
			t.Fatal(err)
		}
		if len(drawn) < 3 {
			t.Fatalf("%d figures, want the Pareto, the percentiles and the heatmaps: %q", len(drawn), drawn)
		}
		for _, d := range drawn {
			if _, n, _ := strings.Cut(d, ":"); n == "0" || strings.HasPrefix(n, "tiny") || strings.HasPrefix(n, "no") {
				t.Errorf("figure %s is blank", d)
			}
		}
		// Hover the first Pareto point with the mouse and read the tooltip.
		box := p.hover(t, "#pareto circle.pt")
		hidden, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`document.getElementById("tip").hidden`))
		if err != nil {
			t.Fatal(err)
		}
		tip, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.getElementById("tip").textContent`))
		if err != nil {
			t.Fatal(err)
		}
		if hidden || !strings.Contains(tip, "binding SLO") || !strings.Contains(tip, "$") || !strings.Contains(tip, "kW") || !strings.Contains(tip, "machines") {
			t.Errorf("the Pareto point's tooltip (hidden %v) reads %q; want counts, cost, power and the binding SLO", hidden, tip)
		}
		if err := chromedp.Do(p.ctx, chromedp.MouseClickXY(box[0], box[1])); err != nil {
			t.Fatal(err)
		}
		detail, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.querySelector("#pareto .detail").textContent`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(detail, "latency percentiles") || !strings.Contains(detail, "P99 TTFT") {
			t.Errorf("clicking the Pareto point shows %q; want its latency percentiles", detail)
		}
		// Sorting: a click on the cost column orders the rows by cost.
		costs, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`(function () {
			var th = Array.from(document.querySelectorAll("#table th")).find(function (h) { return h.textContent === "cost_usd_per_h"; });
			th.click(); var i = Array.from(th.parentNode.children).indexOf(th);
			return Array.from(document.querySelectorAll("#table tbody tr")).map(function (r) { return r.cells[i].textContent; }); })()`))
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(costs); i++ {
			var a, b float64
			fmt.Sscan(costs[i-1], &a)
			fmt.Sscan(costs[i], &b)
			if a > b {
				t.Errorf("sorted by cost: %q", costs)
				break
			}
		}
		png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		writeShot(t, filepath.Join(shots, "optimize-1280x800.png"), png)
		if png, err = chromedp.Run(p.ctx, chromedp.FullScreenshot(100)); err != nil {
			t.Fatal(err)
		}
		writeShot(t, filepath.Join(reviewDir(t), "optimize-full.png"), png)
		p.check(t)
	})

	// The robust report: its two figures drawn, the price of
	// certainty's points hovered, both tables sortable, no sideways
	// scroll on a phone.
	t.Run("robust", func(t *testing.T) {
		rob := filepath.Join(dir, "robust.html")
		if code, _, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "20", "--duration", "60s", "--designs", "HH,Baseline-H100", "--confidence", "0.8", "--scenarios", "6", "--report", rob); code != 0 {
			t.Fatalf("optimize --confidence: exit %d: %s", code, errs)
		}
		figurePage(t, alloc, rob, "optimize-robust-full.png", []string{"certainty", "spread"}, "#certainty circle.pt",
			[]string{"at confidence", "scenarios"}, 2)
	})

	// The sensitivity report: the tornado drawn, a bar's tooltip names
	// the plan with that input moved, the optima and sensitivity tables
	// sortable, no sideways scroll on a phone.
	t.Run("sensitivity", func(t *testing.T) {
		sens := filepath.Join(dir, "sensitivity.html")
		if code, _, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "20", "--duration", "30s", "--designs", "HH", "--sensitivity", "--report", sens); code != 0 {
			t.Fatalf("optimize --sensitivity: exit %d: %s", code, errs)
		}
		figurePage(t, alloc, sens, "optimize-sensitivity-full.png", []string{"tornado"}, "#tornado rect.bar",
			[]string{"%: Splitwise-HH, ", "$"}, 2)
	})

	t.Run("phone", func(t *testing.T) {
		p := openReport(t, alloc, opt, 390, 844, true)
		p.noSidewaysScroll(t)
		png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		writeShot(t, filepath.Join(shots, "optimize-390.png"), png)
		p.check(t)
	})

	// serve: change the rate in the page's form, run, read the new answer.
	t.Run("serve", func(t *testing.T) {
		ts := httptest.NewServer(newServeHandler())
		defer ts.Close()
		p := openURL(t, alloc, ts.URL+"/", ts.URL, "#question-form", 1280, 800, false)
		if err := chromedp.Do(p.ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("input[name=rps]").value = "40"; document.querySelector("input[name=designs]").value = "HH,Baseline-H100"; document.getElementById("run").click();`),
			chromedp.WaitReady("#answer")); err != nil {
			t.Fatalf("running from the page: %v", err)
		}
		answer, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.getElementById("answer").textContent + "|" + JSON.parse(document.getElementById("data").textContent).command + "|" + document.querySelector("input[name=rps]").value`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(answer, "Best: ") || !strings.Contains(answer, "--rps 40") || !strings.Contains(answer, "--designs HH,Baseline-H100") || !strings.HasSuffix(answer, "|40") {
			t.Errorf("after a re-run at 40 req/s the page reads %q", answer)
		}
		drawn, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](drawnJS))
		if err != nil || len(drawn) < 2 {
			t.Errorf("figures after the re-run: %q (%v)", drawn, err)
		}
		png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		writeShot(t, filepath.Join(reviewDir(t), "serve-rerun.png"), png)
		p.check(t)
	})

	t.Run("simulate", func(t *testing.T) {
		p := openReport(t, alloc, sim, 1280, 800, false)
		drawn, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](drawnJS))
		if err != nil {
			t.Fatal(err)
		}
		if len(drawn) != 2 {
			t.Errorf("figures %q, want the latency CDFs and the busy shares", drawn)
		}
		for _, d := range drawn {
			if _, n, _ := strings.Cut(d, ":"); n == "0" || strings.HasPrefix(n, "tiny") || strings.HasPrefix(n, "no") {
				t.Errorf("figure %s is blank", d)
			}
		}
		png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		writeShot(t, filepath.Join(reviewDir(t), "simulate-full.png"), png)
		p.check(t)
	})
}

// figurePage opens the report at path on a wide screen: every figure
// drawn, the figures want among them; hovering the first element of hover
// shows a tooltip holding each of tip; tables sortable tables; a full
// screenshot saved as shot for review; then no sideways scroll on a
// phone.
func figurePage(t *testing.T, alloc context.Context, path, shot string, want []string, hover string, tip []string, tables int) {
	t.Helper()
	p := openReport(t, alloc, path, 1280, 800, false)
	drawn, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](drawnJS))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range drawn {
		id, n, _ := strings.Cut(d, ":")
		seen[id] = true
		if n == "0" || strings.HasPrefix(n, "tiny") || strings.HasPrefix(n, "no") {
			t.Errorf("figure %s is blank", d)
		}
	}
	for _, id := range want {
		if !seen[id] {
			t.Errorf("figures %q: want %s", drawn, id)
		}
	}
	p.hover(t, hover)
	got, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.getElementById("tip").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range tip {
		if !strings.Contains(got, w) {
			t.Errorf("the tooltip of %s reads %q, want %q in it", hover, got, w)
		}
	}
	n, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.querySelectorAll("table.sortable").length`))
	if err != nil || n != tables {
		t.Errorf("%d sortable tables (%v), want %d", n, err, tables)
	}
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	writeShot(t, filepath.Join(reviewDir(t), shot), png)
	p.check(t)
	ph := openReport(t, alloc, path, 390, 844, true)
	ph.noSidewaysScroll(t)
	ph.check(t)
}

// writeShot saves a screenshot.
func writeShot(t *testing.T, path string, png []byte) {
	t.Helper()
	if len(png) == 0 {
		t.Errorf("empty screenshot %s", path)
		return
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}
