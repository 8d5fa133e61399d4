package auth

import (
	"context"
	"net/http"
	"strconv"
)

// Request is one HTTP request as a framework module hands it to the flows.
// It is the whole of what authkit reads from a request, so a module for a
// new framework implements these eight methods and nothing else.
//
// Strings returned must stay valid after the framework's handler returns
// (fiber and fasthttp reuse their buffers: copy).
type Request interface {
	// Context is the request's context; flows pass it to stores.
	Context() context.Context
	// Method is the HTTP method, upper case.
	Method() string
	// Host is the Host header (or :authority), as net/http's Request.Host.
	Host() string
	// Header returns every value of the named header joined by ", " (the
	// list form of RFC 9110 5.3), or "" when absent.
	Header(name string) string
	// PathValue returns a route parameter ("token"), or "".
	PathValue(name string) string
	// RemoteAddr is the socket peer as "ip:port" (net/http's form).
	RemoteAddr() string
	// Cookie returns the named cookie's value.
	Cookie(name string) (string, bool)
	// Body returns the raw body, reading at most limit bytes; a longer
	// body gives an error wrapping [ErrBodyTooLarge].
	Body(limit int64) ([]byte, error)
}

// Response is what a flow answers: the framework module writes it as it
// is, so every framework sends the same bytes.
type Response struct {
	Status  int
	Header  http.Header
	Cookies []*http.Cookie
	Body    []byte
}

// Write sends r on an http.ResponseWriter (net/http, and gin through its
// writer): headers, one Set-Cookie line per cookie, status, body.
func (r *Response) Write(w http.ResponseWriter) {
	setHeaders(w, r.Header, r.Cookies)
	if len(r.Body) > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(len(r.Body)))
	}
	w.WriteHeader(r.Status)
	_, _ = w.Write(r.Body)
}

// setHeaders copies header onto w's headers, each name's values replacing
// any already there, and adds one Set-Cookie line per cookie.
func setHeaders(w http.ResponseWriter, header http.Header, cookies []*http.Cookie) {
	h := w.Header()
	for k, vs := range header {
		h[k] = append(h[k][:0:0], vs...)
	}
	for _, c := range cookies {
		if line := c.String(); line != "" {
			h.Add("Set-Cookie", line)
		}
	}
}

// SetCookieLines returns the Set-Cookie header values of r, for modules
// that set headers one by one (fiber).
func (r *Response) SetCookieLines() []string {
	lines := make([]string, 0, len(r.Cookies))
	for _, c := range r.Cookies {
		if v := c.String(); v != "" {
			lines = append(lines, v)
		}
	}
	return lines
}
