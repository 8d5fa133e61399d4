// Command oidcprovider is the OpenID provider the social module's tests
// sign in at: zitadel/oidc's OpenID-certified op package with the example
// storage of that module, in memory. It listens on 127.0.0.1 on a free
// port and prints its issuer URL as the first line on stdout. With
// -apple-key it answers as Sign in with Apple does (apple.go).
//
// It is a module of its own, outside go.work, so that zitadel/oidc and
// what it brings stay out of authkit's modules; it pins v3.45.6, the last
// release whose go line is authkit's (go 1.25). The tests build and run it
// as a process.
//
//	oidcprovider -users users.json -client web:secret -redirect http://127.0.0.1:8080/api/auth/oauth/test/callback
package main

import (
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
)

func main() {
	users := flag.String("users", "", "JSON file of the users (the example storage's format)")
	client := flag.String("client", "web:secret", "the confidential client, id:secret")
	redirects := flag.String("redirect", "", "its redirect URIs, comma-separated")
	appleKey := flag.String("apple-key", "", "answer as Sign in with Apple: the client's public key (PEM) its client secret JWTs are checked with")
	appleTeam := flag.String("apple-team", "", "with -apple-key: the client secret's iss")
	appleKID := flag.String("apple-kid", "", "with -apple-key: the client secret's kid")
	flag.Parse()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	issuer := fmt.Sprintf("http://%s/", ln.Addr())
	id, secret, _ := strings.Cut(*client, ":")
	storage.RegisterClients(storage.WebClient(id, secret, strings.Split(*redirects, ",")...))
	var store storage.UserStore
	if *users != "" {
		if store, err = storage.StoreFromFile(*users); err != nil {
			log.Fatal(err)
		}
	} else {
		store = storage.NewUserStore(issuer)
	}
	var st exampleop.Storage = storage.NewStorage(store)
	if *appleKey != "" {
		if st, err = newAppleStorage(st.(*storage.Storage), *appleKey, *appleTeam, *appleKID, issuer); err != nil {
			log.Fatal(err)
		}
	}
	router := exampleop.SetupServer(issuer, st,
		slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), false)
	fmt.Println(issuer)
	_ = os.Stdout.Sync()
	log.Fatal(http.Serve(ln, router))
}
