package pages

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func TestPages(t *testing.T) {
	h, err := New("Acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/login", "/register", "/2fa", "/verify-email/abc", "/resend-verification",
		"/forgot-password", "/reset-password/abc", "/dashboard", "/settings/security"} {
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
	for path, ct := range map[string]string{"/assets/app.js": "text/javascript", "/assets/app.css": "text/css", "/assets/favicon.svg": "image/svg+xml"} {
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
	h, _ := New("x")
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
	if len(Paths()) != len(pageList)+4 {
		t.Fatal(Paths())
	}
}
