module github.com/authkit-go/authkit/core

go 1.25.0

require (
	github.com/boombuler/barcode v1.0.1-0.20190219062509-6c824513bacc
	github.com/pquerna/otp v1.5.0
	golang.org/x/crypto v0.55.0
	golang.org/x/text v0.41.0
)

require golang.org/x/sys v0.47.0 // indirect
