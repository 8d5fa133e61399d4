// The front end: sign in and out through the JSON API, and the routes of
// the mailed links: /app/verify-email/{token} calls GET
// /api/auth/verify-email/{token}; /app/reset-password/{token} shows a form
// that posts JSON to POST /api/auth/reset-password/{token}. The API may be
// on another origin of the same site (the authkit-api meta element): every
// call then goes there with credentials: "include", so the browser sends
// and keeps the session cookie of the API's host.
"use strict";

const $ = (id) => document.getElementById(id);
const api = document.querySelector('meta[name="authkit-api"]').content;

async function request(method, path, body) {
  const res = await fetch(api + path, {
    method, credentials: api ? "include" : "same-origin",
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, data: await res.json().catch(() => ({})) };
}

async function call(method, path, body) {
  const { status, data } = await request(method, path, body);
  return data.message || data.error || "Unexpected answer (" + status + ")";
}

// showAccount shows who is signed in, or the sign-in form.
async function showAccount() {
  const { status, data } = await request("GET", "/api/auth/me");
  const signedIn = status === 200 && data.email;
  $("status").textContent = signedIn ? "Signed in as " + data.email : "Not signed in.";
  $("login-form").hidden = signedIn;
  $("logout-form").hidden = !signedIn;
}

document.addEventListener("DOMContentLoaded", async () => {
  const m = location.pathname.match(/^\/app\/(verify-email|reset-password)\/([A-Za-z0-9_-]+)$/);
  if (!m) {
    $("login-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const { status, data } = await request("POST", "/api/login", { email: $("email").value, password: $("login-password").value });
      if (status !== 200 || !data.success) {
        $("status").textContent = data.requiresTwoFactor ? "This account needs its second step." : (data.error || "Unexpected answer (" + status + ")");
        return;
      }
      await showAccount();
    });
    $("logout-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      $("status").textContent = await call("POST", "/api/auth/logout");
      await showAccount();
    });
    await showAccount();
    return;
  }
  const [, route, token] = m;
  if (route === "verify-email") {
    $("title").textContent = "Verify your email";
    $("status").textContent = await call("GET", "/api/auth/verify-email/" + token);
    return;
  }
  $("title").textContent = "Choose a new password";
  const form = $("reset-form");
  form.hidden = false;
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    $("status").textContent = await call("POST", "/api/auth/reset-password/" + token,
      { password: $("password").value, confirmPassword: $("confirmPassword").value });
  });
});
