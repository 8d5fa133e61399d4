package secretbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"
)

// seq returns n bytes counting up from start.
func seq(start byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

// seqRing returns a keyring of one key, the KeySize bytes counting up from
// start.
func seqRing(t *testing.T, start byte) *Keyring {
	t.Helper()
	ring, err := NewKeyring(seq(start, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

// TestKnownAnswer pins format version 1: a fixed key and nonce must give
// exactly this text, so that a change to the format cannot slip in unnoticed
// and strand the values already stored. The second half rebuilds the value
// from the documented format with the AEAD directly.
func TestKnownAnswer(t *testing.T) {
	key := seq(0, KeySize)
	nonce := seq(0x40, nonceSize)
	const (
		plaintext = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
		ad        = "totp:user-1"
		wantID    = "846c4431"
		want      = "v1.846c4431.QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXnntWJ4nTPUbKvNf1nMw9wtj4_pNKahfKL3mtDjpUe8BsLSrsR8Pcb2jAD6u75fkk"
	)
	ring, err := NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	ring.rand = bytes.NewReader(nonce)

	got, err := ring.EncryptString(plaintext, ad)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("EncryptString = %q, want %q", got, want)
	}
	if ids := ring.KeyIDs(); len(ids) != 1 || ids[0] != wantID {
		t.Errorf("KeyIDs = %q, want [%q]", ids, wantID)
	}

	// The documented construction, step by step.
	sum := sha256.Sum256(append([]byte("authkit secretbox key id v1\x00"), key...))
	id := hex.EncodeToString(sum[:4])
	if id != wantID {
		t.Errorf("documented key id = %q, want %q", id, wantID)
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		t.Fatal(err)
	}
	header := "v1." + id + "."
	sealed := aead.Seal(nonce, nonce, []byte(plaintext), []byte(header+ad))
	if doc := header + base64.RawURLEncoding.EncodeToString(sealed); doc != want {
		t.Errorf("documented construction = %q, want %q", doc, want)
	}

	if back, err := ring.DecryptString(want, ad); err != nil || back != plaintext {
		t.Errorf("DecryptString(want) = %q, %v; want %q, nil", back, err, plaintext)
	}
}

// TestKeyIDBound shows that the key id is part of the authenticated data:
// the same key under another id does not open the value.
func TestKeyIDBound(t *testing.T) {
	ring := seqRing(t, 0)
	ct, err := ring.Encrypt([]byte("secret"), nil)
	if err != nil {
		t.Fatal(err)
	}
	const otherID = "00000000"
	alias := &Keyring{keys: []*ringKey{{id: otherID, header: "v1." + otherID + ".", aead: ring.keys[0].aead}}}
	swapped := "v1." + otherID + ct[len("v1.")+keyIDLen:]
	_, err = alias.Decrypt(swapped, nil)
	if !errors.Is(err, ErrDecrypt) || errors.Is(err, ErrMalformed) || errors.Is(err, ErrUnknownKey) {
		t.Errorf("Decrypt with the key id swapped: err = %v, want exactly ErrDecrypt", err)
	}
}

// TestWrongKeySameID covers the case Decrypt cannot tell from tampering: a
// ring whose key carries the right id but is not the right key (a key-id
// collision). It fails authentication; it never returns garbage.
func TestWrongKeySameID(t *testing.T) {
	right := seqRing(t, 0)
	wrong := seqRing(t, 1)
	ct, err := right.Encrypt([]byte("secret"), nil)
	if err != nil {
		t.Fatal(err)
	}
	impostor := &Keyring{keys: []*ringKey{{id: right.keys[0].id, header: right.keys[0].header, aead: wrong.keys[0].aead}}}
	pt, err := impostor.Decrypt(ct, nil)
	if err != ErrDecrypt || pt != nil {
		t.Errorf("Decrypt = %q, %v; want nil, ErrDecrypt", pt, err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("entropy source down") }

func TestRandomnessFailure(t *testing.T) {
	if _, err := generateKey(failingReader{}); err == nil || !strings.Contains(err.Error(), "entropy source down") {
		t.Errorf("generateKey with a failing reader: err = %v, want the reader's error", err)
	}

	ring := seqRing(t, 0)
	ring.rand = failingReader{}
	if ct, err := ring.Encrypt([]byte("x"), nil); err == nil || ct != "" {
		t.Errorf("Encrypt with a failing reader = %q, %v; want an error", ct, err)
	}
	ring.rand = io.LimitReader(bytes.NewReader(seq(0, 64)), nonceSize-1)
	if _, err := ring.Encrypt([]byte("x"), nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Encrypt with a short reader: err = %v, want io.ErrUnexpectedEOF", err)
	}
}
