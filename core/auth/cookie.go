package auth

import (
	"bytes"
	"strings"
)

// maxCookies is net/http's default limit on the number of cookies a
// request may carry (GODEBUG httpcookiemaxnum); past it net/http reads
// none.
const maxCookies = 3000

// CookieValue returns the value of the first cookie called name in the
// Cookie header lines, read exactly as net/http's Request.Cookie reads it:
// the pairs split on ';', names and pairs trimmed of ASCII space, a pair
// without '=' an empty value, a value in double quotes unquoted and made
// only of the bytes net/http accepts, malformed pairs skipped, and no
// cookie at all when the lines hold more than 3000 (net/http's default;
// a GODEBUG httpcookiemaxnum setting is not read).
//
// It allocates nothing: the value is a slice of a line. Framework modules
// read the session cookie with it on every authenticated request, on
// net/http's []string lines or fasthttp's [][]byte alike; a []byte result
// aliases the framework's buffer and must be copied to be kept.
func CookieValue[T string | []byte](lines []T, name string) (T, bool) {
	if tooManyCookies(lines) {
		var zero T
		return zero, false
	}
	for _, line := range lines {
		if v, ok := cookieValue(line, name); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// tooManyCookies reports whether lines hold more cookies than net/http
// reads. A line holds at most one more cookie than it has bytes, so short
// headers (all real ones) are not counted.
func tooManyCookies[T string | []byte](lines []T) bool {
	size := len(lines)
	for _, line := range lines {
		size += len(line)
	}
	if size <= maxCookies {
		return false
	}
	count := 0
	for _, line := range lines {
		count += countByte(line, ';') + 1
	}
	return count > maxCookies
}

// cookieValue is CookieValue on one line.
func cookieValue[T string | []byte](line T, name string) (T, bool) {
	for len(line) > 0 {
		part := line
		if i := indexByte(line, ';'); i >= 0 {
			part, line = line[:i], line[i+1:]
		} else {
			line = line[len(line):]
		}
		part = trimSpace(part)
		if len(part) < len(name) || string(part[:len(name)]) != name {
			continue // cannot be name=...: the common case, decided cheaply
		}
		k, v := part, part[len(part):]
		if eq := indexByte(part, '='); eq >= 0 {
			k, v = part[:eq], part[eq+1:]
		}
		if string(trimSpace(k)) != name { // no allocation: compared, not kept
			continue
		}
		if len(v) > 1 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		if validCookieValue(v) {
			return v, true
		}
	}
	return line, false
}

// trimSpace removes ASCII space (textproto.TrimString's set) from both
// ends.
func trimSpace[T string | []byte](s T) T {
	for len(s) > 0 && isASCIISpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isASCIISpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isASCIISpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// indexByte and countByte use the standard library's vectorised searches
// on either type (the conversion to any does not escape, so it allocates
// nothing).
func indexByte[T string | []byte](s T, c byte) int {
	switch v := any(s).(type) {
	case string:
		return strings.IndexByte(v, c)
	case []byte:
		return bytes.IndexByte(v, c)
	}
	panic("unreachable")
}

func countByte[T string | []byte](s T, c byte) int {
	switch v := any(s).(type) {
	case string:
		return strings.Count(v, string(rune(c)))
	case []byte:
		return bytes.Count(v, []byte{c})
	}
	panic("unreachable")
}

// cookieValueByte holds the bytes net/http accepts in a cookie value.
var cookieValueByte = func() (t [256]bool) {
	for b := 0x20; b < 0x7f; b++ {
		t[b] = b != '"' && b != ';' && b != '\\'
	}
	return t
}()

// validCookieValue reports whether every byte of v is one net/http accepts
// in a cookie value.
func validCookieValue[T string | []byte](v T) bool {
	for i := 0; i < len(v); i++ {
		if !cookieValueByte[v[i]] {
			return false
		}
	}
	return true
}
