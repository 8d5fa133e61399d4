package pages

import (
	"bytes"
	"fmt"
	"strings"
)

// themeCSS is the stylesheet of a Theme: its values as CSS custom
// properties on :root, after the default theme's (assets/app.css), so they
// win in light and dark alike. A value that could end the declaration
// (";", "{", "}", "<", a line break) is refused: the stylesheet is served
// as it is.
func themeCSS(t Theme) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("/* The app's theme (pages.Theme); the defaults are in app.css. */\n")
	var decls []string
	for _, d := range []struct{ prop, value string }{
		{"--accent", t.Accent},
		{"--bg", t.Background},
		{"--card", t.Surface},
		{"--fg", t.Text},
		{"--err", t.Error},
		{"--font", t.Font},
		{"--radius", t.Radius},
	} {
		if d.value == "" {
			continue
		}
		if strings.ContainsAny(d.value, ";{}<>\\\n\r") {
			return nil, fmt.Errorf("pages: Theme value %q for %s: CSS values cannot hold ; { } < > \\ or line breaks", d.value, d.prop)
		}
		decls = append(decls, "  "+d.prop+": "+d.value+";\n")
	}
	if len(decls) == 0 {
		return buf.Bytes(), nil
	}
	// Twice: plain, and inside the dark media query, which app.css also
	// uses, so a theme colour is kept in the dark variant too.
	body := strings.Join(decls, "")
	fmt.Fprintf(&buf, ":root {\n%s}\n@media (prefers-color-scheme: dark) {\n:root {\n%s}\n}\n", body, body)
	return buf.Bytes(), nil
}
