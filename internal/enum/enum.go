// Package enum is what splitplan's enumerations share: a value's name from
// a table of names indexed by the value, and a name's value back, so that
// every typed enumeration (goals, metrics, policies, pools, engines...)
// names and parses itself the same way.
package enum

import (
	"fmt"
	"strings"
)

// Name returns names[v], or "typ(v)" when v is out of the table or names
// no value (an empty entry, such as an invalid zero value).
func Name[T ~int](names []string, v T, typ string) string {
	if i := int(v); i >= 0 && i < len(names) && names[i] != "" {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", typ, int(v))
}

// Described returns name followed by its non-empty details in parentheses,
// separated by "; " ("profiled (bloom-176b/h100-80gb/tp8; held-out MAPE
// 3.06% prompt)"), or name alone when every detail is empty: how a
// provenance of the performance or the power model prints.
func Described(name string, details ...string) string {
	var parts []string
	for _, d := range details {
		if d != "" {
			parts = append(parts, d)
		}
	}
	if len(parts) == 0 {
		return name
	}
	return name + " (" + strings.Join(parts, "; ") + ")"
}

// Index returns the index of s among names, compared case-insensitively
// and without surrounding space; empty entries never match.
func Index(names []string, s string) (int, bool) {
	s = strings.TrimSpace(s)
	for i, n := range names {
		if n != "" && strings.EqualFold(s, n) {
			return i, true
		}
	}
	return 0, false
}
