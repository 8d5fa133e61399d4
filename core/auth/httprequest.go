package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// HTTPRequest adapts an *http.Request for the flows, for every framework
// built on net/http (nethttpauth, ginauth). param reads a route parameter:
// r.PathValue on a ServeMux, gin's c.Param.
func HTTPRequest(r *http.Request, param func(name string) string) Request {
	return httpRequest{r, param}
}

var _ QueryRequest = httpRequest{}

type httpRequest struct {
	r     *http.Request
	param func(string) string
}

func (q httpRequest) Context() context.Context { return q.r.Context() }
func (q httpRequest) Method() string           { return q.r.Method }
func (q httpRequest) Host() string             { return q.r.Host }
func (q httpRequest) RemoteAddr() string       { return q.r.RemoteAddr }

// RawQuery implements [QueryRequest].
func (q httpRequest) RawQuery() string { return q.r.URL.RawQuery }

func (q httpRequest) PathValue(name string) string {
	if q.param == nil {
		return q.r.PathValue(name)
	}
	return q.param(name)
}

func (q httpRequest) Header(name string) string {
	return strings.Join(q.r.Header.Values(name), ", ")
}

// Cookie returns the raw value, not URL-unescaped (gin's Context.Cookie
// would unescape it; net/http does not), found as net/http finds it but
// without parsing every cookie (see CookieValue).
func (q httpRequest) Cookie(name string) (string, bool) {
	return CookieValue(q.r.Header["Cookie"], name)
}

// Body reads at most limit+1 bytes, so a body longer than limit is known
// without reading it all; an app's own http.MaxBytesReader below the limit
// gives the same ErrBodyTooLarge.
func (q httpRequest) Body(limit int64) ([]byte, error) {
	if q.r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(q.r.Body, limit+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, fmt.Errorf("auth: %w", ErrBodyTooLarge)
		}
		return nil, fmt.Errorf("auth: read body: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("auth: %w", ErrBodyTooLarge)
	}
	return b, nil
}
