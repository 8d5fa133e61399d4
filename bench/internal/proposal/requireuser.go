package proposal

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v2"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// The RequireUser prototypes below are each framework module's RequireUser
// with a leaner success path, to measure what core/auth's Authenticate
// could cost:
//
//   - the session cookie is found by CookieValue, a scan of the Cookie
//     header lines under net/http's rules that allocates nothing, instead
//     of http.Request.Cookie (which parses every cookie into *http.Cookie
//     values) or, in fiberauth, a whole http.Header and http.Request built
//     per request to call it;
//   - the session is read straight from the Service's session.Manager:
//     none of Authenticate's per-call state (the call, its response
//     http.Header map, the bridge) is made unless the request fails;
//   - on gin the user goes in the request's context only (ginauth also
//     puts it in gin's Keys map, one map per request).
//
// A request whose session is not valid takes the module's own RequireUser,
// so every failure answers exactly what authkit answers today.

// CookieValue returns the value of the first cookie called name in the
// Cookie header lines exactly as http.Request.Cookie reads it: pairs split
// on ';', names and pairs trimmed of ASCII space, a pair without '=' an
// empty value, the value unquoted and made only of the bytes net/http
// accepts, malformed pairs skipped, and nothing at all past net/http's
// limit on the number of cookies (3000). It allocates nothing: the value
// is a substring of a line.
func CookieValue(lines []string, name string) (string, bool) {
	count := 0
	for _, line := range lines {
		count += strings.Count(line, ";") + 1
	}
	if count > maxCookies {
		return "", false
	}
	for _, line := range lines {
		if v, ok := cookieValue(line, name); ok {
			return v, true
		}
	}
	return "", false
}

// maxCookies is net/http's default limit on the cookies of a request
// (GODEBUG httpcookiemaxnum).
const maxCookies = 3000

// cookieValue is CookieValue on one line, a string or fasthttp's []byte
// (the caller applies the count limit).
func cookieValue[T string | []byte](line T, name string) (T, bool) {
	for len(line) > 0 {
		part := line
		if i := index(line, ';'); i >= 0 {
			part, line = line[:i], line[i+1:]
		} else {
			line = line[len(line):]
		}
		part = trim(part)
		k, v := part, part[len(part):]
		if eq := index(part, '='); eq >= 0 {
			k, v = part[:eq], part[eq+1:]
		}
		if string(trim(k)) != name {
			continue
		}
		if len(v) > 1 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		if validCookieValue(v) {
			return v, true
		}
	}
	return line[:0], false
}

// trim removes ASCII space (textproto.TrimString's set) from both ends.
func trim[T string | []byte](s T) T {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func index[T string | []byte](s T, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func validCookieValue[T string | []byte](v T) bool {
	for i := 0; i < len(v); i++ {
		if b := v[i]; b < 0x20 || b >= 0x7f || b == '"' || b == ';' || b == '\\' {
			return false
		}
	}
	return true
}

// lookup is a session.CookieBridge that only reads one value; a session
// found invalid is handed to the module's RequireUser, which expires it.
type lookup struct{ value string }

func (l lookup) Get(string) (string, bool)               { return l.value, l.value != "" }
func (lookup) Set(string, string, session.CookieOptions) {}
func (lookup) Delete(string, session.CookieOptions)      {}

// RequireUserNetHTTP is nethttpauth.RequireUser on the lean path; slow is
// nethttpauth.RequireUser(svc), taken by requests without a valid session.
func RequireUserNetHTTP(svc *auth.Service, slow func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	m := svc.Sessions()
	name := m.CookieName()
	return func(next http.Handler) http.Handler {
		fallback := slow(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var u *user.User
			if v, ok := CookieValue(r.Header["Cookie"], name); ok {
				u, _ = m.Session(lookup{v}).User(r.Context())
			}
			if u == nil {
				fallback.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r.WithContext(auth.ContextWithUser(r.Context(), u)))
		})
	}
}

// RequireUserGin is ginauth.RequireUser on the lean path; slow is
// ginauth.RequireUser(svc).
func RequireUserGin(svc *auth.Service, slow gin.HandlerFunc) gin.HandlerFunc {
	m := svc.Sessions()
	name := m.CookieName()
	return func(c *gin.Context) {
		var u *user.User
		if v, ok := CookieValue(c.Request.Header["Cookie"], name); ok {
			u, _ = m.Session(lookup{v}).User(c.Request.Context())
		}
		if u == nil {
			slow(c)
			return
		}
		c.Request = c.Request.WithContext(auth.ContextWithUser(c.Request.Context(), u))
		c.Next()
	}
}

// RequireUserFiber is fiberauth.RequireUser on the lean path; slow is
// fiberauth.RequireUser(svc). Only the session cookie's value is copied out
// of fasthttp's buffers.
func RequireUserFiber(svc *auth.Service, slow fiber.Handler) fiber.Handler {
	m := svc.Sessions()
	name := m.CookieName()
	return func(c *fiber.Ctx) error {
		var u *user.User
		lines := c.Request().Header.PeekAll(fiber.HeaderCookie)
		count := 0
		for _, line := range lines {
			count += bytes.Count(line, []byte{';'}) + 1
		}
		for _, line := range lines {
			if count > maxCookies {
				break
			}
			if v, ok := cookieValue(line, name); ok {
				u, _ = m.Session(lookup{string(v)}).User(c.UserContext())
				break
			}
		}
		if u == nil {
			return slow(c)
		}
		c.SetUserContext(auth.ContextWithUser(c.UserContext(), u))
		return c.Next()
	}
}
