// Package ginauth serves authkit's flows on gin.
//
// It only translates: a *gin.Context becomes the auth package's neutral
// Request, and the flow's Response is written back as it is. Every
// decision (status, body, cookies, rate limits, client address) is made in
// core, so this module answers exactly as nethttpauth and fiberauth do.
// The client address comes from the Service's Config.Proxies, never from
// gin's ClientIP (which trusts every proxy unless the engine is told
// otherwise).
//
//	svc, err := auth.New(auth.Config{...})
//	r := gin.New()
//	ginauth.Register(r.Group("/auth"), svc)             // /auth/api/login, /auth/api/2fa/setup, ...
//	r.GET("/dashboard", ginauth.RequireUser(svc), dashboard)
//
//	func dashboard(c *gin.Context) {
//		u, _ := ginauth.CurrentUser(c)
//		c.String(http.StatusOK, "hello %s", u.Name)
//	}
//
// RequireUser puts the user in the request's context: CurrentUser(c)
// reads it, and so does auth.UserFromContext for code that only sees
// c.Request.Context(). (Not in gin's Keys map, which would cost a map per
// request.) RateLimit limits the app's own routes with the
// same store, headers and 429 body as authkit's.
//
// An app's own handler that calls a typed method makes the request's
// Visit, and answers with the visit's cookies, or with the error as the
// JSON routes answer it:
//
//	v := ginauth.Visit(c, svc)
//	if _, err := svc.Login(c.Request.Context(), v, auth.LoginInput{Email: email, Password: pw}); err != nil {
//		ginauth.WriteError(c, svc, v, err)
//		return
//	}
//	ginauth.WriteHeaders(c, v)
//
// Register answers every method of gin's RouterGroup.Any list on
// authkit's paths (a JSON 405 for the wrong one); New returns an engine
// that also answers unknown paths with a JSON 404.
package ginauth
