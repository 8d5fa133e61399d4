package pages

import (
	"html/template"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/i18n"
)

// TestDevice: the labels of the session list for the User-Agents people's
// browsers send, in English and German; what it cannot place is shown as
// sent, shortened.
func TestDevice(t *testing.T) {
	e := setup(t, german)
	en := &View{h: e.pages}
	de := &View{h: e.pages, lang: catalog(t, i18n.German()).Match("de")}
	for _, tt := range []struct{ ua, en, de string }{
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox on Windows", "Firefox auf Windows"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15", "Safari on macOS", "Safari auf macOS"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1", "Safari on iPhone", "Safari auf iPhone"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1", "Chrome on iPhone", "Chrome auf iPhone"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", "Edge on Windows", "Edge auf Windows"},
		{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Mobile Safari/537.36", "Chrome on Android", "Chrome auf Android"},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OPR/115.0.0.0", "Opera on Linux", "Opera auf Linux"},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36", "Headless Chrome on Linux", "Headless Chrome auf Linux"},
		{"curl/8.5.0", "curl", "curl"},
		{"", "Unknown browser", "Unbekannter Browser"},
		{"MyApp/2.1", "MyApp/2.1", "MyApp/2.1"},
		{strings.Repeat("x", 80), strings.Repeat("x", 60) + "…", strings.Repeat("x", 60) + "…"},
	} {
		if got := en.Device(tt.ua); got != tt.en {
			t.Errorf("Device(%q) = %q, want %q", tt.ua, got, tt.en)
		}
		if got := de.Device(tt.ua); got != tt.de {
			t.Errorf("German Device(%q) = %q, want %q", tt.ua, got, tt.de)
		}
	}
}

// TestTimeInText: TH puts Time's element into a text as it is and escapes
// the text and every other var.
func TestTimeInText(t *testing.T) {
	e := setup(t, nil)
	v := &View{h: e.pages}
	at := time.Date(2031, 3, 14, 15, 9, 26, 0, time.FixedZone("CET", 3600))
	got := v.TH("passkeys.used", "when", v.Time(at))
	if want := template.HTML(`last used <time datetime="2031-03-14T14:09:26Z" data-local>2031-03-14 14:09 UTC</time>`); got != want {
		t.Errorf("TH = %s, want %s", got, want)
	}
	if got := v.TH("sessions.from", "ip", "<b>&"); got != "from &lt;b&gt;&amp;" {
		t.Errorf("TH with a plain var = %s", got)
	}
	if got := v.Time(time.Time{}); got != "-" {
		t.Errorf("Time of the zero time = %s", got)
	}
}
