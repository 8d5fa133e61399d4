package password_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/authkit-go/authkit/core/password"
)

func ExampleNew() {
	// The zero Config is bcrypt at cost 12. This example uses argon2id at
	// its defaults (OWASP's m=19456 KiB, t=2, p=1) because it runs faster.
	h, err := password.New(password.Config{Algorithm: password.Argon2id})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	hash, err := h.Hash(ctx, "correct horse battery staple")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.HasPrefix(hash, "$argon2id$v=19$m=19456,t=2,p=1$"))

	ok, err := h.Verify(ctx, "correct horse battery staple", hash)
	fmt.Println(ok, err)
	ok, err = h.Verify(ctx, "Correct horse battery staple", hash)
	fmt.Println(ok, err)
	// Output:
	// true
	// true <nil>
	// false <nil>
}

func ExamplePolicy_Check() {
	var p password.Policy // Default: 8 to 128 characters after NFKC.
	for _, pw := range []string{
		"hunter2",
		"correct horse battery staple",
		"😀😀😀😀😀😀😀😀", // 8 characters, 32 bytes
		"tab\tinside",
	} {
		err := p.Check(pw)
		switch {
		case errors.Is(err, password.ErrTooShort):
			fmt.Printf("%q: too short\n", pw)
		case errors.Is(err, password.ErrInvalid):
			fmt.Printf("%q: invalid\n", pw)
		case err != nil:
			fmt.Printf("%q: %v\n", pw, err)
		default:
			fmt.Printf("%q: ok\n", pw)
		}
	}
	// Output:
	// "hunter2": too short
	// "correct horse battery staple": ok
	// "😀😀😀😀😀😀😀😀": ok
	// "tab\tinside": invalid
}

func ExampleStandard_NeedsRehash() {
	ctx := context.Background()
	// Low costs keep the example fast; AllowLowCost is for tests only.
	old, err := password.New(password.Config{BcryptCost: 4, AllowLowCost: true})
	if err != nil {
		log.Fatal(err)
	}
	current, err := password.New(password.Config{BcryptCost: 5, AllowLowCost: true})
	if err != nil {
		log.Fatal(err)
	}
	stored, err := old.Hash(ctx, "correct horse battery staple")
	if err != nil {
		log.Fatal(err)
	}

	// At login: verify, then replace the stored hash if it is outdated.
	ok, err := current.Verify(ctx, "correct horse battery staple", stored)
	if err != nil {
		log.Fatal(err)
	}
	if ok && current.NeedsRehash(stored) {
		if stored, err = current.Hash(ctx, "correct horse battery staple"); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(ok, stored[:7], current.NeedsRehash(stored))
	// Output: true $2a$05$ false
}

func ExampleNormalize() {
	fmt.Println(password.Normalize("\ufb01ne"), password.Length("\ufb01ne"))
	fmt.Println(password.Normalize("cafe\u0301") == password.Normalize("caf\u00e9"))
	// Output:
	// fine 4
	// true
}

// A checker over the app's list of common passwords and the Have I Been
// Pwned range API; the list answers first, so a common password costs no
// request.
func ExampleAnyOf() {
	common, err := password.ReadList(strings.NewReader("# the app's list\npassword1\nletmein\n"))
	if err != nil {
		log.Fatal(err)
	}
	pwned, err := password.NewPwned(password.PwnedConfig{}) // api.pwnedpasswords.com, 3-second timeout
	if err != nil {
		log.Fatal(err)
	}
	check := password.AnyOf(common, pwned)
	err = check.Check(context.Background(), "LetMeIn")
	fmt.Println(errors.Is(err, password.ErrBreached))
	// Output: true
}
