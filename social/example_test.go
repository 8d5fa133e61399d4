package social_test

import (
	"fmt"
	"log"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/social"
)

// A Service with Google as its OpenID Connect provider: register the
// printed redirect URI at the provider.
func Example() {
	var svc *auth.Service // auth.New(...), with a user store that has user.Identities
	if svc == nil {
		return
	}
	google, err := social.NewOIDC(social.OIDCConfig{Issuer: "https://accounts.google.com", ClientID: "id", ClientSecret: "secret"})
	if err != nil {
		log.Fatal(err)
	}
	h, err := social.New(svc, social.Config{AppURL: "https://example.com",
		Providers: []social.ProviderConfig{{Name: "google", Provider: google, Authoritative: []string{"gmail.com"}}}})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	fmt.Println(h.RedirectURI("google"))
}
