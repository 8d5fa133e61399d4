// authkit pages: the script only enhances pages that work without it.
// Every form posts to its page route and the server answers with a page
// (an error beside its field) or a redirect (POST/redirect/GET). With this
// script a form is sent with fetch and the answer replaces the page in
// place, without a reload: the QR code of the 2FA setup appears inline,
// errors appear beside their fields and take the focus. It also adds the
// "show password" toggles, the Copy button of recovery codes and the
// plain-HTTP warning. With the passkeys module's script loaded
// (pages.Config.Passkeys) and a browser that has WebAuthn, it shows the
// passkey buttons the pages render hidden, offers passkeys in the login
// page's autofill, and inserts the form that adds a passkey. No inline script or style: the Content-Security-Policy
// forbids both.
"use strict";

// enhance sets up what the page's HTML asks for: toggles, Copy, focus.
function enhance(focus) {
  for (const b of document.querySelectorAll("button[data-reveal]")) {
    b.hidden = false;
  }
  const copy = document.getElementById("codes-copy");
  if (copy) copy.hidden = false;
  warnPlainHTTP();
  localTimes();
  enhancePasskeys();
  if (!focus) return;
  // After an answer replaced the page: the element the server marked
  // (the error summary or the first invalid field), else the heading's
  // main region, so a screen reader starts reading the new page.
  const target = document.querySelector("[autofocus]") || document.getElementById("main");
  if (target) target.focus();
}

// localTimes shows the lists' times (rendered in UTC) in the viewer's
// time zone, in the page's language; the UTC text stays as the tooltip.
function localTimes() {
  let format;
  try {
    format = new Intl.DateTimeFormat(document.documentElement.lang || undefined, { dateStyle: "medium", timeStyle: "short" });
  } catch (e) {
    return;
  }
  for (const t of document.querySelectorAll("time[data-local]")) {
    const at = new Date(t.dateTime);
    if (isNaN(at)) continue;
    if (!t.title) t.title = t.textContent;
    t.textContent = format.format(at);
  }
}

// warnPlainHTTP shows the layout's HTTPS warning (rendered only when the
// sign-in cookie is Secure) on a page opened over plain HTTP: the browser
// drops a Secure cookie there, except on this machine's own addresses.
function warnPlainHTTP() {
  const warning = document.getElementById("https-warning");
  if (!warning || location.protocol !== "http:") return;
  const host = location.hostname;
  const loopback = host === "localhost" || host.endsWith(".localhost") || /^127\./.test(host) || host === "[::1]";
  if (!loopback) warning.hidden = false;
}

// replacePage puts the answer's document in place of this one.
function replacePage(html) {
  const doc = new DOMParser().parseFromString(html, "text/html");
  document.title = doc.title;
  document.documentElement.lang = doc.documentElement.lang;
  document.body.replaceWith(document.adoptNode(doc.body));
  enhance(true);
}

// submit sends a form as the browser would, with fetch, and shows the
// answer in place. A redirect's target page becomes a history entry.
async function submit(form, submitter) {
  const body = new URLSearchParams(new FormData(form, submitter));
  const buttons = form.querySelectorAll("button[type=submit]");
  for (const b of buttons) b.disabled = true;
  let res;
  try {
    res = await fetch(form.action, {
      method: "POST", body, credentials: "same-origin", redirect: "follow",
      headers: { "Accept": "text/html" },
    });
  } catch (e) {
    for (const b of buttons) b.disabled = false;
    networkError(form);
    return;
  }
  const html = await res.text();
  if (!(res.headers.get("Content-Type") || "").startsWith("text/html")) {
    // Not one of the pages (a proxy's error page): say the server could
    // not answer; posting again could repeat what the form did.
    for (const b of buttons) b.disabled = false;
    networkError(form);
    return;
  }
  if (res.redirected) {
    history.pushState({ authkit: true }, "", res.url);
    shown = location.pathname + location.search;
  }
  replacePage(html);
}

// networkError says, beside the form, that the server was not reached.
function networkError(form) {
  let p = form.querySelector(".network-error");
  if (!p) {
    p = document.createElement("p");
    p.className = "error network-error";
    p.setAttribute("role", "alert");
    form.prepend(p);
  }
  p.textContent = document.body.dataset.networkError || "The server cannot be reached.";
}

document.addEventListener("submit", (ev) => {
  const form = ev.target;
  if (!(form instanceof HTMLFormElement) || form.method !== "post" || ev.defaultPrevented) return;
  if (new URL(form.action, location.href).origin !== location.origin) return;
  ev.preventDefault();
  submit(form, ev.submitter);
});

document.addEventListener("click", async (ev) => {
  const reveal = ev.target.closest && ev.target.closest("button[data-reveal]");
  if (reveal) {
    const input = document.getElementById(reveal.dataset.reveal);
    if (!input) return;
    const show = input.type === "password";
    input.type = show ? "text" : "password";
    reveal.setAttribute("aria-pressed", show ? "true" : "false");
    return;
  }
  if (ev.target.id === "codes-copy") {
    const codes = [...document.querySelectorAll("#recovery-codes li")].map((li) => li.textContent);
    const status = document.getElementById("codes-copied");
    try {
      await navigator.clipboard.writeText(codes.join("\n") + "\n");
      status.textContent = status.dataset.done;
    } catch (e) {
      status.textContent = status.dataset.failed;
    }
  }
});

// Passkeys. The calls are the passkeys module's (authkitPasskeys, from
// /api/passkeys/passkeys.js); the pages say where to go after them in
// data- attributes of the box each button sits in.

// autofill is the pending conditional-UI request of the login page.
let autofill = null;

function passkeysWork() {
  return !!(window.PublicKeyCredential && window.authkitPasskeys);
}

function enhancePasskeys() {
  if (autofill) {
    autofill.abort();
    autofill = null;
  }
  if (!passkeysWork()) return;
  for (const box of document.querySelectorAll("[data-passkey]")) {
    box.hidden = false;
  }
  const tpl = document.getElementById("passkey-add-template");
  if (tpl && !document.getElementById("passkey-add-form")) {
    tpl.after(tpl.content.cloneNode(true));
  }
  startAutofill();
}

// startAutofill offers the user's passkeys in the email field's autofill
// (autocomplete="username webauthn"), where the browser can.
async function startAutofill() {
  const box = document.querySelector("[data-passkey=signin]");
  const email = document.querySelector("input[autocomplete~=webauthn]");
  if (!box || !email || !PublicKeyCredential.isConditionalMediationAvailable) return;
  try {
    if (!(await PublicKeyCredential.isConditionalMediationAvailable())) return;
  } catch (e) {
    return;
  }
  const ctrl = new AbortController();
  autofill = ctrl;
  authkitPasskeys.signIn({ conditional: true, signal: ctrl.signal, get remember() { return rememberMe(); } })
    .then(() => location.assign(box.dataset.next))
    .catch((e) => {
      // A passkey chosen from the autofill that fails says so; the
      // request being ended (the button, another page) says nothing.
      if (ctrl.signal.aborted || !e || e.name === "AbortError" || e.code === "AbortError") return;
      if (e.status) passkeyError(box, e);
    });
}

function rememberMe() {
  const r = document.getElementById("remember");
  return !!(r && r.checked);
}

// passkeyError puts what went wrong beside the button, in its alert.
function passkeyError(box, e) {
  const out = box.querySelector("[role=alert]");
  if (!out) return;
  let text = box.dataset.failed;
  if (e && (e.code === "NotAllowedError" || e.code === "AbortError")) {
    text = box.dataset.cancelled; // the person closed the browser's dialog
  } else if (e && e.status && e.message) {
    text = e.message; // the server's text, in the page's language
  }
  out.textContent = text;
}

async function passkeyStep(box, button) {
  if (autofill) {
    autofill.abort();
    autofill = null;
  }
  const out = box.querySelector("[role=alert]");
  if (out) out.textContent = "";
  button.disabled = true;
  try {
    if (box.dataset.passkey === "signin") {
      await authkitPasskeys.signIn({ remember: rememberMe() });
    } else if (box.dataset.passkey === "signup") {
      // The register form's name and address; no password.
      const f = document.getElementById("register-form").elements;
      await authkitPasskeys.signUp(f.email.value, f.name.value);
    } else if (box.dataset.passkey === "reauth") {
      await authkitPasskeys.reauthenticate();
    } else {
      // The password step's "keep me signed in" holds; "trust this
      // browser", when the page offers it, is the code form's box.
      const trust = document.getElementById("trust");
      await authkitPasskeys.secondFactor({ trustDevice: !!(trust && trust.checked) });
    }
    location.assign(box.dataset.next);
  } catch (e) {
    button.disabled = false;
    passkeyError(box, e);
  }
}

// go loads url, also when only its fragment differs from this page's.
function go(url) {
  const u = new URL(url, location.href);
  if (u.pathname + u.search !== location.pathname + location.search) {
    location.assign(u.href);
    return;
  }
  history.replaceState(null, "", u.href);
  location.reload();
}

async function addPasskey(form) {
  const box = document.getElementById("passkey-add-box");
  const out = document.getElementById("passkey-add-error");
  const button = form.querySelector("button[type=submit]");
  out.textContent = "";
  button.disabled = true;
  try {
    await authkitPasskeys.register(form.elements.name.value);
    go(box.dataset.done);
  } catch (e) {
    button.disabled = false;
    if (e && e.code === "reauthentication_required") {
      // An old sign-in: confirm the password, then come back here.
      location.assign(box.dataset.confirm);
      return;
    }
    passkeyError(box, e);
  }
}

document.addEventListener("click", (ev) => {
  const button = ev.target.closest && ev.target.closest("#passkey-signin, #passkey-signup, #passkey-2fa, #passkey-reauth");
  if (button) passkeyStep(button.closest("[data-passkey]"), button);
});

document.addEventListener("submit", (ev) => {
  if (ev.target.id !== "passkey-add-form") return;
  ev.preventDefault();
  addPasskey(ev.target);
});

// shown is the address of the page the document shows.
let shown = location.pathname + location.search;

// Back and forward across the entries the script added: load the page of
// the address, unless only the fragment changed (a link of the error
// summary to its field).
window.addEventListener("popstate", () => {
  if (location.pathname + location.search !== shown) location.reload();
});

document.addEventListener("DOMContentLoaded", () => enhance(false));
