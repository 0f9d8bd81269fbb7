package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// stdoutName is the output path that means standard output.
const stdoutName = "-"

// isStdout reports whether an output path names standard output: "-" or
// /dev/stdout (written to the command's own writer, never reopened).
func isStdout(path string) bool {
	return path == stdoutName || path == "/dev/stdout" || path == "/proc/self/fd/1"
}

// outputTarget is where an output path is written: through a temporary
// file renamed over rename (a regular file or nothing there yet, with a
// symlink resolved so that it stays a symlink), or directly into direct (a
// FIFO, a device or another special file).
type outputTarget struct {
	rename string
	direct string
}

// resolveOutput decides how path is written and checks, before any work,
// that it can be: it is not a directory and its directory exists and takes
// new files.
func resolveOutput(path string) (outputTarget, error) {
	if path == "" {
		return outputTarget{}, errors.New("empty file name")
	}
	target := path
	if lst, err := os.Lstat(path); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		resolved, err := filepath.EvalSymlinks(path)
		switch {
		case err == nil:
			target = resolved
		case errors.Is(err, fs.ErrNotExist):
			// A dangling symlink: write through it, creating its target.
			return outputTarget{direct: path}, checkDir(path)
		default:
			return outputTarget{}, err
		}
	}
	st, err := os.Stat(target)
	switch {
	case err == nil && st.IsDir():
		return outputTarget{}, errors.New("is a directory, expected a file")
	case err == nil && !st.Mode().IsRegular():
		return outputTarget{direct: path}, nil
	case err == nil && (strings.HasPrefix(target, "/dev/") || strings.HasPrefix(target, "/proc/")):
		// A regular file standing for a descriptor: write it in place.
		return outputTarget{direct: path}, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return outputTarget{}, err
	}
	if err := checkDir(target); err != nil {
		return outputTarget{}, err
	}
	return outputTarget{rename: target}, nil
}

// checkDir checks that the directory of path exists and takes a new file.
func checkDir(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("directory %s does not exist", dir)
		}
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".probe*")
	if err != nil {
		return fmt.Errorf("directory %s does not take new files: %w", dir, errors.Unwrap(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// checkOutputs checks, before any work, that every output flag of c that
// is set names something writable, and that at most one writes to
// standard output; it fails with bad usage naming the flag.
func checkOutputs(c *cli.Context, flags ...string) error {
	var toStdout []string
	for _, fl := range flags {
		path := c.String(fl)
		if path == "" && !isSet(c, fl) {
			continue
		}
		if isStdout(path) {
			toStdout = append(toStdout, "--"+fl)
			continue
		}
		if _, err := resolveOutput(path); err != nil {
			return badInputf("--%s %s: %v", fl, path, err)
		}
	}
	if len(toStdout) > 1 {
		return badInputf("%s: only one output can go to standard output (-)", strings.Join(toStdout, " and "))
	}
	// No output overwrites another output, or an input the command reads.
	var outs []string
	for _, fl := range flags {
		if p := c.String(fl); isSet(c, fl) && p != "" && !isStdout(p) {
			outs = append(outs, fl)
		}
	}
	for i, fl := range outs {
		for _, other := range outs[:i] {
			if sameFile(c.String(fl), c.String(other)) {
				return badInputf("--%s and --%s name one file, %s: each output needs its own", other, fl, c.String(fl))
			}
		}
		for _, in := range inputFlags {
			if slices.Contains(flags, in) || !isSet(c, in) {
				continue
			}
			for _, p := range flagPaths(c, in) {
				if p != "" && sameFile(c.String(fl), p) {
					return badInputf("--%s %s is the --%s the command reads: writing it would destroy the input", fl, c.String(fl), in)
				}
			}
		}
	}
	return nil
}

// inputFlags are the flags, across the commands, that name files a
// command reads (checkOutputs keeps its outputs off them).
var inputFlags = []string{"trace", "profile", "plan", "measured", "from", "points", "optima", "sweep", "rate-profile", "kernels", "fitted", "calibration", "kernels-fit", "model-config", "schedule"}

// flagPaths are the paths flag fl of c names (a string flag's one, a
// string-slice flag's each).
func flagPaths(c *cli.Context, fl string) []string {
	if v := c.StringSlice(fl); len(v) > 0 {
		return v
	}
	return []string{c.String(fl)}
}

// sameFile reports whether a and b name one file (os.SameFile where both
// exist, else the same cleaned absolute path).
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	aa, errA := filepath.Abs(a)
	ab, errB := filepath.Abs(b)
	return errA == nil && errB == nil && aa == ab
}

// checkOutputDir checks, before any work, that the directory flag of c
// (when set) is a directory or can be made one: a missing directory needs
// an existing parent.
func checkOutputDir(c *cli.Context, flag string) error {
	dir := c.String(flag)
	if dir == "" {
		return nil
	}
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return badInputf("--%s %s: is a file, expected a directory", flag, dir)
	case err == nil:
		if err := checkDir(filepath.Join(dir, "x")); err != nil {
			return badInputf("--%s %s: %v", flag, dir, err)
		}
		return nil
	case errors.Is(err, fs.ErrNotExist):
		if err := checkDir(filepath.Clean(dir)); err != nil {
			return badInputf("--%s %s: %v", flag, dir, err)
		}
		return nil
	default:
		return badInputf("--%s %s: %v", flag, dir, err)
	}
}

// reportWriter is where a command prints its report: stdout, unless one
// of the output flags sends a file there, in which case stderr.
func reportWriter(c *cli.Context, flags ...string) io.Writer {
	for _, fl := range flags {
		if isStdout(c.String(fl)) && isSet(c, fl) {
			return c.App.ErrWriter
		}
	}
	return c.App.Writer
}

// writeOutput writes an output file. "-" (or /dev/stdout) goes to stdout;
// a FIFO, a device or another special file (or what a symlink points to)
// is written directly; a regular file, or a new one, is written through a
// temporary file in its directory renamed over it (over a symlink's target,
// so the symlink stays), so that an interrupted run never leaves a
// half-written file behind.
//
// Writing stops with ctx's error once ctx is done (the temporary file is
// then removed and the target left as it was).
func writeOutput(ctx context.Context, path string, stdout io.Writer, write func(w io.Writer) error) error {
	inner := write
	write = func(w io.Writer) error { return inner(ctxWriter{ctx, w}) }
	if isStdout(path) {
		bw := bufio.NewWriter(stdout)
		if err := write(bw); err != nil {
			return fmt.Errorf("writing to standard output: %w", err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("writing to standard output: %w", err)
		}
		return nil
	}
	t, err := resolveOutput(path)
	if err != nil {
		return badInputf("cannot write %s: %v", path, err)
	}
	if t.direct != "" {
		f, err := os.OpenFile(t.direct, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return badInputf("cannot write %s: %v", path, err)
		}
		return writeClose(f, path, write)
	}
	f, err := os.CreateTemp(filepath.Dir(t.rename), "."+filepath.Base(t.rename)+".tmp*")
	if err != nil {
		return badInputf("cannot write %s: %v", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	perm := fs.FileMode(0o644) // CreateTemp makes it 0600; a file replaced keeps its mode
	if st, err := os.Stat(t.rename); err == nil {
		perm = st.Mode().Perm()
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := writeClose(f, path, write); err != nil {
		return err
	}
	if err := os.Rename(tmp, t.rename); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// ctxWriter is a writer that fails with its context's error once the
// context is done, so that a long write stops on an interrupt.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// writeClose runs write on f through a buffer, flushes and closes f; errors
// name path, the file the user asked for.
func writeClose(f *os.File, path string, write func(io.Writer) error) error {
	bw := bufio.NewWriter(f)
	err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
