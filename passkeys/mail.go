package passkeys

import "github.com/authkit-go/authkit/core/mail"

const (
	mailPasskeyAdded   = mail.KindPasskeyAdded
	mailPasskeyDeleted = mail.KindPasskeyDeleted
)

func mailData(name string) mail.Data { return mail.Data{PasskeyName: name} }
