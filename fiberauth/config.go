package fiberauth

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/log"

	"github.com/authkit-go/authkit/core/auth"
)

// ReadBufferSize is the read buffer ApplyConfig gives an app that sets
// none: the most a request line and its headers may take. fiber's default
// (4096 bytes) is below what net/http accepts, so a long token URL or a
// few large cookies would fail on fiber only; 64 KiB matches the headers
// the net/http example server accepts.
const ReadBufferSize = 64 << 10

// ApplyConfig returns cfg with the settings authkit relies on, so that
// fiber answers like the other frameworks. Fields the app already set are
// kept:
//
//   - ErrorHandler: default ErrorHandler(svc), so errors fiber raises
//     itself are JSON {"error": ...}: 404 for unknown paths, 405, 413 for a
//     body over BodyLimit, 431 for headers over ReadBufferSize. An app with
//     its own handler should hand it the errors it does not answer itself.
//   - ReadBufferSize: default [ReadBufferSize]. fasthttp holds a buffer of
//     this size per connection while it reads a request.
//
// BodyLimit stays the app's (fiber's default: 4 MiB): authkit's routes read
// at most auth.Config.MaxBodyBytes (default 16 KiB) and answer a longer
// body 413 themselves.
func ApplyConfig(svc *auth.Service, cfg fiber.Config) fiber.Config {
	if cfg.ErrorHandler == nil {
		cfg.ErrorHandler = ErrorHandler(svc)
	}
	if cfg.ReadBufferSize == 0 {
		cfg.ReadBufferSize = ReadBufferSize
	}
	return cfg
}

// ErrorHandler answers every error as authkit's routes do, with a JSON
// {"error": ...} body and Cache-Control: no-store. A *fiber.Error keeps its
// status and core's text for it (auth.Modules.Error: 404, 405, 413 and 5xx
// have authkit's own); others carry the error's message, or the status
// text when no route ran (fasthttp's parse errors quote the request). Any
// other error is logged through fiber's logger and answered 500
// {"error":"Internal server error"}, its text never sent.
func ErrorHandler(svc *auth.Service) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		var resp auth.Response
		var fe *fiber.Error
		switch {
		case !errors.As(err, &fe):
			// The route's pattern, not the URL: a URL may hold a token.
			log.Errorf("fiberauth: %s %s: %v", c.Method(), c.Route().Path, err)
			resp = svc.Modules().Error(http.StatusInternalServerError, "")
		case fe.Code == http.StatusMethodNotAllowed:
			resp = svc.Modules().MethodNotAllowed(request{c}, "")
		case len(c.Route().Handlers) == 0:
			// No route ran: fasthttp refused the request, and its text
			// quotes the raw bytes it could not parse.
			resp = svc.Modules().Error(fe.Code, "")
		default:
			resp = svc.Modules().Error(fe.Code, fe.Message)
		}
		return write(c, &resp)
	}
}
