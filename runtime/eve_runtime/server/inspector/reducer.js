// Folding a session's events into what the page shows (a JS mirror of eve_runtime.client.reducer,
// keeping more for a person: turns with their usage, markers for compaction, clear, failures and
// interruptions, and every raw event with its index).
// Deterministic and idempotent: an event seen before (same meta.id) changes nothing.

let nextKey = 0;

function add(a = {}, b = {}) {
  const sum = {
    inputTokens: (a.inputTokens ?? 0) + (b.inputTokens ?? 0),
    outputTokens: (a.outputTokens ?? 0) + (b.outputTokens ?? 0),
  };
  if (typeof a.costUsd === "number" || typeof b.costUsd === "number") sum.costUsd = (a.costUsd ?? 0) + (b.costUsd ?? 0);
  return sum;
}

const str = (value) => (typeof value === "string" ? value : null);
const stepKey = (data) => `${data.turnId ?? ""}#${data.stepIndex ?? ""}`;

export class SessionModel {
  constructor() {
    this.events = []; // {index, type, id, at, data}
    this.items = []; // the timeline, oldest first
    this.changed = new Set(); // items to draw again
    this.calls = new Map();
    this.openText = new Map();
    this.openReasoning = new Map();
    this.turnItems = new Map();
    this.pending = new Map(); // open requests by requestId
    this.tasks = new Map();
    this.status = "idle";
    this.error = null;
    this.total = {};
    this.sinceTotal = {};
    this.seen = new Set();
  }

  get usage() {
    return add(this.total, this.sinceTotal);
  }

  item(kind, fields) {
    const item = { key: ++nextKey, kind, ...fields };
    this.items.push(item);
    this.changed.add(item);
    return item;
  }

  touch(item) {
    this.changed.add(item);
    return item;
  }

  marker(label, data, tone = "info") {
    return this.item("marker", { label, tone, turnId: str(data.turnId), detail: null });
  }

  apply(index, event) {
    const id = event.meta && event.meta.id;
    if (id) {
      if (this.seen.has(id)) return false;
      this.seen.add(id);
    }
    const data = event.data && typeof event.data === "object" ? event.data : {};
    this.events.push({ index, type: String(event.type), id: id ?? "", at: (event.meta && event.meta.at) ?? "", data });
    const handler = HANDLERS[event.type];
    if (handler) handler.call(this, data);
    return true;
  }

  call(callId, name, data) {
    let call = this.calls.get(callId);
    if (!call) {
      call = this.item("tool", {
        callId, name, turnId: str(data.turnId), callKind: "tool-call", state: "input-streaming",
        inputText: "", input: null, output: undefined, error: null, approval: null, requestId: null,
        taskId: null, childSessionId: null, label: null,
      });
      this.calls.set(callId, call);
    }
    return this.touch(call);
  }

  /** End the open text and reasoning blocks whose step matches: `interrupted`, or `superseded` (the step ran again). */
  interrupt(matches, state = "interrupted") {
    for (const blocks of [this.openText, this.openReasoning]) {
      for (const [key, block] of [...blocks]) {
        if (!matches(key)) continue;
        blocks.delete(key);
        block.state = state;
        this.touch(block);
      }
    }
  }

  takeTotal(data) {
    if (data.usage && typeof data.usage === "object") {
      this.total = data.usage;
      this.sinceTotal = {};
    }
  }

  endTurn(data, state) {
    const turnId = str(data.turnId);
    this.interrupt((key) => key.startsWith(`${turnId}#`));
    const turn = this.turnItems.get(turnId);
    if (turn) this.touch(turn).state = state;
    this.status = "idle";
  }
}

const HANDLERS = {
  "turn.started"(data) {
    const turnId = str(data.turnId);
    this.turnItems.set(turnId, this.item("turn", { turnId, sequence: data.sequence, state: "running", usage: {} }));
    this.status = "running";
    this.error = null;
  },
  "message.received"(data) {
    if (data.kind === "task.result") return;
    const text = typeof data.message === "string" ? data.message : (data.parts || []).map((p) => p.text ?? "").join(" ");
    this.item("user", { text, turnId: str(data.turnId) });
  },
  "step.started"(data) {
    this.interrupt((key) => key === stepKey(data), "superseded"); // a step running again: its earlier output is void
    this.status = "running";
  },
  "reasoning.appended"(data) {
    const key = stepKey(data);
    let block = this.openReasoning.get(key);
    if (!block) {
      block = this.item("reasoning", { text: "", state: "streaming", turnId: str(data.turnId) });
      this.openReasoning.set(key, block);
    }
    this.touch(block).text += str(data.reasoningDelta) ?? "";
  },
  "reasoning.completed"(data) {
    const key = stepKey(data);
    const block = this.openReasoning.get(key) ?? this.item("reasoning", { text: "", turnId: str(data.turnId) });
    this.openReasoning.delete(key);
    block.text = str(data.reasoning) ?? block.text;
    this.touch(block).state = "completed";
  },
  "message.appended"(data) {
    const key = stepKey(data);
    let block = this.openText.get(key);
    if (!block) {
      block = this.item("assistant", { text: "", state: "streaming", turnId: str(data.turnId) });
      this.openText.set(key, block);
    }
    this.touch(block).text += str(data.messageDelta) ?? "";
  },
  "message.completed"(data) {
    const key = stepKey(data);
    const block = this.openText.get(key) ?? this.item("assistant", { text: "", turnId: str(data.turnId) });
    this.openText.delete(key);
    block.text = str(data.message) ?? block.text;
    block.state = "completed";
    this.touch(block).finishReason = str(data.finishReason);
  },
  "action.input.appended"(data) {
    const callId = str(data.callId);
    if (callId) this.call(callId, str(data.toolName) ?? "", data).inputText += str(data.inputTextDelta) ?? "";
  },
  "actions.requested"(data) {
    for (const action of data.actions || []) {
      if (!action || typeof action.callId !== "string") continue;
      const name = str(action.toolName) ?? str(action.name) ?? str(action.subagentName) ?? str(action.kind) ?? "";
      const call = this.call(action.callId, name, data);
      call.name = name;
      call.callKind = str(action.kind) ?? "tool-call";
      call.state = "input-available";
      call.input = action.input ?? {};
      const presentation = data.presentation && data.presentation[action.callId];
      call.label = (presentation && str(presentation.label)) ?? null;
    }
  },
  "action.partial"(data) {
    const result = data.result;
    if (result && typeof result.callId === "string") {
      const call = this.call(result.callId, str(result.toolName) ?? "", data);
      call.output = result.output;
      call.state = "output-partial";
    }
  },
  "action.result"(data) {
    const result = data.result;
    if (!result || typeof result.callId !== "string") return;
    const call = this.call(result.callId, str(result.toolName) ?? str(result.subagentName) ?? "", data);
    call.output = result.output;
    call.state = data.status === "failed" || data.status === "rejected" ? data.status : "completed";
    call.error = data.error && typeof data.error === "object" ? data.error : null;
    if (call.error && call.error.code) call.state = call.error.code === "ACTION_ABANDONED" ? "abandoned" : call.state;
  },
  "input.requested"(data) {
    for (const request of data.requests || []) {
      if (!request || typeof request.requestId !== "string") continue;
      const action = request.action && typeof request.action === "object" ? request.action : {};
      const entry = {
        requestId: request.requestId, kind: str(request.kind) ?? "", prompt: str(request.prompt),
        options: (request.options || []).filter((o) => o && typeof o.id === "string"),
        allowFreeform: request.allowFreeform === true, callId: str(action.callId) ?? str(data.callId),
        toolName: str(action.toolName), input: action.input, taskId: str(data.taskId),
      };
      this.pending.set(entry.requestId, entry);
      const call = entry.taskId === null ? this.calls.get(entry.callId ?? "") : null;
      if (call) {
        call.approval = "pending";
        this.touch(call).requestId = entry.requestId;
      }
    }
    this.status = "waiting-on-input";
  },
  "input.resolved"(data) {
    for (const resolution of data.resolutions || []) {
      const request = this.pending.get(String(resolution && resolution.requestId));
      if (!request) continue;
      this.pending.delete(request.requestId);
      const call = request.taskId === null ? this.calls.get(request.callId ?? "") : null;
      if (call) this.touch(call).approval = str(resolution.outcome) ?? "resolved";
    }
  },
  "task.started"(data) {
    const taskId = str(data.taskId);
    if (!taskId) return;
    const task = this.tasks.get(taskId) ?? { taskId, childSessionId: null };
    Object.assign(task, { callId: str(data.callId), name: str(data.name), kind: str(data.kind), status: "working" });
    this.tasks.set(taskId, task);
    const call = this.calls.get(task.callId ?? "");
    if (call) this.touch(call).taskId = taskId;
  },
  "task.settled"(data) {
    const task = this.tasks.get(str(data.taskId) ?? "");
    if (!task) return;
    task.status = str(data.status) ?? "completed";
    task.output = data.output;
    const call = this.calls.get(task.callId ?? "");
    if (call) this.touch(call);
  },
  "agent.started"(data) {
    const taskId = str(data.taskId) ?? str(data.callId);
    if (!taskId) return;
    const task = this.tasks.get(taskId) ?? { taskId, callId: str(data.callId), name: str(data.name), kind: "agent" };
    task.childSessionId = str(data.sessionId);
    this.tasks.set(taskId, task);
    const call = this.calls.get(task.callId ?? "");
    if (call) this.touch(call).childSessionId = task.childSessionId;
  },
  "compaction.requested"(data) {
    this.compaction = this.marker("compacting the conversation…", data);
  },
  "compaction.completed"(data) {
    if (this.compaction) this.touch(this.compaction).label = "conversation compacted";
    else this.marker("conversation compacted", data);
    this.compaction = null;
  },
  "context.cleared"(data) {
    this.interrupt(() => true);
    this.marker("context cleared: the model starts over from here", data);
  },
  "step.completed"(data) {
    const usage = data.usage && typeof data.usage === "object" ? data.usage : null;
    if (usage) {
      this.sinceTotal = add(this.sinceTotal, usage);
      const turn = this.turnItems.get(str(data.turnId));
      if (turn) this.touch(turn).usage = add(turn.usage, usage);
    }
    this.interrupt((key) => key === stepKey(data));
  },
  "step.failed"(data) {
    this.interrupt((key) => key === stepKey(data));
    const marker = this.marker(`step ${data.stepIndex ?? ""} failed: ${data.code ?? "error"}`, data, "error");
    marker.detail = str(data.message) ?? (data.error && str(data.error.message));
  },
  "step.retrying"(data) {
    const marker = this.marker(`step ${data.stepIndex ?? ""} retrying: ${data.code ?? ""}`, data, "warn");
    marker.detail = str(data.message);
  },
  "turn.waiting"(data) {
    this.takeTotal(data);
    this.status = data.on === "input" ? "waiting-on-input" : "waiting-on-tasks";
  },
  "turn.completed"(data) {
    this.endTurn(data, "completed");
  },
  "turn.cancelled"(data) {
    this.endTurn(data, "cancelled");
    this.marker("turn cancelled", data, "warn");
  },
  "turn.failed"(data) {
    this.endTurn(data, "failed");
    this.error = { code: String(data.code ?? ""), message: String(data.message ?? "") };
    const marker = this.marker(`turn failed: ${data.code ?? "error"}`, data, "error");
    marker.detail = str(data.message);
  },
  "session.waiting"(data) {
    this.takeTotal(data);
    this.status = "idle";
  },
  "session.completed"(data) {
    this.takeTotal(data);
    this.interrupt(() => true);
    this.status = "ended";
    this.marker("session ended", data);
  },
  "session.failed"(data) {
    this.takeTotal(data);
    this.interrupt(() => true);
    this.status = "ended";
    this.error = { code: String(data.code ?? ""), message: String(data.message ?? "") };
    const marker = this.marker(`session failed: ${data.code ?? "error"}`, data, "error");
    marker.detail = str(data.message);
  },
};

HANDLERS["session.started"] = function (data) {
  const invocation = data.invocation && typeof data.invocation === "object" ? data.invocation : {};
  this.parentSessionId = str(invocation.parentSessionId);
  this.parentCallId = str(invocation.parentCallId);
};
