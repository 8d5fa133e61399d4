package app

import (
	"bufio"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
)

// TestMetricsOff: without METRICS_ADDR there is no metrics handler and no
// observer.
func TestMetricsOff(t *testing.T) {
	a := loadOrRefuse(t, map[string]string{"DATABASE_URL": "memory", "AUTHKIT_DATA_DIR": t.TempDir()}, "")
	defer a.Close(t.Context())
	if a.Metrics != nil || a.MetricsAddr != "" {
		t.Errorf("metrics on without METRICS_ADDR: %q", a.MetricsAddr)
	}
}

// TestMetricsScrape: a scripted run (three registrations and their mails,
// a fourth refused by the register limit, a failed and a good login), then
// a scrape of METRICS_ADDR's /metrics: the authkit series, exactly.
func TestMetricsScrape(t *testing.T) {
	a := loadOrRefuse(t, map[string]string{"DATABASE_URL": "memory", "AUTHKIT_DATA_DIR": t.TempDir(), "METRICS_ADDR": "127.0.0.1:0"}, "")
	defer a.Close(t.Context())
	if a.MetricsAddr != "127.0.0.1:0" || a.Metrics == nil {
		t.Fatalf("METRICS_ADDR not taken: %q", a.MetricsAddr)
	}
	mux := http.NewServeMux()
	for _, rt := range a.Service.Modules().Routes() {
		mux.HandleFunc(rt.Method+" "+rt.Pattern, func(w http.ResponseWriter, r *http.Request) {
			resp := a.Service.Modules().Handle(rt, auth.HTTPRequest(r, r.PathValue))
			resp.Write(w)
		})
	}
	app := httptest.NewServer(mux)
	defer app.Close()
	metrics := httptest.NewServer(a.Metrics)
	defer metrics.Close()

	post := func(c *http.Client, path, body string, want int) {
		t.Helper()
		resp, err := c.Post(app.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("POST %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	browser := func() *http.Client { jar, _ := cookiejar.New(nil); return &http.Client{Jar: jar} }
	ada := browser()
	post(ada, "/api/auth/register", `{"email":"ada@example.com","password":"correct horse battery","name":"Ada"}`, 200)
	post(browser(), "/api/auth/register", `{"email":"bob@example.com","password":"correct horse battery","name":"Bob"}`, 200)
	post(browser(), "/api/auth/register", `{"email":"cy@example.com","password":"correct horse battery","name":"Cy"}`, 200)
	post(browser(), "/api/auth/register", `{"email":"dee@example.com","password":"correct horse battery","name":"Dee"}`, 429) // register:ip, 3 an hour
	post(ada, "/api/login", `{"email":"ada@example.com","password":"wrong horse battery"}`, 401)
	post(ada, "/api/login", `{"email":"ada@example.com","password":"correct horse battery"}`, 200)
	if err := a.Service.FlushMail(t.Context()); err != nil {
		t.Fatal(err)
	}

	got := scrape(t, metrics.URL+"/metrics")
	want := []string{
		`authkit_flow_duration_seconds_count{authkit_flow="login",authkit_outcome="failure"} 1`,
		`authkit_flow_duration_seconds_count{authkit_flow="login",authkit_outcome="success"} 1`,
		`authkit_flow_duration_seconds_count{authkit_flow="register",authkit_outcome="failure"} 1`,
		`authkit_flow_duration_seconds_count{authkit_flow="register",authkit_outcome="success"} 3`,
		`authkit_limit_hits_total{authkit_limit_name="register:ip"} 1`,
		`authkit_logins_total{authkit_outcome="failure"} 1`,
		`authkit_logins_total{authkit_outcome="success"} 1`,
		`authkit_mails_total{authkit_mail_kind="verify_email",authkit_outcome="sent"} 3`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("scraped\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

var scopeLabel = regexp.MustCompile(`,?otel_scope_[a-z_]+="[^"]*"`)

// scrape reads the Prometheus text at url and returns its authkit series
// (histograms by their _count), the exporter's otel_scope_* labels left
// out, sorted.
func scrape(t *testing.T, url string) []string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "authkit_") || strings.Contains(line, "_bucket{") || strings.Contains(line, "_sum{") {
			continue
		}
		line = scopeLabel.ReplaceAllString(line, "")
		line = strings.Replace(line, "{,", "{", 1)
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}
