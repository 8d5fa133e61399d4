// Package nethttpauth serves authkit's flows on net/http.
//
// It only translates: an *http.Request becomes the auth package's neutral
// Request, and the flow's Response is written back as it is. Every
// decision (status, body, cookies, rate limits, client address) is made in
// core, so this module answers exactly as ginauth and fiberauth do.
//
//	svc, err := auth.New(auth.Config{...})
//	mux := http.NewServeMux()
//	nethttpauth.Mount(mux, svc, "")                          // /api/login, /api/2fa/setup, ...
//	mux.Handle("GET /dashboard", nethttpauth.RequireUser(svc)(dashboard))
//
//	func dashboard(w http.ResponseWriter, r *http.Request) {
//		u, _ := nethttpauth.CurrentUser(r)
//		fmt.Fprintf(w, "hello %s", u.Name)
//	}
//
// An app's own handler that calls a typed method makes the request's
// Visit, and answers with the visit's cookies, or with the error as the
// JSON routes answer it:
//
//	v := nethttpauth.Visit(r, svc)
//	if _, err := svc.Login(r.Context(), v, auth.LoginInput{Email: email, Password: pw}); err != nil {
//		nethttpauth.WriteError(w, r, svc, v, err)
//		return
//	}
//	nethttpauth.WriteHeaders(w, v)
package nethttpauth
