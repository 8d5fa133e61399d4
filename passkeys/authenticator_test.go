package passkeys_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

// softAuthenticator is a test-only software authenticator: ES256 keys,
// attestation "none", discoverable credentials, user verification. It
// produces the JSON a browser's PublicKeyCredential.toJSON() gives, with the
// CBOR and COSE encoded by go-webauthn's own encoders.
type softAuthenticator struct {
	t    testing.TB
	keys []*softKey
	// flags the authenticator sets besides UP and UV.
	backupEligible, backupState bool
	userVerified                bool
}

type softKey struct {
	id     []byte
	priv   *ecdsa.PrivateKey
	rpID   string
	handle []byte
	count  uint32
}

func newAuthenticator(t testing.TB) *softAuthenticator {
	return &softAuthenticator{t: t, userVerified: true, backupEligible: true, backupState: true}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func unb64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("base64url %q: %v", s, err)
	}
	return b
}

const (
	flagUP = 0x01
	flagUV = 0x04
	flagBE = 0x08
	flagBS = 0x10
	flagAT = 0x40
)

func (a *softAuthenticator) flags() byte {
	f := byte(flagUP)
	if a.userVerified {
		f |= flagUV
	}
	if a.backupEligible {
		f |= flagBE
	}
	if a.backupState {
		f |= flagBS
	}
	return f
}

func authData(rpID string, flags byte, count uint32) []byte {
	h := sha256.Sum256([]byte(rpID))
	out := append(h[:], flags)
	return binary.BigEndian.AppendUint32(out, count)
}

func clientData(t testing.TB, typ, challenge, origin string) []byte {
	b, err := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": origin, "crossOrigin": false})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// creationOptions is the part of a register/begin answer the
// authenticator reads.
type creationOptions struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		RP        struct {
			ID string `json:"id"`
		} `json:"rp"`
		User struct {
			ID string `json:"id"`
		} `json:"user"`
	} `json:"publicKey"`
}

// create answers navigator.credentials.create: a new key for the options'
// RP and user, from origin, with rpID overriding the options' RP ID when
// not empty (a phishing page's own).
func (a *softAuthenticator) create(opts []byte, origin, rpID string) (map[string]any, *softKey) {
	t := a.t
	t.Helper()
	var o creationOptions
	if err := json.Unmarshal(opts, &o); err != nil {
		t.Fatalf("creation options %s: %v", opts, err)
	}
	if rpID == "" {
		rpID = o.PublicKey.RP.ID
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k := &softKey{id: make([]byte, 16), priv: priv, rpID: rpID, handle: unb64(t, o.PublicKey.User.ID)}
	_, _ = rand.Read(k.id)
	pub, err := priv.PublicKey.ECDH()
	if err != nil {
		t.Fatal(err)
	}
	raw := pub.Bytes() // 0x04 || X || Y
	cose, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         1, // P-256
		XCoord:        raw[1:33], YCoord: raw[33:],
	})
	if err != nil {
		t.Fatal(err)
	}
	ad := authData(rpID, a.flags()|flagAT, 0)
	ad = append(ad, make([]byte, 16)...) // AAGUID: zero, as attestation "none" authenticators give
	ad = binary.BigEndian.AppendUint16(ad, uint16(len(k.id)))
	ad = append(ad, k.id...)
	ad = append(ad, cose...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": ad})
	if err != nil {
		t.Fatal(err)
	}
	a.keys = append(a.keys, k)
	return map[string]any{
		"id": b64(k.id), "rawId": b64(k.id), "type": "public-key", "authenticatorAttachment": "platform",
		"clientExtensionResults": map[string]any{},
		"response": map[string]any{
			"clientDataJSON":    b64(clientData(t, "webauthn.create", o.PublicKey.Challenge, origin)),
			"attestationObject": b64(att),
			"transports":        []string{"internal", "hybrid"},
		},
	}, k
}

// requestOptions is the part of a login begin answer the authenticator
// reads.
type requestOptions struct {
	PublicKey struct {
		Challenge        string `json:"challenge"`
		RPID             string `json:"rpId"`
		AllowCredentials []struct {
			ID string `json:"id"`
		} `json:"allowCredentials"`
	} `json:"publicKey"`
}

// get answers navigator.credentials.get with key k (nil: the newest key
// of the options' RP that the allow list permits), from origin, its counter
// raised by one first.
func (a *softAuthenticator) get(opts []byte, origin string, k *softKey) map[string]any {
	t := a.t
	t.Helper()
	var o requestOptions
	if err := json.Unmarshal(opts, &o); err != nil {
		t.Fatalf("request options %s: %v", opts, err)
	}
	if k == nil {
		for i := len(a.keys) - 1; i >= 0 && k == nil; i-- {
			c := a.keys[i]
			if c.rpID != o.PublicKey.RPID {
				continue
			}
			if len(o.PublicKey.AllowCredentials) == 0 {
				k = c
			}
			for _, al := range o.PublicKey.AllowCredentials {
				if al.ID == b64(c.id) {
					k = c
				}
			}
		}
		if k == nil {
			t.Fatalf("no credential for %s", opts)
		}
	}
	k.count++
	return a.sign(k, o.PublicKey.Challenge, origin, k.count)
}

// sign makes an assertion of k over challenge with counter count.
func (a *softAuthenticator) sign(k *softKey, challenge, origin string, count uint32) map[string]any {
	t := a.t
	cd := clientData(t, "webauthn.get", challenge, origin)
	ad := authData(k.rpID, a.flags(), count)
	h := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte(nil), ad...), h[:]...)) // ES256: ECDSA over SHA-256(authData || hash(clientData))
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{
		"id": b64(k.id), "rawId": b64(k.id), "type": "public-key", "authenticatorAttachment": "platform",
		"clientExtensionResults": map[string]any{},
		"response": map[string]any{
			"clientDataJSON":    b64(cd),
			"authenticatorData": b64(ad),
			"signature":         b64(sig),
			"userHandle":        b64(k.handle),
		},
	}
}
