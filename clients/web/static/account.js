// Accounts on the page: sign-up (the `registration` ViewModel), sign-in and sign-out (`login`), the profile
// (`profile`), and the session token kept so that a reload stays signed in. Loaded before app.js, whose
// helpers ($, el, act, busy, open, connection, byType, showError) it uses once the page has started.
//
// Where the token is kept: each tab's own copy in sessionStorage (it survives the tab's reloads, and no other
// tab can overwrite it), and the last one any tab kept in localStorage (so a new tab opens signed in as the
// last person who signed in in this browser). A page load resumes the tab's own token, else the browser's.
// Two tabs can therefore be signed into different accounts, each keeping its own across reloads. A token the
// server refuses (`sessionInvalid`: signed out elsewhere, expired) is dropped from both places.
"use strict";

const TOKEN_KEY = "storefront.sessionToken";

const sessionTokens = {
  /** The token this page should resume: the tab's own, else the browser's last. */
  load() { return sessionStorage.getItem(TOKEN_KEY) || localStorage.getItem(TOKEN_KEY); },
  /** Keeps a token a sign-in answered: for this tab, and for tabs opened later. */
  keep(token) {
    sessionStorage.setItem(TOKEN_KEY, token);
    localStorage.setItem(TOKEN_KEY, token);
  },
  /** Forgets `token` wherever it is kept (another tab's token in localStorage stays). */
  drop(token) {
    if (!token) return;
    if (sessionStorage.getItem(TOKEN_KEY) === token) sessionStorage.removeItem(TOKEN_KEY);
    if (localStorage.getItem(TOKEN_KEY) === token) localStorage.removeItem(TOKEN_KEY);
  },
};

let sessionToken = null;  // the token this page's session was signed in with, or null for a guest
let lastLoginPhase = null;
let profileOpening = false;

function reasonOf(error) {
  return error && error.rpc && error.rpc.data ? error.rpc.data.reason : undefined;
}

function signedInWith(token) {
  sessionToken = token;
  sessionTokens.keep(token);
}

/** On load: signs this page's new server in with the kept token, before the cart and dashboard open. */
async function resumeSession() {
  const token = sessionTokens.load();
  if (!token || !byType.login) return;
  try {
    await connection.request("login/resume", { viewModel: byType.login.handle, token });
    sessionToken = token;
    sessionStorage.setItem(TOKEN_KEY, token);  // this tab's from now on, whatever other tabs keep later
  } catch (error) {
    if (reasonOf(error) === "sessionInvalid") sessionTokens.drop(token);
    else showError(error.message);
  }
}

// ------------------------------------------------------------------------------------------ actions

const registrationFields = { email: "register-email", password: "register-password", confirmPassword: "register-confirm" };

function sendRegistrationField(field) {
  const vm = byType.registration;
  if (!vm) return Promise.resolve();
  return connection.request("registration/setField", { viewModel: vm.handle, field, value: $(registrationFields[field]).value })
    .catch((error) => showError(error.message));
}

async function signUp(event) {
  event.preventDefault();
  const vm = byType.registration;
  if (!vm) return;
  try {
    // Each field was sent as it was typed; they are sent once more so the server has what the form holds.
    for (const field of Object.keys(registrationFields)) {
      await connection.request("registration/setField", { viewModel: vm.handle, field, value: $(registrationFields[field]).value });
    }
    await connection.request("registration/setAcceptedTerms", { viewModel: vm.handle, accepted: $("register-terms").checked });
    const result = await connection.request("registration/register", { viewModel: vm.handle });
    signedInWith(result.token);
    $("register-password").value = "";
    $("register-confirm").value = "";
  } catch (error) {
    showError(error.message);
  }
}

async function signIn(event) {
  event.preventDefault();
  const vm = byType.login;
  if (!vm) return;
  const password = $("login-password").value;
  $("login-password").value = "";
  try {
    const result = await connection.request("login/login", { viewModel: vm.handle, email: $("login-email").value, password });
    signedInWith(result.token);
  } catch (error) {
    showError(error.message);  // the login state says it too (`message`, `lockedUntil`)
  }
}

async function signOut() {
  const token = sessionToken;
  const result = await act("login", "logout");
  if (result) {
    sessionTokens.drop(token);
    sessionToken = null;
  }
}

function saveProfile() {
  const key = globalThis.crypto && crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`;
  return act("profile", "save", { idempotencyKey: key });
}

async function openProfile() {
  if (byType.profile || profileOpening) return;
  profileOpening = true;
  try {
    await open("profile");
  } catch (error) {
    if (reasonOf(error) !== "signInRequired") showError(error.message);
  } finally {
    profileOpening = false;
  }
}

function closeProfile() {
  const vm = byType.profile;
  if (!vm) return;
  delete byType.profile;
  viewModels.delete(vm.handle);
  connection.request("viewModel/close", { viewModel: vm.handle }).catch(() => {});
  $("profile-form").hidden = true;
}

/** Wires the account forms' controls (once, at start). */
function wireAccountForms() {
  for (const field of Object.keys(registrationFields)) {
    $(registrationFields[field]).addEventListener("input", () => sendRegistrationField(field));
  }
  $("register-terms").addEventListener("change", () => act("registration", "setAcceptedTerms", { accepted: $("register-terms").checked }));
  $("register-form").addEventListener("submit", signUp);
  $("login-form").addEventListener("submit", signIn);
  $("logout").addEventListener("click", signOut);
  for (const field of ["name", "email", "bio"]) {
    $(`profile-${field}`).addEventListener("input", () => act("profile", "setField", { field, value: $(`profile-${field}`).value }));
  }
  $("profile-notifications").addEventListener("change",
    () => act("profile", "setNotificationsEnabled", { enabled: $("profile-notifications").checked }));
  $("profile-form").addEventListener("submit", (event) => { event.preventDefault(); saveProfile(); });
  $("profile-discard").addEventListener("click", () => act("profile", "discardChanges"));
}

// --------------------------------------------------------------------------------------- rendering

/** Sets an input from the state unless the person is typing in it. */
function setInput(id, value) {
  const input = $(id);
  if (document.activeElement === input) return;
  if (input.type === "checkbox") input.checked = Boolean(value);
  else if (input.value !== value) input.value = value;
}

function fieldError(id, message) {
  $(id).textContent = message || "";
  $(id).hidden = !message;
}

const accountRenderers = {
  login(s) {
    const signedIn = s.phase === "loggedIn" && s.user;
    $("account-user").textContent = signedIn ? `Signed in as ${s.user.name} (${s.user.email})` : "Shopping as a guest: sign in or sign up to check out.";
    $("account").classList.toggle("signed-in", Boolean(signedIn));
    $("account-message").textContent = s.message || "";
    $("account-message").hidden = !s.message;
    $("account-locked").textContent = s.lockedUntil ? `Signing in is locked until ${new Date(s.lockedUntil).toLocaleTimeString()}.` : "";
    $("account-locked").hidden = !s.lockedUntil;
    const capped = s.cappedLines || [];
    $("capped-lines").replaceChildren(...capped.map((line) => el("li", { dataset: { productId: line.productId } },
      `${line.name}: your cart keeps ${line.kept}, not the ${line.requested} you had (that is all that can be ordered).`)));
    $("capped-lines").hidden = capped.length === 0;
    $("guest-forms").hidden = Boolean(signedIn);
    $("member-panel").hidden = !signedIn;
    $("login-submit").disabled = s.phase === "loggingIn";
    $("login-submit").textContent = s.phase === "loggingIn" ? "Signing in…" : "Sign in";

    if (signedIn) {
      openProfile();
      openInbox();  // inbox.js: an account's notifications
    } else if (lastLoginPhase === "loggedIn") {
      // Signed out, here or in another window (the token is then revoked everywhere): forget it.
      sessionTokens.drop(sessionToken);
      sessionToken = null;
      closeProfile();
      closeInbox();
    }
    lastLoginPhase = s.phase;
  },

  registration(s) {
    setInput("register-email", s.email);
    setInput("register-terms", s.acceptedTerms);
    const errors = s.errors || {};
    fieldError("register-email-error", errors.email);
    fieldError("register-password-error", errors.password);
    fieldError("register-confirm-error", errors.confirmPassword);
    fieldError("register-terms-error", errors.acceptedTerms);
    $("register-submit").disabled = s.submitPhase === "submitting";
    $("register-submit").textContent = s.submitPhase === "submitting" ? "Signing up…" : "Sign up";
    $("register-error").textContent = s.error ? s.error.message : "";
    $("register-error").hidden = !s.error;
  },

  profile(s) {
    $("profile-form").hidden = false;
    $("profile-form").classList.toggle("loading", s.phase === "loading");
    $("profile-problem").replaceChildren(...(s.phase === "failed" || s.error
      ? [el("span", {}, s.error ? s.error.message : "The profile could not be loaded.")] : []));
    setInput("profile-name", s.fields.name);
    setInput("profile-email", s.fields.email);
    setInput("profile-bio", s.fields.bio);
    setInput("profile-notifications", s.fields.notificationsEnabled);
    const errors = s.errors || {};
    fieldError("profile-name-error", errors.name);
    fieldError("profile-email-error", errors.email);
    fieldError("profile-bio-error", errors.bio);
    const saving = s.savePhase === "submitting" || busy("profile", "save");
    $("profile-save").disabled = s.phase !== "loaded" || !s.hasChanges || saving;
    $("profile-save").textContent = saving ? "Saving…" : "Save";
    $("profile-discard").disabled = !s.hasChanges;
    $("profile-status").textContent = s.savePhase === "succeeded" && !s.hasChanges ? "Saved." : s.hasChanges ? "Unsaved changes." : "";
  },
};
