// Package authtest is authkit's HTTP flow suite: it runs every reference
// flow (spec sections 3 to 8, and the routes and deviations of DESIGN.md)
// against a framework module through a real *http.Client with a cookie
// jar, one client per simulated browser.
//
// A framework module (nethttpauth, ginauth, fiberauth) or an example server
// hands Run a Harness that serves a *auth.Service on 127.0.0.1:0 and makes
// fresh user stores:
//
//	func TestFlows(t *testing.T) {
//		authtest.Run(t, authtest.Harness{
//			Start: func(t *testing.T, svc *auth.Service) string {
//				ln, err := net.Listen("tcp", "127.0.0.1:0")
//				if err != nil {
//					t.Fatal(err)
//				}
//				srv := &http.Server{Handler: nethttpauth.Handler(svc)}
//				go srv.Serve(ln)
//				t.Cleanup(func() { srv.Close() })
//				return "http://" + ln.Addr().String()
//			},
//			NewUsers: func(t *testing.T) user.Store {
//				return store.NewMemory(store.MemoryConfig{})
//			},
//		})
//	}
//
// Every subtest builds its own Service (auth.New) on fresh stores, a
// capturing mailer, the minimum-cost test hasher and a settable Clock that
// starts at a fixed instant with sub-second digits; windows and expiries
// are crossed by moving the clock, never by sleeping. Subtests run in
// parallel.
//
// What a subtest checks: the exact status and the exact client text (the
// spec's section 7 texts where the spec has one), the JSON fields, the
// cookie attributes parsed from the raw Set-Cookie lines, the record in the
// user store after the call, and the mail that was (or was not) sent:
// kind, recipient, link and the expiry it states. Every response of an
// authkit route must carry Content-Type application/json and
// Cache-Control: no-store; the suite's client checks that on every reply.
//
// When Harness.RealTimeLimits is set (a rate-limit store that keeps its own
// time, such as Redis), the subtests that move the clock past a window are
// skipped and window end times are checked only for their form.
package authtest
