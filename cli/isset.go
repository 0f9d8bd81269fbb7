package cli

import (
	"context"
	"sync"

	"github.com/urfave/cli/v2"
)

// isSet is c.IsSet(name), answered from the set flags' names gathered once
// per context. urfave/cli's IsSet looks an unset flag up through every
// flag's names, each cleaned by a regular expression: with a hundred such
// calls a run, that was half of the time a study spends checking each
// job's options. Under the package's tests every answer is checked
// against IsSet's (isSetDiffers).
func isSet(c *cli.Context, name string) bool {
	fc, _ := c.Context.Value(flagCacheKey{}).(*flagCache)
	if fc == nil {
		return c.IsSet(name)
	}
	got := fc.of(c)[name]
	if isSetDiffers != nil {
		if want := c.IsSet(name); got != want {
			isSetDiffers(c, name, got, want)
		}
	}
	return got
}

// isSetDiffers, set by the package's tests, is told of every answer of
// isSet that IsSet does not give.
var isSetDiffers func(c *cli.Context, name string, got, want bool)

// setFlag is c.Set(name, value), forgetting the set flags gathered so
// far (the flag may now be set).
func setFlag(c *cli.Context, name, value string) error {
	if fc, _ := c.Context.Value(flagCacheKey{}).(*flagCache); fc != nil {
		fc.mu.Lock()
		clear(fc.set)
		fc.mu.Unlock()
	}
	return c.Set(name, value)
}

// flagCacheKey marks the context of one run that carries its flagCache.
type flagCacheKey struct{}

// flagCache holds, per cli.Context of one run, the names of its set flags.
type flagCache struct {
	mu  sync.Mutex
	set map[*cli.Context]map[string]bool
}

// withFlagCache returns ctx carrying a new flagCache for one run.
func withFlagCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, flagCacheKey{}, &flagCache{set: map[*cli.Context]map[string]bool{}})
}

// of returns the names (every alias included) of the flags set in c or
// any context above it, as IsSet counts them.
func (fc *flagCache) of(c *cli.Context) map[string]bool {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if s, ok := fc.set[c]; ok {
		return s
	}
	s := map[string]bool{}
	for _, pc := range c.Lineage() {
		local := map[string]bool{}
		for _, n := range pc.LocalFlagNames() {
			local[n] = true
		}
		var flags []cli.Flag
		if pc.Command != nil {
			flags = pc.Command.Flags
		} else if pc.App != nil {
			flags = pc.App.Flags
		}
		for _, f := range flags {
			names := f.Names()
			for _, n := range names {
				if local[n] {
					for _, m := range names {
						s[m] = true
					}
					break
				}
			}
		}
		for n := range local {
			s[n] = true
		}
	}
	fc.set[c] = s
	return s
}
