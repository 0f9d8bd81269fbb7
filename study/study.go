// Package study turns a study file (TOML) into the list of optimize jobs it
// names — the cross product of its axes less its exclude rules — each with a
// stable key, and assigns the jobs to shards balanced by an estimated cost.
package study

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// File is a study file as written: fixed optimize options, the axes whose
// cross product is the job list, and rules excluding some combinations.
type File struct {
	// Options are optimize flags (without dashes) shared by every job.
	Options map[string]string `toml:"options"`
	// Axes maps an optimize flag (without dashes) to the values it takes.
	Axes map[string][]string `toml:"axes"`
	// Exclude lists partial assignments; a job matching every entry of one
	// rule is left out.
	Exclude []map[string]string `toml:"exclude"`
}

// Job is one optimize run of a study.
type Job struct {
	// Key names the job: its axis values, readable, then a hash of all its
	// options in canonical order.
	Key string
	// Axes holds the job's value of each axis.
	Axes map[string]string
	// Options holds every optimize option of the job (fixed and axis).
	Options map[string]string
	// Cost is the job's estimated relative cost used to balance shards.
	Cost float64
}

// Args returns the job's options as an optimize argument list, sorted by
// name: --NAME VALUE, or --NAME=VALUE for true and false.
func (j Job) Args() []string {
	names := sortedKeys(j.Options)
	args := make([]string, 0, 2*len(names))
	for _, n := range names {
		if v := j.Options[n]; v == "true" || v == "false" {
			// A boolean flag takes its value only after "=".
			args = append(args, "--"+n+"="+v)
			continue
		}
		args = append(args, "--"+n, j.Options[n])
	}
	return args
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Parse decodes a study file and returns its jobs in a deterministic order.
// name is used in error messages.
func Parse(name string, data []byte) ([]Job, []string, error) {
	var raw struct {
		Options map[string]flagValue   `toml:"options"`
		Axes    map[string][]flagValue `toml:"axes"`
		Exclude []map[string]flagValue `toml:"exclude"`
	}
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, nil, fmt.Errorf("%s: unknown key %q (want [options], [axes], [[exclude]])", name, und[0].String())
	}
	f := File{Options: asStrings(raw.Options)}
	if raw.Axes != nil {
		f.Axes = make(map[string][]string, len(raw.Axes))
		for k, vs := range raw.Axes {
			f.Axes[k] = make([]string, len(vs))
			for i, v := range vs {
				f.Axes[k][i] = string(v)
			}
		}
	}
	for _, r := range raw.Exclude {
		f.Exclude = append(f.Exclude, asStrings(r))
	}
	return Jobs(name, f)
}

// flagValue is a study value as a flag takes it: a string as written, or
// a TOML number or boolean written as the command line would (10, 0.9,
// true), so that max_machines = 20 means --max-machines 20.
type flagValue string

// UnmarshalTOML takes a string, an integer, a float or a boolean.
func (v *flagValue) UnmarshalTOML(x any) error {
	switch t := x.(type) {
	case string:
		*v = flagValue(t)
	case int64:
		*v = flagValue(strconv.FormatInt(t, 10))
	case float64:
		*v = flagValue(strconv.FormatFloat(t, 'g', -1, 64))
	case bool:
		*v = flagValue(strconv.FormatBool(t))
	default:
		return fmt.Errorf("a value must be a string, a number or a boolean, as on the command line; got %s", tomlKind(x))
	}
	return nil
}

// tomlKind names the kind of a decoded TOML value the way the file
// writes it (an array, a table, a date), not as a Go type.
func tomlKind(x any) string {
	switch x.(type) {
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	case time.Time:
		return "a date or time"
	default:
		return fmt.Sprintf("a %T", x)
	}
}

// asStrings is m with its values as strings (nil for nil).
func asStrings(m map[string]flagValue) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// maxJobs bounds the cross product of a study's axes (before its exclude
// rules): a few lines of axes could otherwise name more jobs than memory
// holds.
const maxJobs = 100_000

// Jobs expands a study into its jobs, ordered by axis values (axes in name
// order), and returns the axis names too. It is a pure function of f.
func Jobs(name string, f File) ([]Job, []string, error) {
	if len(f.Axes) == 0 {
		return nil, nil, fmt.Errorf("%s: [axes] is empty: a study needs at least one axis", name)
	}
	axes := sortedKeys(f.Axes)
	for _, a := range axes {
		if !nameRE.MatchString(a) {
			return nil, nil, fmt.Errorf("%s: axis %q is not an option name", name, a)
		}
		if _, dup := f.Options[a]; dup {
			return nil, nil, fmt.Errorf("%s: %q is both an axis and a fixed option", name, a)
		}
		if len(f.Axes[a]) == 0 {
			return nil, nil, fmt.Errorf("%s: axis %q has no values", name, a)
		}
		seen := map[string]bool{}
		for _, v := range f.Axes[a] {
			if seen[v] {
				return nil, nil, fmt.Errorf("%s: axis %q repeats value %q", name, a, v)
			}
			seen[v] = true
		}
	}
	for o := range f.Options {
		if !nameRE.MatchString(o) {
			return nil, nil, fmt.Errorf("%s: option %q is not an option name", name, o)
		}
	}
	for i, r := range f.Exclude {
		for k := range r {
			if _, ok := f.Axes[k]; !ok {
				return nil, nil, fmt.Errorf("%s: exclude rule %d names %q, which is not an axis", name, i+1, k)
			}
		}
	}
	n := 1
	for _, a := range axes {
		if n *= len(f.Axes[a]); n > maxJobs {
			return nil, nil, fmt.Errorf("%s: the axes' cross product has more than %d jobs: split the study", name, maxJobs)
		}
	}
	var jobs []Job
	idx := make([]int, len(axes))
	for {
		vals := make(map[string]string, len(axes))
		for i, a := range axes {
			vals[a] = f.Axes[a][idx[i]]
		}
		if !excluded(vals, f.Exclude) {
			jobs = append(jobs, newJob(axes, vals, f.Options))
		}
		i := len(axes) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(f.Axes[axes[i]]) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			break
		}
	}
	if len(jobs) == 0 {
		return nil, nil, fmt.Errorf("%s: the exclude rules leave no job", name)
	}
	return jobs, axes, nil
}

func excluded(vals map[string]string, rules []map[string]string) bool {
	for _, r := range rules {
		match := len(r) > 0
		for k, v := range r {
			if vals[k] != v {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

var unsafeRE = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func newJob(axes []string, vals, fixed map[string]string) Job {
	opts := make(map[string]string, len(vals)+len(fixed))
	for k, v := range fixed {
		opts[k] = v
	}
	for k, v := range vals {
		opts[k] = v
	}
	h := sha256.New()
	for _, k := range sortedKeys(opts) {
		fmt.Fprintf(h, "%s\x00%s\x00", k, opts[k])
	}
	parts := make([]string, len(axes))
	for i, a := range axes {
		parts[i] = unsafeRE.ReplaceAllString(vals[a], "_")
	}
	key := strings.Join(parts, "_") + "-" + hex.EncodeToString(h.Sum(nil))[:12]
	return Job{Key: key, Axes: vals, Options: opts, Cost: estimateCost(opts)}
}

// estimateCost estimates a job's relative cost: a search simulates about
// rps × duration requests per design, so the cost grows with both; options
// that are absent or not numbers count as 1.
func estimateCost(opts map[string]string) float64 {
	c := 1.0
	for _, k := range []string{"rps", "duration"} {
		if v, err := strconv.ParseFloat(strings.TrimSuffix(opts[k], "s"), 64); err == nil && v > 0 {
			c *= v
		}
	}
	return c
}

// Shard returns the jobs of shard i (0-based) of n: the jobs are taken in
// decreasing estimated cost (ties by key) and each goes to the shard with the
// least total cost so far (ties to the lowest index), so every job belongs to
// exactly one shard and the shards' costs are balanced. The result keeps the
// jobs' original order.
func Shard(jobs []Job, i, n int) ([]Job, error) {
	if n < 1 || i < 0 || i >= n {
		return nil, fmt.Errorf("--shard %d/%d: want I/N with 1 <= I <= N", i+1, n)
	}
	order := make([]int, len(jobs))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool {
		ja, jb := jobs[order[a]], jobs[order[b]]
		if ja.Cost != jb.Cost {
			return ja.Cost > jb.Cost
		}
		return ja.Key < jb.Key
	})
	load := make([]float64, n)
	owner := make([]int, len(jobs))
	for _, k := range order {
		best := 0
		for s := 1; s < n; s++ {
			if load[s] < load[best] {
				best = s
			}
		}
		owner[k] = best
		load[best] += jobs[k].Cost
	}
	var out []Job
	for k, j := range jobs {
		if owner[k] == i {
			out = append(out, j)
		}
	}
	return out, nil
}

// ParseShard parses "I/N" (1-based I) into a 0-based index and a count.
func ParseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("--shard %q: want I/N with 1 <= I <= N", s)
	}
	return i - 1, n, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
