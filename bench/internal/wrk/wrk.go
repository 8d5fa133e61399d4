// Package wrk holds what the load commands (cmd/loadbench, cmd/peerbench)
// need to drive the wrk load generator: its -d argument and the quoting of
// the Lua scripts that give it a request to send.
package wrk

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Seconds returns d as wrk's -d argument: whole seconds (wrk takes no
// smaller unit), rounded up, at least one.
func Seconds(d time.Duration) string {
	return strconv.FormatInt(max(int64((d+time.Second-1)/time.Second), 1), 10) + "s"
}

// LuaString quotes s as a Lua string literal: quotes and backslashes
// escaped, control bytes and every byte from 0x7f up as decimal escapes, so
// the literal is plain ASCII whatever s holds.
func LuaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03d", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
