package mail

import (
	"bytes"
	"errors"
	"mime"
	"net/mail"
	"slices"
	"strings"
	"testing"
)

// FuzzBuildMessage renders arbitrary subjects and parts. Whatever Validate
// accepts must come out as a well-formed message whose headers are exactly
// the fixed set and whose subject and parts decode to what went in: no
// input adds a header, a recipient or a MIME part.
func FuzzBuildMessage(f *testing.F) {
	for _, s := range [][3]string{
		{"Hello", "text\n", "<p>x</p>"},
		{"Vérifiez ✓", "Grüße\r\n.\r\n", ""},
		{"Hi\r\nBcc: x@y", "a\rb", "c\nd"},
		{strings.Repeat("é", 120), strings.Repeat("x", 200), "--" + firstBoundary},
		{"=?utf-8?q?x?=", ".", "."},
	} {
		f.Add(s[0], s[1], s[2])
	}
	from := &mail.Address{Name: "App", Address: "no-reply@example.com"}
	f.Fuzz(func(t *testing.T, subject, text, html string) {
		m := Message{To: "bob@example.com", Subject: subject, Text: text, HTML: html}
		to, err := m.recipient()
		if err != nil {
			if !errors.Is(err, ErrInvalidHeader) && !errors.Is(err, ErrInvalidBody) {
				t.Fatalf("Validate: unexpected error %v", err)
			}
			return
		}
		data, err := buildMessage(m, from, to, testDate, "example.com", &countingReader{})
		if err != nil {
			t.Fatal(err)
		}
		for l := range strings.Lines(string(data)) {
			if !strings.HasSuffix(l, "\r\n") || strings.Count(l, "\r") != 1 || len(l) > 1000 {
				t.Fatalf("bad line %q", l)
			}
		}
		msg, err := mail.ReadMessage(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("ReadMessage: %v", err)
		}
		var keys []string
		for k := range msg.Header {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		want := []string{"Auto-Submitted", "Content-Transfer-Encoding", "Content-Type", "Date", "From", "Message-Id", "Mime-Version", "Subject", "To"}
		if html != "" {
			want = slices.Delete(want, 1, 2)
		}
		if !slices.Equal(keys, want) {
			t.Fatalf("header keys %v, want %v", keys, want)
		}
		if got := msg.Header.Get("To"); got != "<bob@example.com>" {
			t.Fatalf("To = %q", got)
		}
		if !strings.Contains(subject, "=?") {
			// An ASCII subject that looks like an encoded word is sent as
			// it is and decodes as one: RFC 2047's own ambiguity.
			got, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
			if err != nil || got != strings.TrimSpace(subject) && got != subject {
				t.Fatalf("Subject decodes to %q, %v; want %q", got, err, subject)
			}
		}
		wantParts := []string{normalize(text)}
		body := msg.Body
		if html != "" {
			wantParts = append(wantParts, normalize(html))
			_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
			if err != nil {
				t.Fatal(err)
			}
			var gotParts []string
			for _, p := range readParts(t, body, params["boundary"]) {
				gotParts = append(gotParts, p.body)
			}
			if !slices.Equal(gotParts, wantParts) {
				t.Fatalf("parts %q, want %q", gotParts, wantParts)
			}
		}
	})
}

// normalize is s as it decodes after the trip: every line break as LF and
// a final line break added.
func normalize(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}
