// Package redistest starts throwaway replicated Redis deployments for
// tests, from the machine's redis-server: a Redis Cluster of three
// primaries with a replica each ([StartCluster]), or a primary with one
// replica watched by three sentinels ([StartSentinel]). Every process
// listens on a free port of 127.0.0.1 and keeps its files in a folder of
// its own under the test's TempDir; all are killed, and the files removed,
// when the test ends. No other Redis is touched, so a test can kill a
// primary or fail it over.
//
//	func TestOnSentinel(t *testing.T) {
//		set := redistest.StartSentinel(t) // skips without redis-server
//		store := redisstore.New(set.Client(t), redisstore.Config{})
//		// ... use the store, then:
//		set.Primary(t).Kill() // the sentinels promote the replica
//	}
//
// [StartProxy] puts a TCP proxy in front of any server, so that a test can
// cut the network to it and restore it without touching the server.
//
// The start functions skip the test when redis-server (and, for a
// Cluster, redis-cli) is not installed, or fail it when the environment
// sets AUTHKIT_REQUIRE_SERVICES=1, as authkit's CI does. redisstore's
// TestCluster and TestSentinel, and the example servers' tests, use them.
package redistest
