package totp_test

import (
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/authkit-go/authkit/core/totp"
)

func ExampleTOTP_QRURI() {
	t, err := totp.New(totp.Config{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.QRURI("JBSWY3DPEHPK3PXP", "ACME Co", "alice@example.com"))
	fmt.Println(t.QRURI("JBSWY3DPEHPK3PXP", "", "alice@example.com"))
	// Output:
	// otpauth://totp/ACME%20Co:alice@example.com?secret=JBSWY3DPEHPK3PXP&issuer=ACME%20Co&algorithm=SHA1&digits=6&period=30
	// otpauth://totp/alice@example.com?secret=JBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30
}

func ExampleTOTP_Match() {
	const secret = "JBSWY3DPEHPK3PXP"
	now := time.Date(2025, 6, 1, 12, 0, 10, 0, time.UTC)
	t, err := totp.New(totp.Config{Now: func() time.Time { return now }})
	if err != nil {
		log.Fatal(err)
	}
	code, err := t.Code(secret, now) // what the user's app shows
	if err != nil {
		log.Fatal(err)
	}

	var lastStep int64 // the user's lastTotpStep: none yet
	m, err := t.Match(code, secret, now, lastStep)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("code", code, "matched step", m.Step, "current step", m.Current)
	// A real store does this atomically, only if lastTotpStep is still
	// unset or below both m.Step and m.Current.
	lastStep = m.LastStep()

	// The same code again, even in the next step, is a replay.
	_, err = t.Match(code, secret, now.Add(30*time.Second), lastStep)
	fmt.Println(errors.Is(err, totp.ErrCodeUsed), err)

	_, err = t.Match("000000", secret, now, lastStep)
	fmt.Println(err)
	// Output:
	// code 728398 matched step 58292640 current step 58292640
	// true totp: code already used
	// totp: invalid code
}

func ExampleNew() {
	// Eight digits, one-minute steps, and only the current step accepted:
	// a negative Window means 0, because 0 means the default (1).
	t, err := totp.New(totp.Config{Digits: 8, Period: time.Minute, Window: -1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.QRURI("JBSWY3DPEHPK3PXP", "Example", "bob"))

	_, err = totp.New(totp.Config{Digits: 7})
	fmt.Println(errors.Is(err, totp.ErrInvalidConfig), err)
	// Output:
	// otpauth://totp/Example:bob?secret=JBSWY3DPEHPK3PXP&issuer=Example&algorithm=SHA1&digits=8&period=60
	// true totp: invalid config: Digits is 7, want 6 or 8
}

func ExampleTOTP_GenerateSecret() {
	t, err := totp.New(totp.Config{})
	if err != nil {
		log.Fatal(err)
	}
	secret, err := t.GenerateSecret() // 160 random bits
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(secret), "base32 characters")
	// Output: 32 base32 characters
}
