package secretbox_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/secretbox"
)

// totpSecret is the size of value the package exists for: a 32-character
// base32 TOTP secret.
const totpSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"

// newKey returns a fresh key in text form.
func newKey(t testing.TB) string {
	t.Helper()
	key, err := secretbox.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// parse returns the keyring for s.
func parse(t testing.TB, s string) *secretbox.Keyring {
	t.Helper()
	ring, err := secretbox.ParseKeyring(s)
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

// encrypt encrypts with ring and fails the test on error.
func encrypt(t testing.TB, ring *secretbox.Keyring, plaintext, ad []byte) string {
	t.Helper()
	ct, err := ring.Encrypt(plaintext, ad)
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

// ciphertextLen is the documented length of a ciphertext for an n-byte
// plaintext: 12 + ceil((40+n)*4/3).
func ciphertextLen(n int) int { return 12 + ((40+n)*4+2)/3 }

func TestRoundTrip(t *testing.T) {
	ring := parse(t, newKey(t))
	id := ring.KeyIDs()[0]
	for _, tc := range []struct {
		name          string
		plaintext, ad []byte
	}{
		{"empty", nil, nil},
		{"empty with ad", []byte{}, []byte("totp:u1")},
		{"one byte", []byte{0}, nil},
		{"totp secret", []byte(totpSecret), []byte("totp:u1")},
		{"binary", bytes.Repeat([]byte{0xff, 0x00, '.', '\n'}, 100), []byte{0, 1, 2}},
		{"max", bytes.Repeat([]byte{'a'}, secretbox.MaxPlaintextLen), []byte("ad")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct := encrypt(t, ring, tc.plaintext, tc.ad)
			if !strings.HasPrefix(ct, "v1."+id+".") {
				t.Errorf("ciphertext %.20q... does not start with %q", ct, "v1."+id+".")
			}
			if got, want := len(ct), ciphertextLen(len(tc.plaintext)); got != want {
				t.Errorf("len(ciphertext) = %d, want %d", got, want)
			}
			if len(ct) > secretbox.MaxCiphertextLen {
				t.Errorf("len(ciphertext) = %d, over MaxCiphertextLen", len(ct))
			}
			got, err := ring.Decrypt(ct, tc.ad)
			if err != nil {
				t.Fatalf("Decrypt: %v", err)
			}
			if !bytes.Equal(got, tc.plaintext) {
				t.Errorf("Decrypt = %q, want %q", got, tc.plaintext)
			}
			again := encrypt(t, ring, tc.plaintext, tc.ad)
			if again == ct {
				t.Error("two encryptions of the same plaintext are equal; want a fresh nonce each time")
			}
		})
	}
}

func TestStringRoundTrip(t *testing.T) {
	ring := parse(t, newKey(t))
	ct, err := ring.EncryptString(totpSecret, "totp:u1")
	if err != nil {
		t.Fatal(err)
	}
	if len(ct) != 108 {
		t.Errorf("len(ciphertext) = %d, want 108 (documented for a 32-byte secret)", len(ct))
	}
	got, err := ring.DecryptString(ct, "totp:u1")
	if err != nil || got != totpSecret {
		t.Errorf("DecryptString = %q, %v; want %q, nil", got, err, totpSecret)
	}
	if got, err := ring.DecryptString(ct, "totp:u2"); err != secretbox.ErrDecrypt || got != "" {
		t.Errorf("DecryptString with other ad = %q, %v; want \"\", ErrDecrypt", got, err)
	}
}

func TestPackageFuncs(t *testing.T) {
	key := newKey(t)
	ct, err := secretbox.Encrypt(totpSecret, key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := secretbox.Decrypt(ct, key)
	if err != nil || got != totpSecret {
		t.Errorf("Decrypt = %q, %v; want %q, nil", got, err, totpSecret)
	}
	// Interchangeable with a Keyring and empty associated data.
	if got, err := parse(t, key).DecryptString(ct, ""); err != nil || got != totpSecret {
		t.Errorf("Keyring.DecryptString = %q, %v; want %q, nil", got, err, totpSecret)
	}
	if _, err := secretbox.Decrypt(ct, newKey(t)); !errors.Is(err, secretbox.ErrUnknownKey) {
		t.Errorf("Decrypt with another key: err = %v, want ErrUnknownKey", err)
	}
	if _, err := secretbox.Encrypt(totpSecret, "not a key"); !errors.Is(err, secretbox.ErrInvalidKey) {
		t.Errorf("Encrypt with a bad key: err = %v, want ErrInvalidKey", err)
	}
	if _, err := secretbox.Decrypt(ct, ""); !errors.Is(err, secretbox.ErrInvalidKey) {
		t.Errorf("Decrypt with no key: err = %v, want ErrInvalidKey", err)
	}
}

func TestWrongKey(t *testing.T) {
	ct := encrypt(t, parse(t, newKey(t)), []byte(totpSecret), nil)
	other := parse(t, newKey(t))
	got, err := other.Decrypt(ct, nil)
	if !errors.Is(err, secretbox.ErrDecrypt) || !errors.Is(err, secretbox.ErrUnknownKey) || got != nil {
		t.Fatalf("Decrypt with another key = %q, %v; want nil, ErrUnknownKey (which is ErrDecrypt)", got, err)
	}
	id := ct[3:11]
	if want := "secretbox: decryption failed: unknown key id " + id; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestWrongAssociatedData(t *testing.T) {
	ring := parse(t, newKey(t))
	ct := encrypt(t, ring, []byte(totpSecret), []byte("totp:user-1"))
	for _, ad := range [][]byte{nil, []byte("totp:user-2"), []byte("totp:user-1 "), []byte("totp:user-"), []byte("TOTP:user-1")} {
		got, err := ring.Decrypt(ct, ad)
		if err != secretbox.ErrDecrypt || got != nil {
			t.Errorf("Decrypt with ad %q = %q, %v; want nil, ErrDecrypt", ad, got, err)
		}
	}
}

func TestRotation(t *testing.T) {
	oldKey, newKeyText := newKey(t), newKey(t)
	oldRing := parse(t, oldKey)
	newOnly := parse(t, newKeyText)
	rotated := parse(t, " "+newKeyText+" , "+oldKey+" ") // ENCRYPTION_KEY=new,old

	if got, want := rotated.KeyIDs(), []string{newOnly.KeyIDs()[0], oldRing.KeyIDs()[0]}; got[0] != want[0] || got[1] != want[1] || len(got) != 2 {
		t.Fatalf("KeyIDs = %q, want %q", got, want)
	}

	ad := []byte("totp:u1")
	oldCT := encrypt(t, oldRing, []byte(totpSecret), ad)
	if got, err := rotated.Decrypt(oldCT, ad); err != nil || string(got) != totpSecret {
		t.Errorf("rotated ring decrypting an old value = %q, %v; want %q, nil", got, err, totpSecret)
	}

	newCT := encrypt(t, rotated, []byte(totpSecret), ad)
	if want := "v1." + newOnly.KeyIDs()[0] + "."; !strings.HasPrefix(newCT, want) {
		t.Errorf("rotated ring encrypts under %q, want the new key %q", newCT[:12], want)
	}
	if got, err := newOnly.Decrypt(newCT, ad); err != nil || string(got) != totpSecret {
		t.Errorf("new key alone decrypting a new value = %q, %v; want %q, nil", got, err, totpSecret)
	}
	if _, err := oldRing.Decrypt(newCT, ad); !errors.Is(err, secretbox.ErrUnknownKey) {
		t.Errorf("old key alone decrypting a new value: err = %v, want ErrUnknownKey", err)
	}
	if _, err := newOnly.Decrypt(oldCT, ad); !errors.Is(err, secretbox.ErrUnknownKey) {
		t.Errorf("old value after the old key was dropped: err = %v, want ErrUnknownKey", err)
	}
}

// TestSwappedKeyID moves a ciphertext to the other key of the ring by its
// key id: it must fail authentication, not decrypt.
func TestSwappedKeyID(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	ring := parse(t, k1+","+k2)
	ids := ring.KeyIDs()
	ct := encrypt(t, ring, []byte(totpSecret), nil)
	swapped := strings.Replace(ct, ids[0], ids[1], 1)
	if _, err := ring.Decrypt(swapped, nil); err != secretbox.ErrDecrypt {
		t.Errorf("Decrypt with the key id swapped: err = %v, want ErrDecrypt", err)
	}
}

// TestEveryByteChange replaces each byte of a ciphertext with every other
// byte value: no result may decrypt. Plaintext lengths 32 and 33 give bodies
// without and with unused trailing bits.
func TestEveryByteChange(t *testing.T) {
	ring := parse(t, newKey(t))
	for _, n := range []int{0, 32, 33} {
		ct := encrypt(t, ring, bytes.Repeat([]byte{'s'}, n), []byte("ad"))
		b := []byte(ct)
		failures := 0
		for i := range b {
			orig := b[i]
			for v := 0; v < 256; v++ {
				if byte(v) == orig {
					continue
				}
				b[i] = byte(v)
				got, err := ring.Decrypt(string(b), []byte("ad"))
				if !errors.Is(err, secretbox.ErrDecrypt) || got != nil {
					failures++
					if failures <= 5 {
						t.Errorf("n=%d: byte %d changed to %#x: Decrypt = %q, %v; want nil, ErrDecrypt", n, i, v, got, err)
					}
				}
			}
			b[i] = orig
		}
		if got, err := ring.Decrypt(string(b), []byte("ad")); err != nil || len(got) != n {
			t.Errorf("n=%d: the unchanged ciphertext no longer decrypts: %v", n, err)
		}
	}
}

// TestTruncation decrypts every proper prefix of a ciphertext. Up to the
// point where the body could hold a nonce and a tag (12 + 54 characters)
// the input is malformed; after it, authentication fails.
func TestTruncation(t *testing.T) {
	ring := parse(t, newKey(t))
	ct := encrypt(t, ring, []byte(totpSecret), nil)
	for i := 0; i < len(ct); i++ {
		got, err := ring.Decrypt(ct[:i], nil)
		if !errors.Is(err, secretbox.ErrDecrypt) || got != nil {
			t.Errorf("Decrypt(ct[:%d]) = %q, %v; want nil, ErrDecrypt", i, got, err)
		}
		if i < 12+54 && !errors.Is(err, secretbox.ErrMalformed) {
			t.Errorf("Decrypt(ct[:%d]): err = %v, want ErrMalformed", i, err)
		}
		if errors.Is(err, secretbox.ErrUnknownKey) {
			t.Errorf("Decrypt(ct[:%d]): err = %v, want no ErrUnknownKey", i, err)
		}
	}
}

func TestMalformed(t *testing.T) {
	ring := parse(t, newKey(t))
	ct := encrypt(t, ring, []byte(totpSecret), nil)
	header, body := ct[:12], ct[12:]
	id := ct[3:11]
	// A body with unused trailing bits, and the same body with one of
	// those bits set: a lenient decoder would give the same bytes.
	padded := encrypt(t, ring, []byte(totpSecret+"x"), nil) // 73 bytes: 4 unused bits
	last := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", padded[len(padded)-1])
	nonCanonical := padded[:len(padded)-1] + string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[last|1])

	for _, tc := range []struct {
		name, in, reason string
	}{
		{"empty", "", "unknown version"},
		{"version only", "v1", "bad key id"},
		{"version and dot", "v1.", "bad key id"},
		{"other version", "v2." + ct[3:], "unknown version"},
		{"upper-case version", "V1." + ct[3:], "unknown version"},
		{"leading space", " " + ct, "unknown version"},
		// A fixed id: the ring's own may be all digits, which upper-casing leaves alone.
		{"upper-case key id", "v1.ABCDEF01." + body, "bad key id"},
		{"non-hex key id", "v1.zzzzzzzz." + body, "bad key id"},
		{"short key id", "v1." + id[:7] + "." + body, "bad key id"},
		{"long key id", "v1." + id + "0." + body, "bad key id"},
		{"no body separator", "v1." + id, "bad key id"},
		{"empty body", header, "too short"},
		{"body one char", header + "A", "body is not canonical unpadded base64url"},
		{"body too short", header + body[:52], "too short"},
		{"padding", ct + "==", "body is not unpadded base64url"},
		{"standard alphabet", header + strings.NewReplacer("-", "+", "_", "/").Replace(body) + "+/", "body is not unpadded base64url"},
		{"line break", header + body[:40] + "\n" + body[40:], "body is not unpadded base64url"},
		{"carriage return", header + body[:40] + "\r" + body[40:], "body is not unpadded base64url"},
		{"trailing newline", ct + "\n", "body is not unpadded base64url"},
		{"space", header + body[:40] + " " + body[40:], "body is not unpadded base64url"},
		{"extra field", ct + ".x", "body is not unpadded base64url"},
		{"non-canonical last character", nonCanonical, "body is not canonical unpadded base64url"},
		{"non-ASCII", header + "é" + body, "body is not unpadded base64url"},
		{"too long", header + strings.Repeat("A", secretbox.MaxCiphertextLen-len(header)+1), "longer than MaxCiphertextLen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ring.Decrypt(tc.in, nil)
			want := "secretbox: decryption failed: not a secretbox ciphertext: " + tc.reason
			if !errors.Is(err, secretbox.ErrMalformed) || !errors.Is(err, secretbox.ErrDecrypt) || got != nil {
				t.Fatalf("Decrypt = %q, %v; want nil, ErrMalformed", got, err)
			}
			if err.Error() != want {
				t.Errorf("error = %q, want %q", err, want)
			}
		})
	}

	// At exactly MaxCiphertextLen the input is read, and fails
	// authentication rather than the length check.
	atMax := header + strings.Repeat("A", secretbox.MaxCiphertextLen-len(header))
	if _, err := ring.Decrypt(atMax, nil); err != secretbox.ErrDecrypt {
		t.Errorf("Decrypt of a MaxCiphertextLen input: err = %v, want ErrDecrypt", err)
	}
}

func TestPlaintextTooLarge(t *testing.T) {
	ring := parse(t, newKey(t))
	ct, err := ring.Encrypt(make([]byte, secretbox.MaxPlaintextLen+1), nil)
	if !errors.Is(err, secretbox.ErrTooLarge) || ct != "" {
		t.Fatalf("Encrypt over the limit = %.20q, %v; want \"\", ErrTooLarge", ct, err)
	}
	if want := "secretbox: plaintext too large: 32769 bytes, limit 32768"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestNilKeyring(t *testing.T) {
	var ring *secretbox.Keyring
	if _, err := ring.Encrypt([]byte("x"), nil); !errors.Is(err, secretbox.ErrInvalidKey) {
		t.Errorf("nil Keyring Encrypt: err = %v, want ErrInvalidKey", err)
	}
	if _, err := new(secretbox.Keyring).Encrypt([]byte("x"), nil); !errors.Is(err, secretbox.ErrInvalidKey) {
		t.Errorf("zero Keyring Encrypt: err = %v, want ErrInvalidKey", err)
	}
	ct := encrypt(t, parse(t, newKey(t)), []byte("x"), nil)
	if _, err := ring.Decrypt(ct, nil); !errors.Is(err, secretbox.ErrUnknownKey) {
		t.Errorf("nil Keyring Decrypt: err = %v, want ErrUnknownKey", err)
	}
	if got := ring.String(); got != "secretbox.Keyring[]" {
		t.Errorf("nil Keyring String = %q", got)
	}
}

func TestDecryptedSliceIsCallers(t *testing.T) {
	ring := parse(t, newKey(t))
	ct := encrypt(t, ring, []byte(totpSecret), []byte("ad"))
	got, err := ring.Decrypt(ct, []byte("ad"))
	if err != nil {
		t.Fatal(err)
	}
	if cap(got) != len(got) {
		t.Errorf("cap = %d, len = %d: the slice exposes bytes beyond the plaintext", cap(got), len(got))
	}
}

func FuzzDecrypt(f *testing.F) {
	ring := parse(f, newKey(f))
	valid := map[string]string{} // ciphertext -> ad
	for _, tc := range []struct{ pt, ad string }{{"", ""}, {totpSecret, "totp:u1"}, {totpSecret + "x", ""}} {
		ct := encrypt(f, ring, []byte(tc.pt), []byte(tc.ad))
		valid[ct] = tc.ad
		f.Add(ct, []byte(tc.ad))
	}
	for _, s := range []string{"", "v1", "v1.", "v1.00000000.", "v2.00000000.AAAA", "v1.00000000." + strings.Repeat("A", 60)} {
		f.Add(s, []byte(nil))
	}
	f.Fuzz(func(t *testing.T, s string, ad []byte) {
		got, err := ring.Decrypt(s, ad)
		if err != nil {
			if !errors.Is(err, secretbox.ErrDecrypt) || got != nil {
				t.Fatalf("Decrypt(%q) = %q, %v; want nil and an ErrDecrypt", s, got, err)
			}
			return
		}
		// Only what Encrypt made, with its own associated data, decrypts:
		// no forgery, no second spelling of a valid value.
		if wantAD, ok := valid[s]; !ok || wantAD != string(ad) {
			t.Fatalf("Decrypt(%q, %q) succeeded on input Encrypt did not make", s, ad)
		}
	})
}

func benchmarkRing(b *testing.B) *secretbox.Keyring {
	// Two keys, the encrypting one first: the shape of a ring mid-rotation.
	return parse(b, newKey(b)+","+newKey(b))
}

func BenchmarkEncrypt(b *testing.B) {
	ring := benchmarkRing(b)
	pt, ad := []byte(totpSecret), []byte("totp:5mZk1c2QhXgYd9Rr0pT3uA")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ring.Encrypt(pt, ad); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecrypt(b *testing.B) {
	ring := benchmarkRing(b)
	pt, ad := []byte(totpSecret), []byte("totp:5mZk1c2QhXgYd9Rr0pT3uA")
	ct := encrypt(b, ring, pt, ad)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ring.Decrypt(ct, ad); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncryptKeyText is the package-level Encrypt, which parses the key
// text on every call.
func BenchmarkEncryptKeyText(b *testing.B) {
	key := newKey(b) + "," + newKey(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := secretbox.Encrypt(totpSecret, key); err != nil {
			b.Fatal(err)
		}
	}
}
