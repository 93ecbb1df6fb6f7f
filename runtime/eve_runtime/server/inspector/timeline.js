// Drawing one timeline item of a session (see reducer.js for the items).
// Everything a model, a tool or a person wrote goes in as text (dom.js), never as HTML.

import { h, pretty, route, usageText } from "./dom.js";

const STATE_LABELS = {
  "input-streaming": "preparing",
  "input-available": "running",
  "output-partial": "running",
  completed: "done",
  failed: "failed",
  rejected: "rejected",
  abandoned: "abandoned",
};

function block(label, value, open = false) {
  return h("details", { class: "io", open }, h("summary", {}, label), h("pre", {}, pretty(value)));
}

function user(item) {
  return h("li", { class: "item user" }, h("div", { class: "who" }, "user"), h("div", { class: "text" }, item.text));
}

function assistant(item) {
  if (item.state === "superseded") {
    return h(
      "li",
      { class: "item assistant superseded", dataset: { state: item.state } },
      h("details", {}, h("summary", {}, "output of an interrupted attempt (the step ran again)"), h("div", { class: "text" }, item.text)),
    );
  }
  const who = { streaming: "assistant (streaming…)", interrupted: "assistant (interrupted)" }[item.state] ?? "assistant";
  return h(
    "li",
    { class: `item assistant ${item.state}`, dataset: { state: item.state } },
    h("div", { class: "who" }, who),
    h("div", { class: "text" }, item.text),
  );
}

function reasoning(item, open) {
  const cut = item.state === "interrupted" || item.state === "superseded";
  const label = cut ? `reasoning (${item.state})` : `reasoning (${item.text.length} characters)`;
  return h(
    "li",
    { class: "item reasoning" },
    h("details", { open }, h("summary", {}, label), h("div", { class: "text" }, item.text)),
  );
}

function tool(item, model) {
  const task = item.taskId ? model.tasks.get(item.taskId) : null;
  const childId = item.childSessionId ?? (task && task.childSessionId);
  const shown = item.approval === "pending" && item.state === "input-available" ? "waiting" : STATE_LABELS[item.state] ?? item.state;
  const badges = [h("span", { class: `badge state-${item.state}` }, shown)];
  if (item.approval) {
    const approval = item.approval === "pending" ? "waiting for approval" : item.approval;
    badges.push(h("span", { class: `badge approval approval-${item.approval}` }, approval));
  }
  if (task) badges.push(h("span", { class: `badge task task-${task.status}` }, `task ${task.status}`));
  const kind = item.callKind === "subagent-call" ? "subagent" : "tool";
  return h(
    "li",
    { class: `item tool ${kind}`, dataset: { callId: item.callId, state: item.state, approval: item.approval ?? "" } },
    h(
      "div",
      { class: "tool-head" },
      h("span", { class: "tool-kind" }, kind),
      h("span", { class: "tool-name" }, item.name),
      item.label ? h("span", { class: "tool-label" }, item.label) : null,
      ...badges,
    ),
    block("input", item.input ?? item.inputText, true),
    item.output !== undefined ? block("output", item.output, true) : null,
    item.error ? block(`error ${item.error.code ?? ""}`, item.error, true) : null,
    task && task.output !== undefined ? block("task result", task.output) : null,
    childId ? h("a", { class: "child-link", href: route("session", childId) }, `open ${item.name}'s session →`) : null,
  );
}

function marker(item) {
  return h(
    "li",
    { class: `item marker tone-${item.tone}` },
    h("span", { class: "marker-label" }, item.label),
    item.detail ? h("span", { class: "marker-detail" }, item.detail) : null,
  );
}

function turn(item) {
  const usage = usageText(item.usage);
  return h(
    "li",
    { class: `item turn turn-${item.state}`, dataset: { turnId: item.turnId ?? "" } },
    h("span", {}, `turn ${Number(item.sequence ?? 0) + 1}`),
    h("span", { class: `badge turn-state` }, item.state),
    usage ? h("span", { class: "usage" }, usage) : null,
  );
}

/** The node of one item; `previous` (its old node) keeps a collapsible's open state. */
export function renderItem(item, model, previous) {
  const open = previous ? previous.querySelector("details")?.open ?? false : false;
  switch (item.kind) {
    case "user":
      return user(item);
    case "assistant":
      return assistant(item);
    case "reasoning":
      return reasoning(item, open);
    case "tool":
      return tool(item, model);
    case "turn":
      return turn(item);
    default:
      return marker(item);
  }
}
