package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/e2e/servertest"
)

// Timeout bounds every single browser step (a navigation, a click, a wait
// for the page to show something), so a broken page fails the test in
// seconds instead of hanging it.
const Timeout = 10 * time.Second

// Chromium returns the path of the Chromium binary: AUTHKIT_CHROMIUM if set,
// else chromium on PATH. Without one it skips t, naming the package to
// install, or fails it when AUTHKIT_REQUIRE_SERVICES=1.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("AUTHKIT_CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err == nil {
		return p
	}
	storetest.SkipMissing(t, "chromium", "chromium not found on PATH (install Debian's package chromium, or set AUTHKIT_CHROMIUM)")
	return ""
}

// Browser is one headless Chromium with a fresh profile and one tab. Its
// methods fail the test on any error, naming the step; none may be called
// from another goroutine than the test's.
type Browser struct {
	t         *testing.T
	ctx       context.Context // the tab
	shotDir   string
	pictures  bool // AUTHKIT_SCREENSHOTS=1: Shot saves a picture of every step
	shots     int
	downloads string

	mu       sync.Mutex
	problems []string // console errors, exceptions, CSP violations not yet reported
	where    string   // "after step NN-name", the last Shot, for problem reports
}

// New gives the test a fresh browser: a new incognito browser context (its
// own cookies, storage and permissions, one tab in a 1280x900 window) of a
// headless Chromium (no sandbox, no GPU, no background traffic) that no
// other running test uses, disposed of when the test ends. The Chromiums
// outlive their tests, idle until the next test takes one, and stop when
// [CloseAll] runs: a context is as empty as a new profile, and a start per
// test cost a few seconds each on a loaded two-core machine. name is the
// folder of its screenshots under artifacts/screenshots/ (see [Browser.Shot]);
// the folder is emptied first so it shows only this run. If the test fails,
// the page as it is then is saved there as NN-failed.png. extra adds flags,
// such as [MapHost]; each set of flags has a browser of its own.
func New(t *testing.T, name string, extra ...Flag) *Browser {
	t.Helper()
	bin := Chromium(t)
	b := &Browser{t: t, shotDir: filepath.Join(ArtifactsDir(t), "screenshots", name), downloads: t.TempDir(),
		pictures: os.Getenv("AUTHKIT_SCREENSHOTS") == "1", where: "before the first step"}
	if err := os.RemoveAll(b.shotDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(b.shotDir, 0o755); err != nil {
		t.Fatal(err)
	}

	// take registers the browser's return first, so it runs after the
	// context's cancel (cleanups run last first): the browser goes back
	// idle with the test's context disposed of.
	parent := take(t, bin, extra)
	ctx, cancel := chromedp.NewContext(parent.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// The first action opens the context and its tab; the browser is up, so
	// this takes a moment, bounded like every other step.
	opened := make(chan error, 1)
	go func() { opened <- chromedp.Do(ctx) }()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatalf("open a browser context: %v", err)
		}
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("open a browser context: no answer within 30s")
	}
	c := chromedp.FromContext(ctx)
	if err := sizeWindow(ctx, c.Target.TargetID); err != nil {
		t.Fatalf("size the window: %v", err)
	}
	b.ctx = ctx
	if err := chromedp.Listen(ctx, b.observe); err != nil {
		t.Fatal(err)
	}
	_, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		BrowserContextID: c.BrowserContextID,
		Behavior:         browser.SetDownloadBehaviorBehaviorAllow,
		DownloadPath:     b.downloads,
		EventsEnabled:    ptr(true),
	})
	if err != nil {
		t.Fatalf("set download behaviour: %v", err)
	}
	// Report what the pages did wrong even when the test stops early, and
	// keep a picture of the page a failed test left (cleanups run last
	// first: this one before the context is disposed of).
	t.Cleanup(b.NoProblems)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		b.shots++
		path := filepath.Join(b.shotDir, fmt.Sprintf("%02d-failed.png", b.shots))
		if err := b.capture(path); err != nil {
			t.Logf("screenshot of the failed test's page: %v", err)
			return
		}
		t.Logf("the page as the test failed: %s", path)
	})
	return b
}

func ptr[T any](v T) *T { return &v }

// failedLoad matches the browser's log line for an HTTP error answer with
// a 4xx status: the pages answer a form's error with the page and the
// error's status (a wrong password is a 401, a bad link a 400, an unknown
// page a 404), which the tests check themselves; they are not faults.
var failedLoad = regexp.MustCompile(`^Failed to load resource: the server responded with a status of 4\d\d\b`)

// observe runs inside chromedp's read loop for every event of the tab: it
// must be quick and must not call the browser.
func (b *Browser) observe(ev any) {
	var problem string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		switch ev.Type {
		case runtime.ConsoleAPICalledTypeError, runtime.ConsoleAPICalledTypeWarning, runtime.ConsoleAPICalledTypeAssert:
			var parts []string
			for _, a := range ev.Args {
				if a.Value != nil {
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			problem = fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(parts, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			text += " " + d.Exception.Description
		}
		problem = fmt.Sprintf("uncaught exception at %s:%d: %s", d.URL, d.LineNumber+1, text)
	case *log.EventEntryAdded:
		e := ev.Entry
		if e.Level != log.EntryLevelError && e.Level != log.EntryLevelWarning {
			return
		}
		if e.Source == log.EntrySourceNetwork && failedLoad.MatchString(e.Text) {
			return
		}
		problem = fmt.Sprintf("%s %s (%s): %s", e.Source, e.Level, e.URL, e.Text)
	default:
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, b.where+": "+problem)
}

// Problems returns the console errors and warnings, uncaught exceptions and
// browser log errors (CSP violations among them) seen since the last call,
// each naming the screenshot taken before it. HTTP 4xx answers are not
// problems: they are the pages' answers to a form's error.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.problems
	b.problems = nil
	return p
}

// NoProblems reports each of Problems as a test error.
func (b *Browser) NoProblems() {
	b.t.Helper()
	for _, p := range b.Problems() {
		b.t.Errorf("page problem: %s", p)
	}
}

// do runs steps with the step timeout and fails the test on error.
func (b *Browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s (at %s): %v", what, b.location(), err)
	}
}

// call sends the tab one DevTools command, cmd with params, within Timeout
// and returns its result; if it fails, the test fails, naming what.
func call[P, R any](b *Browser, what string, cmd cdp.Command[P, R], params P) R {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	res, err := chromedp.Call(ctx, cmd, params)
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	return res
}

// location is the tab's URL, for error messages.
func (b *Browser) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	defer cancel()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		return "unknown location: " + err.Error()
	}
	return loc
}

// Open navigates to u and waits for the page to load.
func (b *Browser) Open(u string) {
	b.t.Helper()
	b.do("open "+u, chromedp.Navigate(u))
}

// Flag is a command-line flag of Chromium for [New]; tests that give the
// same flags share a browser.
type Flag struct {
	key string // what tells browsers of different flags apart
	opt chromedp.ExecAllocatorOption
}

// MapHost is a flag for [New] that makes Chromium resolve host to
// 127.0.0.1, so that a test can open a server on a name that is not a
// loopback address (where Secure cookies are dropped over plain HTTP).
// It also turns off Chromium's automatic upgrades of http:// URLs to
// https://.
func MapHost(host string) Flag {
	return Flag{key: "map " + host, opt: func(a *chromedp.ExecAllocator) {
		chromedp.Flag("host-resolver-rules", "MAP "+host+" 127.0.0.1")(a)
		chromedp.Flag("disable-features", "HttpsUpgrades,HttpsFirstBalancedModeAutoEnable")(a)
	}}
}

// browsers are the test process's idle Chromiums, by their flags: a test
// takes one (or starts one when none is idle) and gives it back when it
// ends. Tests running at the same time so never share a browser, whose
// clipboard and download events are the whole process's; tests one after
// the other do, each in a context of its own. CloseAll stops them.
var browsers = struct {
	sync.Mutex
	idle map[string][]*running
	all  []*running
}{idle: map[string][]*running{}}

// running is one Chromium of the test process.
type running struct {
	ctx    context.Context // its first context; New's contexts are its children
	cancel func()
}

// take returns an idle Chromium for the flags extra, or starts one (a
// profile in a temporary folder of its own, removed by CloseAll), and
// gives it back when t ends.
func take(t *testing.T, bin string, extra []Flag) *running {
	t.Helper()
	keys := make([]string, len(extra))
	for i, f := range extra {
		keys[i] = f.key
	}
	key := strings.Join(keys, ",")
	giveBack := func(r *running) {
		t.Cleanup(func() {
			browsers.Lock()
			defer browsers.Unlock()
			if r.ctx.Err() == nil { // still running
				browsers.idle[key] = append(browsers.idle[key], r)
			}
		})
	}
	browsers.Lock()
	if n := len(browsers.idle[key]); n > 0 {
		r := browsers.idle[key][n-1]
		browsers.idle[key] = browsers.idle[key][:n-1]
		browsers.Unlock()
		giveBack(r)
		return r
	}
	browsers.Unlock()

	profile, err := os.MkdirTemp("", "authkit-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(profile),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1280, 900),
	)
	for _, f := range extra {
		opts = append(opts, f.opt)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	r := &running{ctx: ctx, cancel: func() {
		cancel()
		cancelAlloc()
		_ = os.RemoveAll(profile)
	}}
	browsers.Lock()
	browsers.all = append(browsers.all, r)
	browsers.Unlock()
	// The first action starts the browser and binds its life to ctx, so it
	// runs without a deadline; a start that hangs is bounded here instead.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			r.cancel()
			t.Fatalf("start %s: %v", bin, err)
		}
	case <-time.After(30 * time.Second):
		r.cancel()
		t.Fatalf("start %s: no answer within 30s", bin)
	}
	giveBack(r)
	return r
}

// CloseAll stops the Chromiums that New started. A test binary calls it
// once its tests have run (TestMain).
func CloseAll() {
	browsers.Lock()
	defer browsers.Unlock()
	for _, r := range browsers.all {
		r.cancel()
	}
	browsers.all = nil
	browsers.idle = map[string][]*running{}
}

// sizeWindow gives the window of a new context's tab the size a person's
// desktop browser has (the flag --window-size sizes only the first window).
func sizeWindow(ctx context.Context, id target.ID) error {
	w, err := chromedp.CallBrowser(ctx, browser.GetWindowForTarget, browser.GetWindowForTargetParams{TargetID: id})
	if err != nil {
		return err
	}
	_, err = chromedp.CallBrowser(ctx, browser.SetWindowBounds, browser.SetWindowBoundsParams{
		WindowID: w.WindowID,
		Bounds:   &browser.Bounds{Width: 1280, Height: 900, WindowState: browser.WindowStateNormal},
	})
	return err
}

// DisableScripts turns the pages' JavaScript off, or back on, for the
// pages opened from now on, as a person who disabled it would have it.
// The test's own Eval still runs.
func (b *Browser) DisableScripts(off bool) {
	b.t.Helper()
	call(b, fmt.Sprintf("script execution disabled: %v", off),
		emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: off})
}

// History returns the URLs of the tab's history entries, oldest first.
func (b *Browser) History() []string {
	b.t.Helper()
	res := call(b, "navigation history", page.GetNavigationHistory, cdp.Empty{})
	var urls []string
	for _, e := range res.Entries {
		urls = append(urls, e.URL)
	}
	return urls
}

// Location returns the tab's URL.
func (b *Browser) Location() string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		b.t.Fatalf("location: %v", err)
	}
	return loc
}

// Fill empties the input with the given id, focuses it and enters value
// as a keyboard's input method does: one insertion, with the beforeinput
// and input events a person's typing fires, and not one key event per
// character (the pages handle no key events; TestKeyboardOnly types key
// by key with Press). Typing key by key cost the browsers a tenth of their
// CPU time in TestPeople.
func (b *Browser) Fill(id, value string) {
	b.t.Helper()
	sel := chromedp.ID(id)
	// Empty the live value: chromedp.Clear only resets the value attribute,
	// which no longer shows once a person has typed.
	empty := chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById(%s).value = ""`, jsString(id)))
	b.do("fill #"+id, chromedp.WaitVisible(sel), empty, chromedp.Focus(sel))
	call(b, "enter text into #"+id, input.InsertText, input.InsertTextParams{Text: value})
}

// Click clicks the visible element with the given id.
func (b *Browser) Click(id string) {
	b.t.Helper()
	sel := chromedp.ID(id)
	b.do("click #"+id, chromedp.WaitVisible(sel), chromedp.Click(sel))
}

// Submit clicks the submit button of the form with the given id.
func (b *Browser) Submit(formID string) {
	b.t.Helper()
	sel := chromedp.CSS("#" + formID + " button[type=submit]")
	b.do("submit #"+formID, chromedp.WaitVisible(sel), chromedp.Click(sel))
}

// WaitFor waits until the JavaScript expression js is true in the page,
// across navigations, and fails the test naming what after Timeout.
func (b *Browser) WaitFor(what, js string) {
	b.t.Helper()
	deadline := time.Now().Add(Timeout)
	var last error
	for {
		ctx, cancel := context.WithTimeout(b.ctx, time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("Boolean("+js+")"))
		cancel()
		if err == nil && ok {
			return
		}
		last = err
		if time.Now().After(deadline) {
			b.t.Fatalf("waiting for %s (%s): not so after %v at %s (last error: %v)", what, js, Timeout, b.location(), last)
		}
		// A page still loading or a script still waiting for the API:
		// look again shortly. This polls a condition; it is no fixed sleep.
		select {
		case <-time.After(50 * time.Millisecond):
		case <-b.ctx.Done():
			b.t.Fatal(b.ctx.Err())
		}
	}
}

// WaitPage waits until the tab shows the page whose template is name (the
// body's data-page) and its path is path.
func (b *Browser) WaitPage(name, path string) {
	b.t.Helper()
	b.WaitFor("page "+name+" at "+path,
		fmt.Sprintf("document.readyState === 'complete' && document.body && document.body.dataset.page === %s && location.pathname === %s",
			jsString(name), jsString(path)))
}

// WaitText waits until the element with the given id is shown and its text
// contains want, and returns its whole text.
func (b *Browser) WaitText(id, want string) string {
	b.t.Helper()
	b.WaitFor(fmt.Sprintf("#%s to show %q", id, want), fmt.Sprintf(
		"(e => e && !e.hidden && e.offsetParent !== null && e.textContent.includes(%s))(document.getElementById(%s))",
		jsString(want), jsString(id)))
	return b.Text(id)
}

// Text returns the text content of the element with the given id.
func (b *Browser) Text(id string) string {
	b.t.Helper()
	return Eval[string](b, fmt.Sprintf("document.getElementById(%s).textContent", jsString(id)))
}

// Visible reports whether the element with the given id is rendered.
func (b *Browser) Visible(id string) bool {
	b.t.Helper()
	return Eval[bool](b, fmt.Sprintf("(e => !!e && e.offsetParent !== null)(document.getElementById(%s))", jsString(id)))
}

// Eval evaluates the JavaScript expression js in the page and decodes its
// value into T.
func Eval[T any](b *Browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s (at %s): %v", js, b.location(), err)
	}
	return v
}

// Viewport sets the size of the page's window in CSS pixels; a width under
// 500 also emulates a phone (mobile layout, touch).
func (b *Browser) Viewport(width, height int64) {
	b.t.Helper()
	var opts []chromedp.EmulateViewportOption
	if width < 500 {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulateScale(3))
	}
	b.do(fmt.Sprintf("viewport %dx%d", width, height), chromedp.EmulateViewport(width, height, opts...))
}

// Shot marks a step of the test, NN-name: the page problems seen after it
// name it. With AUTHKIT_SCREENSHOTS=1 it also saves a full-page PNG
// screenshot of the page as NN-name.png in the browser's screenshot
// folder, for a person to look at every page a run went through. Off by
// default, as in CI: the pictures assert nothing, and on the 2-core CI
// machine they took a third of the browsers' CPU time and a third of
// TestPeople's run (206 s against 127 s). A failed test saves its page
// either way (New).
func (b *Browser) Shot(name string) {
	b.t.Helper()
	b.shots++
	file := fmt.Sprintf("%02d-%s.png", b.shots, name)
	if b.pictures {
		b.ShotTo(filepath.Join(b.shotDir, file))
	}
	b.mu.Lock()
	b.where = "after step " + strings.TrimSuffix(file, ".png")
	b.mu.Unlock()
}

// Cookie returns the cookie of the page's origin named name, or nil.
func (b *Browser) Cookie(name string) *network.Cookie {
	b.t.Helper()
	res := call(b, "cookies", network.GetCookies, network.GetCookiesParams{})
	for _, c := range res.Cookies {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// AllowClipboard lets the pages of origin write to and read the
// clipboard without asking, as a person who said yes would.
func (b *Browser) AllowClipboard(origin string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission:       &browser.PermissionDescriptor{Name: name},
			Setting:          browser.PermissionSettingGranted,
			Origin:           origin,
			BrowserContextID: chromedp.FromContext(b.ctx).BrowserContextID,
		})
		if err != nil {
			b.t.Fatalf("allow %s: %v", name, err)
		}
	}
}

// Download clicks the element with the given id, waits for the browser to
// save the file it starts downloading, and returns the file's name and
// contents.
func (b *Browser) Download(id string) (name string, content []byte) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	begun := chromedp.BrowserEvents(ctx, browser.DownloadWillBegin)
	progress := chromedp.BrowserEvents(ctx, browser.DownloadProgress)
	b.Click(id)
	var guid string
	for ev, err := range begun {
		if err != nil {
			b.t.Fatalf("download from #%s: no download began: %v", id, err)
		}
		guid, name = ev.GUID, ev.SuggestedFilename
		break
	}
	for ev, err := range progress {
		if err != nil {
			b.t.Fatalf("download %s: %v", name, err)
		}
		if ev.GUID != guid {
			continue
		}
		if ev.State == browser.DownloadProgressStateCanceled {
			b.t.Fatalf("download %s: canceled", name)
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			break
		}
	}
	content, err := os.ReadFile(filepath.Join(b.downloads, name))
	if err != nil {
		b.t.Fatalf("download %s: %v", name, err)
	}
	return name, content
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	q, _ := json.Marshal(s) // a string always marshals
	return string(q)
}

// ArtifactsDir returns <repository root>/artifacts, the git-ignored folder
// for what a test leaves for people to look at; the root is the nearest
// folder above the working directory that holds go.work. Outside the
// repository it falls back to a temporary folder.
func ArtifactsDir(t testing.TB) string {
	t.Helper()
	root := servertest.NearestHolding(t, "go.work")
	if root == "" {
		return t.TempDir()
	}
	return filepath.Join(root, "artifacts")
}

// Press sends one key to the focused element, as a keyboard would: a
// name of chromedp's kb package (kb.Tab, kb.Enter) or text to type.
func (b *Browser) Press(keys string) {
	b.t.Helper()
	b.do("press "+strconv.Quote(keys), chromedp.KeyEvent(keys))
}

// Focused returns the id of the focused element ("" for none or the body).
func (b *Browser) Focused() string {
	b.t.Helper()
	return Eval[string](b, `document.activeElement ? document.activeElement.id : ""`)
}

// TabTo presses Tab until the element with the given id has the focus,
// as a keyboard-only person moves through a page, and fails after 40
// presses.
func (b *Browser) TabTo(id string) {
	b.t.Helper()
	for range 40 {
		if b.Focused() == id {
			return
		}
		b.Press(kb.Tab)
	}
	b.t.Fatalf("tabbing to #%s: 40 Tab presses never reached it (at %s)", id, b.location())
}

// DarkMode makes the pages see prefers-color-scheme: dark, or light.
func (b *Browser) DarkMode(on bool) {
	b.t.Helper()
	scheme := "light"
	if on {
		scheme = "dark"
	}
	call(b, "prefers-color-scheme "+scheme, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	})
}

// Violation is one axe-core rule a page breaks, with the elements.
type Violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any  `json:"target"`
		HTML   string `json:"html"`
	} `json:"nodes"`
}

// Audit runs axe-core (e2e/node_modules/axe-core, installed by npm ci
// from e2e/package-lock.json) on the page as it is now and fails the test
// for every violation of every rule axe runs by default (WCAG 2.x A and AA
// and its best practices), naming the state. The script is evaluated
// through the DevTools protocol, which the page's Content-Security-Policy
// does not govern.
func (b *Browser) Audit(state string) {
	b.t.Helper()
	for _, v := range b.Violations() {
		var nodes []string
		for _, n := range v.Nodes {
			nodes = append(nodes, fmt.Sprint(n.Target)+" "+n.HTML)
		}
		b.t.Errorf("axe, %s (%s): %s [%s]: %s", state, b.location(), v.Help, v.ID+", "+v.Impact, strings.Join(nodes, "; "))
	}
}

// AuditThemes audits the page as it is now (Audit) in the light theme and
// in the dark one, and leaves it light.
func (b *Browser) AuditThemes(state string) {
	b.t.Helper()
	b.DarkMode(false)
	b.Audit(state)
	b.DarkMode(true)
	b.Audit(state + ", dark")
	b.DarkMode(false)
}

// Violations runs axe-core on the page as it is now and returns what it
// finds (see Audit).
func (b *Browser) Violations() []Violation {
	b.t.Helper()
	src, err := os.ReadFile(AxePath(b.t))
	if err != nil {
		b.t.Fatal(err)
	}
	if !Eval[bool](b, `typeof window.axe === "object"`) {
		Eval[bool](b, string(src)+"\n;true")
	}
	raw := Eval[string](b, `axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations))`)
	var vs []Violation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		b.t.Fatalf("axe results: %v", err)
	}
	return vs
}

// AxePath returns e2e/node_modules/axe-core/axe.min.js. Without it the
// test skips, naming the command, or fails when AUTHKIT_REQUIRE_SERVICES=1.
func AxePath(t testing.TB) string {
	t.Helper()
	if e2e := servertest.NearestHolding(t, "package.json"); e2e != "" {
		p := filepath.Join(e2e, "node_modules", "axe-core", "axe.min.js")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	storetest.SkipMissing(t, "axe-core", "axe-core not installed: run npm ci in e2e/")
	return ""
}

// ShotTo saves a full-page PNG screenshot at path, for a picture kept in
// the repository (the pages' README).
func (b *Browser) ShotTo(path string) {
	b.t.Helper()
	if err := b.capture(path); err != nil {
		b.t.Fatal(err)
	}
}

// capture saves a full-page PNG screenshot at path.
func (b *Browser) capture(path string) error {
	// A full-page capture lays the page out at its whole height: on the
	// loaded 2-core CI machine that has taken longer than Timeout.
	ctx, cancel := context.WithTimeout(b.ctx, 3*Timeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return fmt.Errorf("screenshot %s: %w", path, err)
	}
	return os.WriteFile(path, png, 0o644)
}

// Eventually reports whether the JavaScript expression js becomes true
// within Timeout, looking again every 50ms; unlike WaitFor it does not
// fail the test. For what the browser does after a page has loaded, such
// as moving the focus to an autofocus element.
func (b *Browser) Eventually(js string) bool {
	b.t.Helper()
	deadline := time.Now().Add(Timeout)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("Boolean("+js+")"))
		cancel()
		if err == nil && ok {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
