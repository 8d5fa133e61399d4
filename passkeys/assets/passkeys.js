// authkit passkeys: calls navigator.credentials with the JSON the
// /api/passkeys routes give and sends back what the browser returns.
// Served by the passkeys module at /api/passkeys/passkeys.js.
//
//   await authkitPasskeys.register("Laptop");    // signed in, recently authenticated
//   await authkitPasskeys.signUp("ada@example.com", "Ada"); // a new account, no password
//   await authkitPasskeys.signIn();               // passwordless (discoverable credential)
//   authkitPasskeys.signIn({conditional: true});  // autofill: <input autocomplete="username webauthn">
//   await authkitPasskeys.secondFactor();         // the 2FA step of a pending login
//
// Each returns the route's JSON answer, or throws an Error whose .code is
// the authkit error code (or the DOMException's name).
(function () {
  "use strict";
  var base = "/api/passkeys";

  function b64urlToBuf(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }
  function bufToB64url(buf) {
    var bytes = new Uint8Array(buf), bin = "";
    for (var i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function creationOptions(pk) {
    if (window.PublicKeyCredential && PublicKeyCredential.parseCreationOptionsFromJSON) {
      return PublicKeyCredential.parseCreationOptionsFromJSON(pk);
    }
    var o = Object.assign({}, pk);
    o.challenge = b64urlToBuf(pk.challenge);
    o.user = Object.assign({}, pk.user, { id: b64urlToBuf(pk.user.id) });
    o.excludeCredentials = (pk.excludeCredentials || []).map(function (c) {
      return Object.assign({}, c, { id: b64urlToBuf(c.id) });
    });
    return o;
  }
  function requestOptions(pk) {
    if (window.PublicKeyCredential && PublicKeyCredential.parseRequestOptionsFromJSON) {
      return PublicKeyCredential.parseRequestOptionsFromJSON(pk);
    }
    var o = Object.assign({}, pk);
    o.challenge = b64urlToBuf(pk.challenge);
    o.allowCredentials = (pk.allowCredentials || []).map(function (c) {
      return Object.assign({}, c, { id: b64urlToBuf(c.id) });
    });
    return o;
  }
  function credentialJSON(cred) {
    if (typeof cred.toJSON === "function") return cred.toJSON();
    var r = cred.response, out = {
      id: cred.id, rawId: bufToB64url(cred.rawId), type: cred.type,
      authenticatorAttachment: cred.authenticatorAttachment || undefined,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
      response: { clientDataJSON: bufToB64url(r.clientDataJSON) }
    };
    if (r.attestationObject) {
      out.response.attestationObject = bufToB64url(r.attestationObject);
      out.response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      out.response.authenticatorData = bufToB64url(r.authenticatorData);
      out.response.signature = bufToB64url(r.signature);
      if (r.userHandle) out.response.userHandle = bufToB64url(r.userHandle);
    }
    return out;
  }

  function post(path, body) {
    return fetch(base + path, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body || {})
    }).then(function (res) {
      return res.json().then(function (j) {
        if (!res.ok) {
          var e = new Error(j.error || res.statusText);
          e.code = j.code; e.status = res.status;
          throw e;
        }
        return j;
      });
    });
  }
  function named(e) {
    if (e && e.name && !e.code) e.code = e.name;
    throw e;
  }

  // create runs the ceremony of navigator.credentials.create under prefix:
  // begin posts begin, finish posts the credential with the fields added.
  function create(prefix, begin, fields) {
    return post(prefix + "/begin", begin).then(function (opts) {
      return navigator.credentials.create({ publicKey: creationOptions(opts.publicKey) });
    }).then(function (cred) {
      var body = credentialJSON(cred);
      for (var k in fields) body[k] = fields[k];
      return post(prefix + "/finish", body);
    }).catch(named);
  }

  function register(name) {
    return create("/register", {}, { name: name || "" });
  }

  function signUp(email, name, passkeyName) {
    return create("/signup", { email: email || "", name: name || "" }, { passkeyName: passkeyName || "" });
  }

  function assert(prefix, options) {
    options = options || {};
    return post(prefix + "/begin").then(function (opts) {
      var req = { publicKey: requestOptions(opts.publicKey) };
      if (options.conditional) req.mediation = "conditional";
      if (options.signal) req.signal = options.signal;
      return navigator.credentials.get(req);
    }).then(function (cred) {
      var body = credentialJSON(cred);
      if (options.remember !== undefined) body.remember = !!options.remember;
      if (options.trustDevice) body.trustDevice = true;
      return post(prefix + "/finish", body);
    }).catch(named);
  }

  window.authkitPasskeys = {
    register: register,
    signUp: signUp,
    signIn: function (options) { return assert("/login", options); },
    secondFactor: function (options) { return assert("/2fa", options); },
    reauthenticate: function (options) { return assert("/reauth", options); }
  };
})();
