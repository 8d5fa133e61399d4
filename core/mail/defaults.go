package mail

// DefaultTemplates returns the built-in English templates: short mails that
// state the link and its expiry (24 hours for verification, 1 hour for a
// reset), or for the notices what happened, when, and what to do if it was
// not the owner. Each optional piece (name, app name, time, link) is left
// out cleanly when its Data field is empty.
func DefaultTemplates() Templates {
	return Templates{
		VerifyEmail:       defaultVerifyEmail,
		ResetPassword:     defaultResetPassword,
		PasswordChanged:   defaultPasswordChanged,
		PasswordResetDone: defaultPasswordResetDone,
		TwoFactorDisabled: defaultTwoFactorDisabled,
		EmailChanged:      defaultEmailChanged,

		TwoFactorEnabled:         defaultTwoFactorEnabled,
		RecoveryCodesRegenerated: defaultRecoveryCodesRegenerated,
		RecoveryCodeUsed:         defaultRecoveryCodeUsed,
		TwoFactorCodeReused:      defaultTwoFactorCodeReused,
		NewSignIn:                defaultNewSignIn,
		PasskeyAdded:             defaultPasskeyAdded,
		PasskeyDeleted:           defaultPasskeyDeleted,
		TwoFactorEmailCode:       defaultTwoFactorEmailCode,
		EmailSignIn:              defaultEmailSignIn,
		IdentityLinked:           defaultIdentityLinked,
		IdentityUnlinked:         defaultIdentityUnlinked,
		AccountDeleted:           defaultAccountDeleted,
		APIKeyCreated:            defaultAPIKeyCreated,
	}
}

// Shared pieces of the default templates.
const (
	subjectPrefix = `{{with .AppName}}{{.}}: {{end}}`
	greeting      = `Hi{{with .Name}} {{.}}{{end}},`
	atApp         = `{{with .AppName}} at {{.}}{{end}}`
	onTime        = `{{with .TimeText}} on {{.}}{{end}}`
	fromIP        = `{{with .IP}} from {{.}}{{end}}`
	resetLink     = `{{with .Link}} at {{.}}{{end}}`
	resetLinkHTML = `{{with .Link}} at <a href="{{.}}">{{.}}</a>{{end}}`
	htmlHead      = "<!DOCTYPE html>\n<html>\n<body>\n"
	htmlTail      = "</body>\n</html>\n"
)

var defaultVerifyEmail = Template{
	Subject: subjectPrefix + `Verify your email address{{with .ExpiryText}} (link valid for {{.}}){{end}}`,
	Text: greeting + `

Please confirm your email address` + atApp + ` by opening this link:

{{.Link}}

{{with .ExpiryText}}The link expires in {{.}}. {{end}}If you did not ask for this, you can ignore this email.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>Please confirm your email address` + atApp + ` by opening this link:</p>
<p><a href="{{.Link}}">{{.Link}}</a></p>
<p>{{with .ExpiryText}}The link expires in {{.}}. {{end}}If you did not ask for this, you can ignore this email.</p>
` + htmlTail,
}

var defaultResetPassword = Template{
	Subject: subjectPrefix + `Reset your password{{with .ExpiryText}} (link valid for {{.}}){{end}}`,
	Text: greeting + `

Someone asked to reset the password of your account` + atApp + `. To choose a new password, open this link:

{{.Link}}

{{with .ExpiryText}}The link expires in {{.}} and works once.{{else}}The link works once.{{end}} If you did not ask for this, ignore this email: your password stays as it is.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>Someone asked to reset the password of your account` + atApp + `. To choose a new password, open this link:</p>
<p><a href="{{.Link}}">{{.Link}}</a></p>
<p>{{with .ExpiryText}}The link expires in {{.}} and works once.{{else}}The link works once.{{end}} If you did not ask for this, ignore this email: your password stays as it is.</p>
` + htmlTail,
}

var defaultPasswordChanged = Template{
	Subject: subjectPrefix + `Your password was changed`,
	Text: greeting + `

The password of your account` + atApp + ` was changed` + onTime + `.

If you did this, there is nothing more to do.

If you did not, someone else knows your password: reset it now{{with .Link}} at {{.}}{{end}} and check your account's security settings.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>The password of your account` + atApp + ` was changed` + onTime + `.</p>
<p>If you did this, there is nothing more to do.</p>
<p>If you did not, someone else knows your password: reset it now{{with .Link}} at <a href="{{.}}">{{.}}</a>{{end}} and check your account's security settings.</p>
` + htmlTail,
}

var defaultPasswordResetDone = Template{
	Subject: subjectPrefix + `Your password was reset`,
	Text: greeting + `

The password of your account` + atApp + ` was reset` + onTime + ` with a link sent to this address.

If you did this, there is nothing more to do.

If you did not, someone can read your email: secure your email account first, then reset your password again{{with .Link}} at {{.}}{{end}}.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>The password of your account` + atApp + ` was reset` + onTime + ` with a link sent to this address.</p>
<p>If you did this, there is nothing more to do.</p>
<p>If you did not, someone can read your email: secure your email account first, then reset your password again{{with .Link}} at <a href="{{.}}">{{.}}</a>{{end}}.</p>
` + htmlTail,
}

var defaultTwoFactorDisabled = Template{
	Subject: subjectPrefix + `Two-factor authentication was turned off`,
	Text: greeting + `

Two-factor authentication was turned off for your account` + atApp + onTime + `. Signing in now takes only your password.

If you did this, there is nothing more to do.

If you did not, someone else knows your password: reset it now{{with .Link}} at {{.}}{{end}}, then turn two-factor authentication back on.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>Two-factor authentication was turned off for your account` + atApp + onTime + `. Signing in now takes only your password.</p>
<p>If you did this, there is nothing more to do.</p>
<p>If you did not, someone else knows your password: reset it now{{with .Link}} at <a href="{{.}}">{{.}}</a>{{end}}, then turn two-factor authentication back on.</p>
` + htmlTail,
}

var defaultEmailChanged = Template{
	Subject: subjectPrefix + `Your email address was changed`,
	Text: greeting + `

The email address of your account` + atApp + ` was changed{{with .NewEmail}} to {{.}}{{end}}` + onTime + `. This address will no longer receive mail about the account.

If you did this, there is nothing more to do.

If you did not, contact support right away{{with .Link}} at {{.}}{{end}}: someone who knows your password may have taken over the account.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>The email address of your account` + atApp + ` was changed{{with .NewEmail}} to {{.}}{{end}}` + onTime + `. This address will no longer receive mail about the account.</p>
<p>If you did this, there is nothing more to do.</p>
<p>If you did not, contact support right away{{with .Link}} at <a href="{{.}}">{{.}}</a>{{end}}: someone who knows your password may have taken over the account.</p>
` + htmlTail,
}

var defaultTwoFactorEnabled = Template{
	Subject: subjectPrefix + `Two-factor authentication was turned on`,
	Text: greeting + `

Two-factor authentication was turned on for your account` + atApp + onTime + `. Signing in now takes your password and a code from your authenticator app, or one of your recovery codes.

If you did this, keep your recovery codes somewhere safe.

If you did not, someone else is signed in to your account and may have locked you out with their own authenticator: reset your password now` + resetLink + ` and contact support.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>Two-factor authentication was turned on for your account` + atApp + onTime + `. Signing in now takes your password and a code from your authenticator app, or one of your recovery codes.</p>
<p>If you did this, keep your recovery codes somewhere safe.</p>
<p>If you did not, someone else is signed in to your account and may have locked you out with their own authenticator: reset your password now` + resetLinkHTML + ` and contact support.</p>
` + htmlTail,
}

var defaultRecoveryCodesRegenerated = Template{
	Subject: subjectPrefix + `Your recovery codes were replaced`,
	Text: greeting + `

New recovery codes were made for your account` + atApp + onTime + `. The earlier codes no longer work.

If you did this, keep the new codes somewhere safe.

If you did not, someone else is signed in to your account: reset your password now` + resetLink + `, then make new recovery codes.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>New recovery codes were made for your account` + atApp + onTime + `. The earlier codes no longer work.</p>
<p>If you did this, keep the new codes somewhere safe.</p>
<p>If you did not, someone else is signed in to your account: reset your password now` + resetLinkHTML + `, then make new recovery codes.</p>
` + htmlTail,
}

// codesLeft words Data.CodesLeft: "1 recovery code", "7 recovery codes".
const codesLeft = `{{.CodesLeft}} recovery code{{if ne .CodesLeft 1}}s{{end}}`

var defaultRecoveryCodeUsed = Template{
	Subject: subjectPrefix + `A recovery code was used to sign in`,
	Text: greeting + `

A recovery code was used to sign in to your account` + atApp + onTime + fromIP + `. You have ` + codesLeft + ` left; each works once.{{if lt .CodesLeft 3}} Make new ones soon in your security settings.{{end}}

If you did this, there is nothing more to do.

If you did not, someone has your password and one of your recovery codes: reset your password now` + resetLink + `, then make new recovery codes.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>A recovery code was used to sign in to your account` + atApp + onTime + fromIP + `. You have ` + codesLeft + ` left; each works once.{{if lt .CodesLeft 3}} Make new ones soon in your security settings.{{end}}</p>
<p>If you did this, there is nothing more to do.</p>
<p>If you did not, someone has your password and one of your recovery codes: reset your password now` + resetLinkHTML + `, then make new recovery codes.</p>
` + htmlTail,
}

var defaultTwoFactorCodeReused = Template{
	Subject: subjectPrefix + `Your two-factor code was entered twice`,
	Text: greeting + `

A two-factor code of your account` + atApp + ` that had already signed in was entered again` + onTime + `, from a device or browser that had not signed in to your account before. It was refused.
{{if or .IP .UserAgent}}
{{with .IP}}Address: {{.}}
{{end}}{{with .UserAgent}}Browser: {{.}}
{{end}}{{end}}
If you just signed in there and entered the code twice, there is nothing more to do.

If not, someone knows your password and saw one of your codes: reset your password now` + resetLink + ` and check where your account is signed in.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>A two-factor code of your account` + atApp + ` that had already signed in was entered again` + onTime + `, from a device or browser that had not signed in to your account before. It was refused.</p>
{{if or .IP .UserAgent}}<p>{{with .IP}}Address: {{.}}{{end}}{{if and .IP .UserAgent}}<br>{{end}}{{with .UserAgent}}Browser: {{.}}{{end}}</p>
{{end}}<p>If you just signed in there and entered the code twice, there is nothing more to do.</p>
<p>If not, someone knows your password and saw one of your codes: reset your password now` + resetLinkHTML + ` and check where your account is signed in.</p>
` + htmlTail,
}

var defaultNewSignIn = Template{
	Subject: subjectPrefix + `New sign-in to your account`,
	Text: greeting + `

Your account` + atApp + ` was signed in to` + onTime + ` from a device or browser that had not signed in to it before.
{{if or .IP .UserAgent}}
{{with .IP}}Address: {{.}}
{{end}}{{with .UserAgent}}Browser: {{.}}
{{end}}{{end}}
If this was you, there is nothing more to do.

If it was not, ` + newSignInAdvice + `.
{{with .ExpiryText}}
Further sign-ins from new browsers within {{.}} get no mail of their own; your security settings list where your account is signed in.
{{end}}`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>Your account` + atApp + ` was signed in to` + onTime + ` from a device or browser that had not signed in to it before.</p>
{{if or .IP .UserAgent}}<p>{{with .IP}}Address: {{.}}{{end}}{{if and .IP .UserAgent}}<br>{{end}}{{with .UserAgent}}Browser: {{.}}{{end}}</p>
{{end}}<p>If this was you, there is nothing more to do.</p>
<p>If it was not, ` + newSignInAdviceHTML + `.</p>
{{with .ExpiryText}}<p>Further sign-ins from new browsers within {{.}} get no mail of their own; your security settings list where your account is signed in.</p>
{{end}}` + htmlTail,
}

// The advice of the new-sign-in notice, for the account's state: with 2FA
// on, the password and a second factor were used, and turning 2FA on is no
// advice.
const (
	newSignInAdvice = `{{if .TwoFactorEnabled}}someone else knows your password and got past your two-factor authentication: reset your password now` + resetLink +
		`, end the sessions you do not know in your security settings and replace your recovery codes{{else}}someone else knows your password: reset it now` + resetLink +
		` and turn on two-factor authentication{{end}}`
	newSignInAdviceHTML = `{{if .TwoFactorEnabled}}someone else knows your password and got past your two-factor authentication: reset your password now` + resetLinkHTML +
		`, end the sessions you do not know in your security settings and replace your recovery codes{{else}}someone else knows your password: reset it now` + resetLinkHTML +
		` and turn on two-factor authentication{{end}}`
)

var defaultPasskeyAdded = Template{
	Subject: subjectPrefix + `A passkey was added to your account`,
	Text: greeting + `

A passkey{{with .PasskeyName}} named "{{.}}"{{end}} was added to your account` + atApp + onTime + fromIP + `. It can now sign in to the account.

If you did this, there is nothing more to do.

If you did not, someone else is signed in to your account: delete the passkey in your security settings, reset your password now` + resetLink + ` and contact support.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>A passkey{{with .PasskeyName}} named &quot;{{.}}&quot;{{end}} was added to your account` + atApp + onTime + fromIP + `. It can now sign in to the account.</p>
<p>If you did this, there is nothing more to do.</p>
<p>If you did not, someone else is signed in to your account: delete the passkey in your security settings, reset your password now` + resetLinkHTML + ` and contact support.</p>
` + htmlTail,
}

var defaultPasskeyDeleted = Template{
	Subject: subjectPrefix + `A passkey was deleted from your account`,
	Text: greeting + `

A passkey{{with .PasskeyName}} named "{{.}}"{{end}} was deleted from your account` + atApp + onTime + fromIP + `. It can no longer sign in to the account.

If you did this, there is nothing more to do.

If you did not, someone else is signed in to your account: reset your password now` + resetLink + ` and contact support.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>A passkey{{with .PasskeyName}} named &quot;{{.}}&quot;{{end}} was deleted from your account` + atApp + onTime + fromIP + `. It can no longer sign in to the account.</p>
<p>If you did this, there is nothing more to do.</p>
<p>If you did not, someone else is signed in to your account: reset your password now` + resetLinkHTML + ` and contact support.</p>
` + htmlTail,
}

// The code stands on a line of its own, so that a mail client's preview and
// a reader find it at once; it is never in the subject, which notification
// banners show on a locked screen.
var defaultTwoFactorEmailCode = Template{
	Subject: subjectPrefix + `Your sign-in code`,
	Text: greeting + `

Someone signed in to your account` + atApp + onTime + fromIP + ` with your password and asked for a code by email to finish signing in.
{{with .Code}}
Your code: {{.}}
{{end}}
The code works once{{with .ExpiryText}} and expires in {{.}}{{end}}. Never give it to anyone: we will never ask you for it.

If this was not you, someone else knows your password: do not use the code, reset your password now` + resetLink + ` and contact support.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>Someone signed in to your account` + atApp + onTime + fromIP + ` with your password and asked for a code by email to finish signing in.</p>
{{with .Code}}<p>Your code: <strong>{{.}}</strong></p>
{{end}}<p>The code works once{{with .ExpiryText}} and expires in {{.}}{{end}}. Never give it to anyone: we will never ask you for it.</p>
<p>If this was not you, someone else knows your password: do not use the code, reset your password now` + resetLinkHTML + ` and contact support.</p>
` + htmlTail,
}

// A sign-in mail works by its code (typed into the browser that asked) or
// its link (which opens a page that signs in with one button), and says
// so; like the email code it never shows the code in the subject.
var defaultEmailSignIn = Template{
	Subject: subjectPrefix + `Your sign-in code{{with .ExpiryText}} (valid for {{.}}){{end}}`,
	Text: greeting + `

Someone asked to sign in` + atApp + onTime + fromIP + ` with this email address.
{{with .Code}}
Your code: {{.}}
{{end}}{{with .Link}}
Or open this link to sign in:

{{.}}
{{end}}
The code and the link work once{{with .ExpiryText}} and expire in {{.}}{{end}}. Never give them to anyone: we will never ask you for them.

If you did not ask to sign in, you can ignore this email: nobody can sign in without the code.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>Someone asked to sign in` + atApp + onTime + fromIP + ` with this email address.</p>
{{with .Code}}<p>Your code: <strong>{{.}}</strong></p>
{{end}}{{with .Link}}<p>Or open this link to sign in: <a href="{{.}}">{{.}}</a></p>
{{end}}<p>The code and the link work once{{with .ExpiryText}} and expire in {{.}}{{end}}. Never give them to anyone: we will never ask you for them.</p>
<p>If you did not ask to sign in, you can ignore this email: nobody can sign in without the code.</p>
` + htmlTail,
}

var defaultIdentityLinked = Template{
	Subject: subjectPrefix + `{{with .Provider}}{{.}}{{else}}A sign-in provider{{end}} was linked to your account`,
	Text: greeting + `

{{with .Provider}}Your {{.}} account{{else}}An account at a sign-in provider{{end}} was linked to your account` + atApp + onTime + fromIP + `. It can now sign in to the account.

If you did this, there is nothing more to do.

If you did not, someone else is signed in to your account: unlink the provider in your security settings, reset your password now` + resetLink + ` and contact support.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>{{with .Provider}}Your {{.}} account{{else}}An account at a sign-in provider{{end}} was linked to your account` + atApp + onTime + fromIP + `. It can now sign in to the account.</p>
<p>If you did this, there is nothing more to do.</p>
<p>If you did not, someone else is signed in to your account: unlink the provider in your security settings, reset your password now` + resetLinkHTML + ` and contact support.</p>
` + htmlTail,
}

var defaultIdentityUnlinked = Template{
	Subject: subjectPrefix + `{{with .Provider}}{{.}}{{else}}A sign-in provider{{end}} was unlinked from your account`,
	Text: greeting + `

{{with .Provider}}Your {{.}} account{{else}}An account at a sign-in provider{{end}} was unlinked from your account` + atApp + onTime + fromIP + `. It can no longer sign in to the account.

If you did this, there is nothing more to do.

If you did not, someone else is signed in to your account: reset your password now` + resetLink + ` and contact support.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>{{with .Provider}}Your {{.}} account{{else}}An account at a sign-in provider{{end}} was unlinked from your account` + atApp + onTime + fromIP + `. It can no longer sign in to the account.</p>
<p>If you did this, there is nothing more to do.</p>
<p>If you did not, someone else is signed in to your account: reset your password now` + resetLinkHTML + ` and contact support.</p>
` + htmlTail,
}

var defaultAccountDeleted = Template{
	Subject: subjectPrefix + `Your account was deleted`,
	Text: greeting + `

Your account` + atApp + ` was deleted` + onTime + fromIP + `, with its sessions, passkeys and linked sign-ins. This address no longer has an account there.

If you did this, there is nothing more to do.

If you did not, someone else was signed in to your account: contact support at once.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>Your account` + atApp + ` was deleted` + onTime + fromIP + `, with its sessions, passkeys and linked sign-ins. This address no longer has an account there.</p>
<p>If you did this, there is nothing more to do.</p>
<p>If you did not, someone else was signed in to your account: contact support at once.</p>
` + htmlTail,
}

var defaultAPIKeyCreated = Template{
	Subject: subjectPrefix + `An API key was created for your account`,
	Text: greeting + `

An API key{{with .KeyName}} named "{{.}}"{{end}} was created for your account` + atApp + onTime + fromIP + `. Whoever holds it can use the app's API as you{{with .ExpiryText}} for {{.}}{{end}}, until it is revoked.

If you did this, there is nothing more to do.

If you did not, someone else is signed in to your account: revoke the key in your security settings, reset your password now` + resetLink + ` and contact support.
`,
	HTML: htmlHead + `<p>` + greeting + `</p>
<p>An API key{{with .KeyName}} named &quot;{{.}}&quot;{{end}} was created for your account` + atApp + onTime + fromIP + `. Whoever holds it can use the app's API as you{{with .ExpiryText}} for {{.}}{{end}}, until it is revoked.</p>
<p>If you did this, there is nothing more to do.</p>
<p>If you did not, someone else is signed in to your account: revoke the key in your security settings, reset your password now` + resetLinkHTML + ` and contact support.</p>
` + htmlTail,
}
