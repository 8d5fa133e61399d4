// The front end's routes for the mailed links: /app/verify-email/{token}
// calls GET /api/auth/verify-email/{token}; /app/reset-password/{token}
// shows a form that posts JSON to POST /api/auth/reset-password/{token}.
"use strict";

const $ = (id) => document.getElementById(id);

async function call(method, path, body) {
  const res = await fetch(path, {
    method, credentials: "same-origin",
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await res.json().catch(() => ({}));
  return data.message || data.error || "Unexpected answer (" + res.status + ")";
}

document.addEventListener("DOMContentLoaded", async () => {
  const m = location.pathname.match(/^\/app\/(verify-email|reset-password)\/([A-Za-z0-9_-]+)$/);
  if (!m) {
    $("status").textContent = "Register and sign in through the JSON API; the mailed links lead here.";
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
