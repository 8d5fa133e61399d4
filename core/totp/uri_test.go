package totp

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
)

func TestQRURI(t *testing.T) {
	const secret = "JBSWY3DPEHPK3PXP"
	def := mustNew(t, Config{})
	tests := []struct {
		name                    string
		tp                      *TOTP
		secret, issuer, account string
		want                    string
	}{
		{
			"plain", def, secret, "Example", "alice@example.com",
			"otpauth://totp/Example:alice@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Example&algorithm=SHA1&digits=6&period=30",
		},
		{
			"spaces are %20", def, secret, "ACME Co", "john doe",
			"otpauth://totp/ACME%20Co:john%20doe?secret=JBSWY3DPEHPK3PXP&issuer=ACME%20Co&algorithm=SHA1&digits=6&period=30",
		},
		{
			"plus is %2B", def, secret, "A+B", "a+b@x.io",
			"otpauth://totp/A%2BB:a%2Bb@x.io?secret=JBSWY3DPEHPK3PXP&issuer=A%2BB&algorithm=SHA1&digits=6&period=30",
		},
		{
			"unicode and ampersand", def, secret, "Bäck & Co", "jürgen",
			"otpauth://totp/B%C3%A4ck%20%26%20Co:j%C3%BCrgen?secret=JBSWY3DPEHPK3PXP&issuer=B%C3%A4ck%20%26%20Co&algorithm=SHA1&digits=6&period=30",
		},
		{
			"colons are %3A", def, secret, "a:b", "c:d",
			"otpauth://totp/a%3Ab:c%3Ad?secret=JBSWY3DPEHPK3PXP&issuer=a%3Ab&algorithm=SHA1&digits=6&period=30",
		},
		{
			"at sign literal in the label only", def, secret, "x@y", "q?r#s/t%u=v",
			"otpauth://totp/x@y:q%3Fr%23s%2Ft%25u%3Dv?secret=JBSWY3DPEHPK3PXP&issuer=x%40y&algorithm=SHA1&digits=6&period=30",
		},
		{
			"empty issuer", def, secret, "", "alice@example.com",
			"otpauth://totp/alice@example.com?secret=JBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30",
		},
		{
			"8 digits, 60 s, secret made canonical", mustNew(t, Config{Digits: 8, Period: time.Minute}),
			"gaytemzugu3doobzmfrggzdfmy======", "Example", "bob",
			"otpauth://totp/Example:bob?secret=GAYTEMZUGU3DOOBZMFRGGZDFMY&issuer=Example&algorithm=SHA1&digits=8&period=60",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.tp.QRURI(tt.secret, tt.issuer, tt.account)
			if got != tt.want {
				t.Errorf("QRURI() =\n%s\nwant\n%s", got, tt.want)
			}
			canon, err := canonicalSecret(tt.secret)
			if err != nil {
				t.Fatal(err)
			}
			checkURI(t, got, tt.tp, canon, tt.issuer, tt.account)
		})
	}
}

// pquernaCanRepresent reports whether pquerna/otp's Key reads issuer and
// account back from a URI. Key.AccountName and, without an issuer parameter,
// Key.Issuer split the decoded label at its first colon, so a colon inside
// the issuer, or inside the account when there is no issuer, is misread.
// (The Key URI Format forbids colons in both.)
func pquernaCanRepresent(issuer, account string) bool {
	return !strings.Contains(issuer, ":") && (issuer != "" || !strings.Contains(account, ":"))
}

// checkURI parses uri with net/url and, where it can, with pquerna/otp, and
// checks that every field reads back.
func checkURI(t *testing.T, uri string, tp *TOTP, secret, issuer, account string) {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", uri, err)
	}
	if u.Scheme != "otpauth" || u.Host != "totp" {
		t.Errorf("url.Parse(%q): scheme %q host %q", uri, u.Scheme, u.Host)
	}
	// The label, split at its literal colon before decoding.
	label := strings.TrimPrefix(u.EscapedPath(), "/")
	var rawIssuer, rawAccount string
	if issuer != "" {
		var ok bool
		rawIssuer, rawAccount, ok = strings.Cut(label, ":")
		if !ok {
			t.Fatalf("label %q has no separator", label)
		}
	} else {
		rawAccount = label
	}
	if strings.Contains(rawAccount, ":") {
		t.Errorf("label %q has more than one literal colon", label)
	}
	for _, p := range []struct{ raw, want string }{{rawIssuer, issuer}, {rawAccount, account}} {
		if got, err := url.PathUnescape(p.raw); err != nil || got != p.want {
			t.Errorf("label part %q decodes to %q, %v; want %q", p.raw, got, err, p.want)
		}
	}
	if strings.ContainsAny(u.RawQuery, " +") {
		t.Errorf("query %q holds a space or a '+'", u.RawQuery)
	}
	q := u.Query()
	wantQuery := url.Values{
		"secret":    {secret},
		"algorithm": {"SHA1"},
		"digits":    {strconv.Itoa(int(tp.digits))},
		"period":    {strconv.FormatInt(tp.period, 10)},
	}
	if issuer != "" {
		wantQuery["issuer"] = []string{issuer}
	}
	if q.Encode() != wantQuery.Encode() {
		t.Errorf("query = %v, want %v", q, wantQuery)
	}

	k, err := otp.NewKeyFromURL(uri)
	if err != nil {
		t.Fatalf("otp.NewKeyFromURL(%q): %v", uri, err)
	}
	if k.Type() != "totp" || k.Secret() != secret || k.Algorithm() != otp.AlgorithmSHA1 ||
		k.Digits() != tp.digits || k.Period() != uint64(tp.period) {
		t.Errorf("otp.Key: type %q secret %q algorithm %v digits %v period %d",
			k.Type(), k.Secret(), k.Algorithm(), k.Digits(), k.Period())
	}
	if !pquernaCanRepresent(issuer, account) {
		return
	}
	if k.Issuer() != issuer || k.AccountName() != account {
		t.Errorf("otp.Key: issuer %q account %q, want %q %q", k.Issuer(), k.AccountName(), issuer, account)
	}
}

// FuzzQRURI checks that any issuer and account read back exactly from the
// URI through net/url, and through pquerna/otp's Key except where its label
// parsing cannot represent them (colons, see pquernaCanRepresent). Invalid
// UTF-8 and control bytes need no skip: both are percent-encoded byte by
// byte and decode back to the same bytes.
func FuzzQRURI(f *testing.F) {
	for _, s := range [][2]string{
		{"Example", "alice@example.com"},
		{"", "alice@example.com"},
		{"ACME Co", "john doe"},
		{"A+B", "a+b"},
		{"a:b", "c:d"},
		{"", "c:d"},
		{"Bäck", "jürgen"},
		{"%zz", "%2F/?#&="},
		{"\x00\x7f", "\xff\xfe"},
		{" ", ""},
	} {
		f.Add(s[0], s[1])
	}
	const secret = "JBSWY3DPEHPK3PXP"
	tp := mustNew(f, Config{})
	f.Fuzz(func(t *testing.T, issuer, account string) {
		checkURI(t, tp.QRURI(secret, issuer, account), tp, secret, issuer, account)
	})
}
