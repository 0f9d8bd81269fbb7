package cli

// Golden tests of the whole command line, in the manner of
// golang.org/x/perf/cmd/benchstat: every testdata/cli/NAME.args holds one
// command line; the test runs it in-process through runContext and compares
// what it printed and wrote with the files next to it:
//
//	NAME.args     the command line after the program name, split like a shell
//	              does (whitespace, '...' and "..." quoting, \ escapes); it may
//	              span several lines. Lines starting with # are comments: the
//	              first is the example's title in docs/commands.md, later ones
//	              its description, "# needs: PATH" skips the case when PATH
//	              (relative to the repository root) is absent, e.g. ../shared,
//	              "# slow" skips the case under -short (a search of seconds),
//	              "# rerun" runs its determinism check under -short too,
//	              "# once" never runs it (a long search whose path other
//	              cases' determinism checks cover),
//	              and "# order: N" places the example among its command's in
//	              docs/commands.md (smaller first; default 50, then by name).
//	              $TMP stands for a fresh temporary directory: files the command
//	              writes must go there.
//	NAME.stdout   standard output (always present)
//	NAME.stderr   standard error; when absent, standard error must be empty
//	NAME.code     the exit status; when absent, 0
//	NAME.outputs  the files written under $TMP, one relative path a line;
//	              when absent, none may be written
//	NAME.files/   their contents, byte for byte, except PNG files, whose bytes
//	              differ across architectures (font rasterisation): those must
//	              only exist and be non-empty
//
// Before comparing, the temporary directory's path is replaced by $TMP in
// the output and the files, and the nondeterministic parts of the output
// are masked on both sides by goldenMasks (timings, the default worker
// count, the progress lines a slow search prints). Each case then runs a
// second time, with -j 1 when its command has -j, and must produce the
// same output and files byte for byte: the answers may not depend on the
// parallelism or on state left by the first run. Under -short (the tier
// run on every change) the cases marked "# slow" are skipped and only
// those marked "# rerun" run twice.
//
// Regenerate the goldens and docs/commands.md after an intended change:
//
//	go test ./cli/ -run TestCLIGolden -update
//
// and regenerate only docs/commands.md from the goldens with go generate.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// goldenDir holds the golden cases, relative to the repository root
// (the tests run there: see TestMain).
const goldenDir = "testdata/cli"

// goldenDocPath is the command reference generated from the golden cases.
const goldenDocPath = "docs/commands.md"

// goldenMasks replace the nondeterministic parts of a command's output, on
// both the golden and the actual side:
//   - "simulated N events in 14.731ms" (simulate): the wall time;
//   - "..., 1.611s on 2 workers" (optimize): the wall time and the worker
//     count, whose default is the number of CPUs;
//   - "optimize: 10s, 52 simulations, ..." lines on stderr: the progress a
//     search reports every 10 s of wall time when it is slow;
//   - "simulations run at once (default: 2)" in --help: the default of -j,
//     the number of CPUs.
var goldenMasks = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(simulated \d+ events in )\d[0-9.hmµun]*s`), "${1}<DURATION>"},
	{regexp.MustCompile(`, \d[0-9.hmµun]*s on \d+ workers?`), ", <DURATION> on <N> workers"},
	{regexp.MustCompile(`(with the nominal search's )\d[0-9.hmµun]*s, \d+\.\d× its time`), "${1}<DURATION>, <RATIO>× its time"},
	{regexp.MustCompile(`(?m)^optimize: \d[0-9hms]*, \d+ simulations, .*\n`), ""},
	{regexp.MustCompile(`(simulations run at once \(default: )\d+\)`), "${1}<N>)"},
}

// maskGolden applies goldenMasks to s.
func maskGolden(s string) string {
	for _, m := range goldenMasks {
		s = m.re.ReplaceAllString(s, m.repl)
	}
	return s
}

// updatingGoldens reports whether -update was given. The flag itself is
// defined by cmd_plot_test.go; looking it up keeps one -update for every
// golden file of the package.
func updatingGoldens() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// goldenCase is one testdata/cli/NAME.args file.
type goldenCase struct {
	Name    string
	Title   string   // first comment line
	Notes   []string // further comment lines
	Needs   []string // paths that must exist, else the case is skipped
	Order   int      // place in docs/commands.md among its command's examples
	Slow    bool     // "# slow": skipped under -short
	Rerun   bool     // "# rerun": run twice under -short too (determinism)
	Once    bool     // "# once": never run twice
	Command string   // the command line as written, joined into one line
	Args    []string // split; $TMP not yet expanded
}

// loadGoldenCases reads every NAME.args under dir, sorted by name.
func loadGoldenCases(dir string) ([]goldenCase, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.args"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: no *.args files", dir)
	}
	slices.Sort(paths)
	var cases []goldenCase
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		c, err := parseGoldenArgs(p, string(data))
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// parseGoldenArgs parses the text of an .args file at path.
func parseGoldenArgs(path, text string) (goldenCase, error) {
	c := goldenCase{Name: strings.TrimSuffix(filepath.Base(path), ".args"), Order: 50}
	var cmd []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "#"):
			comment := strings.TrimSpace(strings.TrimPrefix(line, "#"))
			if comment == "slow" {
				c.Slow = true
			} else if comment == "rerun" {
				c.Rerun = true
			} else if comment == "once" {
				c.Once = true
			} else if need, ok := strings.CutPrefix(comment, "needs:"); ok {
				c.Needs = append(c.Needs, strings.TrimSpace(need))
			} else if order, ok := strings.CutPrefix(comment, "order:"); ok {
				n, err := strconv.Atoi(strings.TrimSpace(order))
				if err != nil {
					return c, fmt.Errorf("%s: # order: %w (expected a whole number)", path, err)
				}
				c.Order = n
			} else if c.Title == "" {
				c.Title = comment
			} else {
				c.Notes = append(c.Notes, comment)
			}
		default:
			cmd = append(cmd, line)
		}
	}
	c.Command = strings.Join(cmd, " ")
	args, err := splitCommandLine(c.Command)
	if err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	if len(args) == 0 {
		return c, fmt.Errorf("%s: no command line (expected the arguments after the program name)", path)
	}
	if c.Title == "" {
		return c, fmt.Errorf("%s: no # comment line (expected a title for docs/commands.md)", path)
	}
	c.Args = args
	return c, nil
}

// splitCommandLine splits s into words the way a POSIX shell does, without
// expansions: blanks separate words, '...' quotes literally, "..." quotes
// with \" and \\ escapes, and \ escapes one character outside quotes.
func splitCommandLine(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' at column %d", i+1)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			inWord = true
		case ch == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("trailing \\ in %q", s)
			}
			i++
			w.WriteByte(s[i])
			inWord = true
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// goldenResult is what one run of a command printed and wrote, with the
// temporary directory replaced by $TMP and goldenMasks applied.
type goldenResult struct {
	Code           int
	Stdout, Stderr string
	Outputs        []string          // relative paths of the files written, sorted
	Files          map[string][]byte // their contents
}

// runGoldenCase runs args (with $TMP expanded to a fresh directory) and
// collects its result.
func runGoldenCase(t *testing.T, args []string) goldenResult {
	t.Helper()
	tmp := t.TempDir()
	full := []string{"splitplan"}
	for _, a := range args {
		full = append(full, strings.ReplaceAll(a, "$TMP", tmp))
	}
	var stdout, stderr bytes.Buffer
	code := runContext(context.Background(), full, &stdout, &stderr)
	unTmp := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(tmp), []byte("$TMP")) }
	res := goldenResult{
		Code:   code,
		Stdout: maskGolden(string(unTmp(stdout.Bytes()))),
		Stderr: maskGolden(string(unTmp(stderr.Bytes()))),
		Files:  map[string][]byte{},
	}
	err := filepath.WalkDir(tmp, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(tmp, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		res.Outputs = append(res.Outputs, rel)
		res.Files[rel] = unTmp(data)
		return nil
	})
	if err != nil {
		t.Fatalf("listing the files written: %v", err)
	}
	slices.Sort(res.Outputs)
	return res
}

// isPNG reports whether a written file is a PNG, whose bytes the goldens
// do not hold.
func isPNG(rel string) bool { return strings.EqualFold(filepath.Ext(rel), ".png") }

// goldenPath is the path of one of a case's golden files.
func goldenPath(name, suffix string) string { return filepath.Join(goldenDir, name+suffix) }

// readOptional reads path, returning ok false when it does not exist.
func readOptional(t *testing.T, path string) (string, bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data), true
}

// readGolden returns the golden result stored for the case name (file
// contents only for the files it lists).
func readGolden(t *testing.T, name string) goldenResult {
	t.Helper()
	var g goldenResult
	var ok bool
	if g.Stdout, ok = readOptional(t, goldenPath(name, ".stdout")); !ok {
		t.Fatalf("%s is missing (run go test ./cli/ -run TestCLIGolden -update)", goldenPath(name, ".stdout"))
	}
	g.Stdout = maskGolden(g.Stdout)
	g.Stderr, _ = readOptional(t, goldenPath(name, ".stderr"))
	g.Stderr = maskGolden(g.Stderr)
	if s, ok := readOptional(t, goldenPath(name, ".code")); ok {
		code, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("%s: %v (expected an exit status)", goldenPath(name, ".code"), err)
		}
		g.Code = code
	}
	if s, ok := readOptional(t, goldenPath(name, ".outputs")); ok {
		g.Outputs = strings.Fields(s)
	}
	g.Files = map[string][]byte{}
	for _, rel := range g.Outputs {
		if isPNG(rel) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(goldenPath(name, ".files"), filepath.FromSlash(rel)))
		if err != nil {
			t.Fatalf("golden file of an output: %v", err)
		}
		g.Files[rel] = data
	}
	return g
}

// writeGolden replaces the golden files of the case name with res.
func writeGolden(t *testing.T, name string, res goldenResult) {
	t.Helper()
	write := func(path, data string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(path string) {
		if err := os.RemoveAll(path); err != nil {
			t.Fatal(err)
		}
	}
	write(goldenPath(name, ".stdout"), res.Stdout)
	for _, f := range []struct {
		suffix, data string
		keep         bool
	}{
		{".stderr", res.Stderr, res.Stderr != ""},
		{".code", fmt.Sprintf("%d\n", res.Code), res.Code != 0},
		{".outputs", strings.Join(res.Outputs, "\n") + "\n", len(res.Outputs) > 0},
	} {
		if f.keep {
			write(goldenPath(name, f.suffix), f.data)
		} else {
			remove(goldenPath(name, f.suffix))
		}
	}
	remove(goldenPath(name, ".files"))
	for _, rel := range res.Outputs {
		if !isPNG(rel) {
			write(filepath.Join(goldenPath(name, ".files"), filepath.FromSlash(rel)), string(res.Files[rel]))
		}
	}
}

// compareGolden reports every difference between want and got; pngBytes
// says whether PNG contents are compared too (only between two runs on
// the same machine).
func compareGolden(t *testing.T, what string, want, got goldenResult, pngBytes bool) {
	t.Helper()
	if got.Code != want.Code {
		t.Errorf("%s: exit status %d, want %d", what, got.Code, want.Code)
	}
	if d := lineDiff(want.Stdout, got.Stdout); d != "" {
		t.Errorf("%s: stdout differs (- want, + got):\n%s", what, d)
	}
	if d := lineDiff(want.Stderr, got.Stderr); d != "" {
		t.Errorf("%s: stderr differs (- want, + got):\n%s", what, d)
	}
	if !slices.Equal(got.Outputs, want.Outputs) {
		t.Errorf("%s: wrote files %q, want %q", what, got.Outputs, want.Outputs)
	}
	for _, rel := range got.Outputs {
		w, inWant := want.Files[rel]
		g := got.Files[rel]
		switch {
		case isPNG(rel) && len(g) == 0:
			t.Errorf("%s: %s is empty", what, rel)
		case isPNG(rel) && !pngBytes:
		case !inWant && !isPNG(rel):
		case !bytes.Equal(g, w):
			if isPNG(rel) || strings.EqualFold(filepath.Ext(rel), ".svg") {
				t.Errorf("%s: %s differs (%d bytes, want %d)", what, rel, len(g), len(w))
			} else {
				t.Errorf("%s: %s differs (- want, + got):\n%s", what, rel, lineDiff(string(w), string(g)))
			}
		}
	}
}

// lineDiff is a short unified-style diff of want and got: the lines
// between their common prefix and suffix, a few of each at most, with two
// lines of context. It is "" when they are equal.
func lineDiff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n")
	pre := 0
	for pre < len(w) && pre < len(g) && w[pre] == g[pre] {
		pre++
	}
	suf := 0
	for suf < len(w)-pre && suf < len(g)-pre && w[len(w)-1-suf] == g[len(g)-1-suf] {
		suf++
	}
	const maxLines = 12
	var b strings.Builder
	fmt.Fprintf(&b, "@@ line %d @@\n", pre+1)
	for i := max(0, pre-2); i < pre; i++ {
		b.WriteString("  " + strings.TrimSuffix(w[i], "\n") + "\n")
	}
	for _, side := range []struct {
		mark  string
		lines []string
	}{{"- ", w[pre : len(w)-suf]}, {"+ ", g[pre : len(g)-suf]}} {
		for i, l := range side.lines {
			if i == maxLines {
				fmt.Fprintf(&b, "%s... %d more lines\n", side.mark, len(side.lines)-maxLines)
				break
			}
			s := strings.TrimSuffix(l, "\n")
			if !strings.HasSuffix(l, "\n") {
				s += " (no newline at end)"
			}
			b.WriteString(side.mark + s + "\n")
		}
	}
	return b.String()
}

// commandOf returns the command or subcommand that args invoke, and how
// many leading arguments name it.
func commandOf(args []string) (*cli.Command, int) {
	cmds := newApp(io.Discard, io.Discard).Commands
	var found *cli.Command
	n := 0
	for n < len(args) {
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(args[n]) {
				next = c
			}
		}
		if next == nil {
			break
		}
		found, cmds = next, next.Subcommands
		n++
	}
	return found, n
}

// withSerialRun returns args with -j 1 after the command's name when the
// command takes -j, and args unchanged otherwise.
func withSerialRun(args []string) []string {
	c, n := commandOf(args)
	if c == nil {
		return args
	}
	for _, f := range c.Flags {
		if slices.Contains(f.Names(), "j") {
			return slices.Concat(args[:n], []string{"-j", "1"}, args[n:])
		}
	}
	return args
}

// skipUnlessPresent skips the case when a path it needs is absent.
func skipUnlessPresent(t *testing.T, c goldenCase) {
	t.Helper()
	for _, p := range c.Needs {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s needs %s: %v", c.Name, p, err)
		}
	}
}

func TestCLIGolden(t *testing.T) {
	cases, err := loadGoldenCases(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			skipUnlessPresent(t, c)
			if c.Slow && testing.Short() && !updatingGoldens() {
				t.Skip("# slow: skipped under -short")
			}
			got := runGoldenCase(t, c.Args)
			if updatingGoldens() {
				writeGolden(t, c.Name, got)
			}
			compareGolden(t, "golden", readGolden(t, c.Name), got, false)
			if c.Once || testing.Short() && !c.Rerun {
				return
			}
			again := withSerialRun(c.Args)
			what := "second run"
			if len(again) != len(c.Args) {
				what = "second run with -j 1"
			}
			compareGolden(t, what, got, runGoldenCase(t, again), true)
		})
	}
}

// TestCLIGoldenFiles: every file under testdata/cli belongs to a case (no
// golden outlives its .args file) or to the inputs directory.
func TestCLIGoldenFiles(t *testing.T) {
	cases, err := loadGoldenCases(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range cases {
		names[c.Name] = true
	}
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "inputs" {
			continue
		}
		ext := filepath.Ext(e.Name())
		name := strings.TrimSuffix(e.Name(), ext)
		if !slices.Contains([]string{".args", ".stdout", ".stderr", ".code", ".outputs", ".files"}, ext) || !names[name] {
			t.Errorf("%s: not a golden file of any case (expected NAME.args and its .stdout, .stderr, .code, .outputs, .files)",
				filepath.Join(goldenDir, e.Name()))
		}
	}
}

func TestSplitCommandLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"a  b\tc", []string{"a", "b", "c"}},
		{`--slo-abs 'tbt_p99=200ms, x' "a \"b\" \\" c\ d`, []string{"--slo-abs", "tbt_p99=200ms, x", `a "b" \`, "c d"}},
		{`''`, []string{""}},
	} {
		got, err := splitCommandLine(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("splitCommandLine(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`'a`, `"a`, `a\`} {
		if _, err := splitCommandLine(bad); err == nil {
			t.Errorf("splitCommandLine(%q) gave no error", bad)
		}
	}
}

func TestMaskGolden(t *testing.T) {
	in := "simulated 35264 events in 14.731ms; 765 iterations\n" +
		"search    144 simulations of 144 points (0.1%), 1m2.5s on 2 workers, exhaustive\n" +
		"optimize: 10s, 52 simulations, 3 points pruned; best so far in HH: x\n" +
		"   -j value  simulations run at once (default: 16)\n" +
		"workload  coding at 70 req/s for 120s\n"
	want := "simulated 35264 events in <DURATION>; 765 iterations\n" +
		"search    144 simulations of 144 points (0.1%), <DURATION> on <N> workers, exhaustive\n" +
		"   -j value  simulations run at once (default: <N>)\n" +
		"workload  coding at 70 req/s for 120s\n"
	if got := maskGolden(in); got != want {
		t.Errorf("maskGolden:\n%s", lineDiff(want, got))
	}
}

// docCommands orders the sections of docs/commands.md as the README does;
// "" is the program itself (cases whose first argument is a flag).
var docCommands = []string{"", "optimize", "simulate", "sweep", "evaluate", "plot", "study", "trace", "perf", "catalog"}

// renderCommandsDoc writes the command reference from the golden cases
// and their stored goldens (it does not run anything).
func renderCommandsDoc(cases []goldenCase) (string, error) {
	var b strings.Builder
	b.WriteString("<!-- Code generated by go generate (cli/cli_golden_test.go) from testdata/cli; DO NOT EDIT. -->\n\n")
	b.WriteString("# splitplan command reference\n\n")
	b.WriteString("Every example below is a golden test (`testdata/cli/NAME.args`): `go test -run TestCLIGolden ./cli/`\n" +
		"runs each command and fails if its output or the files it writes differ from what is shown,\n" +
		"and fails if this page differs from the goldens. Timings are shown as `<DURATION>`, a robust\n" +
		"search's time over its nominal search's as `<RATIO>` and the default worker count (the\n" +
		"number of CPUs) as `<N>`. Files are written to a temporary directory, shown here as the\n" +
		"current one. Regenerate after an intended change with\n" +
		"`go test ./cli/ -run TestCLIGolden -update` (goldens and this page) or `go generate` (this page).\n\n")
	groups := map[string][]goldenCase{}
	for _, c := range cases {
		if slices.Contains(c.Args, "--help") && len(c.Args) > 2 {
			continue // a subcommand's flags: its golden checks them, --help shows them
		}
		cmd := c.Args[0]
		if strings.HasPrefix(cmd, "-") {
			cmd = ""
		}
		if !slices.Contains(docCommands, cmd) {
			return "", fmt.Errorf("%s: command %q has no section in docs/commands.md (known: %s)",
				c.Name, cmd, strings.Join(docCommands[1:], ", "))
		}
		groups[cmd] = append(groups[cmd], c)
	}
	var toc []string
	for _, cmd := range docCommands {
		if cmd != "" && len(groups[cmd]) > 0 {
			toc = append(toc, fmt.Sprintf("[%s](#splitplan-%s)", cmd, cmd))
		}
	}
	b.WriteString("Commands: " + strings.Join(toc, " · ") + "\n")
	for _, cmd := range docCommands {
		if len(groups[cmd]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n", strings.TrimSpace("splitplan "+cmd))
		// --help first (the command's before its subcommands'), then the
		// successful runs, then the bad-input cases, each by order and name.
		g := groups[cmd]
		codes := map[string]int{}
		for _, c := range g {
			code := 0
			if s, err := os.ReadFile(goldenPath(c.Name, ".code")); err == nil {
				code, err = strconv.Atoi(strings.TrimSpace(string(s)))
				if err != nil {
					return "", fmt.Errorf("%s: %w", goldenPath(c.Name, ".code"), err)
				}
			}
			codes[c.Name] = code
		}
		rank := func(c goldenCase) int {
			switch {
			case slices.Contains(c.Args, "--help"):
				return 0
			case codes[c.Name] == 0:
				return 1
			}
			return 2
		}
		slices.SortStableFunc(g, func(a, b goldenCase) int {
			if d := rank(a) - rank(b); d != 0 {
				return d
			}
			if d := len(a.Args) - len(b.Args); rank(a) == 0 && d != 0 {
				return d
			}
			if a.Order != b.Order {
				return a.Order - b.Order
			}
			return strings.Compare(a.Name, b.Name)
		})
		var bad []goldenCase
		for _, c := range g {
			if rank(c) == 2 {
				bad = append(bad, c)
				continue
			}
			if err := renderDocCase(&b, c, codes[c.Name]); err != nil {
				return "", err
			}
		}
		if err := renderBadInput(&b, bad, codes); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// renderBadInput writes a command's bad-input cases as one table: what is
// wrong, the command and what splitplan says (on stderr), with the exit
// status when it is not 2.
func renderBadInput(b *strings.Builder, bad []goldenCase, codes map[string]int) error {
	if len(bad) == 0 {
		return nil
	}
	b.WriteString("\n### Bad input\n\nEach of these prints its message on stderr and exits with status 2 unless the table says otherwise.\n\n" +
		"| what is wrong | command | splitplan says |\n|---|---|---|\n")
	cell := func(s string) string {
		s = strings.TrimSpace(strings.ReplaceAll(s, "$TMP/", ""))
		return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ")
	}
	for _, c := range bad {
		stderr, err := os.ReadFile(goldenPath(c.Name, ".stderr"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		say := cell(maskGolden(string(stderr)))
		if code := codes[c.Name]; code != 2 {
			say += fmt.Sprintf(" (exit status %d)", code)
		}
		fmt.Fprintf(b, "| %s | `splitplan %s` | %s |\n", cell(c.Title), cell(c.Command), say)
	}
	return nil
}

// renderDocCase writes one example: its title, the command, its output and
// the shape of the text files it wrote.
func renderDocCase(b *strings.Builder, c goldenCase, code int) error {
	read := func(suffix string) (string, error) {
		data, err := os.ReadFile(goldenPath(c.Name, suffix))
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return string(data), err
	}
	stdout, err := read(".stdout")
	if err != nil {
		return err
	}
	stderr, err := read(".stderr")
	if err != nil {
		return err
	}
	outputs, err := read(".outputs")
	if err != nil {
		return err
	}
	here := func(s string) string { return strings.ReplaceAll(s, "$TMP/", "") }
	fmt.Fprintf(b, "\n### %s\n\n", c.Title)
	if len(c.Notes) > 0 {
		b.WriteString(strings.Join(c.Notes, "\n") + "\n\n")
	}
	if len(c.Needs) > 0 {
		fmt.Fprintf(b, "(Needs %s.)\n\n", strings.Join(c.Needs, ", "))
	}
	out := here(maskGolden(stdout)) + here(maskGolden(stderr))
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	// A long output shows its head; the whole of it is the golden file.
	const maxDocLines, headLines = 24, 16
	if lines := strings.SplitAfter(out, "\n"); len(lines) > maxDocLines+1 {
		out = strings.Join(lines[:headLines], "") +
			fmt.Sprintf("… (%d more lines: testdata/cli/%s.stdout)\n", len(lines)-1-headLines, c.Name)
	}
	fence := "```"
	for strings.Contains(out, fence) {
		fence += "`"
	}
	fmt.Fprintf(b, "%s\n$ splitplan %s\n%s%s\n", fence, here(c.Command), out, fence)
	if code != 0 {
		fmt.Fprintf(b, "\nExit status %d.\n", code)
	}
	var figures []string
	for _, rel := range strings.Fields(outputs) {
		switch ext := strings.ToLower(filepath.Ext(rel)); ext {
		case ".csv", ".toml":
			data, err := os.ReadFile(filepath.Join(goldenPath(c.Name, ".files"), filepath.FromSlash(rel)))
			if err != nil {
				return err
			}
			// The file's shape, not its rows: the rows are the golden's.
			lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			fmt.Fprintf(b, "\n`%s`: %d lines", rel, len(lines))
			if ext == ".csv" {
				cols := strings.Split(lines[0], ",")
				shown := cols[:min(6, len(cols))]
				fmt.Fprintf(b, ", %d columns (`%s`", len(cols), strings.Join(shown, "`, `"))
				if len(cols) > len(shown) {
					b.WriteString(", …")
				}
				b.WriteString("; docs/formats.md)")
			}
			fmt.Fprintf(b, "; the golden copy is `testdata/cli/%s.files/%s`.\n", c.Name, rel)
		default:
			figures = append(figures, "`"+rel+"`")
		}
	}
	if len(figures) > 0 {
		fmt.Fprintf(b, "\nWrites %s.\n", strings.Join(figures, ", "))
	}
	return nil
}

// TestCLIGoldenDocs: docs/commands.md is what the golden cases generate;
// -update (or go generate) rewrites it.
func TestCLIGoldenDocs(t *testing.T) {
	cases, err := loadGoldenCases(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := renderCommandsDoc(cases)
	if err != nil {
		t.Fatal(err)
	}
	if updatingGoldens() {
		if err := os.WriteFile(goldenDocPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(goldenDocPath)
	if err != nil {
		t.Fatalf("%v (run go generate, or go test ./cli/ -run TestCLIGolden -update)", err)
	}
	if d := lineDiff(want, string(got)); d != "" {
		t.Errorf("%s is stale: run go generate (- generated, + on disk):\n%s", goldenDocPath, d)
	}
}

func TestWithSerialRun(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"optimize", "--goal", "cost"}, []string{"optimize", "-j", "1", "--goal", "cost"}},
		{[]string{"plot", "heatmap", "--design", "HH"}, []string{"plot", "heatmap", "-j", "1", "--design", "HH"}},
		{[]string{"catalog"}, []string{"catalog"}},
		{[]string{"trace", "stats"}, []string{"trace", "stats"}},
		{[]string{"--help"}, []string{"--help"}},
	} {
		if got := withSerialRun(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("withSerialRun(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseGoldenArgs(t *testing.T) {
	c, err := parseGoldenArgs("x/NAME.args", "# Title\n# order: 3\n# needs: ../shared\n# more words\nsimulate --design HH\n  --out '$TMP/a b.csv'\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "NAME" || c.Title != "Title" || c.Order != 3 || !slices.Equal(c.Needs, []string{"../shared"}) ||
		!slices.Equal(c.Notes, []string{"more words"}) ||
		!slices.Equal(c.Args, []string{"simulate", "--design", "HH", "--out", "$TMP/a b.csv"}) {
		t.Errorf("parseGoldenArgs = %+v", c)
	}
	for _, bad := range []string{"# title only\n", "catalog\n", "# t\n# order: x\ncatalog\n", "# t\ncatalog 'open\n"} {
		if _, err := parseGoldenArgs("x/BAD.args", bad); err == nil {
			t.Errorf("parseGoldenArgs(%q) gave no error", bad)
		}
	}
}
