// The sessions list: every session of the store with its state, agent, first message, age and
// usage, filtered by state, refreshed while it is shown; and a box to start a new session.

import { getJson, postJson } from "./api.js";
import { age, fill, h, route, usageText } from "./dom.js";

const STATES = ["running", "waiting-for-input", "idle", "dormant", "stranded", "ended"];
const REFRESH_MS = 1500;

export class SessionsView {
  constructor() {
    this.filter = h(
      "select",
      { class: "state-filter", "aria-label": "state", onchange: () => this.draw() },
      h("option", { value: "" }, "every state"),
      STATES.map((state) => h("option", { value: state }, state)),
    );
    this.rows = h("tbody");
    this.notice = h("div", { class: "notice", role: "status" });
    this.sessions = [];
    this.node = h(
      "section",
      { id: "sessions" },
      h("div", { class: "list-head" }, h("h2", {}, "Sessions"), h("label", {}, "state ", this.filter)),
      this.starter(),
      this.notice,
      h(
        "table",
        { class: "sessions-table" },
        h("thead", {}, h("tr", {}, ["state", "session", "agent", "first message", "age", "usage"].map((t) => h("th", {}, t)))),
        this.rows,
      ),
    );
    this.refresh();
    this.timer = setInterval(() => document.hidden || this.refresh(), REFRESH_MS); // a hidden tab reads nothing
  }

  close() {
    clearInterval(this.timer);
  }

  async refresh() {
    try {
      const answer = await getJson("/eve/v1/dev/sessions");
      this.sessions = answer.sessions || [];
      fill(this.notice);
    } catch (error) {
      fill(this.notice, h("span", { class: "error" }, error.message));
    }
    this.draw();
  }

  draw() {
    const chosen = this.filter.value;
    const now = Date.now();
    const shown = this.sessions.filter((s) => chosen === "" || s.state === chosen);
    fill(
      this.rows,
      shown.map((s) =>
        h(
          "tr",
          { dataset: { sessionId: s.sessionId, state: s.state } },
          h("td", {}, h("span", { class: `badge state state-${s.state}` }, s.state)),
          h("td", {}, h("a", { href: route("session", s.sessionId) }, s.sessionId)),
          h("td", {}, s.agent),
          h("td", { class: "preview" }, s.preview),
          h("td", { title: s.createdAt }, age(s.createdAt, now)),
          h("td", {}, usageText(s.usage)),
        ),
      ),
    );
    this.node.dataset.count = String(shown.length);
  }

  starter() {
    const text = h("textarea", { class: "message", rows: 2, placeholder: "Start a session with a message", "aria-label": "first message" });
    const form = h("form", { class: "composer new-session" }, text, h("button", { type: "submit", class: "send" }, "Start"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!text.value.trim()) return;
      try {
        const answer = await postJson("/eve/v1/session", { message: text.value });
        location.hash = route("session", answer.sessionId);
      } catch (error) {
        fill(this.notice, h("span", { class: "error" }, error.message));
      }
    });
    return form;
  }
}
