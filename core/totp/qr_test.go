package totp

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"strings"
	"testing"
)

func TestQRCodePNG(t *testing.T) {
	tp, _ := New(Config{})
	uri := tp.QRURI("JBSWY3DPEHPK3PXP", "Acme Co", "ada@example.com")
	b, err := QRCodePNG(uri, 200)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() != 200 || r.Dy() != 200 {
		t.Fatalf("image is %v, want 200x200", r)
	}
	for _, size := range []int{0, 63, 1025} {
		if _, err := QRCodePNG(uri, size); err == nil {
			t.Errorf("size %d accepted", size)
		}
	}
	u, err := QRCodeDataURL(uri, 128)
	if err != nil || !strings.HasPrefix(u, "data:image/png;base64,") {
		t.Fatalf("QRCodeDataURL = %.40q, %v", u, err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(u, "data:image/png;base64,"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(raw)); err != nil {
		t.Fatalf("data URL is not a PNG: %v", err)
	}
}
