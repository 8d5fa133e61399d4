package browsertest

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/authkit-go/authkit/e2e/servertest"
)

// TestSecurityPageOnAPhone: an account with a long address, on a phone's
// screen (390 CSS pixels) in Tokyo: the security page fits the screen
// (the address wraps), and with JavaScript the times of its lists show in
// the viewer's time zone, the UTC text kept as their tooltip; without
// JavaScript they say UTC.
func TestSecurityPageOnAPhone(t *testing.T) {
	Chromium(t)
	s := servertest.Start(t, "nethttp", "DATABASE_URL=memory")
	long := "a.very.long.address.of.someone.who.likes.dots" + strings.Repeat("x", 20) + "@example.com"
	for _, js := range []bool{true, false} {
		name := map[bool]string{true: "js", false: "nojs"}[js]
		t.Run(name, func(t *testing.T) {
			b := New(t, "phone-"+name)
			b.DisableScripts(!js)
			b.Viewport(390, 844)
			if _, err := chromedp.Call(b.ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Tokyo"}); err != nil {
				t.Fatal(err)
			}
			b.Open(s.URL + "/register")
			b.WaitPage("register", "/register")
			submitRegistration(b, userName, strings.Replace(long, "@", "-"+name+"@", 1), password)
			b.WaitPage("dashboard", "/dashboard")
			b.Open(s.URL + "/settings/security")
			b.WaitPage("security", "/settings/security")
			b.Shot("security")
			if w := Eval[int](b, `document.documentElement.scrollWidth`); w > 390 {
				t.Errorf("the security page is %dpx wide, wider than the 390px screen", w)
			}
			n := Eval[int](b, `document.querySelectorAll("time[data-local]").length`)
			if n == 0 {
				t.Fatal("the security page shows no times")
			}
			local := `[...document.querySelectorAll("time[data-local]")].every(t =>
				t.textContent === new Intl.DateTimeFormat("en", {dateStyle: "medium", timeStyle: "short", timeZone: "Asia/Tokyo"}).format(new Date(t.dateTime)) &&
				t.title.endsWith(" UTC"))`
			utc := `[...document.querySelectorAll("time[data-local]")].every(t => t.textContent.endsWith(" UTC") && !t.title)`
			if js && !b.Eventually(local) {
				t.Errorf("with JavaScript, the times are not in Tokyo's zone with UTC as tooltip: %q", Eval[[]string](b, `[...document.querySelectorAll("time[data-local]")].map(t => t.textContent + " | " + t.title)`))
			}
			if !js && !Eval[bool](b, utc) {
				t.Errorf("without JavaScript, the times are not UTC: %q", Eval[[]string](b, `[...document.querySelectorAll("time[data-local]")].map(t => t.textContent)`))
			}
		})
	}
}
