package pages

import "strings"

// Device names the browser and system of a User-Agent for the session and
// trusted-browser lists ("Firefox on Windows", "Safari on iPhone"), in the
// visit's language. It is a label for a person reading the list, never a
// security decision: a User-Agent is whatever the client sent. A string it
// cannot place is shown as it came, shortened, and an empty one as
// "Unknown browser".
//
// The rules are a few ordered substring tests over the tokens browsers have
// sent for a decade (Edge and Opera before Chrome, Chrome before Safari,
// iOS before macOS, Android before Linux): enough to tell a person's own
// devices apart, not a full User-Agent parser, which the pages do not take
// a dependency for.
func (v *View) Device(ua string) string {
	browser, system := browserOf(ua), systemOf(ua)
	switch {
	case browser != "" && system != "":
		return v.T("device.on", "browser", browser, "system", system)
	case browser != "":
		return browser
	case strings.TrimSpace(ua) == "":
		return v.T("device.unknown")
	}
	const max = 60
	if r := []rune(ua); len(r) > max {
		return string(r[:max]) + "…"
	}
	return ua
}

// browserOf is the browser's name in ua, or "".
func browserOf(ua string) string {
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"EdgA/", "Edge"}, {"EdgiOS/", "Edge"},
		{"OPR/", "Opera"}, {"SamsungBrowser/", "Samsung Internet"},
		{"Firefox/", "Firefox"}, {"FxiOS/", "Firefox"},
		{"CriOS/", "Chrome"}, {"Chrome/", "Chrome"}, {"Chromium/", "Chromium"},
		{"Safari/", "Safari"}, // after every engine that also says Safari
		{"curl/", "curl"}, {"Go-http-client/", "Go HTTP client"},
	} {
		if strings.Contains(ua, b.token) {
			if b.name == "Chrome" && strings.Contains(ua, "HeadlessChrome/") {
				return "Headless Chrome"
			}
			return b.name
		}
	}
	return ""
}

// systemOf is the operating system's name in ua, or "".
func systemOf(ua string) string {
	for _, s := range []struct{ token, name string }{
		{"iPhone", "iPhone"}, {"iPad", "iPad"},
		{"Android", "Android"}, {"CrOS", "ChromeOS"},
		{"Windows", "Windows"}, {"Macintosh", "macOS"}, {"Mac OS X", "macOS"},
		{"Linux", "Linux"},
	} {
		if strings.Contains(ua, s.token) {
			return s.name
		}
	}
	return ""
}
