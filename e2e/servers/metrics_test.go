package servers

import (
	"bufio"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/e2e/servertest"
)

var metricsLine = regexp.MustCompile(`metrics on (http://127\.0\.0\.1:\d+)/metrics`)

// TestMetricsAddr runs examples/nethttp with METRICS_ADDR: the metrics
// are served on their own address, not the app's; after a scripted run
// (three registrations and their mails, a fourth refused by the register
// limit, a failed and a good login) the scrape has every authkit series
// exactly. On its defaults (TestNetHTTP) the server opens no second
// address.
func TestMetricsAddr(t *testing.T) {
	s := servertest.Start(t, "nethttp", "METRICS_ADDR=127.0.0.1:0")
	var metricsURL string
	for deadline := time.Now().Add(10 * time.Second); metricsURL == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := metricsLine.FindStringSubmatch(s.Log()); m != nil {
			metricsURL = m[1] + "/metrics"
		}
	}
	if metricsURL == "" {
		t.Fatalf("no metrics line in the log:\n%s", s.Log())
	}
	if resp, err := http.Get(s.URL + "/metrics"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the app's own address answers /metrics: %v %v", resp, err)
	}

	post := func(c *http.Client, path, body string, want int) {
		t.Helper()
		resp, err := c.Post(s.URL+path, "application/json", strings.NewReader(body))
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
	post(browser(), "/api/auth/register", `{"email":"dee@example.com","password":"correct horse battery","name":"Dee"}`, 429)
	post(ada, "/api/login", `{"email":"ada@example.com","password":"wrong horse battery"}`, 401)
	post(ada, "/api/login", `{"email":"ada@example.com","password":"correct horse battery"}`, 200)

	want := strings.Join([]string{
		`authkit_flow_duration_seconds_count{authkit_flow="login",authkit_outcome="failure"} 1`,
		`authkit_flow_duration_seconds_count{authkit_flow="login",authkit_outcome="success"} 1`,
		`authkit_flow_duration_seconds_count{authkit_flow="register",authkit_outcome="failure"} 1`,
		`authkit_flow_duration_seconds_count{authkit_flow="register",authkit_outcome="success"} 3`,
		`authkit_limit_hits_total{authkit_limit_name="register:ip"} 1`,
		`authkit_logins_total{authkit_outcome="failure"} 1`,
		`authkit_logins_total{authkit_outcome="success"} 1`,
		`authkit_mails_total{authkit_mail_kind="verify_email",authkit_outcome="sent"} 3`,
	}, "\n")
	var got string
	// Mail goes out asynchronously: scrape until the third mail is counted.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got = scrape(t, metricsURL); got == want {
			return
		}
	}
	t.Errorf("scraped\n%s\nwant\n%s", got, want)
}

var scopeLabel = regexp.MustCompile(`,?otel_scope_[a-z_]+="[^"]*"`)

// scrape returns the authkit series at url (histograms by their _count),
// without the exporter's otel_scope_* labels, sorted, one per line.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "authkit_") || strings.Contains(line, "_bucket{") || strings.Contains(line, "_sum{") {
			continue
		}
		out = append(out, strings.Replace(scopeLabel.ReplaceAllString(line, ""), "{,", "{", 1))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
