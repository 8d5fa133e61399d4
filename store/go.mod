module github.com/authkit-go/authkit/store

go 1.25

require github.com/authkit-go/authkit/core v0.0.0

replace github.com/authkit-go/authkit/core => ../core
