// authkit example pages: plain JavaScript over the JSON API. No framework,
// no build step, no inline script (the Content-Security-Policy forbids it).
"use strict";

const $ = (id) => document.getElementById(id);

// api calls an authkit route and resolves to {ok, status, body}.
async function api(path, body) {
  const init = { method: body === undefined ? "GET" : "POST", credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    return { ok: false, status: 0, body: { error: "The server cannot be reached. Check your connection." } };
  }
  let data = {};
  try { data = await res.json(); } catch (e) { data = { error: "Unexpected answer from the server (" + res.status + ")." }; }
  return { ok: res.ok, status: res.status, body: data };
}

function show(id, text) {
  const el = $(id);
  if (!el) return;
  el.textContent = text || "";
  el.hidden = !text;
}

// fields reads a form's named inputs into an object (checkboxes as booleans).
function fields(form) {
  const out = {};
  for (const el of form.elements) {
    if (!el.name) continue;
    out[el.name] = el.type === "checkbox" ? el.checked : el.value;
  }
  return out;
}

// checkFields marks the form's inputs that fail the browser's own checks
// (required, minlength, type=email) with aria-invalid, focuses the first,
// and returns its label and the browser's message ("" when all pass).
function checkFields(form) {
  let first = null;
  for (const el of form.querySelectorAll("input")) {
    if (el.checkValidity()) {
      el.removeAttribute("aria-invalid");
      continue;
    }
    el.setAttribute("aria-invalid", "true");
    if (!first) first = el;
  }
  if (!first) return "";
  first.focus();
  const label = first.labels && first.labels[0];
  const name = label ? label.firstChild.textContent.trim() : first.name;
  return name + ": " + first.validationMessage;
}

// bind posts a form to its action, the JSON route (as JSON, with fetch),
// and calls done on success. Errors show in errorId, a live region beside
// the form: the browser's field checks first, then the API's answer, which
// fail, if given, also sees. Without this script the browser posts the form
// there itself (method="post"), so nothing typed ever lands in a URL.
function bind(formId, errorId, done, fail) {
  const form = $(formId);
  if (!form) return;
  // The script shows the field errors in the live region itself.
  form.noValidate = true;
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    show(errorId, "");
    // Authenticator apps show codes as "123 456": drop the space.
    for (const el of form.querySelectorAll("input[inputmode=numeric]")) el.value = el.value.replace(/\s+/g, "");
    const invalid = checkFields(form);
    if (invalid) {
      show(errorId, invalid);
      return;
    }
    const button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    const r = await api(form.getAttribute("action"), fields(form));
    if (button) button.disabled = false;
    if (!r.ok) {
      show(errorId, r.body.error || "Something went wrong.");
      if (fail) fail(r);
      // A form with one field (a code, an email) had that field wrong:
      // mark it and select it for another try.
      const inputs = form.querySelectorAll("input");
      if (inputs.length === 1) {
        inputs[0].setAttribute("aria-invalid", "true");
        inputs[0].select();
      }
      return;
    }
    for (const el of form.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
    done(r.body, form);
  });
}

// showCodes lists freshly issued recovery codes in the codes box, with
// Copy and Download.
function showCodes(codes) {
  const list = $("recovery-codes");
  list.replaceChildren(...codes.map((c) => { const li = document.createElement("li"); li.textContent = c; return li; }));
  const text = codes.join("\n") + "\n";
  const link = $("codes-download");
  if (link.href.startsWith("blob:")) URL.revokeObjectURL(link.href);
  link.href = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
  $("codes-copy").onclick = async () => {
    try { await navigator.clipboard.writeText(text); show("codes-copied", "Copied."); }
    catch (e) { show("codes-copied", "Copy failed: select the codes and copy them by hand."); }
  };
  $("codes-box").hidden = false;
}

// warnPlainHTTP shows the layout's HTTPS warning (rendered only when the
// sign-in cookie is Secure) on a page opened over plain HTTP: the browser
// drops a Secure cookie there, except on this machine's own addresses.
function warnPlainHTTP() {
  const warning = $("https-warning");
  if (!warning || location.protocol !== "http:") return;
  const host = location.hostname;
  const loopback = host === "localhost" || host.endsWith(".localhost") || /^127\./.test(host) || host === "[::1]";
  if (!loopback) warning.hidden = false;
}

function tokenFromPath() {
  const parts = location.pathname.split("/").filter(Boolean);
  return parts[parts.length - 1] || "";
}

// me returns the signed-in user and shows the account links, or sends the
// person to /login (keeping the news that their email is now verified).
async function me() {
  const r = await api("/api/auth/me");
  if (r.status === 401) {
    const verified = new URLSearchParams(location.search).get("verified") === "true";
    location.assign(verified ? "/login?verified=true" : "/login");
    return null;
  }
  if (!r.ok) {
    show("page-error", r.body.error || "Something went wrong.");
    return null;
  }
  for (const el of document.querySelectorAll(".signed-in")) el.hidden = false;
  return r.body;
}

const pages = {
  login() {
    if (new URLSearchParams(location.search).get("verified") === "true") $("login-verified").hidden = false;
    bind("login-form", "login-error", (body) => {
      location.assign(body.requiresTwoFactor ? "/2fa" : "/dashboard");
    });
  },

  register() {
    bind("register-form", "register-error", () => location.assign("/dashboard"));
  },

  twofactor() {
    const toggle = (recovery) => {
      $("totp-section").hidden = recovery;
      $("recovery-section").hidden = !recovery;
      $(recovery ? "recovery-code" : "code").focus();
    };
    $("use-recovery").addEventListener("click", () => toggle(true));
    $("use-totp").addEventListener("click", () => toggle(false));
    bind("totp-form", "totp-error", () => location.assign("/dashboard"));
    bind("recovery-form", "recovery-error", (body) => {
      location.assign("/dashboard?recoveryCodesLeft=" + encodeURIComponent(body.remainingCodes));
    });
  },

  async verify() {
    const r = await api("/api/auth/verify-email/" + encodeURIComponent(tokenFromPath()));
    if (r.ok) {
      location.replace("/dashboard?verified=true");
      return;
    }
    show("verify-status", "");
    show("verify-error", r.body.error || "This link cannot be used.");
    $("verify-resend").hidden = false;
  },

  async resend() {
    if (!(await me())) return;
    bind("resend-form", "resend-error", (body) => show("resend-done", body.message));
  },

  forgot() {
    bind("forgot-form", "forgot-error", (body) => show("forgot-done", body.message));
  },

  reset() {
    bind("reset-form", "reset-error", (body, form) => {
      show("reset-done", body.message);
      form.reset();
      form.hidden = true;
      $("reset-new-link").hidden = true;
      $("reset-login").hidden = false;
      $("reset-login-link").focus();
    }, (r) => {
      // "Invalid or expired reset link", "This reset link has already been
      // used": this link is done for, offer a new one.
      $("reset-new-link").hidden = !/\blink\b/.test(r.body.error || "");
    });
  },

  async dashboard() {
    const params = new URLSearchParams(location.search);
    if (params.get("verified") === "true") $("verified-banner").hidden = false;
    const left = params.get("recoveryCodesLeft");
    if (left !== null && /^[0-9]+$/.test(left)) {
      show("recovery-notice", "You signed in with a recovery code. " + (left === "1" ? "1 recovery code left" : left + " recovery codes left") +
        (Number(left) <= 3 ? ": generate new ones in your security settings." : "."));
    }
    const u = await me();
    if (!u) return;
    $("user-name").textContent = u.name;
    $("user-email").textContent = u.email;
    $("user-2fa").textContent = u.twoFactorEnabled ? "on" : "off";
    $("unverified-notice").hidden = u.emailVerified;
  },

  async security() {
    const render = (u) => {
      show("twofa-state", u.twoFactorEnabled
        ? "Two-factor authentication is on. Recovery codes left: " + u.recoveryCodesRemaining + "."
        : "Two-factor authentication is off.");
      $("twofa-off").hidden = u.twoFactorEnabled;
      $("twofa-on").hidden = !u.twoFactorEnabled;
    };
    let u = await me();
    if (!u) return;
    render(u);

    $("setup-start").addEventListener("click", async () => {
      show("setup-error", "");
      const r = await api("/api/2fa/setup", {});
      if (!r.ok) { show("setup-error", r.body.error); return; }
      $("qr-image").src = r.body.qrImage;
      // The key in groups of four, as authenticator apps accept it.
      const secret = new URL(r.body.qrUri).searchParams.get("secret") || "";
      $("totp-secret").textContent = (secret.match(/.{1,4}/g) || []).join(" ");
      $("setup-step").hidden = false;
      $("setup-start").hidden = true;
      $("confirm-code").focus();
    });
    bind("confirm-form", "confirm-error", async (body) => {
      showCodes(body.recoveryCodes);
      $("setup-step").hidden = true;
      $("setup-start").hidden = false;
      u = await me();
      if (u) render(u);
    });
    bind("disable-form", "disable-error", async (body, form) => {
      form.reset();
      $("codes-box").hidden = true;
      u = await me();
      if (u) render(u);
      show("twofa-state", body.message + ". " + $("twofa-state").textContent);
    });
    bind("email-form", "email-error", (body, form) => { form.reset(); show("email-done", body.message); });
    bind("password-form", "password-error", (body, form) => { form.reset(); show("password-done", body.message); });
  },

  // codes is the confirmation step before new recovery codes replace the
  // old ones: nothing changes until the person presses Replace.
  async codes() {
    const u = await me();
    if (!u) return;
    if (!u.twoFactorEnabled) {
      show("codes-left", "Two-factor authentication is off: there are no recovery codes to replace.");
      $("regenerate-form").hidden = true;
      $("codes-back").hidden = false;
      return;
    }
    show("codes-left", "Recovery codes left: " + u.recoveryCodesRemaining + ".");
    bind("regenerate-form", "regenerate-error", (body) => {
      showCodes(body.recoveryCodes);
      $("regenerate-step").hidden = true;
      $("codes-back").hidden = false;
    });
  },
};

document.addEventListener("DOMContentLoaded", () => {
  warnPlainHTTP();
  const logout = $("logout");
  if (logout) {
    logout.addEventListener("click", async () => {
      await api("/api/auth/logout", {});
      location.assign("/login");
    });
  }
  const page = pages[document.body.dataset.page];
  if (page) page();
});
