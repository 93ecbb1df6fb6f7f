// One session's page: the conversation as its events describe it, what waits for a person, the
// controls (send, cancel, compact, clear, reset) and the raw events.

import { postJson, sessionPath } from "./api.js";
import { fill, h, pretty, route, usageText } from "./dom.js";
import { RawView } from "./raw.js";
import { SessionModel } from "./reducer.js";
import { SessionStream } from "./stream.js";
import { renderItem } from "./timeline.js";

export class SessionView {
  constructor(sessionId) {
    this.sessionId = sessionId;
    this.model = new SessionModel();
    this.nodes = new Map(); // item key -> node
    this.scheduled = false;
    this.streamStatus = "connecting";
    this.timeline = h("ol", { class: "timeline" });
    this.pending = h("div", { class: "pending" });
    this.header = h("div", { class: "session-head" });
    this.notice = h("div", { class: "notice", role: "status" });
    this.raw = new RawView(sessionId, this.model);
    this.tabs = h("nav", { class: "tabs" });
    this.conversation = h("div", { class: "conversation" }, this.pending, this.timeline, this.composer());
    this.node = h(
      "section",
      { id: "session", dataset: { sessionId, events: "0" } },
      this.header,
      this.controls(),
      this.notice,
      this.tabs,
      this.conversation,
      this.raw.node,
    );
    this.stream = new SessionStream(`${sessionPath(sessionId)}/stream`, {
      onEvents: (batch) => this.receive(batch),
      onStatus: (status) => {
        this.streamStatus = status;
        this.schedule();
      },
    }).start();
    this.show("conversation");
    this.flush();
  }

  close() {
    this.stream.stop();
  }

  /** Show a tab: `conversation` or `raw` (with an index to highlight). */
  show(tab, index = null) {
    this.tab = tab;
    this.conversation.hidden = tab !== "conversation";
    this.raw.node.hidden = tab !== "raw";
    fill(
      this.tabs,
      h("a", { href: route("session", this.sessionId), class: tab === "conversation" ? "active" : "" }, "Conversation"),
      h("a", { href: route("session", this.sessionId, "raw"), class: tab === "raw" ? "active" : "" }, "Raw events"),
    );
    if (tab === "raw") {
      this.raw.focus(index);
      this.raw.update();
    }
  }

  receive(batch) {
    for (const { index, event } of batch) this.model.apply(index, event);
    this.schedule();
  }

  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    const run = () => {
      if (this.scheduled) this.flush();
    };
    requestAnimationFrame(run);
    setTimeout(run, 50); // a hidden tab gets no animation frames
  }

  flush() {
    this.scheduled = false;
    const model = this.model;
    const added = document.createDocumentFragment();
    for (const item of model.changed) {
      const previous = this.nodes.get(item.key);
      const node = renderItem(item, model, previous);
      this.nodes.set(item.key, node);
      if (previous) previous.replaceWith(node);
      else added.append(node);
    }
    model.changed.clear();
    this.timeline.append(added);
    this.drawHeader();
    this.drawPending();
    if (this.tab === "raw") this.raw.update();
    if (this.node.dataset.events !== String(model.events.length)) {
      this.node.dataset.events = String(model.events.length);
      this.node.dataset.renderedAt = String(performance.now()); // when the newest event was drawn (bench/)
    }
    this.node.dataset.status = model.status;
    this.node.dataset.stream = this.streamStatus;
  }

  drawHeader() {
    const model = this.model;
    const parent = model.parentSessionId
      ? h("a", { class: "parent-link", href: route("session", model.parentSessionId) }, "← parent session")
      : null;
    fill(
      this.header,
      h("h2", {}, "Session ", h("code", {}, this.sessionId)),
      h("span", { class: `badge status status-${model.status}` }, model.status),
      h("span", { class: `badge stream stream-${this.streamStatus}` }, `stream: ${this.streamStatus}`),
      h("span", { class: "usage" }, usageText(model.usage)),
      parent,
    );
  }

  drawPending() {
    const requests = [...this.model.pending.values()];
    this.pending.hidden = requests.length === 0;
    fill(this.pending, requests.length ? h("h3", {}, "Waiting for you") : null, requests.map((r) => this.request(r)));
  }

  request(request) {
    const answer = (response) =>
      this.act(() => postJson(sessionPath(this.sessionId), { inputResponses: [{ requestId: request.requestId, ...response }] }));
    const freeform = request.allowFreeform ? h("input", { type: "text", class: "freeform", "aria-label": "answer" }) : null;
    return h(
      "div",
      { class: "request", dataset: { requestId: request.requestId, kind: request.kind } },
      h("div", { class: "prompt" }, request.prompt ?? request.kind),
      request.toolName ? h("div", { class: "request-tool" }, h("code", {}, request.toolName), " ", h("pre", {}, pretty(request.input))) : null,
      request.taskId ? h("div", { class: "request-task" }, `from task ${request.taskId}`) : null,
      h(
        "div",
        { class: "options" },
        request.options.map((option) =>
          h("button", { type: "button", class: "option", dataset: { optionId: option.id }, onclick: () => answer({ optionId: option.id }) }, option.label ?? option.id),
        ),
        freeform,
        freeform ? h("button", { type: "button", class: "send-answer", onclick: () => answer({ text: freeform.value }) }, "Answer") : null,
      ),
    );
  }

  controls() {
    const control = (name, label) =>
      h("button", { type: "button", class: `control control-${name}`, onclick: () => this.act(() => postJson(`${sessionPath(this.sessionId)}/${name}`, {})) }, label);
    return h("div", { class: "controls" }, control("cancel", "Cancel turn"), control("compact", "Compact"), control("clear", "Clear"), control("reset", "Reset"));
  }

  composer() {
    const text = h("textarea", { class: "message", rows: 2, placeholder: "Send a message (Ctrl+Enter)", "aria-label": "message" });
    const policy = h("select", { class: "turn-policy", "aria-label": "turn policy" }, h("option", { value: "steer" }, "steer"), h("option", { value: "queue" }, "queue"));
    const send = () => {
      const message = text.value;
      if (!message.trim()) return;
      this.act(async () => {
        const answer = await postJson(sessionPath(this.sessionId), { message, turnPolicy: policy.value });
        text.value = "";
        return answer;
      });
    };
    text.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) send();
    });
    const form = h("form", { class: "composer" }, text, policy, h("button", { type: "submit", class: "send" }, "Send"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      send();
    });
    return form;
  }

  async act(action) {
    fill(this.notice, "…");
    try {
      const answer = await action();
      fill(this.notice, answer && answer.status ? `${answer.status}` : "done");
    } catch (error) {
      fill(this.notice, h("span", { class: "error" }, error.message));
    }
  }
}
