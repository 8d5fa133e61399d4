package passkeystest

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

// Authenticator is a software WebAuthn authenticator for tests: it answers
// the options of a begin route as navigator.credentials.create and
// navigator.credentials.get would, with ES256 keys, attestation "none",
// discoverable credentials and the flags its fields say. What it returns
// is the JSON object of PublicKeyCredential.toJSON(), as a map a test may
// edit before it marshals it into a finish body. The CBOR and COSE are
// encoded by go-webauthn's own encoders.
//
// It fails the test it was made for on options it cannot read. It is not
// safe for concurrent use (a browser runs one ceremony at a time); the
// assertions it returns may be sent concurrently.
type Authenticator struct {
	// UserVerified sets the UV flag: the user unlocked the authenticator
	// (a PIN, a fingerprint). NewAuthenticator: true.
	UserVerified bool
	// BackupEligible and BackedUp set the BE and BS flags: a synced
	// passkey. NewAuthenticator: both true.
	BackupEligible, BackedUp bool

	t     testing.TB
	creds []*Credential
}

// Credential is one key an Authenticator made.
type Credential struct {
	ID         []byte // the credential id (16 random bytes)
	RPID       string // the relying party it signs for
	UserHandle []byte // the user handle of the creation options
	// Counter is the signature counter. Get raises it by one and signs
	// with the new value; set it below the server's count to act as a
	// cloned authenticator that lags behind.
	Counter uint32

	priv *ecdsa.PrivateKey
}

// Copy returns a credential with the same id and private key and its own
// fields: a cloned authenticator, or (with RPID or UserHandle changed) a
// phishing page's or a forged one.
func (c *Credential) Copy() *Credential {
	d := *c
	d.ID = append([]byte(nil), c.ID...)
	d.UserHandle = append([]byte(nil), c.UserHandle...)
	return &d
}

// NewAuthenticator returns an authenticator with user verification and a
// synced (backed-up) state, failing t on options it cannot read.
func NewAuthenticator(t testing.TB) *Authenticator {
	return &Authenticator{t: t, UserVerified: true, BackupEligible: true, BackedUp: true}
}

// Credentials returns the credentials made so far, oldest first.
func (a *Authenticator) Credentials() []*Credential { return append([]*Credential(nil), a.creds...) }

const (
	flagUP = 0x01
	flagUV = 0x04
	flagBE = 0x08
	flagBS = 0x10
	flagAT = 0x40
)

func (a *Authenticator) flags() byte {
	f := byte(flagUP)
	if a.UserVerified {
		f |= flagUV
	}
	if a.BackupEligible {
		f |= flagBE
	}
	if a.BackedUp {
		f |= flagBS
	}
	return f
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (a *Authenticator) unb64(s string) []byte {
	a.t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		a.t.Fatalf("passkeystest: base64url %q: %v", s, err)
	}
	return b
}

func authData(rpID string, flags byte, count uint32) []byte {
	h := sha256.Sum256([]byte(rpID))
	out := append(h[:], flags)
	return binary.BigEndian.AppendUint32(out, count)
}

func (a *Authenticator) clientData(typ, challenge, origin string) []byte {
	b, err := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": origin, "crossOrigin": false})
	if err != nil {
		a.t.Fatal(err)
	}
	return b
}

// CreationOptions is the part of the options of navigator.credentials.create
// ({"publicKey": ...}, a register begin's answer) the authenticator reads.
type CreationOptions struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		RP        struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"rp"`
		User struct {
			ID          string `json:"id"`
			Name        string `json:"name"`
			DisplayName string `json:"displayName"`
		} `json:"user"`
		Attestation            string `json:"attestation"`
		AuthenticatorSelection struct {
			ResidentKey      string `json:"residentKey"`
			UserVerification string `json:"userVerification"`
		} `json:"authenticatorSelection"`
		ExcludeCredentials []struct {
			ID string `json:"id"`
		} `json:"excludeCredentials"`
	} `json:"publicKey"`
}

// RequestOptions is the part of the options of navigator.credentials.get
// (a login or 2FA begin's answer) the authenticator reads.
type RequestOptions struct {
	PublicKey struct {
		Challenge        string `json:"challenge"`
		RPID             string `json:"rpId"`
		UserVerification string `json:"userVerification"`
		AllowCredentials []struct {
			ID string `json:"id"`
		} `json:"allowCredentials"`
	} `json:"publicKey"`
}

// Create answers navigator.credentials.create on a page of origin: a new
// credential for the options' RP and user.
func (a *Authenticator) Create(options []byte, origin string) (map[string]any, *Credential) {
	a.t.Helper()
	return a.CreateFor(options, origin, "")
}

// CreateFor is Create with rpID in place of the options' RP ID when not
// empty: a phishing page's own RP.
func (a *Authenticator) CreateFor(options []byte, origin, rpID string) (map[string]any, *Credential) {
	t := a.t
	t.Helper()
	var o CreationOptions
	if err := json.Unmarshal(options, &o); err != nil {
		t.Fatalf("passkeystest: creation options %s: %v", options, err)
	}
	if rpID == "" {
		rpID = o.PublicKey.RP.ID
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c := &Credential{ID: make([]byte, 16), priv: priv, RPID: rpID, UserHandle: a.unb64(o.PublicKey.User.ID)}
	_, _ = rand.Read(c.ID)
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
	ad = binary.BigEndian.AppendUint16(ad, uint16(len(c.ID)))
	ad = append(ad, c.ID...)
	ad = append(ad, cose...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": ad})
	if err != nil {
		t.Fatal(err)
	}
	a.creds = append(a.creds, c)
	return map[string]any{
		"id": b64(c.ID), "rawId": b64(c.ID), "type": "public-key", "authenticatorAttachment": "platform",
		"clientExtensionResults": map[string]any{},
		"response": map[string]any{
			"clientDataJSON":    b64(a.clientData("webauthn.create", o.PublicKey.Challenge, origin)),
			"attestationObject": b64(att),
			"transports":        []string{"internal", "hybrid"},
		},
	}, c
}

// Get answers navigator.credentials.get on a page of origin with c (nil:
// the newest credential of the options' RP that their allow list permits),
// its Counter raised by one first.
func (a *Authenticator) Get(options []byte, origin string, c *Credential) map[string]any {
	t := a.t
	t.Helper()
	var o RequestOptions
	if err := json.Unmarshal(options, &o); err != nil {
		t.Fatalf("passkeystest: request options %s: %v", options, err)
	}
	if c == nil {
		for i := len(a.creds) - 1; i >= 0 && c == nil; i-- {
			k := a.creds[i]
			if k.RPID != o.PublicKey.RPID {
				continue
			}
			if len(o.PublicKey.AllowCredentials) == 0 {
				c = k
			}
			for _, al := range o.PublicKey.AllowCredentials {
				if al.ID == b64(k.ID) {
					c = k
				}
			}
		}
		if c == nil {
			t.Fatalf("passkeystest: no credential for %s", options)
		}
	}
	c.Counter++
	return a.Sign(c, o.PublicKey.Challenge, origin, c.Counter)
}

// Sign makes an assertion of c over challenge (base64url, as the options
// carry it) on a page of origin, with signature counter counter; c's
// Counter is left as it is.
func (a *Authenticator) Sign(c *Credential, challenge, origin string, counter uint32) map[string]any {
	t := a.t
	t.Helper()
	cd := a.clientData("webauthn.get", challenge, origin)
	ad := authData(c.RPID, a.flags(), counter)
	h := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte(nil), ad...), h[:]...)) // ES256: ECDSA over SHA-256(authData || hash(clientData))
	sig, err := ecdsa.SignASN1(rand.Reader, c.priv, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{
		"id": b64(c.ID), "rawId": b64(c.ID), "type": "public-key", "authenticatorAttachment": "platform",
		"clientExtensionResults": map[string]any{},
		"response": map[string]any{
			"clientDataJSON":    b64(cd),
			"authenticatorData": b64(ad),
			"signature":         b64(sig),
			"userHandle":        b64(c.UserHandle),
		},
	}
}
