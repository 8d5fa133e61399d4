package password

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1" // the range API's protocol: SHA-1 names the passwords, it protects nothing here
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultPwnedURL is the Have I Been Pwned Pwned Passwords range API.
const DefaultPwnedURL = "https://api.pwnedpasswords.com/range/"

// ErrPwnedConfig wraps every error of [NewPwned].
var ErrPwnedConfig = errors.New("password: invalid pwned config")

// PwnedConfig configures a [Pwned] checker. The zero value of each field
// means the documented default.
type PwnedConfig struct {
	// BaseURL is the range API's address; the first five hex characters of
	// a password's SHA-1 are appended. Default: DefaultPwnedURL.
	BaseURL string

	// Client sends the requests. Default: a client of its own, without
	// cookies, that follows no redirect.
	Client *http.Client

	// Timeout bounds one check, request and answer. Default: 3 seconds.
	Timeout time.Duration

	// MinCount is how many times a password must have been seen in
	// breaches to count as breached. Default: 1.
	MinCount int

	// UserAgent is sent with every request (the API refuses requests
	// without one). Default: "authkit".
	UserAgent string
}

// Pwned is a [Checker] that asks the Have I Been Pwned range API whether a
// password appeared in a data breach, with k-anonymity: only the first
// five hex characters of the password's SHA-1 (of its normal form,
// [Normalize]) leave the process, and the answer (every known suffix of
// that prefix with its count) is searched locally. Requests ask for padding
// (Add-Padding: true), so the size of an answer does not tell an observer
// the prefix either; padding entries, with a count of 0, are ignored.
//
// Check returns an error (never holding the password, its hash or the
// prefix) when the API cannot be reached, answers other than 200, or
// answers malformed lines; core/auth lets the password through and logs a
// warning by default (auth.Config.PasswordCheckFailClosed). It is safe for
// concurrent use.
type Pwned struct {
	base      string
	client    *http.Client
	timeout   time.Duration
	minCount  int
	userAgent string
}

var _ Checker = (*Pwned)(nil)

// maxPwnedBody caps an answer: a padded range holds about 1,000 lines of
// 40 bytes; 1 MiB leaves room for growth and bounds a hostile server.
const maxPwnedBody = 1 << 20

// NewPwned returns a Pwned checker for cfg.
func NewPwned(cfg PwnedConfig) (*Pwned, error) {
	p := &Pwned{base: cfg.BaseURL, client: cfg.Client, timeout: cfg.Timeout, minCount: cfg.MinCount, userAgent: cfg.UserAgent}
	if p.base == "" {
		p.base = DefaultPwnedURL
	}
	u, err := url.Parse(p.base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w: BaseURL %q must be an http(s) URL without query or fragment", ErrPwnedConfig, p.base)
	}
	if p.client == nil {
		p.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if p.timeout == 0 {
		p.timeout = 3 * time.Second
	}
	if p.timeout < 0 {
		return nil, fmt.Errorf("%w: Timeout must be positive", ErrPwnedConfig)
	}
	if p.minCount == 0 {
		p.minCount = 1
	}
	if p.minCount < 0 {
		return nil, fmt.Errorf("%w: MinCount must be positive", ErrPwnedConfig)
	}
	if p.userAgent == "" {
		p.userAgent = "authkit"
	}
	return p, nil
}

// Check returns ErrBreached when the range API knows pw (seen at least
// MinCount times), nil when it does not, and an error when it could not
// tell.
func (p *Pwned) Check(ctx context.Context, pw string) error {
	sum := sha1.Sum([]byte(Normalize(pw)))
	digest := strings.ToUpper(hex.EncodeToString(sum[:]))
	prefix, suffix := digest[:5], []byte(digest[5:])

	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+prefix, nil)
	if err != nil {
		return errors.New("password: pwned: cannot make the request")
	}
	req.Header.Set("Add-Padding", "true")
	req.Header.Set("User-Agent", p.userAgent)
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("password: pwned: %w", withoutURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("password: pwned: status %d", resp.StatusCode)
	}
	breached, err := p.search(io.LimitReader(resp.Body, maxPwnedBody+1), suffix)
	if err != nil {
		return fmt.Errorf("password: pwned: %w", withoutURL(err))
	}
	if breached {
		return ErrBreached
	}
	return nil
}

// search reads an answer of the range API, lines "SUFFIX:COUNT", and
// reports whether suffix is among them with a count of at least MinCount.
// Every line is compared in constant time and the whole answer is read,
// so the time taken does not depend on where (or whether) suffix is.
func (p *Pwned) search(r io.Reader, suffix []byte) (bool, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), 4<<10)
	found, read := false, 0
	for sc.Scan() {
		line := sc.Bytes()
		read += len(line) + 1
		if read > maxPwnedBody {
			return false, errors.New("answer too large")
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		hash, count, ok := bytes.Cut(line, []byte{':'})
		if !ok || len(hash) != len(suffix) {
			return false, errors.New("malformed answer line")
		}
		n, err := strconv.Atoi(string(bytes.TrimSpace(count)))
		if err != nil || n < 0 {
			return false, errors.New("malformed count")
		}
		match := subtle.ConstantTimeCompare(bytes.ToUpper(hash), suffix) == 1
		if match && n >= p.minCount { // count 0: a padding entry
			found = true
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	return found, nil
}

// withoutURL drops the request URL (which holds the hash prefix) from a
// client error, keeping its cause.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
