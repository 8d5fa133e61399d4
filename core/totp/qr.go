package totp

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/png"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/qr"
)

// QRCodePNG renders uri (an otpauth:// URI from QRURI) as a size x size PNG
// QR code with medium error correction, for apps that show the code as an
// image instead of rendering it in the browser.
func QRCodePNG(uri string, size int) ([]byte, error) {
	if size < 64 || size > 1024 {
		return nil, fmt.Errorf("totp: QR code size %d outside 64..1024", size)
	}
	code, err := qr.Encode(uri, qr.M, qr.Auto)
	if err != nil {
		return nil, fmt.Errorf("totp: QR code: %w", err)
	}
	if code, err = barcode.Scale(code, size, size); err != nil {
		return nil, fmt.Errorf("totp: QR code: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, code); err != nil {
		return nil, fmt.Errorf("totp: QR code: %w", err)
	}
	return buf.Bytes(), nil
}

// QRCodeDataURL is QRCodePNG as a data: URL, ready for an <img src>.
func QRCodeDataURL(uri string, size int) (string, error) {
	b, err := QRCodePNG(uri, size)
	if err != nil {
		return "", err
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b), nil
}
