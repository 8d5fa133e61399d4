//go:build !race

package matrix

// raceDetector reports whether the test binary was built with -race.
const raceDetector = false
