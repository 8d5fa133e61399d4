package authtest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/clock"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/core/user"
)

// start is the instant every subtest's clock starts at. Its sub-second
// digits (below the millisecond too) catch code that compares times of
// different precision.
var start = time.Date(2031, time.March, 14, 15, 9, 26, 535_897_932, time.UTC)

// appURL is the base of the links in mails.
const appURL = "http://app.test"

// testSecret signs tokens and cookies in every subtest.
const testSecret = "authtest-session-secret-0123456789abcdef"

// Run runs the whole flow suite against h. Every subtest builds its own
// Service on fresh stores and starts it with h.Start.
func Run(t *testing.T, h Harness) {
	if h.Start == nil || h.NewUsers == nil {
		t.Fatal("authtest: Harness.Start and Harness.NewUsers are required")
	}
	s := suite{h: h}
	for _, g := range topics {
		t.Run(g.name, s.topic(g.tests))
	}
}

// topics is the suite, topic by topic: each topic's tests are in the file
// named beside it, one method on suite each, and run in parallel on fresh
// envs. The spec's error table (errors.go) comes last, one test per row.
var topics = []struct {
	name  string
	tests []test
}{
	// twofactor.go: docs/api.md's 2FA setup, confirm, regenerate and disable.
	{"TwoFactorSetup", []test{
		{"setup needs a session", suite.setupNeedsSession},
		{"setup stores an encrypted pending secret and returns qrUri", suite.setupStoresPendingSecret},
		{"a second setup replaces the pending secret", suite.secondSetupReplaces},
		{"confirm without a pending setup", suite.confirmWithoutSetup},
		{"confirm with a wrong code", suite.confirmWrongCode},
		{"confirm enables 2FA and returns 8 recovery codes once", suite.confirmEnables2FA},
		{"setup while enabled is refused", suite.setupWhileEnabledRefused},
		{"regenerate replaces every recovery code", suite.regenerateReplacesCodes},
		{"regenerate and disable need 2FA on", suite.regenerateDisableNeed2FA},
		{"regenerate and disable need a session", suite.regenerateDisableNeedSession},
		{"disable with a wrong password", suite.disableWrongPassword},
		{"disable with the password clears every 2FA field", suite.disableClears2FA},
	}},
	// login.go: docs/api.md's Login, 2FA verify and 2FA recover, and SECURITY.md deviation 2 (TOTP
	// replay).
	{"TwoFactorLogin", []test{
		{"login without 2FA establishes a session", suite.loginWithout2FA},
		{"login with a wrong password or unknown email", suite.loginWrongCredentials},
		{"unknown email and wrong password answer alike", suite.loginFailuresAlike},
		{"login with 2FA sets only the pending cookie", suite.login2FASetsPending},
		{"verify logs in and deletes the pending cookie", suite.verifyLogsIn},
		{"the pending cookie works until it is 5 minutes old", suite.pendingCookieLifetime},
		{"verify without a pending cookie", suite.verifyWithoutPending},
		{"verify with a tampered pending cookie", suite.verifyTamperedPending},
		{"verify after the pending cookie expired", suite.verifyExpiredPending},
		{"verify for a user deleted meanwhile", suite.verifyDeletedUser},
		{"verify after 2FA was disabled meanwhile", suite.verifyAfterDisable},
		{"a password change or logout-all ends a pending login", suite.pendingEndedBySessionBump},
		{"a pending login finishes once: its cookie with another factor is refused", suite.pendingFinishesOnce},
		{"a wrong code keeps the pending cookie", suite.wrongCodeKeepsPending},
		{"the confirming code cannot log in", suite.confirmingCodeCannotLogIn},
		{"a code cannot be used twice in its step", suite.codeOncePerStep},
		{"a used code cannot be replayed in the following step", suite.usedCodeNotReplayedNextStep},
		{"a next-step code cannot be replayed in the next step", suite.nextStepCodeNotReplayed},
		{"recover logs in and spends the code", suite.recoverSpendsCode},
		{"recovery codes are accepted upper case and without the hyphen", suite.recoveryCodeForms},
		{"recover without or with a bad pending cookie", suite.recoverBadPending},
		{"remember gives a 30-day session cookie", suite.rememberThirtyDays},
		{"remember carries through the second factor", suite.rememberThrough2FA},
	}},
	// email.go: docs/api.md's Email verification, Registration and Resend verification.
	{"EmailVerification", []test{
		{"register stores a lowercase unverified user, mails a link and logs in", suite.registerStoresUnverifiedUser},
		{"register with an existing email", suite.registerExistingEmail},
		{"the link verifies the address", suite.verifyLinkVerifies},
		{"an invalid or tampered link", suite.verifyLinkInvalid},
		{"a link works until it is 24 hours old", suite.verifyLinkLifetime},
		{"an expired link", suite.verifyLinkExpired},
		{"a link for a deleted user", suite.verifyLinkDeletedUser},
		{"a link issued before an email change; the change's own link works at once", suite.verifyLinkBeforeChange},
		{"a link issued before a change back to the same address", suite.verifyLinkBeforeChangeBack},
		{"resend needs a session", suite.resendNeedsSession},
		{"resend mails a fresh link; form posts work", suite.resendMailsFreshLink},
		{"resend when verified sends nothing", suite.resendWhenVerified},
	}},
	// changeemail.go: docs/api.md, Change email.
	{"ChangeEmail", []test{
		{"needs a session", suite.changeEmailNeedsSession},
		{"wrong password", suite.changeEmailWrongPassword},
		{"an address in use, compared lowercase", suite.changeEmailAddressInUse},
		{"changes the address, mails both, ends other sessions", suite.changeEmailChanges},
	}},
	// reset.go: docs/api.md's Forgot password and Reset password.
	{"PasswordReset", []test{
		{"forgot for an unknown email answers the same and mails nothing", suite.forgotUnknownEmail},
		{"forgot mails a one-hour reset link", suite.forgotMailsResetLink},
		{"passwords that differ", suite.resetPasswordsDiffer},
		{"an invalid or tampered link", suite.resetLinkInvalid},
		{"a link works until it is one hour old", suite.resetLinkLifetime},
		{"an expired link", suite.resetLinkExpired},
		{"reset replaces the password once and ends older sessions", suite.resetReplacesPassword},
		{"an older link dies when a newer one is used", suite.resetOlderLinkDies},
		{"a link for a deleted user", suite.resetLinkDeletedUser},
		{"a form post resets", suite.resetByFormPost},
		{"a new password the policy refuses", suite.resetPolicyRefuses},
		{"a reset leaves 2FA on", suite.resetLeaves2FA},
		{"forgot answers known, unknown and over-limit addresses alike", suite.forgotAnswersAlike},
		{"sessions made in the reset's second: before it end, after it live", suite.sessionsInResetSecond},
	}},
	// account.go: docs/api.md "Routes beyond the spec": logout, logout-all, me and change-password.
	{"AccountRoutes", []test{
		{"logout always answers 200 and clears both cookies", suite.logoutClearsCookies},
		{"logout-all ends every session of the user", suite.logoutAllEndsSessions},
		{"me: 401 without a session, the safe view with one", suite.meSafeView},
		{"a session cookie that is not a token is no session", suite.sessionCookieNotToken},
		{"a session ends 24 hours after login, 30 days with remember", suite.sessionLifetime},
		{"a login upgrades an old hash without ending sessions", suite.loginUpgradesHash},
		{"change-password", suite.changePassword},
	}},
	// reauth.go: re-authentication (SECURITY.md deviation 12): 2FA setup, confirm and regenerate
	// need an authentication within Config.ReauthWindow, POST /api/auth/confirm-password renews
	// it, and a correct current password counts as one.
	{"Reauthentication", []test{
		{"registration and every login are recent authentications", suite.reauthFreshSessionsPass},
		{"setup, confirm and regenerate refuse a stale session and change nothing", suite.reauthStaleRefused},
		{"confirm-password makes the session recent for the window", suite.reauthConfirmPasswordRenews},
		{"confirm-password with a wrong password changes nothing", suite.reauthConfirmPasswordWrong},
		{"confirm-password needs a session", suite.reauthConfirmPasswordNeedsSession},
		{"confirm-password shares the password re-entry limit", suite.reauthConfirmPasswordLimited},
		{"the current password of disable, change-email and change-password counts", suite.reauthPasswordRoutesCount},
		{"a cookie without the time signs in but is never recent", suite.reauthOldCookie},
		{"a negative ReauthWindow switches it off", suite.reauthOff},
		{"a confirmation racing a stale session's requests never lets them through", suite.reauthRace},
		{"confirming the password never extends a session past its lifetime", suite.reauthKeepsLifetime},
		{"on a 2FA account re-authentication needs the second factor too", suite.reauthTwoFactorNeedsCode},
	}},
	// deletion.go: account deletion and export: re-authentication, the second factor and its
	// limit, everything erased, racing deletions, the app's hook, no secret in the export.
	{"AccountDeletion", []test{
		{"deletion needs a recent authentication or the password", suite.deleteNeedsRecentAuth},
		{"the password of a deletion is limited", suite.deletePasswordLimited},
		{"on a 2FA account deletion needs the second factor, within the 2FA limit", suite.deleteTwoFactorNeedsCode},
		{"deletion erases everything, mails and audits once; the address is free again", suite.deleteErasesEverything},
		{"50 racing deletions: one wins", suite.deleteRace},
		{"the before-delete hook vetoes with its error or account_deletion_blocked", suite.deleteHook},
		{"the export needs a recent authentication and holds no secret", suite.exportNoSecrets},
	}},
	// sessions.go: server-side session records (Config.Sessions, Harness.NewSessions): the list
	// and ending one, logout and the changes that end sessions ending their records, the idle
	// timeout, and a session ended while in use.
	{"Sessions", []test{
		{"with stateless sessions the routes answer 404", suite.sessionsOffWithoutStore},
		{"the routes need a session", suite.sessionsNeedSession},
		{"the list shows every session newest first, the current one marked", suite.sessionsList},
		{"last use is written at most once a minute", suite.sessionsLastSeen},
		{"ending the current session logs out every copy of its cookie", suite.sessionsEndCurrent},
		{"logout ends the record: a copy taken before answers 401", suite.sessionsLogoutEndsCopies},
		{"re-authentication retires the cookie it came with: a copy taken before answers 401", suite.sessionsReauthRetiresCookie},
		{"ending another session needs a recent authentication", suite.sessionsEndOtherNeedsReauth},
		{"another user's or an unknown id answers 404 and ends nothing", suite.sessionsOthersNotFound},
		{"password change, email change and 2FA disable keep only the current record", suite.sessionsChangesKeepCurrent},
		{"password reset and logout-all end every record", suite.sessionsResetAndLogoutAllEndAll},
		{"the idle timeout ends sessions not used for that long", suite.sessionsIdleTimeout},
		{"by default 30 minutes idle end a session, not a remembered one", suite.sessionsIdleByDefault},
		{"a session ended while in use never stays alive", suite.sessionsEndRace},
		{"a change saved as its session is ended is mailed, audited and answered as done", suite.signOutDuringChange},
		{"a sign-out racing a change: saved and notified, or refused, never a server error", suite.signOutRacesChange},
		{"a login past MaxSessionsPerUser ends the oldest session", suite.sessionsBounded},
	}},
	// trusted.go: trusted devices (Config.TrustedDevices, a second record store from
	// Harness.NewSessions): trustDevice at the second step, the list, forgetting one, and the
	// changes that end them all.
	{"TrustedDevices", []test{
		{"without a trusted-device store the flag is ignored and the routes answer 404", suite.trustedOffWithoutStore},
		{"verify with trustDevice spares that browser the second step", suite.trustedVerifySkipsSecondStep},
		{"recover with trustDevice trusts too", suite.trustedRecover},
		{"the trust ends after 30 days", suite.trustedLifetime},
		{"the list, another user's id, forgetting one", suite.trustedListAndForget},
		{"password reset, logout-all, 2FA disable and password change end every trust", suite.trustedEndedByChanges},
		{"a trusted cookie is its user's only and must verify", suite.trustedCookieIsTheUsers},
	}},
	// emailcode.go: email codes (Config.EmailCode, off by default), a fallback second factor:
	// send, verify, wrong, expired, replayed and another login's codes, the limits, an unverified
	// address, the routes off, and racing verifies of one code.
	{"EmailCodes", []test{
		{"off by default: the routes answer 404 and mail nothing", suite.emailCodeOffByDefault},
		{"send mails a 6-digit code to the verified address; verify signs in and spends it", suite.emailCodeSendAndVerify},
		{"wrong codes keep the pending cookie and share the 2FA limit with TOTP", suite.emailCodeWrongCodeSharesLimit},
		{"a code expires after its lifetime", suite.emailCodeExpires},
		{"a code works once", suite.emailCodeOnce},
		{"a code mailed for one login cannot finish another", suite.emailCodeBoundToLogin},
		{"a new send replaces the old code", suite.emailCodeNewSendReplaces},
		{"sending: 3 per 15 minutes per user", suite.emailCodeSendLimited},
		{"an unverified address gets no code", suite.emailCodeNeedsVerifiedAddress},
		{"send and verify need a pending login", suite.emailCodeNeedsPendingLogin},
		{"remember carries through the email code", suite.emailCodeRemember},
		{"trustDevice at the email-code step trusts the browser", suite.emailCodeTrustsDevice},
		{"50 browsers verify one mailed code: one session", suite.raceEmailCode},
	}},
	// notices.go: the mails that tell the account of 2FA turned on, recovery codes replaced or used,
	// and a sign-in from a browser without its device cookie.
	{"Notices", []test{
		{"2FA turned on mails a notice", suite.noticeTwoFactorEnabled},
		{"regenerated codes mail a notice", suite.noticeCodesRegenerated},
		{"a used recovery code mails how many are left", suite.noticeRecoveryCodeUsed},
		{"a sign-in from a new browser mails once, a known one never", suite.noticeNewDevice},
		{"with 2FA the new-device notice follows the second step", suite.noticeNewDeviceTwoFactor},
		{"a spent code from an unknown browser mails the holder, a double submit does not", suite.noticeCodeReused},
		{"a device cookie counts only for its user, while it verifies", suite.noticeDeviceCookieBound},
		{"an account's first sign-in under authkit is no new device", suite.noticeFirstSignIn},
		{"a client without a cookie jar gets one new-device notice an hour", suite.noticeNewSignInLimit},
		{"notices are mailed in the visit's language", suite.noticesInGerman},
	}},
	// breached.go: Config.PasswordChecker (ASVS 2.1.7) with the range API client against a local
	// server that speaks it and a list of common passwords.
	{"BreachedPasswords", []test{
		{"registration refuses a breached or common password", suite.breachedRegister},
		{"reset and change refuse a breached or common password", suite.breachedResetAndChange},
		{"an unreachable API lets passwords through unless the app fails closed", suite.breachedAPIDown},
	}},
	// policy.go: Config.PasswordPolicy set to password.NIST() (NIST SP 800-63B rev. 4): the minimum
	// length by the account's factors, context words refused on every route that sets a password.
	{"PasswordPolicy", []test{
		{"NIST: 15 characters without 2FA, 8 with it", suite.policyLengthByFactors},
		{"NIST: the app's name, the address and the name are refused", suite.policyContextWords},
	}},
	// limits.go: docs/api.md "Rate limits": the 429 body and headers and each default limit, and
	// deviation 4 with its refund: a correct password gives back its own attempt on the address
	// key.
	{"RateLimits", []test{
		{"login: 10 per 15 minutes per address", suite.limitLoginIP},
		{"login: 5 per 15 minutes per email", suite.limitLoginEmail},
		{"login success resets the email key and refunds only its own attempt on the address key", suite.limitLoginSuccessRefunds},
		{"login: correct passwords never count against the address", suite.limitCorrectPasswordsFree},
		{"login: the password step of a 2FA login is refunded too", suite.limit2FAPasswordStepRefunded},
		{"login: an attacker's own logins buy no guesses", suite.limitOwnLoginsBuyNoGuesses},
		{"register: 3 per hour per address", suite.limitRegister},
		{"forgot password: 5 per 15 minutes per address", suite.limitForgotIP},
		{"forgot password: 3 per 15 minutes per email, silently", suite.limitForgotEmail},
		{"resend: 3 per 15 minutes per user", suite.limitResend},
		{"2FA: 5 per 5 minutes per user, verify and recover alike", suite.limitTwoFactor},
		{"password re-entry: 5 per 15 minutes per user", suite.limitPasswordReentry},
	}},
	// limitfull.go: what a full in-memory limit store does, per key kind (SECURITY.md deviation
	// 10): a new client address is limited (the spec's rule), a new email address is let through
	// uncounted, so filling a store with made-up addresses locks no one out and silences no mail;
	// and each full store is reported at most once a minute.
	{"FullLimitStores", []test{
		{"a full login email store still lets the owner log in", suite.fullLoginEmailStore},
		{"a full reset email store still mails the reset link", suite.fullResetEmailStore},
		{"a full address store limits new addresses", suite.fullAddressStore},
	}},
	// clientip.go: the client address (docs/api.md, Rate limits) with deviation 3: which address
	// keys the limits.
	{"ClientIP", []test{
		{"an untrusted peer is keyed by its socket address", suite.ipUntrustedPeer},
		{"behind a trusted proxy the walk from the right picks the client", suite.ipTrustedProxy},
		{"TrustAll takes the leftmost entry", suite.ipTrustAll},
		{"IPv6 clients are keyed by their /64", suite.ipIPv6Prefix},
	}},
	// lockout.go: Config.Lockout: consecutive failures lock the account, whatever the rate limits
	// allow; with a small Lockout, and with the default one (100 consecutive failures, one hour,
	// audited).
	{"Lockout", []test{
		{"the right password is refused while locked; an hour later it works", suite.lockedRefusesRightPassword},
		{"a password reset unlocks", suite.resetUnlocks},
		{"a success clears the count", suite.lockoutSuccessClearsCount},
		{"100 consecutive failures lock for an hour, alike and audited once", suite.defaultLockout},
		{"a password reset lifts the default lock", suite.resetLiftsDefaultLock},
	}},
	// tokens.go: ARCHITECTURE.md "Tokens": a token made for one purpose never verifies for another.
	{"PurposeBinding", []test{
		{"other tokens as a verification link", suite.tokenAsVerifyLink},
		{"other tokens as a reset link", suite.tokenAsResetLink},
		{"other tokens as the 2fa_pending cookie", suite.tokenAsPendingCookie},
		{"other tokens as the session cookie", suite.tokenAsSessionCookie},
	}},
	// crossorigin.go: docs/api.md "Cross-origin requests": cross-origin browser requests to
	// state-changing routes are refused and change nothing.
	{"CrossOrigin", []test{
		{"Sec-Fetch-Site cross-site is refused", suite.crossSiteRefused},
		{"a foreign Origin without Sec-Fetch-Site is refused", suite.foreignOriginRefused},
		{"same-origin and header-less requests pass", suite.sameOriginPasses},
		{"a trusted origin passes", suite.trustedOriginPasses},
		{"safe methods pass cross-site", suite.safeMethodsPass},
	}},
	// cookies.go: the Secure attribute, which the other subtests cannot see (they run with Insecure
	// so that the cookie jar sends cookies over http): docs/api.md "Cookies" (Secure unless
	// Config.Insecure) and the session cookie.
	{"Cookies", []test{
		{"cookies are Secure unless Insecure", suite.cookiesSecureUnlessInsecure},
	}},
	// input.go: docs/api.md "Request bodies": every POST route that reads a body refuses malformed
	// ones with a 4xx JSON error and changes nothing. The hostile corpus (hostileBodies,
	// hostileHeaders, hostileTokens) goes to every route of the Service, and hostile addresses and
	// names to the routes that take them: whatever a route does with it, it never answers 5xx,
	// never hangs, answers every refusal with a JSON {"error"} (but a request that never reaches an
	// authkit route), and mails nothing hostile.
	{"Input", []test{
		{"every route that takes a body", suite.refusesBadBodies},
		{"remember must be a boolean", suite.rememberMustBeBoolean},
		{"huge path tokens", suite.hugePathTokens},
		{"the hostile corpus on every route", suite.hostileEveryRoute},
		{"addresses: huge, multi-line, with a header, refused on every route that takes one", suite.hostileAddresses},
		{"names with line breaks never reach a mail header", suite.hostileNames},
	}},
	// emailsignin.go: sign-in by a mailed code or link (Config.EmailSignIn, off by default).
	// tokenmode.go: Config.Tokens, the same flows for clients without cookies.
	{"TokenMode", []test{
		{"login answers tokens, not cookies, and the access token is a session", suite.tokenLogin},
		{"a second step takes the pending token and answers tokens", suite.tokenSecondStep},
		{"a refresh rotates; a retired refresh token ends the session, audited, no mail", suite.tokenRefreshReuse},
		{"of 50 refreshes with one token exactly one succeeds", suite.tokenRefreshRace},
		{"logout and a password reset end a token session; the list shows it", suite.tokenSessionEnds},
		{"a change in the session renews its tokens and ends the others", suite.tokenChangeRenews},
		{"a request without cookies needs no cross-origin check; one with cookies keeps it", suite.tokenCrossOrigin},
		{"without Config.Tokens nothing changes and there is no refresh route", suite.tokensOff},
		{"a browser sign-in handed off to a native app is exchanged once, with its PKCE verifier", suite.tokenHandOff},
		{"a hand-off of a 2FA account carries the pending second step", suite.tokenHandOffSecondStep},
	}},
	{"EmailSignIn", []test{
		{"off by default: the routes answer 404 and mail nothing", suite.emailSignInOffByDefault},
		{"a mailed code signs in, verifies the address and ends the browser binding", suite.emailSignInByCode},
		{"a spent code cannot be replayed from a copy of the browser", suite.emailSignInReplay},
		{"the mailed link signs in by POST only, once", suite.emailSignInByLink},
		{"code and link work only in the browser that asked", suite.emailSignInBoundToBrowser},
		{"AnyBrowser lets the link finish elsewhere", suite.emailSignInAnyBrowser},
		{"a new request replaces the old code", suite.emailSignInNewRequestReplaces},
		{"code and link expire after 10 minutes", suite.emailSignInExpires},
		{"guessing: 5 wrong codes per address, then 429 even for the right one", suite.emailSignInGuessingLimited},
		{"requests: 3 mails per address, 5 requests per client address", suite.emailSignInRequestsLimited},
		{"known, unknown and over-limit addresses answer alike", suite.emailSignInAnswersAlike},
		{"an unknown address signs up: verified, no password", suite.emailSignInSignsUp},
		{"with registration off an unknown address gets no mail", suite.emailSignInNoSignUpWithoutRegistration},
		{"BeforeRegister vetoes a sign-up by email", suite.emailSignInBeforeRegisterVetoes},
		{"a 2FA account still takes its second step", suite.emailSignInTwoFactor},
		{"the owner's sign-in by email claims an unverified account: password and 2FA gone", suite.emailSignInClaimsUnverified},
		{"50 browsers verify one code: one session", suite.raceEmailSignIn},
	}},
	// apikeyflow.go: personal API keys (Config.APIKeys, off by default).
	{"APIKeys", []test{
		{"off by default: the routes answer 404", suite.apiKeysOffByDefault},
		{"create, use on the app's route only, list, revoke", suite.apiKeyLifecycle},
		{"bad input, the bound and an old sign-in change nothing", suite.apiKeyBadInput},
		{"a password reset ends every key", suite.apiKeysEndWithReset},
		{"50 creates at the bound, 50 revokes of one key", suite.raceAPIKeys},
	}},
	// secondstep.go: authkit's second step behind the app's own password check (Service.StartSecondStep).
	{"AppSecondStep", []test{
		{"an account without 2FA gets authkit's session", suite.appStepNoTwoFactor},
		{"a 2FA account takes authkit's second step, then gets authkit's session", suite.appStepTwoFactor},
		{"OwnSession: the verified user goes to the app, no authkit session", suite.appStepOwnSession},
		{"OwnSession: wrong codes count against the 2FA limit", suite.appStepOwnSessionLimited},
		{"an unknown user id answers 401", suite.appStepUnknownUser},
	}},
	// races.go: ARCHITECTURE.md "Stores": whatever changes security state under concurrency is one
	// conditional store operation, so of several identical requests racing, exactly one wins. The
	// races at full size (proof under attack) raise the rate limits but for the one
	// under test, so that every racer reaches the store's conditional update, and check every
	// loser's exact status and text.
	{"Races", []test{
		{"one TOTP code, many browsers", suite.oneTOTPCodeManyBrowsers},
		{"one recovery code, many browsers", suite.oneRecoveryCodeManyBrowsers},
		{"one reset link, many new passwords", suite.oneResetLinkManyPasswords},
		{"one address, many registrations", suite.oneAddressManyRegistrations},
		{"one new address, many accounts", suite.oneNewAddressManyAccounts},
		{"one setup, many confirmations", suite.oneSetupManyConfirmations},
		{"the 2FA limit holds under concurrency", suite.twoFactorLimitUnderConcurrency},
		{"the login email limit holds under concurrency", suite.loginEmailLimitUnderConcurrency},
		{"50 browsers verify one TOTP code: one session", suite.raceVerifyOneCode},
		{"50 browsers spend one recovery code: one success, the code is gone", suite.raceSpendRecoveryCode},
		{"50 second steps of one pending login, each with its own factor: one session, one factor spent", suite.raceOnePendingLogin},
		{"20 uses of one reset link: one password change", suite.raceResetLink},
		{"50 bad logins against a limit of 5: at most 5 password checks", suite.raceBadLogins},
		{"two email changes at once: a link never verifies the other address", suite.raceEmailChanges},
		{"a verification link racing an email change never verifies the new address", suite.raceVerifyAndChangeEmail},
		{"two confirmations and a new setup at once: 2FA fully on or unchanged", suite.raceConfirmAndSetup},
	}},
	// hardening.go: what a review from outside found, as kinds of tests that keep each class fixed:
	// the 405 answer and the Cache-Control: no-store of every path, side-channel parity of failed
	// logins and forgot-password requests (the hasher calls and store calls each outcome makes,
	// recorded, never timed), and interleaving injection (a concurrent change made to the account
	// just before each conditional store call of a login).
	{"Hardening", []test{
		{"every path answers the methods it does not serve with 405 and Allow", suite.methodNotAllowed},
		{"every route answers Cache-Control: no-store", suite.noStore},
		{"failed logins make the same calls, account or not", suite.loginParity},
		{"forgot-password makes the same calls whatever the address", suite.forgotParity},
		{"an account without a password hash answers like an unknown email", suite.passwordlessAccount},
		{"a change just before a login's store call never leaves an old login's session", suite.interleaving},
	}},
	// extend.go: what an app changes without forking: features switched off, the optional name,
	// extra registration fields and the hooks.
	{"Extending", []test{
		{"a disabled feature's routes answer 404 and change nothing", suite.disabledFeatures},
		{"NameOptional registers without a name and still checks a given one", suite.nameOptional},
		{"BeforeRegister vetoes with the app's error; AfterRegister sees what it kept", suite.beforeRegisterVetoes},
		{"a failing AfterRegister leaves nothing", suite.afterRegisterFails},
		{"AfterLogin vetoes a password login and a second step", suite.afterLoginVetoes},
		{"the change hooks run once the change is stored", suite.changeHooks},
	}},
	// language.go: translations (Config.Catalog, with the German catalog authkit ships): a request
	// whose Accept-Language prefers German gets its error texts, messages and mails in German with
	// the same codes; every other request, and every request without a catalog, gets the spec's
	// English.
	{"Languages", []test{
		{"German is answered, mailed and limited in German", suite.germanRouteAndMail},
		{"without a catalog Accept-Language changes nothing", suite.englishWithoutOptIn},
	}},
	// advisories.go: the classes of bug the advisories of comparable projects show recurring, one
	// case each (SECURITY.md "Advisories of comparable projects").
	{"Advisories", advisoryTests},
	// parts.go: a store of three parts (RunParts runs it on an app's own).
	{"StoreOfSomeParts", partsTests},
	{"SpecErrors", specErrorTests},
}

// suite carries the harness to the subtests.
type suite struct {
	h     Harness
	parts *PartsHarness // RunParts's store of some parts; nil in Run
}

// test is one behaviour of a topic: a name that says what it checks, and
// the check, which runs in parallel with the others on a fresh env.
type test struct {
	name string
	run  func(suite, *testing.T)
}

// topic returns the subtest that runs tests, one parallel subtest each.
func (s suite) topic(tests []test) func(*testing.T) {
	return func(t *testing.T) {
		t.Parallel()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				tt.run(s, t)
			})
		}
	}
}

// option changes the Config of one subtest's Service.
type option func(*auth.Config)

// stateless asks for stateless session cookies (no records, whatever the
// user store offers), for subtests about cookies made without a record.
func stateless(c *auth.Config) { c.StatelessSessions, c.Sessions = true, nil }

// noIdle switches the idle timeout off, for subtests about the lifetimes
// that move the clock on for hours between a session's requests.
func noIdle(c *auth.Config) { c.SessionIdleTimeout = -1 }

// relaxed raises every rate limit far above what a subtest uses, for
// subtests about something else that log in more often than the spec's
// limits allow.
func relaxed(c *auth.Config) {
	big := auth.Limit{Max: 1000, Window: time.Hour}
	c.Limits = auth.Limits{LoginIP: big, LoginEmail: big, Register: big, ResetIP: big,
		ResetEmail: big, Resend: big, TwoFactor: big, Password: big, EmailCode: big, NewSignInNotice: big,
		EmailSignInIP: big, EmailSignInEmail: big, EmailSignInVerify: big, APIKey: big}
}

// env is one subtest's world: a Service on fresh stores, served by the
// harness, with the clock, store, mailer and audit log it uses.
type env struct {
	t     *testing.T
	h     Harness
	clock *Clock
	users user.Store // nil in an env on a store of only some parts (parts.go)
	// accounts is the store as auth.Config.Users holds it: users, or a
	// store of some parts, read by user, byID and noUser.
	accounts user.Accounts
	seedFn   storetest.Seed // how seed makes a user without user.Registration
	mail     *mail.Capture
	audit    *AuditLog
	svc      *auth.Service
	base     string
	totp     *totp.TOTP
	tr       *http.Transport // shared by the env's browsers
	fast     bool            // the Service hashes with dualHasher (Harness.FastHashing): seed makes fast hashes
}

// env builds and starts a Service with the suite's defaults changed by
// opts.
func (s suite) env(t *testing.T, opts ...option) *env {
	t.Helper()
	return s.envWithRoutes(t, nil, opts...)
}

// envWithRoutes is env whose Service also serves routes (an app's own,
// added with Modules.AddRoutes before the harness starts it).
func (s suite) envWithRoutes(t *testing.T, routes func(*auth.Service) []auth.Route, opts ...option) *env {
	t.Helper()
	e := &env{t: t, h: s.h, clock: clock.New(start), mail: &mail.Capture{}, audit: &AuditLog{}}
	e.users = s.h.NewUsers(t)
	e.accounts = e.users
	cfg := baseConfig(t, e.users, e.mail, e.clock.Now)
	cfg.Audit = e.audit.Record
	if s.h.FastHashing {
		cfg.Hasher, cfg.RecoveryHasher = dualHasher{}, dualHasher{}
	}
	if s.h.NewLimitStore != nil {
		cfg.LimitStore = func(name string) ratelimit.Store { return s.h.NewLimitStore(t, e.clock.Now, name) }
	}
	for _, o := range opts {
		o(&cfg)
	}
	e.start(t, s, cfg, routes)
	return e
}

// start builds e's Service from cfg, adds routes (when not nil) and serves
// it with the harness; the Service is closed when the test ends.
func (e *env) start(t *testing.T, s suite, cfg auth.Config, routes func(*auth.Service) []auth.Route) {
	t.Helper()
	_, e.fast = cfg.Hasher.(dualHasher)
	var err error
	if e.svc, err = auth.New(cfg); err != nil {
		t.Fatalf("authtest: auth.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.svc.Close(ctx); err != nil {
			t.Errorf("authtest: Service.Close: %v", err)
		}
	})
	if routes != nil {
		if err := e.svc.Modules().AddRoutes(routes(e.svc)...); err != nil {
			t.Fatalf("authtest: AddRoutes: %v", err)
		}
	}
	if e.totp, err = totp.New(totp.Config{Now: e.clock.Now}); err != nil {
		t.Fatalf("authtest: totp: %v", err)
	}
	e.base = s.h.Start(t, e.svc)
	// Registered after Start, so it runs before the server stops: a
	// graceful shutdown then has no idle or never-used connection of ours
	// to wait for.
	e.tr = http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(e.tr.CloseIdleConnections)
}

// skipRealTime skips a subtest that moves the clock past a rate-limit
// window when the limit store keeps its own time.
func (e *env) skipRealTime() {
	e.t.Helper()
	if e.h.RealTimeLimits {
		e.t.Skip("authtest: the rate-limit store keeps its own time (Harness.RealTimeLimits)")
	}
}
