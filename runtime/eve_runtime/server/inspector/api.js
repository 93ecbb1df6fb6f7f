// The page's only way out: the public HTTP API and the dev routes of this origin.
// Under `eve start --inspector` every call carries `Authorization: Bearer <token>`; the token is
// kept in sessionStorage (this tab only), never in a URL, never logged.

const TOKEN_KEY = "eve.inspector.token";
let unauthorized = () => {};

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** Called when the server answers 401 (the page then asks for the token). */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

export function authHeaders(extra = {}) {
  const value = token();
  return value ? { ...extra, authorization: `Bearer ${value}` } : extra;
}

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
    this.body = body;
  }
}

/** Tell the page about a 401 (used by the stream reader too). */
export function reportUnauthorized() {
  unauthorized();
}

async function call(method, path, body) {
  const init = { method, headers: authHeaders(), cache: "no-store" };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let parsed = null;
  try {
    parsed = await response.json();
  } catch {
    parsed = null;
  }
  if (response.status === 401) unauthorized();
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

export const getJson = (path) => call("GET", path);
export const postJson = (path, body = {}) => call("POST", path, body);

export const sessionPath = (id) => `/eve/v1/session/${encodeURIComponent(id)}`;
