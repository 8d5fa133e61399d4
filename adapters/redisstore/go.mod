module github.com/authkit-go/authkit/adapters/redisstore

go 1.25.0

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/authkit-go/authkit/core v0.1.0
	github.com/redis/go-redis/v9 v9.22.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)

replace github.com/authkit-go/authkit/core => ../../core
