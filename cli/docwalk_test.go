package cli

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// docCommand is one command that README.md or docs/guide.md shows.
type docCommand struct {
	Doc  string // the file
	Line int    // its line there
	Args []string
	// Slow marks a command whose line ends in a "# slow" comment: the
	// walk skips it.
	Slow bool
	// Exit is the status the doc says the command has: 0, or 2 for a
	// line ending in "# exits 2" (an example of bad input).
	Exit int
	// Shared marks a command whose line ends in "# needs ../shared": it
	// reads data that only sits beside the repository (the measured
	// benchmarks and profiles, until they ship inside it). The walk checks
	// that the mark is still true: without ../shared it exits 2 naming it.
	Shared bool
}

// docCommandRE finds a command in a table row's inline code.
var docCommandRE = regexp.MustCompile("`((?:go run \\.|splitplan) [^`]*)`")

// extractDocCommands extracts the commands of a Markdown document: lines of its
// code blocks that start with "go run . " or "splitplan " (after an
// optional "$ "; a trailing backslash continues a line), and the inline
// code of its table rows that starts so. A trailing "# ..." comment is
// not part of the command; "# slow" (or "# runs until stopped", a
// server), "# exits 2" and "# needs ../shared" in it are the markers of
// docCommand.
func extractDocCommands(doc string, text string) ([]docCommand, error) {
	var out []docCommand
	add := func(line int, s string) error {
		s = strings.TrimSpace(strings.TrimPrefix(s, "$ "))
		cmd, comment, _ := strings.Cut(s, " #")
		var rest string
		switch {
		case strings.HasPrefix(cmd, "go run . "):
			rest = strings.TrimPrefix(cmd, "go run . ")
		case strings.HasPrefix(cmd, "splitplan "):
			rest = strings.TrimPrefix(cmd, "splitplan ")
		default:
			return nil
		}
		args, err := splitCommandLine(rest)
		if err != nil {
			return err
		}
		c := docCommand{Doc: doc, Line: line, Args: args}
		// A server runs until stopped: the walk skips it as a slow one.
		c.Slow = strings.Contains(comment, "slow") || strings.Contains(comment, "runs until stopped")
		if strings.Contains(comment, "exits 2") {
			c.Exit = 2
		}
		if strings.Contains(comment, "needs ../shared") {
			c.Shared, c.Exit = true, 2
		}
		out = append(out, c)
		return nil
	}
	inBlock := false
	cont, contLine := "", 0
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			inBlock = !inBlock
			continue
		}
		switch {
		case inBlock:
			s := strings.TrimSpace(l)
			if cont != "" {
				s = cont + " " + s
			} else {
				contLine = i + 1
			}
			if strings.HasSuffix(s, "\\") {
				cont = strings.TrimSuffix(s, "\\")
				continue
			}
			cont = ""
			if err := add(contLine, s); err != nil {
				return nil, err
			}
		case strings.HasPrefix(l, "|"):
			for _, m := range docCommandRE.FindAllStringSubmatch(l, -1) {
				if err := add(i+1, m[1]); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

func TestDocCommands(t *testing.T) {
	text := "intro `go run . COMMAND` in prose\n" +
		"| a | `go run . catalog` | `splitplan trace stats --workload coding` |\n" +
		"```\n$ go run . simulate --design XX    # exits 2\n" +
		"go run . optimize --goal cost \\\n  --rps 70   # slow: a minute\n" +
		"output line\nsplitplan perf query --hardware h100 --prompt-tokens 9\n" +
		"$ go run . perf fit --profile ../shared/p.csv    # needs ../shared\n```\n"
	got, err := extractDocCommands("d.md", text)
	if err != nil {
		t.Fatal(err)
	}
	want := []docCommand{
		{"d.md", 2, []string{"catalog"}, false, 0, false},
		{"d.md", 2, []string{"trace", "stats", "--workload", "coding"}, false, 0, false},
		{"d.md", 4, []string{"simulate", "--design", "XX"}, false, 2, false},
		{"d.md", 5, []string{"optimize", "--goal", "cost", "--rps", "70"}, true, 0, false},
		{"d.md", 8, []string{"perf", "query", "--hardware", "h100", "--prompt-tokens", "9"}, false, 0, false},
		{"d.md", 9, []string{"perf", "fit", "--profile", "../shared/p.csv"}, false, 2, true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d commands %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i].Line != want[i].Line || strings.Join(got[i].Args, " ") != strings.Join(want[i].Args, " ") || got[i].Slow != want[i].Slow || got[i].Exit != want[i].Exit || got[i].Shared != want[i].Shared {
			t.Errorf("command %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// copyRepo copies the working tree (no .git) to dst/splitplan, so that
// nothing sits beside it: no ../shared.
func copyRepo(t *testing.T, dst string) string {
	t.Helper()
	root := filepath.Join(dst, "splitplan")
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		target := filepath.Join(root, path)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestDocCommandWalk runs every command of README.md and docs/guide.md,
// in the order each shows them (a command may read what an earlier one
// wrote), in a copy of the repository with nothing beside it, as a user
// of a fresh clone would: each exits as its doc says (0, or 2 for one
// marked "# exits 2"; one marked "# needs ../shared" exits 2 naming it),
// skipping only those marked "# slow" (over 15 s on a shared 2-core host).
func TestDocCommandWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every documented command (minutes); skipped with -short")
	}
	var all [][]docCommand
	for _, doc := range []string{"README.md", "docs/guide.md"} {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		cmds, err := extractDocCommands(doc, string(data))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if len(cmds) < 5 {
			t.Fatalf("%s: only %d commands found", doc, len(cmds))
		}
		all = append(all, cmds)
	}
	for _, cmds := range all {
		// One fresh copy per document: its commands share its files.
		t.Chdir(copyRepo(t, t.TempDir()))
		for _, c := range cmds {
			name := c.Doc + ":" + strconv.Itoa(c.Line)
			if c.Slow {
				t.Logf("%s: skipped (marked slow): %s", name, strings.Join(c.Args, " "))
				continue
			}
			var out, errb bytes.Buffer
			start := time.Now()
			code := run(append([]string{"splitplan"}, c.Args...), &out, &errb)
			took := time.Since(start).Round(time.Millisecond)
			t.Logf("%s: exit %d in %v: %s", name, code, took, strings.Join(c.Args, " "))
			if code != c.Exit {
				if c.Shared {
					t.Errorf("%s: %s exited %d without ../shared: it no longer needs it, remove the line's \"# needs ../shared\"; stderr:\n%s", name, strings.Join(c.Args, " "), code, errb.String())
				} else {
					t.Errorf("%s: %s exited %d, the doc says %d; stderr:\n%s", name, strings.Join(c.Args, " "), code, c.Exit, errb.String())
				}
			} else if c.Shared && !strings.Contains(errb.String(), "../shared") {
				t.Errorf("%s: %s failed for another reason than ../shared: %s", name, strings.Join(c.Args, " "), errb.String())
			}
		}
	}
}
