package secretbox_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/secretbox"
)

func TestGenerateKey(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	if k1 == k2 {
		t.Fatal("two generated keys are equal")
	}
	for _, k := range []string{k1, k2} {
		if len(k) != 47 || !strings.HasPrefix(k, secretbox.KeyPrefix) {
			t.Errorf("GenerateKey = %d characters %.4q..., want 47 starting with %q", len(k), k, secretbox.KeyPrefix)
		}
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(k, secretbox.KeyPrefix))
		if err != nil || len(raw) != secretbox.KeySize {
			t.Errorf("GenerateKey body decodes to %d bytes, %v; want %d", len(raw), err, secretbox.KeySize)
		}
		if ids := parse(t, k).KeyIDs(); len(ids) != 1 || len(ids[0]) != 8 {
			t.Errorf("KeyIDs = %q, want one 8-character id", ids)
		}
	}
}

// keyText is the text form of a raw key.
func keyText(raw []byte) string {
	return secretbox.KeyPrefix + base64.RawURLEncoding.EncodeToString(raw)
}

func TestParseKeyring(t *testing.T) {
	raw1 := bytes.Repeat([]byte{0xa7}, 32)
	raw2 := bytes.Repeat([]byte{0x3c}, 32)
	k1, k2 := keyText(raw1), keyText(raw2)
	id1, id2 := mustRaw(t, raw1).KeyIDs()[0], mustRaw(t, raw2).KeyIDs()[0]
	body1 := strings.TrimPrefix(k1, secretbox.KeyPrefix)
	// k1's last character carries two unused bits, which must be zero.
	nonCanonical := k1[:len(k1)-1] + string(k1[len(k1)-1]+1)

	for _, tc := range []struct {
		name    string
		in      string
		wantIDs []string
		wantErr string // after "secretbox: invalid key: "
	}{
		{name: "one", in: k1, wantIDs: []string{id1}},
		{name: "two", in: k1 + "," + k2, wantIDs: []string{id1, id2}},
		{name: "order kept", in: k2 + "," + k1, wantIDs: []string{id2, id1}},
		{name: "spaces trimmed", in: "  " + k1 + " ,\t" + k2 + "\n", wantIDs: []string{id1, id2}},
		{name: "trailing newline", in: k1 + "\n", wantIDs: []string{id1}},

		{name: "empty", in: "", wantErr: "no key given"},
		{name: "blank", in: " \t\n", wantErr: "no key given"},
		{name: "missing prefix", in: body1, wantErr: `key 1 of 1: does not start with "ak1_"`},
		{name: "upper-case prefix", in: "AK1_" + body1, wantErr: `key 1 of 1: does not start with "ak1_"`},
		{name: "other prefix", in: "ak2_" + body1, wantErr: `key 1 of 1: does not start with "ak1_"`},
		{name: "too short", in: k1[:len(k1)-1], wantErr: `key 1 of 1: has 42 characters after "ak1_", want 43`},
		{name: "too long", in: k1 + "A", wantErr: `key 1 of 1: has 44 characters after "ak1_", want 43`},
		{name: "padded", in: k1 + "=", wantErr: `key 1 of 1: has 44 characters after "ak1_", want 43`},
		{name: "prefix only", in: "ak1_", wantErr: `key 1 of 1: has 0 characters after "ak1_", want 43`},
		{name: "standard alphabet", in: k1[:10] + "+" + k1[11:], wantErr: "key 1 of 1: is not unpadded base64url"},
		{name: "inner space", in: k1[:10] + " " + k1[11:], wantErr: "key 1 of 1: is not unpadded base64url"},
		{name: "non-canonical", in: nonCanonical, wantErr: "key 1 of 1: is not unpadded base64url (non-canonical last character)"},
		{name: "empty entry", in: k1 + ",," + k2, wantErr: "key 2 of 3: empty"},
		{name: "blank entry", in: k1 + ", ," + k2, wantErr: "key 2 of 3: empty"},
		{name: "trailing comma", in: k1 + ",", wantErr: "key 2 of 2: empty"},
		{name: "leading comma", in: "," + k1, wantErr: "key 1 of 2: empty"},
		{name: "second bad", in: k1 + "," + k2[:20], wantErr: `key 2 of 2: has 16 characters after "ak1_", want 43`},
		{name: "duplicate", in: k1 + "," + k1, wantErr: "keys 1 and 2 of 2 are the same key"},
		{name: "duplicate later", in: k1 + "," + k2 + ", " + k1, wantErr: "keys 1 and 3 of 3 are the same key"},
		{name: "semicolon list", in: k1 + ";" + k2, wantErr: `key 1 of 1: has 91 characters after "ak1_", want 43`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ring, err := secretbox.ParseKeyring(tc.in)
			if tc.wantErr != "" {
				if !errors.Is(err, secretbox.ErrInvalidKey) || ring != nil {
					t.Fatalf("ParseKeyring = %v, %v; want nil, ErrInvalidKey", ring, err)
				}
				if want := "secretbox: invalid key: " + tc.wantErr; err.Error() != want {
					t.Errorf("error = %q, want %q", err, want)
				}
				for _, b := range []string{body1, strings.TrimPrefix(k2, secretbox.KeyPrefix)} {
					if strings.Contains(err.Error(), b[:8]) {
						t.Errorf("error %q repeats key text", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseKeyring: %v", err)
			}
			if got := ring.KeyIDs(); strings.Join(got, ",") != strings.Join(tc.wantIDs, ",") {
				t.Errorf("KeyIDs = %q, want %q", got, tc.wantIDs)
			}
		})
	}
}

func mustRaw(t *testing.T, keys ...[]byte) *secretbox.Keyring {
	t.Helper()
	ring, err := secretbox.NewKeyring(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

func TestNewKeyring(t *testing.T) {
	a := bytes.Repeat([]byte{1}, 32)
	b := bytes.Repeat([]byte{2}, 32)
	for _, tc := range []struct {
		name    string
		keys    [][]byte
		wantErr string // after "secretbox: invalid key: "
	}{
		{name: "one", keys: [][]byte{a}},
		{name: "two", keys: [][]byte{a, b}},
		{name: "none", keys: nil, wantErr: "no key given"},
		{name: "nil key", keys: [][]byte{nil}, wantErr: "key 1 of 1: has 0 bytes, want 32"},
		{name: "short", keys: [][]byte{a, a[:31]}, wantErr: "key 2 of 2: has 31 bytes, want 32"},
		{name: "long", keys: [][]byte{append(a[:32:32], 0)}, wantErr: "key 1 of 1: has 33 bytes, want 32"},
		{name: "duplicate", keys: [][]byte{a, b, bytes.Clone(b)}, wantErr: "keys 2 and 3 of 3 are the same key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ring, err := secretbox.NewKeyring(tc.keys...)
			if tc.wantErr == "" {
				if err != nil || len(ring.KeyIDs()) != len(tc.keys) {
					t.Fatalf("NewKeyring = %v, %v; want %d keys", ring, err, len(tc.keys))
				}
				return
			}
			if !errors.Is(err, secretbox.ErrInvalidKey) || ring != nil {
				t.Fatalf("NewKeyring = %v, %v; want nil, ErrInvalidKey", ring, err)
			}
			if want := "secretbox: invalid key: " + tc.wantErr; err.Error() != want {
				t.Errorf("error = %q, want %q", err, want)
			}
		})
	}
}

// TestNewKeyringCopies checks that the ring keeps its own copy of the key.
func TestNewKeyringCopies(t *testing.T) {
	key := bytes.Repeat([]byte{9}, 32)
	ring := mustRaw(t, key)
	ct := encrypt(t, ring, []byte("x"), nil)
	clear(key)
	if got, err := ring.Decrypt(ct, nil); err != nil || string(got) != "x" {
		t.Errorf("after the caller cleared its key: Decrypt = %q, %v; want \"x\", nil", got, err)
	}
}

// TestKeyringNeverPrintsKeys prints a keyring every way a program might and
// looks for the key in each output.
func TestKeyringNeverPrintsKeys(t *testing.T) {
	raw1 := []byte("0123456789abcdefghijklmnopqrstuv")
	raw2 := []byte("ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvu")
	ring := parse(t, keyText(raw1)+","+keyText(raw2))
	ids := ring.KeyIDs()

	var secrets []string
	for _, raw := range [][]byte{raw1, raw2} {
		secrets = append(secrets,
			string(raw[:8]),
			keyText(raw)[4:16],
			base64.StdEncoding.EncodeToString(raw)[:12],
			hex.EncodeToString(raw)[:16],
			strings.Trim(fmt.Sprint(raw[:4]), "[]"), // decimal bytes, "48 49 50 51"
			fmt.Sprintf("%#x", raw[:4])[2:],
		)
	}

	type holder struct {
		Ring   *secretbox.Keyring
		hidden secretbox.Keyring
	}
	h := holder{Ring: ring, hidden: *ring}

	var logText, logJSON bytes.Buffer
	slog.New(slog.NewTextHandler(&logText, nil)).Info("config", "ring", ring)
	slog.New(slog.NewJSONHandler(&logJSON, nil)).Info("config", "ring", ring)
	jsonOut, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}

	outputs := map[string]string{
		"String":       ring.String(),
		"GoString":     ring.GoString(),
		"Sprint":       fmt.Sprint(ring),
		"%v":           fmt.Sprintf("%v", ring),
		"%+v":          fmt.Sprintf("%+v", ring),
		"%#v":          fmt.Sprintf("%#v", ring),
		"%s":           fmt.Sprintf("%s", ring),
		"%q":           fmt.Sprintf("%q", ring),
		"%x":           fmt.Sprintf("%x", ring),
		"%d":           fmt.Sprintf("%d", ring),
		"holder %+v":   fmt.Sprintf("%+v", h),
		"holder %#v":   fmt.Sprintf("%#v", h),
		"slog text":    logText.String(),
		"slog json":    logJSON.String(),
		"json.Marshal": string(jsonOut),
	}
	// A Keyring value (not a pointer) has none of the methods, and vet
	// rejects most verbs for it; printing one anyway must still show only
	// addresses. The formats are variables so that vet lets them through.
	for _, format := range []string{"%v", "%+v", "%#v", "%x", "%X", "%d", "%s", "%q"} {
		outputs["value "+format] = fmt.Sprintf(format, *ring)
		outputs["holder "+format] = fmt.Sprintf(format, h)
	}
	for name, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s output %q contains key material %q", name, out, s)
			}
		}
	}

	// The method-based outputs say something useful: the key ids.
	for _, name := range []string{"String", "GoString", "Sprint", "%v", "%+v", "%#v", "%s", "%q", "%d", "holder %+v", "slog text", "slog json"} {
		if out := outputs[name]; !strings.Contains(out, ids[0]) || !strings.Contains(out, ids[1]) {
			t.Errorf("%s output %q does not name the key ids %q", name, out, ids)
		}
	}
	if want := "secretbox.Keyring[" + ids[0] + " " + ids[1] + "]"; outputs["String"] != want {
		t.Errorf("String = %q, want %q", outputs["String"], want)
	}
	if want := `{"key_ids":["` + ids[0] + `","` + ids[1] + `"]}`; !strings.Contains(outputs["slog json"], want) {
		t.Errorf("slog json = %q, want it to contain %q", outputs["slog json"], want)
	}
}

func FuzzParseKeyring(f *testing.F) {
	k := keyText(bytes.Repeat([]byte{7}, 32))
	for _, s := range []string{"", k, k + "," + keyText(bytes.Repeat([]byte{8}, 32)), k + ",,", " ak1_ ", "ak1_" + strings.Repeat("_", 43)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ring, err := secretbox.ParseKeyring(s)
		if err != nil {
			if !errors.Is(err, secretbox.ErrInvalidKey) || ring != nil {
				t.Fatalf("ParseKeyring(%q) = %v, %v; want nil and an ErrInvalidKey", s, ring, err)
			}
			return
		}
		if got, want := len(ring.KeyIDs()), strings.Count(s, ",")+1; got != want {
			t.Fatalf("ParseKeyring(%q) has %d keys, want %d", s, got, want)
		}
	})
}
