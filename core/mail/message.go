package mail

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"slices"
	"strings"
	"time"
)

// buildMessage renders m as an RFC 5322 message with CRLF line endings:
// the headers in a fixed order, then either one quoted-printable text/plain
// part or a multipart/alternative of text/plain and text/html. m must have
// passed Validate, which rules out CR and LF in every header value.
func buildMessage(m Message, from, to *mail.Address, date time.Time, msgDomain string, rnd io.Reader) ([]byte, error) {
	var id [16]byte
	if _, err := io.ReadFull(rnd, id[:]); err != nil {
		return nil, fmt.Errorf("mail: reading randomness: %w", err)
	}
	var b bytes.Buffer
	b.Grow(1024 + 2*(len(m.Text)+len(m.HTML)))
	header := func(k, v string) {
		b.WriteString(k)
		b.WriteString(": ")
		b.WriteString(v)
		b.WriteString("\r\n")
	}
	header("Date", date.Format(time.RFC1123Z))
	header("From", foldEncodedWords(from.String()))
	header("To", (&mail.Address{Address: to.Address}).String())
	header("Subject", encodeSubject(m.Subject))
	header("Message-ID", "<"+hex.EncodeToString(id[:])+"@"+msgDomain+">")
	header("MIME-Version", "1.0")
	// RFC 3834: no vacation or out-of-office replies to a robot.
	header("Auto-Submitted", "auto-generated")

	if m.HTML == "" {
		header("Content-Type", "text/plain; charset=utf-8")
		header("Content-Transfer-Encoding", "quoted-printable")
		b.WriteString("\r\n")
		if err := writeQP(&b, m.Text); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}

	boundary, err := newBoundary(rnd, m.Text, m.HTML)
	if err != nil {
		return nil, err
	}
	mw := multipart.NewWriter(&b)
	if err := mw.SetBoundary(boundary); err != nil {
		return nil, fmt.Errorf("mail: %w", err)
	}
	header("Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": mw.Boundary()}))
	b.WriteString("\r\n")
	for _, p := range []struct{ typ, body string }{
		{"text/plain; charset=utf-8", m.Text},
		{"text/html; charset=utf-8", m.HTML},
	} {
		w, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {p.typ},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, fmt.Errorf("mail: %w", err)
		}
		if err := writeQP(w, p.body); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, fmt.Errorf("mail: %w", err)
	}
	return b.Bytes(), nil
}

// writeQP writes s quoted-printable: lines of at most 76 characters and
// every line break (CR, LF or CRLF) as CRLF, so no bare CR or LF reaches the
// SMTP server (the "SMTP smuggling" vector). It ends s with a line break
// when it lacks one.
func writeQP(w io.Writer, s string) error {
	// Line breaks become LF first: quotedprintable.Writer loses the LF of
	// "\rü\n" (it takes it for the second half of a CRLF) but turns every
	// lone LF into CRLF correctly.
	s = newlines.Replace(s)
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	qp := quotedprintable.NewWriter(w)
	if _, err := io.WriteString(qp, s); err != nil {
		return fmt.Errorf("mail: encoding body: %w", err)
	}
	if err := qp.Close(); err != nil {
		return fmt.Errorf("mail: encoding body: %w", err)
	}
	return nil
}

var newlines = strings.NewReplacer("\r\n", "\n", "\r", "\n")

// encodeSubject returns s as it goes after "Subject: ". Plain ASCII stays
// as it is (at most MaxSubjectLen bytes, well within the 998-octet line
// limit); anything else becomes RFC 2047 Q-encoded words of at most 75
// characters, one per folded line.
func encodeSubject(s string) string {
	return foldEncodedWords(mime.QEncoding.Encode("utf-8", s))
}

// foldEncodedWords puts each RFC 2047 encoded word of a header value on a
// line of its own. Encoded words hold no spaces, and the white space
// between two adjacent encoded words is not part of the text (RFC 2047
// section 6.2), so folding there changes nothing a reader sees.
func foldEncodedWords(v string) string {
	return strings.ReplaceAll(v, "?= =?", "?=\r\n =?")
}

// newBoundary returns a random MIME boundary that occurs in neither part.
// Quoted-printable copies the boundary's characters (lowercase hex) as they
// are and breaks any run of them with "=XX" or "=CRLF", so a boundary that
// is not in the raw parts is not in the encoded ones either.
func newBoundary(rnd io.Reader, parts ...string) (string, error) {
	for range 8 {
		var r [16]byte
		if _, err := io.ReadFull(rnd, r[:]); err != nil {
			return "", fmt.Errorf("mail: reading randomness: %w", err)
		}
		b := hex.EncodeToString(r[:])
		if !slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(p, b) }) {
			return b, nil
		}
	}
	return "", errors.New("mail: no MIME boundary found that the message does not contain")
}
