package attack

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/e2e/servertest"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

// Texts of the answers the exhaustion tests expect (docs/errors.md).
const (
	msgForgotSent    = "If an account exists for that email, a password reset link has been sent."
	msgTooManyLogins = "Too many login attempts. Try again later."
	msgRegistered    = "Registration successful. Check your email to verify your address."
)

// TestLimitStoreExhaustion fills the example server's in-memory limit
// stores from many real source addresses (the loopback range: every
// 127.x.y.z is this machine, so each connection is bound to an address of
// its own, and the server keys limits by the socket address, TRUST_PROXY
// unset), as an attacker with that many addresses would, then checks what a
// user who is not under attack gets: their correct password logs them in,
// and their forgot-password request mails them the link (SECURITY.md
// deviation 10). The flood is the fast one: each request is sent and the
// connection half-closed, so the server cancels the request once it has
// read it, and a login for an unknown address skips its password hash;
// the limits have counted it by then, and the answer is still read back.
//
// Forgot-password for unknown addresses queues no mail, so this flood
// cannot fill the mail queue; the victim's mail is checked on the
// server's console output.
func TestLimitStoreExhaustion(t *testing.T) {
	srv := servertest.Start(t, "nethttp", append(servertest.Secrets(t), "DATABASE_URL=memory")...)
	if !strings.Contains(srv.FirstLine, "rate limits: memory") {
		t.Fatalf("first log line %q: want in-memory rate limits", srv.FirstLine)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	const victim = "victim@example.com"
	victimFrom := func(n int) *http.Client { return clientFrom(netip.AddrFrom4([4]byte{127, 0, 200, byte(n)})) }
	r := send(t, victimFrom(1), srv.URL+"/api/auth/register", fmt.Sprintf(`{"email":%q,"password":%q,"name":"Victim"}`, victim, password))
	if r.status != 200 || r.json["message"] != msgRegistered {
		t.Fatalf("register: %s", r)
	}

	// 1,050 addresses x 10 made-up emails: login:email gets 10,500 keys,
	// 500 past its capacity, so it fills even if the server drops a
	// request before counting it; each address stays within login:ip's 10.
	took, statuses := flood(t, host, 1050, 10, 1, "/api/login", func(a, i int) string {
		return fmt.Sprintf(`{"email":"junk%d-%d@example.net","password":"guess"}`, a, i)
	})
	t.Logf("login flood: 10,500 requests from 1,050 addresses in %s, answers %v", took.Round(time.Millisecond), statuses)
	// 503: a request the server found cancelled (its client gone) at the
	// user store, after the limits had counted it; nobody reads it.
	if statuses[401]+statuses[503] != 10500 || statuses[401] < 9500 {
		t.Errorf("login flood answers %v, want 10,500 x 401 (or 503 for a cancelled request), no 429", statuses)
	}
	r = send(t, victimFrom(2), srv.URL+"/api/login", fmt.Sprintf(`{"email":%q,"password":%q}`, victim, password))
	t.Logf("victim's login after the flood: %s", r)
	if r.status != 200 || len(r.json) != 1 || r.json["success"] != true {
		t.Errorf("victim's correct password after the login flood: %s, want 200 {\"success\":true}", r)
	}
	if !strings.Contains(strings.Join(r.header.Values("Set-Cookie"), "\n"), "authkit_session=") {
		t.Errorf("victim's login: no session cookie")
	}
	// The address key was refunded; the email key was not counted.
	if got := r.header.Get("X-RateLimit-Remaining"); got != "10" {
		t.Errorf("victim's login: X-RateLimit-Remaining %q, want 10", got)
	}

	// 2,100 addresses x 5 made-up emails: reset:email gets 10,500 keys,
	// past its capacity as above; each address stays within reset:ip's 5.
	took, statuses = flood(t, host, 2100, 5, 2, "/api/auth/forgot-password", func(a, i int) string {
		return fmt.Sprintf(`{"email":"junk%d-%d@example.net"}`, a, i)
	})
	t.Logf("forgot-password flood: 10,500 requests from 2,100 addresses in %s, answers %v", took.Round(time.Millisecond), statuses)
	if statuses[200]+statuses[503] != 10500 || statuses[200] < 9500 {
		t.Errorf("forgot-password flood answers %v, want 10,500 x 200 (or 503 for a cancelled request), no 429", statuses)
	}
	r = send(t, victimFrom(3), srv.URL+"/api/auth/forgot-password", fmt.Sprintf(`{"email":%q}`, victim))
	t.Logf("victim's forgot-password after the flood: %s", r)
	if r.status != 200 || len(r.json) != 1 || r.json["message"] != msgForgotSent {
		t.Errorf("victim's forgot-password: %s, want 200 {\"message\":%q}", r, msgForgotSent)
	}
	if got := r.header.Get("X-RateLimit-Remaining"); got != "4" {
		t.Errorf("victim's forgot-password: X-RateLimit-Remaining %q, want 4", got)
	}
	mailed := waitFor(srv, regexp.MustCompile(`(?s)To: `+regexp.QuoteMeta(victim)+`.*?/reset-password/`), 10*time.Second)
	t.Logf("victim's reset mail sent: %v", mailed)
	if !mailed {
		t.Errorf("no reset mail to %s on the console:\n%.2000s", victim, srv.Stdout())
	}

	// Each full store was reported, once (at most once a minute).
	for _, limit := range []string{"login:email", "reset:email"} {
		re := regexp.MustCompile(`event=limit_store_full .*detail=` + regexp.QuoteMeta(limit) + `\b`)
		if n := len(re.FindAllString(srv.Log(), -1)); n != 1 {
			t.Errorf("%d limit_store_full events for %s in the log, want 1", n, limit)
		}
	}
	// The address stores, with 1,050 and 2,100 keys, were never full.
	if m := regexp.MustCompile(`event=limit_store_full .*detail=\S*:ip\b`).FindString(srv.Log()); m != "" {
		t.Errorf("an address store reported full: %s", m)
	}
}

// TestCorrectLoginsFromOneAddress: an office or a carrier's NAT behind one
// address logs in any number of times; failures from it still meet the
// limit of 10 per 15 minutes (SECURITY.md deviation 4).
func TestCorrectLoginsFromOneAddress(t *testing.T) {
	srv := servertest.Start(t, "nethttp", append(servertest.Secrets(t), "DATABASE_URL=memory")...)
	office := clientFrom(netip.MustParseAddr("127.0.201.1"))
	const email = "office@example.com"
	if r := send(t, office, srv.URL+"/api/auth/register", fmt.Sprintf(`{"email":%q,"password":%q,"name":"Office"}`, email, password)); r.status != 200 {
		t.Fatalf("register: %s", r)
	}
	const logins = 15
	ok := 0
	for ; ok < logins; ok++ {
		r := send(t, office, srv.URL+"/api/login", fmt.Sprintf(`{"email":%q,"password":%q}`, email, password))
		if r.status != 200 || r.json["success"] != true {
			t.Logf("correct login %d: %s", ok+1, r)
			break
		}
	}
	t.Logf("correct logins from one address before a 429: %d of %d answered 200", ok, logins)
	if ok != logins {
		t.Errorf("%d of %d correct logins from one address answered 200", ok, logins)
	}
	for i := range 10 {
		if r := send(t, office, srv.URL+"/api/login", fmt.Sprintf(`{"email":"nobody%d@example.com","password":"wrong"}`, i)); r.status != 401 {
			t.Fatalf("failed login %d: %s, want 401", i+1, r)
		}
	}
	r := send(t, office, srv.URL+"/api/login", fmt.Sprintf(`{"email":%q,"password":%q}`, email, password))
	if r.status != 429 || r.json["error"] != msgTooManyLogins || r.header.Get("Retry-After") == "" {
		t.Errorf("after 10 failures: %s, want 429 %q with Retry-After", r, msgTooManyLogins)
	}
}

// clientFrom returns an HTTP client whose connections leave from src.
func clientFrom(src netip.Addr) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: src.AsSlice()}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: requestTimeout, Transport: &http.Transport{DialContext: d.DialContext}}
}

// answer is one response, read whole.
type answer struct {
	status int
	header http.Header
	body   string
	json   map[string]any
}

func (a answer) String() string { return fmt.Sprintf("%d %s", a.status, a.body) }

func send(t *testing.T, c *http.Client, url, body string) answer {
	t.Helper()
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
	_ = json.Unmarshal(b, &a.json)
	return a
}

// flood sends per requests from each of addrs source addresses
// 127.net.x.y to path on host, the body of request i of address a made by
// body(a, i), from 64 connections at a time. Each request goes on a
// connection of its own that is half-closed once sent, and its answer is
// read back. It returns how long the flood took and the count of each
// status.
func flood(t *testing.T, host string, addrs, per int, network byte, path string, body func(a, i int) string) (time.Duration, map[int]int) {
	t.Helper()
	type job struct{ a, i int }
	jobs := make(chan job)
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	began := time.Now()
	for range 64 {
		wg.Go(func() {
			for j := range jobs {
				src := netip.AddrFrom4([4]byte{127, network, byte(j.a / 250), byte(j.a%250 + 1)})
				status, err := halfClosed(host, src, path, body(j.a, j.i))
				if err != nil {
					t.Errorf("flood request %d of %s: %v", j.i, src, err)
				}
				mu.Lock()
				statuses[status]++
				mu.Unlock()
			}
		})
	}
	// Address by address, in order, so the keys arrive as an attacker's
	// would; requests of one address never exceed its address limit.
	for a := range addrs {
		for i := range per {
			jobs <- job{a, i}
		}
	}
	close(jobs)
	wg.Wait()
	return time.Since(began), statuses
}

// halfClosed sends one POST from src to path on host on a connection of
// its own, closes its write side, and reads the status of the answer.
func halfClosed(host string, src netip.Addr, path, body string) (int, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: src.AsSlice()}, Timeout: 5 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(requestTimeout))
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		path, host, len(body), body)
	if _, err := io.WriteString(conn, req); err != nil {
		return 0, err
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodPost, URL: &url.URL{Path: path}})
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// waitFor polls the server's console output for re, up to d.
func waitFor(srv *servertest.Server, re *regexp.Regexp, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if re.MatchString(srv.Stdout()) {
			return true
		}
	}
	return false
}

// TestPasskeyChallengeFlood floods the example server's in-memory passkey
// challenge store (DATABASE_URL=memory, no Redis; its capacity lowered to
// 2,000 by PASSKEY_CHALLENGE_CAPACITY, so the flood is 3,000 requests,
// not 100,000) with anonymous passwordless begins from 150 real source
// addresses, each within its begin limit of 30 a minute, as an attacker
// with that many addresses would. Every begin is answered; a passkey
// registration begun before the flood still finishes after it, and a
// passwordless sign-in after it works: only the oldest anonymous
// ceremonies were dropped, and the server said so once, at WARN.
func TestPasskeyChallengeFlood(t *testing.T) {
	srv := servertest.Start(t, "nethttp", append(servertest.Secrets(t), "DATABASE_URL=memory", "PASSKEY_CHALLENGE_CAPACITY=2000")...)
	if !strings.Contains(srv.FirstLine, "passkeys: on for http://localhost:8080 (challenges: memory)") {
		t.Fatalf("first log line %q: want passkeys on with in-memory challenges", srv.FirstLine)
	}
	const origin = "http://localhost:8080" // APP_URL's, which the authenticator signs
	victim := newPasskeyBrowser(t, srv.URL, netip.MustParseAddr("127.0.202.1"))
	if r := victim.post("/api/auth/register", fmt.Sprintf(`{"email":"victim@example.com","password":%q,"name":"Victim"}`, password)); r.status != 200 {
		t.Fatalf("register: %s", r)
	}
	// A passkey needs a verified address: the console mailer logs the link.
	tok := srv.WaitFor(t, regexp.MustCompile(`http://localhost:8080/verify-email/([A-Za-z0-9_-]+)`))
	if resp, err := victim.c.Get(srv.URL + "/api/auth/verify-email/" + tok); err != nil || resp.StatusCode != 200 {
		t.Fatalf("verify-email: %v %v", resp, err)
	} else {
		_ = resp.Body.Close()
	}
	if r := victim.post("/api/login", fmt.Sprintf(`{"email":"victim@example.com","password":%q}`, password)); r.status != 200 {
		t.Fatalf("login: %s", r)
	}
	key := passkeystest.NewAuthenticator(t)
	regBegin := victim.post("/api/passkeys/register/begin", "")
	if regBegin.status != 200 {
		t.Fatalf("register/begin before the flood: %s", regBegin)
	}

	took, statuses := flood(t, strings.TrimPrefix(srv.URL, "http://"), 150, 20, 3, "/api/passkeys/login/begin", func(a, i int) string { return "" })
	t.Logf("passwordless begin flood: 3,000 requests from 150 addresses in %s, answers %v", took.Round(time.Millisecond), statuses)
	// 503: a request the server found cancelled (its client gone) before
	// it stored the ceremony; nobody reads it. No begin is refused.
	if statuses[200]+statuses[503] != 3000 || statuses[200] < 2700 {
		t.Errorf("flood answers %v, want 3,000 x 200 (or 503 for a cancelled request): a begin is never refused", statuses)
	}

	cred, _ := key.Create([]byte(regBegin.body), origin)
	cred["name"] = "Laptop"
	if r := victim.post("/api/passkeys/register/finish", servertest.JSON(t, cred)); r.status != 200 {
		t.Fatalf("the registration begun before the flood, finished after it: %s, want 200", r)
	}
	other := newPasskeyBrowser(t, srv.URL, netip.MustParseAddr("127.0.202.2"))
	begin := other.post("/api/passkeys/login/begin", "")
	if begin.status != 200 {
		t.Fatalf("login/begin after the flood: %s", begin)
	}
	if r := other.post("/api/passkeys/login/finish", servertest.JSON(t, key.Get([]byte(begin.body), origin, nil))); r.status != 200 {
		t.Fatalf("a passwordless sign-in after the flood: %s, want 200", r)
	}
	full := regexp.MustCompile(`level=WARN msg="passkeys: challenge store full`)
	if n := len(full.FindAllString(srv.Log(), -1)); n != 1 {
		t.Errorf("%d WARN lines about the full challenge store, want 1:\n%.3000s", n, srv.Log())
	}
	if strings.Contains(srv.Log(), "level=ERROR") {
		t.Errorf("ERROR lines in the log:\n%.3000s", srv.Log())
	}
}

// passkeyBrowser is a client from one source address with a cookie jar.
type passkeyBrowser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newPasskeyBrowser(t *testing.T, base string, src netip.Addr) *passkeyBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := clientFrom(src)
	c.Jar = jar
	return &passkeyBrowser{t: t, base: base, c: c}
}

func (b *passkeyBrowser) post(path, body string) answer {
	b.t.Helper()
	if body == "" {
		body = "{}"
	}
	return send(b.t, b.c, b.base+path, body)
}
