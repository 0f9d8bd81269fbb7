package cli

import "github.com/urfave/cli/v2"

// unsetFloat64 is a number flag whose zero value means "not given" (a
// rate or a budget that only some goals take): its help shows no
// "(default: 0)".
type unsetFloat64 struct{ *cli.Float64Flag }

// GetDefaultText is empty: zero is no default.
func (unsetFloat64) GetDefaultText() string { return "" }

// String is the flag's help line (cli.FlagStringer of f itself, so that
// it sees GetDefaultText).
func (f unsetFloat64) String() string { return cli.FlagStringer(f) }

// unsetInt is unsetFloat64 for a count (the machines of a cluster, given
// by the flags its design needs).
type unsetInt struct{ *cli.IntFlag }

// GetDefaultText is empty: zero is no default.
func (unsetInt) GetDefaultText() string { return "" }

// String is the flag's help line.
func (f unsetInt) String() string { return cli.FlagStringer(f) }
