// Package authtest is authkit's HTTP flow suite: it runs every reference
// flow (docs/api.md, and the deviations of SECURITY.md)
// against a framework module through a real *http.Client with a cookie
// jar, one client per simulated browser.
//
// A framework module (nethttpauth, ginauth, fiberauth) or an example server
// hands Run a Harness that serves a *auth.Service on 127.0.0.1:0 and makes
// fresh stores. A framework module's run is on the memory stores, which
// OnMemory fills in:
//
//	func TestFlows(t *testing.T) {
//		authtest.Run(t, authtest.OnMemory(func(t *testing.T, svc *auth.Service) string {
//			return authtest.Serve(t, nethttpauth.Handler(svc))
//		}))
//	}
//
// A store's run names its own (Harness.NewUsers, NewSessions, NewLimitStore).
//
// Every subtest builds its own Service (auth.New) on fresh stores, a
// capturing mailer, the minimum-cost test hasher and a settable Clock that
// starts at a fixed instant with sub-second digits; windows and expiries
// are crossed by moving the clock, never by sleeping. Subtests run in
// parallel.
//
// The suite is one table of topics (topics, in suite.go): each topic is a
// list of behaviours, each named for what it checks and checked by one
// method on the suite, in the file named for the topic (twofactor.go,
// login.go, email.go, changeemail.go, reset.go, account.go, limits.go,
// limitfull.go, clientip.go, lockout.go, tokens.go, crossorigin.go,
// cookies.go, input.go, races.go, hardening.go, extend.go, language.go);
// errors.go walks the spec's error table, one subtest per row. A new
// behaviour is a new method and a new row.
//
// What a subtest checks: the exact status and the exact client text (the
// spec's error texts where the spec has one), the JSON fields, the
// cookie attributes parsed from the raw Set-Cookie lines, the record in the
// user store after the call, and the mail that was (or was not) sent:
// kind, recipient, link and the expiry it states. Every response of an
// authkit route must carry Content-Type application/json and
// Cache-Control: no-store; the suite's client checks that on every reply.
//
// When Harness.RealTimeLimits is set (a rate-limit store that keeps its own
// time, such as Redis), the subtests that move the clock past a window are
// skipped and window end times are checked only for their form.
//
// For a module's own unit tests (its middleware, its mounting, its
// framework's edge cases), the package has helpers too: Serve runs an
// http.Handler on 127.0.0.1:0 for the test; NewService builds a Service
// on a given user store with a fixed clock and a capturing mailer; Send
// (and Fetch, for other goroutines) makes one request and returns the
// reply read whole as a Reply (ReadReply, for a response got another way);
// Browser is a client with a cookie jar; AuditLog records a Service's
// audit events (the flow suites of authtest and passkeystest check theirs
// with it); WantError checks an error reply as core writes it, and WantJSONHeaders
// the headers core sets on every JSON reply. CheckRequireUser,
// CheckRequireVerifiedEmail, CheckRateLimit and CheckMountedAt run the same
// checks on every module's RequireUser, RequireVerifiedEmail and RateLimit
// middleware and on its routes mounted under a prefix:
//
//	func TestRequireUser(t *testing.T) {
//		svc, _ := authtest.NewService(t, store.NewMemory(store.MemoryConfig{}))
//		mux := http.NewServeMux()
//		nethttpauth.Mount(mux, svc, "")
//		mux.Handle("GET /private", nethttpauth.RequireUser(svc)(hello)) // hello writes "hello " and the email
//		authtest.CheckRequireUser(t, authtest.Serve(t, mux), "/private", "hello ada@example.com")
//	}
package authtest
