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
