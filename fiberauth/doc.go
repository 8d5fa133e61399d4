// Package fiberauth serves authkit's flows on fiber v2.
//
// It only translates: a *fiber.Ctx becomes the auth package's neutral
// Request, and the flow's Response is written back as it is. Every
// decision (status, body, cookies, rate limits, client address) is made in
// core, so this module answers exactly as nethttpauth and ginauth do.
//
//	svc, err := auth.New(auth.Config{...})
//	app := fiber.New(fiberauth.ApplyConfig(svc, fiber.Config{}))
//	fiberauth.Register(app.Group("/auth"), svc)          // /auth/api/login, /auth/api/2fa/setup, ...
//	app.Get("/dashboard", fiberauth.RequireUser(svc), func(c *fiber.Ctx) error {
//		u, _ := fiberauth.CurrentUser(c)
//		return c.SendString("hello " + u.Name)
//	})
//
// An app's own handler that calls a typed method makes the request's
// Visit, and answers with the visit's cookies, or with the error as the
// JSON routes answer it:
//
//	v := fiberauth.Visit(c, svc)
//	if _, err := svc.Login(c.UserContext(), v, auth.LoginInput{Email: email, Password: pw}); err != nil {
//		return fiberauth.WriteError(c, svc, v, err)
//	}
//	fiberauth.WriteHeaders(c, v)
//
// # What fasthttp changes
//
// fasthttp reuses a request's buffers once its handler returns, while core
// may keep what it read (a mail is rendered on another goroutine): every
// string and body this package hands to core is a copy. The body is the
// raw one, never inflated (fiber's Ctx.Body inflates gzip without a bound).
// The client address is the socket peer and X-Forwarded-For, judged by
// core's trusted-proxy rule, never fiber's c.IP(). Cookies go out as the
// raw Set-Cookie lines net/http formats, with core's headers in place of
// fiber's defaults.
//
// # fiber.Config
//
// [ApplyConfig] sets what authkit relies on: an [ErrorHandler] that answers
// fiber's own errors (unknown path 404, wrong method 405, body over
// BodyLimit 413, headers over ReadBufferSize 431) with authkit's JSON
// {"error": ...}, and a [ReadBufferSize] of 64 KiB instead of fiber's 4096
// bytes. fiber's defaults of case-insensitive, non-strict routing stay the
// app's choice: with them /API/LOGIN and /api/login/ reach the login route,
// where net/http answers 404; set CaseSensitive and StrictRouting for
// net/http's exact matching. A request whose method fiber does not know
// (not in Config.RequestMethods) gets fiber's plain-text 400 before any
// handler runs.
package fiberauth
