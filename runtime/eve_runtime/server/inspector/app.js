// The inspector's entry point: hash routes, the token prompt (eve start --inspector) and the
// build banner.
//   #/                              the sessions
//   #/session/<id>                  a session's conversation
//   #/session/<id>/raw[/<index>]    its raw events (an index is a permalink)
//   #/agent                         the agent and its build

import { onUnauthorized, setToken, token } from "./api.js";
import { AgentView } from "./agent.js";
import { BuildWatch } from "./build.js";
import { fill } from "./dom.js";
import { SessionView } from "./session.js";
import { SessionsView } from "./sessions.js";

const main = document.getElementById("view");
const dialog = document.getElementById("token-prompt");
const forget = document.getElementById("forget-token");
const build = new BuildWatch(document.getElementById("build-banner"));
let current = null;

function parse(hash) {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "session" && parts[1]) {
    const index = parts[2] === "raw" && parts[3] !== undefined ? Number.parseInt(parts[3], 10) : null;
    return { view: "session", id: parts[1], tab: parts[2] === "raw" ? "raw" : "conversation", index };
  }
  if (parts[0] === "agent") return { view: "agent" };
  return { view: "sessions" };
}

function navigate() {
  const where = parse(location.hash);
  for (const link of document.querySelectorAll("header nav a")) {
    link.classList.toggle("active", link.dataset.view === (where.view === "agent" ? "agent" : "sessions"));
  }
  if (where.view === "session" && current instanceof SessionView && current.sessionId === where.id) {
    current.show(where.tab, where.index);
    return;
  }
  if (current) current.close();
  if (where.view === "session") {
    current = new SessionView(where.id);
    current.show(where.tab, where.index);
  } else if (where.view === "agent") {
    current = new AgentView(build);
  } else {
    current = new SessionsView();
  }
  fill(main, current.node);
}

function askForToken() {
  dialog.hidden = false;
  dialog.querySelector("input").focus();
}

onUnauthorized(askForToken);
dialog.querySelector("form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = dialog.querySelector("input");
  setToken(input.value.trim());
  input.value = "";
  dialog.hidden = true;
  forget.hidden = token() === null;
  if (current) current.close();
  current = null;
  navigate();
});
forget.addEventListener("click", () => {
  setToken(null);
  forget.hidden = true;
  askForToken();
});
forget.hidden = token() === null;

window.addEventListener("hashchange", navigate);
navigate();
