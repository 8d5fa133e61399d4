package wrk

import (
	"testing"
	"time"
)

func TestLuaString(t *testing.T) {
	for in, want := range map[string]string{
		`{"email":"a@b","password":"x\y` + "\n" + `"}`: `"{\"email\":\"a@b\",\"password\":\"x\\y\010\"}"`,
		"a\nb\x01é": `"a\010b\001\195\169"`,
	} {
		if got := LuaString(in); got != want {
			t.Errorf("LuaString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "1s", 500 * time.Millisecond: "1s", 3 * time.Second: "3s", 3100 * time.Millisecond: "4s",
	} {
		if got := Seconds(d); got != want {
			t.Errorf("Seconds(%v) = %s, want %s", d, got, want)
		}
	}
}
