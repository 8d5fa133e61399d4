package redistest

// This example is a test of an application's own on a Sentinel set: the
// application reads the set's address from a URL, as
// redis.ParseFailoverURL reads it, and carries on when the primary dies.
func ExampleStartSentinel() {
	// In a test file:
	//
	//	func TestOnSentinel(t *testing.T) {
	//		set := redistest.StartSentinel(t) // skips without redis-server
	//		opts, err := redis.ParseFailoverURL(set.URL())
	//		if err != nil {
	//			t.Fatal(err)
	//		}
	//		rdb := redis.NewFailoverClient(opts)
	//		defer rdb.Close()
	//		store := redisstore.New(rdb, redisstore.Config{})
	//		// ... use the store, then kill the primary:
	//		set.Primary(t).Kill()
	//		// the sentinels promote the replica within a few seconds
	//		// (redistest.SentinelDownAfter and an election)
	//	}
}

// This example is a test on a Cluster, through the client it returns
// (short timeouts, closed when the test ends).
func ExampleStartCluster() {
	// In a test file:
	//
	//	func TestOnCluster(t *testing.T) {
	//		cluster := redistest.StartCluster(t) // skips without redis-server and redis-cli
	//		store := redisstore.New(cluster.Client(t), redisstore.Config{})
	//		// ...
	//	}
}
