package mail_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/mail"
)

func ExampleCapture() {
	// A test hands a Capture to the code under test, through a Sender as
	// the flows do, and reads back what was mailed.
	var inbox mail.Capture
	sender := mail.NewSender(&inbox, mail.SenderConfig{})
	defer sender.Close(context.Background())

	msg, err := mail.DefaultTemplates().Render(mail.KindVerifyEmail, mail.Data{
		To:   "ada@example.com",
		Link: "https://app.example.com/verify-email/tok123",
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := sender.Send(ctx, msg); err != nil {
		log.Fatal(err)
	}
	// Flush waits for the queue, so the test needs no sleep.
	if err := sender.Flush(ctx); err != nil {
		log.Fatal(err)
	}

	got := inbox.To("ada@example.com")
	fmt.Println(len(got), got[0].Kind, got[0].Link)
	fmt.Println(len(inbox.To("bob@example.com")))
	// Output:
	// 1 verify_email https://app.example.com/verify-email/tok123
	// 0
}

func ExampleTemplates_Render() {
	msg, err := mail.DefaultTemplates().Render(mail.KindResetPassword, mail.Data{
		To:      "ada@example.com",
		Name:    "Ada",
		Link:    "https://app.example.com/reset-password/tok123",
		AppName: "Acme",
		Expiry:  time.Hour,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("Subject:", msg.Subject)
	fmt.Print(msg.Text)
	// Output:
	// Subject: Acme: Reset your password (link valid for 1 hour)
	// Hi Ada,
	//
	// Someone asked to reset the password of your account at Acme. To choose a new password, open this link:
	//
	// https://app.example.com/reset-password/tok123
	//
	// The link expires in 1 hour and works once. If you did not ask for this, ignore this email: your password stays as it is.
}

func ExampleTemplates_Render_custom() {
	// Replace only what differs from the defaults; empty fields keep them.
	t := mail.Templates{
		VerifyEmail: mail.Template{
			Subject: "Welcome to {{.AppName}}, {{.Name}}",
		},
	}
	msg, err := t.Render(mail.KindVerifyEmail, mail.Data{
		To:      "bob@example.com",
		Name:    "Bob\r\nBcc: eve@evil.example", // hostile display name
		Link:    "https://app.example.com/verify-email/tok456",
		AppName: "Acme",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(msg.Subject)
	fmt.Println(strings.Contains(msg.Text, "expires in 24 hours"))
	// Output:
	// Welcome to Acme, Bob Bcc: eve@evil.example
	// true
}

func ExampleNewSMTP() {
	// SMTP_URL is smtp://user:pass@host:587 (STARTTLS) or
	// smtps://user:pass@host:465 (implicit TLS).
	smtpMailer, err := mail.NewSMTP(os.Getenv("SMTP_URL"), mail.SMTPConfig{
		From: "Acme <no-reply@acme.example>",
	})
	if err != nil {
		log.Fatal(err) // the error never contains the password
	}
	log.Printf("mail via %s", smtpMailer) // the password shows as xxxxx

	sender := mail.NewSender(smtpMailer, mail.SenderConfig{Logger: slog.Default()})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = sender.Close(ctx) // drain the queue on shutdown
	}()

	msg, err := mail.DefaultTemplates().Render(mail.KindVerifyEmail, mail.Data{
		To:   "ada@example.com",
		Link: "https://acme.example/verify-email/tok123",
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = sender.Send(context.Background(), msg) // queued; failures are logged
}

func ExampleNewConsole() {
	c := mail.NewConsole(os.Stdout)
	err := c.Send(context.Background(), mail.Message{
		To:      "ada@example.com",
		Subject: "Hello",
		Text:    "Hello, Ada.",
		Kind:    "greeting",
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// ===== mail: greeting =====
	// To: ada@example.com
	// Subject: Hello
	//
	// --- text/plain ---
	// Hello, Ada.
	// ===== end of mail =====
}
