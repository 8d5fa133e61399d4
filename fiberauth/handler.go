package fiberauth

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
)

// HTTPHandler mounts one of authkit's net/http handlers (the pages) on
// fiber:
//
//	app.Use(fiberauth.HTTPHandler(pages)) // the pages, after every route
//
// It is fiber's adaptor.HTTPHandler with one difference: the handler's
// request context is the fiber context's UserContext (what RequireUser and
// the flows use), not fasthttp's RequestCtx. fasthttp's RequestCtx is a
// context.Context whose Done reads the server's state without a lock
// while Server.Shutdown writes it, so a store call that watches the request
// context (database/sql does) races with a graceful shutdown (the race
// detector reports it). A UserContext is never cancelled by fasthttp
// either, so nothing is lost.
func HTTPHandler(h http.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		return adaptor.HTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(ctx))
		}))(c)
	}
}
