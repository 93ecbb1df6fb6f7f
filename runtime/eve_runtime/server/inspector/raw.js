// The raw view of a session: every event with its index, meta.id and time, filterable by type,
// each index a permalink (#/session/<id>/raw/<index>).

import { fill, h, pretty, route } from "./dom.js";

export class RawView {
  constructor(sessionId, model) {
    this.sessionId = sessionId;
    this.model = model;
    this.drawn = 0;
    this.types = new Set();
    this.target = null;
    this.filter = h("select", { class: "raw-filter", "aria-label": "event type", onchange: () => this.applyFilter() });
    this.filter.append(h("option", { value: "" }, "every type"));
    this.body = h("tbody");
    this.node = h(
      "div",
      { class: "raw" },
      h("div", { class: "raw-tools" }, h("label", {}, "type ", this.filter), h("span", { class: "raw-count" })),
      h(
        "table",
        { class: "raw-table" },
        h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "type"), h("th", {}, "meta.id"), h("th", {}, "at"), h("th", {}, "data"))),
        this.body,
      ),
    );
  }

  /** Highlight (and scroll to) the event at `index` once it is there. */
  focus(index) {
    this.target = Number.isInteger(index) ? index : null;
    this.showTarget();
  }

  row(event) {
    const details = h("details", {}, h("summary", {}, summary(event)));
    details.addEventListener("toggle", () => {
      if (details.open && details.childElementCount === 1) details.append(h("pre", {}, pretty(event.data)));
    });
    return h(
      "tr",
      { id: `event-${event.index}`, dataset: { type: event.type, index: event.index } },
      h("td", {}, h("a", { href: route("session", this.sessionId, "raw", event.index) }, String(event.index))),
      h("td", { class: "raw-type" }, event.type),
      h("td", { class: "raw-id" }, event.id),
      h("td", { class: "raw-at" }, event.at),
      h("td", {}, details),
    );
  }

  update() {
    const events = this.model.events;
    if (this.drawn === events.length) return;
    const rows = document.createDocumentFragment();
    const chosen = this.filter.value;
    for (; this.drawn < events.length; this.drawn++) {
      const event = events[this.drawn];
      if (!this.types.has(event.type)) {
        this.types.add(event.type);
        this.filter.append(h("option", { value: event.type }, event.type));
      }
      const row = this.row(event);
      row.hidden = chosen !== "" && chosen !== event.type;
      rows.append(row);
    }
    this.body.append(rows);
    fill(this.node.querySelector(".raw-count"), `${events.length} events`);
    this.showTarget();
  }

  applyFilter() {
    const chosen = this.filter.value;
    for (const row of this.body.children) row.hidden = chosen !== "" && chosen !== row.dataset.type;
  }

  showTarget() {
    if (this.target === null) return;
    const row = this.body.querySelector(`#event-${this.target}`);
    if (!row) return;
    for (const old of this.body.querySelectorAll("tr.target")) old.classList.remove("target");
    row.classList.add("target");
    row.hidden = false;
    row.scrollIntoView({ block: "center" });
    this.target = null;
  }
}

function summary(event) {
  const data = event.data;
  const text = data.messageDelta ?? data.reasoningDelta ?? data.inputTextDelta ?? data.message ?? data.code;
  if (typeof text === "string") return text.length > 80 ? text.slice(0, 79) + "…" : text;
  return "{…}";
}
