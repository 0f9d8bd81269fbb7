package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/traces"
)

// isFlagError reports whether err is one of urfave/cli's own complaints
// about the command line (unknown flag, missing value, unknown command).
func isFlagError(err error) bool {
	msg := err.Error()
	for _, s := range []string{"flag provided but not defined", "flag needs an argument",
		"invalid value", "Required flag", "No help topic", "invalid boolean"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// noArgs rejects positional arguments, which urfave/cli would otherwise
// ignore along with every flag after them.
func noArgs(c *cli.Context) error {
	if c.Args().Len() > 0 {
		var names []string
		for _, ctx := range c.Lineage() {
			if ctx.Command != nil && ctx.Command.Name != "" {
				names = append([]string{ctx.Command.Name}, names...)
			}
		}
		return badInputf("%s: unexpected argument %q (flags go before arguments; this command takes none)",
			strings.Join(names, " "), c.Args().First())
	}
	return nil
}

// parseSeconds reads a time given as a Go duration (120s, 2m, 100ms) or a
// number of seconds; it must be positive and finite.
func parseSeconds(s string) (float64, error) {
	f, err := traces.ParseSeconds(s)
	if err != nil || !(f > 0) {
		return 0, fmt.Errorf("%q is not a positive duration", strings.TrimSpace(s))
	}
	return f, nil
}
