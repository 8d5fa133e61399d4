package pages

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func TestPages(t *testing.T) {
	h, err := New(Config{AppName: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/login", "/register", "/2fa", "/verify-email/abc", "/resend-verification",
		"/forgot-password", "/reset-password/abc", "/dashboard", "/settings/security", "/settings/recovery-codes"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Header().Get("Content-Type"))
		}
		for k, want := range map[string]string{
			"Content-Security-Policy": ContentSecurityPolicy, "X-Frame-Options": "DENY",
			"Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
		} {
			if got := rec.Header().Get(k); got != want {
				t.Errorf("GET %s: %s = %q, want %q", path, k, got, want)
			}
		}
		body := rec.Body.String()
		if !strings.Contains(body, "<title>") || !strings.Contains(body, "· Acme</title>") {
			t.Errorf("GET %s: no title with the app name", path)
		}
		// Strict CSP: no inline script or style, nothing from elsewhere.
		if regexp.MustCompile(`<script>|<script [^>]*>[^<]|\sstyle=|\son[a-z]+=|https?://`).MatchString(body) {
			t.Errorf("GET %s: inline script/style/handler or an external URL in the page", path)
		}
		// Every input is labelled.
		for _, m := range regexp.MustCompile(`<input id="([^"]+)"`).FindAllStringSubmatch(body, -1) {
			if !strings.Contains(body, `for="`+m[1]+`"`) && !strings.Contains(body, `<label class="check"><input id="`+m[1]) {
				t.Errorf("GET %s: input %s has no label", path, m[1])
			}
		}
	}
	for path, ct := range map[string]string{"/favicon.ico": "image/svg+xml", "/assets/app.js": "text/javascript", "/assets/app.css": "text/css", "/assets/favicon.svg": "image/svg+xml"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), ct) {
			t.Fatalf("GET %s: %d %q", path, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusFound || rec.Header().Get("Location") != "/dashboard" {
		t.Fatalf("GET /: %d %q", rec.Code, rec.Header().Get("Location"))
	}
}

func TestCodeFieldsHelpPeople(t *testing.T) {
	h, _ := New(Config{AppName: "x"})
	for path, want := range map[string][]string{
		"/2fa":               {`inputmode="numeric" autocomplete="one-time-code"`},
		"/settings/security": {`inputmode="numeric" autocomplete="one-time-code"`, `autocomplete="new-password"`, `autocomplete="current-password"`},
		"/login":             {`autocomplete="current-password"`},
		"/reset-password/x":  {`name="password"`, `name="confirmPassword"`, `minlength="8"`},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		for _, w := range want {
			if !strings.Contains(rec.Body.String(), w) {
				t.Errorf("GET %s lacks %s", path, w)
			}
		}
	}
}

func TestPaths(t *testing.T) {
	if got := ColonPath("/verify-email/{token}"); got != "/verify-email/:token" {
		t.Fatal(got)
	}
	if len(Paths()) != len(pageList)+5 {
		t.Fatal(Paths())
	}
}

// allPages are a path of every page.
var allPages = []string{"/login", "/register", "/2fa", "/verify-email/abc", "/resend-verification",
	"/forgot-password", "/reset-password/abc", "/dashboard", "/settings/security", "/settings/recovery-codes"}

// TestFormsPost: every form posts to a same-origin API route, so that
// without the script the browser never puts a field into a URL (a GET
// form would send /login?email=...&password=...).
func TestFormsPost(t *testing.T) {
	h, _ := New(Config{AppName: "x"})
	form := regexp.MustCompile(`<form\b[^>]*>`)
	for _, path := range allPages {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		for _, f := range form.FindAllString(rec.Body.String(), -1) {
			if !strings.Contains(f, ` method="post"`) || !regexp.MustCompile(` action="/api/[^"]+"`).MatchString(f) {
				t.Errorf("GET %s: %s: want method=\"post\" and an /api/ action", path, f)
			}
		}
	}
}

// TestResetFormAction: the reset form posts to the API route of the
// link's token, escaped so that a token cannot lead elsewhere.
func TestResetFormAction(t *testing.T) {
	h, _ := New(Config{AppName: "x"})
	for path, want := range map[string]string{
		"/reset-password/abc_DEF-123":                `action="/api/auth/reset-password/abc_DEF-123"`,
		"/reset-password/..%2F..%2F..%2Fapi%2Flogin": `action="/api/auth/reset-password/..%2f..%2f..%2fapi%2flogin"`,
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if body := rec.Body.String(); !strings.Contains(strings.ToLower(body), strings.ToLower(want)) {
			t.Errorf("GET %s: no %s in\n%s", path, want, body)
		}
	}
}

func TestNotFound(t *testing.T) {
	h, _ := New(Config{AppName: "Acme"})
	rec := httptest.NewRecorder()
	h.NotFound(rec, httptest.NewRequest("GET", "/nope", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusNotFound || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" ||
		rec.Header().Get("Content-Security-Policy") != ContentSecurityPolicy || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("NotFound: %d %v", rec.Code, rec.Header())
	}
	for _, want := range []string{"<title>Page not found · Acme</title>", "There is no page at this address", `href="/dashboard"`, `href="/login"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the 404 page lacks %s", want)
		}
	}
}

// TestHTTPSWarning: with Secure cookies every page carries the (hidden)
// warning that the script shows over plain HTTP; without, none does.
func TestHTTPSWarning(t *testing.T) {
	for _, secure := range []bool{true, false} {
		h, _ := New(Config{AppName: "x", SecureCookies: secure})
		for _, path := range allPages {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			got := strings.Contains(rec.Body.String(), `<p class="error" id="https-warning" role="alert" hidden>`)
			if got != secure {
				t.Errorf("SecureCookies=%v: GET %s has the HTTPS warning: %v", secure, path, got)
			}
		}
	}
}
