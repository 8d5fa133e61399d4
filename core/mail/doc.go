// Package mail renders and sends the mails of the reference flows (docs/api.md,
// Tokens and mailed links): the verification link (register, resend), the verification
// link for a new address (change email), the reset link (forgot password),
// and notices that tell an account's owner what changed (password changed
// or reset, two-factor authentication turned off, email address changed).
//
// A [Mailer] delivers one [Message]. The package has four:
//
//   - [SMTP] submits over SMTP with STARTTLS or implicit TLS and AUTH PLAIN,
//     configured by a URL such as the example servers' SMTP_URL.
//   - [Console] prints messages for development.
//   - [Capture] records messages for tests.
//   - [Sender] wraps any of them in a queue with workers and retries, so no
//     response waits for, or reveals, a mail.
//
// [Templates] turn a [Kind] and [Data] into a Message:
//
//	smtpMailer, err := mail.NewSMTP(os.Getenv("SMTP_URL"), mail.SMTPConfig{
//		From: "Example <no-reply@example.com>",
//	})
//	...
//	sender := mail.NewSender(smtpMailer, mail.SenderConfig{Logger: logger})
//	defer sender.Close(shutdownCtx)
//
//	msg, err := mail.DefaultTemplates().Render(mail.KindResetPassword, mail.Data{
//		To:      u.Email,
//		Name:    u.Name,
//		Link:    appURL + "/reset-password/" + tok,
//		AppName: "Example",
//		Expiry:  time.Hour,
//	})
//	...
//	err = sender.Send(ctx, msg) // queued; returns at once
//
// # Header injection
//
// Every Mailer validates a Message before any I/O ([Message.Validate]): the
// recipient must be one bare address that net/mail parses, and To, From and
// Subject must be valid UTF-8 without control characters, so a CR or LF can
// never start a new header or add a recipient ([ErrInvalidHeader]).
// [Templates.Render] folds any control characters and line breaks that user
// data (a display name) brings into a subject into spaces, and the HTML part
// is rendered with html/template, so the same name is escaped there. The
// SMTP mailer writes the message itself: headers in a fixed order, a
// non-ASCII subject as RFC 2047 Q-encoded words, and both parts as
// quoted-printable UTF-8 with CRLF line breaks only.
//
// # Links stay out of logs
//
// A Message carries a live link. Nothing in this package logs a link, a
// body or a full address: the Sender logs the kind and the recipient's
// domain, and scrubs the link and the address from the error texts it logs
// (servers echo addresses). [Message.LogValue] does the same for any
// Message that an app hands to log/slog. [Console] is the exception by
// design: it prints whole messages, so it is for development only.
//
// # SMTP URLs
//
// smtp://[user:pass@]host[:port] (port 587 by default) requires STARTTLS,
// except on a loopback host, where it is used when offered. smtps:// (port
// 465 by default) is TLS from the first byte. See [NewSMTP].
//
// # Sending in the background
//
// [Sender.Send] validates and queues; workers try each message up to
// SenderConfig.Attempts times with doubling backoff and log what they give
// up on. [Sender.Flush] waits for what is queued (tests use it to assert
// that no mail was sent without sleeping) and [Sender.Close] drains the
// queue on shutdown, bounded by its context.
package mail
