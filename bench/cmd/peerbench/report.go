package main

import (
	"fmt"
	"slices"
	"strings"
)

// rate is the expected responses per second: 200s, or 429s under attack
// (measure has checked that every response was the expected one). A login
// run completes few requests, and wrk counts none of those in flight when
// it stops (up to one per connection), so its rate is Little's law instead:
// connections / mean latency.
func (r run) rate() float64 {
	if r.Kind == "login" && r.Mean > 0 {
		return float64(r.Conns) / r.Mean.Seconds()
	}
	if r.Seconds == 0 {
		return 0
	}
	return float64(r.Requests) / r.Seconds
}

// cpuPerRequest is the server's CPU seconds per request.
func (r run) cpuPerRequest() float64 {
	if r.Requests == 0 {
		return 0
	}
	return r.CPU / float64(r.Requests)
}

// spread is the minimum, median and maximum of a sample.
type spread struct{ min, med, max float64 }

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return spread{s[0], med, s[n-1]}
}

// metric is one row of a comparison: a figure of every run, its unit, and
// which way is better.
type metric struct {
	name   string
	unit   string
	higher bool // higher is better
	value  func(run) float64
}

var metrics = map[string][]metric{
	"check": {
		{"requests/s", "", true, run.rate},
		{"latency p50", "ms", false, func(r run) float64 { return r.P50.Seconds() * 1e3 }},
		{"latency p99", "ms", false, func(r run) float64 { return r.P99.Seconds() * 1e3 }},
		{"CPU per request", "µs", false, func(r run) float64 { return r.cpuPerRequest() * 1e6 }},
	},
	"login": {
		{"logins/s", "", true, run.rate},
		{"latency p50", "ms", false, func(r run) float64 { return r.P50.Seconds() * 1e3 }},
		{"latency p99", "ms", false, func(r run) float64 { return r.P99.Seconds() * 1e3 }},
		{"CPU per login", "ms", false, func(r run) float64 { return r.cpuPerRequest() * 1e3 }},
	},
	"attack": {
		{"429s/s", "", true, run.rate},
		{"latency p50", "ms", false, func(r run) float64 { return r.P50.Seconds() * 1e3 }},
		{"latency p99", "ms", false, func(r run) float64 { return r.P99.Seconds() * 1e3 }},
		{"CPU per 429", "µs", false, func(r run) float64 { return r.cpuPerRequest() * 1e6 }},
	},
}

var scenarioNames = map[string]string{
	"postgres": "sessions in PostgreSQL",
	"redis":    "sessions in Redis",
	"attack":   "login-flood servers (sessions in PostgreSQL)",
}

var titles = []struct{ scenario, kind, title string }{
	{"postgres", "check", "Session check, sessions in PostgreSQL"},
	{"redis", "check", "Session check, sessions in Redis"},
	{"postgres", "login", "Login (scrypt N=16384 r=16 p=1 on both), sessions in PostgreSQL"},
	{"redis", "login", "Login (scrypt N=16384 r=16 p=1 on both), sessions in Redis"},
	{"attack", "attack", "Login flood from one address past its limit (10 per 15 min on both)"},
}

// table renders the comparison: medians with min–max over the rounds, the
// ratio of the medians, the memory, and the load average of every round.
func (c *config) table() string {
	var b strings.Builder
	b.WriteString("| comparison | figure | authkit median (min–max) | better-auth median (min–max) | authkit against better-auth |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	for _, t := range titles {
		for _, m := range metrics[t.kind] {
			ak := spreadOf(c.values(t.scenario, t.kind, "authkit", m))
			ba := spreadOf(c.values(t.scenario, t.kind, "better-auth", m))
			if ak.med == 0 && ba.med == 0 {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", t.title, withUnit(m), ak, ba, verdict(ak.med, ba.med, m.higher))
		}
	}
	for _, r := range c.rss {
		if r.Server != "authkit" {
			continue
		}
		for _, o := range c.rss {
			if o.Scenario == r.Scenario && o.Server == "better-auth" {
				title := "Memory, " + scenarioNames[r.Scenario]
				first := "RSS after start-up (MiB)"
				if r.Sessions > 0 {
					first = fmt.Sprintf("RSS once %d sessions exist (MiB)", r.Sessions)
				}
				fmt.Fprintf(&b, "| %s | %s | %.1f | %.1f | %s |\n", title, first, mib(r.Seeded), mib(o.Seeded), verdict(mib(r.Seeded), mib(o.Seeded), false))
				fmt.Fprintf(&b, "| %s | RSS after the rounds (MiB) | %.1f | %.1f | %s |\n", title, mib(r.After), mib(o.After), verdict(mib(r.After), mib(o.After), false))
			}
		}
	}
	b.WriteString("\nLoad average (1, 5, 15 min) when each server's runs of a round began:\n\n")
	b.WriteString("| scenario | round | authkit | better-auth |\n| --- | --- | --- | --- |\n")
	rounds := 0
	for _, r := range c.runs {
		rounds = max(rounds, r.Round)
	}
	for _, sc := range []string{"postgres", "redis", "attack"} {
		for r := 1; r <= rounds; r++ {
			fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", sc, r, c.load(sc, "authkit", r), c.load(sc, "better-auth", r))
		}
	}
	return b.String()
}

func (c *config) values(scenario, kind, server string, m metric) []float64 {
	var xs []float64
	for _, r := range c.runs {
		if r.Scenario == scenario && r.Kind == kind && r.Server == server {
			xs = append(xs, m.value(r))
		}
	}
	return xs
}

func (c *config) load(scenario, server string, round int) string {
	for _, r := range c.runs {
		if r.Scenario == scenario && r.Server == server && r.Round == round {
			return r.Load
		}
	}
	return "-"
}

func withUnit(m metric) string {
	if m.unit == "" {
		return m.name
	}
	return m.name + " (" + m.unit + ")"
}

func (s spread) String() string {
	return fmt.Sprintf("%s (%s–%s)", num(s.med), num(s.min), num(s.max))
}

// num prints three significant figures or more.
func num(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// verdict says whether authkit's median is ahead and by what factor.
func verdict(ak, ba float64, higher bool) string {
	if ak <= 0 || ba <= 0 {
		return "-"
	}
	f := ak / ba
	if !higher {
		f = ba / ak
	}
	if f >= 1 {
		return fmt.Sprintf("ahead, ×%.2f", f)
	}
	return fmt.Sprintf("**behind**, ×%.2f", 1/f)
}
