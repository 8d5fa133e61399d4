// Package browsertest drives a real headless Chromium through the example
// servers' pages, as a person would: it types into the labelled fields,
// clicks the buttons, follows the links the console mailer printed, and
// reports every console error, uncaught exception and
// Content-Security-Policy violation the pages cause.
//
// The browser is Debian's Chromium (package chromium, /usr/bin/chromium);
// AUTHKIT_CHROMIUM names another binary. Without one the tests skip, naming
// it, unless AUTHKIT_REQUIRE_SERVICES=1 makes that a failure.
//
// A test opens a browser of its own, as empty as a fresh profile (an
// incognito context of a Chromium that the tests of the process reuse):
//
//	s := servertest.Start(t, "nethttp")
//	b := browsertest.New(t, "nethttp")
//	b.Open(s.URL + "/login")
//	b.Fill("email", "ada@example.com")
//	b.Shot("login")
//	b.NoProblems()
//
// Screenshots go to <repository root>/artifacts/screenshots/<name>/, which
// git ignores: the page a failed test left, always, and with
// AUTHKIT_SCREENSHOTS=1 a picture of every step (Browser.Shot), so a
// reviewer can look at what the pages show.
package browsertest
