package passkeys_test

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/passkeys"
)

// Passkeys beside authkit's own routes, for a site at https://example.com.
func Example() {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, err := auth.New(auth.Config{
		Users:   store.NewMemory(store.MemoryConfig{}), // implements user.Passkeys
		Secrets: []string{strings.Repeat("x", 32)},
		Keys:    keys,
		AppURL:  "https://example.com",
	})
	if err != nil {
		panic(err)
	}
	pk, err := passkeys.New(svc, passkeys.Config{
		RPID:          "example.com",
		RPDisplayName: "Example",
		Origins:       []string{"https://example.com"},
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle(passkeys.Prefix, pk)
	mux.Handle(passkeys.Prefix+"/", pk)
	fmt.Println("passkeys under", passkeys.Prefix)
	// Output: passkeys under /api/passkeys
}

// An origin that is not on the RP ID is a configuration error.
func ExampleNew_origins() {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, _ := auth.New(auth.Config{Users: store.NewMemory(store.MemoryConfig{}), Secrets: []string{strings.Repeat("x", 32)}, Keys: keys, AppURL: "https://example.com"})
	_, err := passkeys.New(svc, passkeys.Config{RPID: "example.com", Origins: []string{"https://example.org"}})
	fmt.Println(err)
	// Output: passkeys: Config.Origins: "https://example.org" is not on RPID "example.com"
}
