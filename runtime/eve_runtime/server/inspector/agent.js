// The agent: instructions, tools with their input schemas, skills, subagents, channels, schedules
// and connections (GET /eve/v1/info), and the build (GET /eve/v1/dev/build).

import { getJson, postJson } from "./api.js";
import { fill, h, pretty } from "./dom.js";
import { diagnosticsList } from "./build.js";

function section(title, entries, draw) {
  return h(
    "section",
    { class: "agent-part", dataset: { part: title.toLowerCase() } },
    h("h3", {}, `${title} (${entries.length})`),
    entries.length ? h("ul", {}, entries.map((entry) => h("li", {}, draw(entry)))) : h("p", { class: "none" }, "none"),
  );
}

const named = (entry, ...rest) => [h("strong", {}, entry.name ?? ""), entry.description ? ` — ${entry.description}` : "", ...rest];

export class AgentView {
  constructor(build) {
    this.build = build;
    this.body = h("div", { class: "agent-body" });
    this.buildNode = h("div", { class: "agent-build" });
    this.notice = h("div", { class: "notice", role: "status" });
    this.node = h("section", { id: "agent" }, this.buildNode, this.notice, this.body);
    this.unsubscribe = build.subscribe((status, changed) => {
      this.drawBuild(status);
      if (changed) this.load();
    });
    this.load();
  }

  close() {
    this.unsubscribe();
  }

  async load() {
    try {
      this.draw(await getJson("/eve/v1/info"));
    } catch (error) {
      fill(this.body, h("p", { class: "error" }, error.message));
    }
  }

  drawBuild(status) {
    if (!status) return;
    fill(
      this.buildNode,
      h("h3", {}, "Build"),
      h("p", {}, `generation ${status.generation} · ${status.rebuilds} rebuilds · `, h("span", { class: `badge build-${status.status}` }, status.status)),
      diagnosticsList(status.diagnostics || []),
    );
  }

  draw(info) {
    const agent = info.agent || {};
    const tools = (info.tools && info.tools.static) || [];
    const skills = (info.skills && info.skills.static) || [];
    const subagents = (info.subagents && info.subagents.local) || [];
    const channels = (info.channels && info.channels.routes) || [];
    const instructions = (info.instructions && info.instructions.static) || [];
    fill(
      this.body,
      h("h2", {}, "Agent ", h("code", {}, agent.name ?? "")),
      h("p", {}, `model ${(agent.model && agent.model.id) || "?"} · mode ${info.mode}`, agent.description ? ` · ${agent.description}` : ""),
      section("Instructions", instructions, (i) => [h("strong", {}, i.name ?? ""), h("pre", {}, i.content ?? "")]),
      section("Tools", tools, (t) => named(t, h("details", {}, h("summary", {}, "input schema"), h("pre", {}, pretty(t.inputSchema ?? {}))))),
      section("Skills", skills, (s) => named(s)),
      section("Subagents", subagents, (s) => named(s)),
      section("Channels", channels, (c) => [h("strong", {}, c.name ?? ""), ` ${c.method ?? ""} ${c.urlPath ?? ""}`]),
      section("Schedules", info.schedules || [], (s) => [
        h("strong", {}, s.name ?? ""),
        ` ${s.cron ?? ""} `,
        info.mode === "development" ? h("button", { type: "button", class: "run-schedule", onclick: () => this.fire(s.name) }, "Run now") : null,
      ]),
      section("Connections", info.connections || [], (c) => [h("strong", {}, c.name ?? ""), ` ${c.kind ?? c.protocol ?? ""}`]),
    );
  }

  async fire(name) {
    try {
      const answer = await postJson(`/eve/v1/dev/schedules/${encodeURIComponent(name)}`, {});
      fill(this.notice, `started ${(answer.sessionIds || []).join(", ")}`);
    } catch (error) {
      fill(this.notice, h("span", { class: "error" }, error.message));
    }
  }
}
