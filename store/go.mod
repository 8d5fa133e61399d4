module github.com/authkit-go/authkit/store

go 1.25.0

require github.com/authkit-go/authkit/core v0.1.0

replace github.com/authkit-go/authkit/core => ../core
