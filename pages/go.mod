module github.com/authkit-go/authkit/pages

go 1.25.0

require github.com/authkit-go/authkit/core v0.1.0

require (
	github.com/boombuler/barcode v1.0.1-0.20190219062509-6c824513bacc // indirect
	github.com/pquerna/otp v1.5.0 // indirect
	golang.org/x/crypto v0.55.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

replace github.com/authkit-go/authkit/core => ../core
