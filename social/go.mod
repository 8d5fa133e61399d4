module github.com/authkit-go/authkit/social

go 1.25.0

require (
	github.com/authkit-go/authkit/core v0.1.0
	github.com/authkit-go/authkit/nethttpauth v0.1.0
	github.com/coreos/go-oidc/v3 v3.21.0
	github.com/go-jose/go-jose/v4 v4.1.4
	golang.org/x/oauth2 v0.36.0
)

require (
	github.com/boombuler/barcode v1.0.1-0.20190219062509-6c824513bacc // indirect
	github.com/pquerna/otp v1.5.0 // indirect
	golang.org/x/crypto v0.55.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

replace (
	github.com/authkit-go/authkit/core => ../core
	github.com/authkit-go/authkit/nethttpauth => ../nethttpauth
)
