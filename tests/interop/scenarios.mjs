// Scenarios driven by eve's own TypeScript client (`eve/client`, npm `eve` 0.80.1), public API only.
//
// Run by tests/interop/test_client.py (one node process for all of them), against our server or
// the original eve. Input: the environment variable EVE_INTEROP, a JSON object
//   {host, token?, people?, modules, only?, serial?, timeoutMs?, app: {weather, approval, subagent}, stranded?}
// where `modules` is the node_modules folder holding `eve`, `app` names the calls the app
// under test answers (our template and the oracle's app name their tools differently),
// `people` ({bob: token}) is a second person's bearer token when the server tells callers apart
// (`token` is then alice's), and `stranded` is the id of a session another eve version wrote,
// when the server has one.
// Output: one JSON line per scenario on stdout: {name, ok, detail} or {name, ok: false, error}.

import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const config = JSON.parse(process.env.EVE_INTEROP);
const require = createRequire(`${config.modules}/`);
const eve = await import(pathToFileURL(require.resolve("eve/client")).href);
const {
  AgentInfoResponseError,
  Client,
  ClientError,
  EveAgentStore,
  conversationReducer,
  createTextWithFileContent,
  defaultMessageReducer,
  toolCallState,
  transcriptReducer,
} = eve;

const SCENARIO_TIMEOUT_MS = Number(config.timeoutMs ?? 20000);

class Failed extends Error {}

function check(condition, message, detail) {
  if (!condition) throw new Failed(`${message}${detail === undefined ? "" : `: ${JSON.stringify(detail)}`}`);
}

// `client(null)` sends no credentials; `client()` sends the configured token, if any.
function client(auth = config.token ? { bearer: config.token } : null) {
  return new Client({ host: config.host, ...(auth ? { auth } : {}) });
}

function reduce(reducer, events) {
  let data = reducer.initial();
  for (const event of events) data = reducer.reduce(data, event);
  return data;
}

function types(events) {
  return events.map((event) => event.type);
}

function ofType(events, type) {
  return events.filter((event) => event.type === type);
}

async function all(session, startIndex = 0) {
  const events = [];
  for await (const event of session.stream({ startIndex, follow: false })) events.push(event);
  return events;
}

async function settled(response) {
  const result = await response.result();
  check(result.status !== "failed", "the turn failed", result.events.at(-1));
  return result;
}

async function parked(c) {
  const { session, response } = await c.sessions.create({ message: config.app.approval });
  const result = await settled(response);
  check(result.status === "waiting", "an approval-gated call parks the turn", result.status);
  check(result.inputRequests.length === 1, "one approval request", result.inputRequests);
  const [request] = result.inputRequests;
  check(request.kind === "tool-approval" && request.options.some((o) => o.id === "approve"), "its shape", request);
  return { session, request, result };
}

function resolutions(events) {
  return ofType(events, "input.resolved").flatMap((event) => event.data.resolutions);
}

const scenarios = {
  async health() {
    const health = await client(null).health();
    check(health.ok === true && health.status === "ready", "health", health);
    return health;
  },

  async info() {
    const c = client();
    const raw = await (await c.fetch("/eve/v1/info")).json();
    try {
      const info = await c.info();
      return { version: info.version, issues: [], tools: info.tools.static.map((t) => t.name) };
    } catch (error) {
      if (!(error instanceof AgentInfoResponseError)) throw error;
      // The one difference allowed: `version` (6 here; the 0.80.1 client insists on 5).
      const others = error.issues.filter((issue) => !issue.startsWith("version:"));
      check(others.length === 0, "the document passes the client's schema but for version", others);
      return { version: raw.version, issues: error.issues };
    }
  },

  async streaming_and_reducers() {
    const c = client();
    const { session, response } = await c.sessions.create({ message: "hello interop" });
    const streamed = [];
    for await (const event of response) streamed.push(event);
    check(streamed.at(-1)?.type !== undefined, "events arrive", types(streamed));
    const completed = ofType(streamed, "message.completed").at(-1);
    check(completed?.data.message === "echo: hello interop", "the reply", completed?.data);
    const deltas = ofType(streamed, "message.appended").map((e) => e.data.messageDelta).join("");
    check(deltas === completed.data.message, "the deltas add up to the message", deltas);
    const events = await all(session);
    const transcript = reduce(transcriptReducer(), events);
    check(
      JSON.stringify(transcript.messages) ===
        JSON.stringify([
          { role: "user", text: "hello interop" },
          { role: "assistant", text: "echo: hello interop" },
        ]),
      "transcriptReducer",
      transcript.messages,
    );
    const messages = reduce(defaultMessageReducer(), events).messages;
    check(messages.length === 2 && messages[0].role === "user" && messages[1].role === "assistant", "defaultMessageReducer", messages);
    const conversation = reduce(conversationReducer, events);
    const turns = Object.values(conversation.turns);
    check(turns.length === 1 && turns[0].status === "completed", "conversationReducer turns", turns);
    return { events: events.length, streamed: types(streamed).length };
  },

  async follow_ups() {
    const c = client();
    const { session, response } = await c.sessions.create({ message: "first" });
    await settled(response);
    const second = await settled(await session.send("second"));
    check(second.message === "echo: second", "the follow-up's reply", second.message);
    const third = await settled(await session.send("third", { turnPolicy: "queue" }));
    check(third.message === "echo: third", "a queued follow-up's reply", third.message);
    const turns = ofType(await all(session), "turn.started").map((e) => e.data.turnId);
    check(JSON.stringify(turns) === JSON.stringify(["turn_0", "turn_1", "turn_2"]), "three turns", turns);
    return { turns };
  },

  async tools() {
    const c = client();
    const { session, response } = await c.sessions.create({ message: config.app.weather });
    const result = await settled(response);
    const [action] = ofType(result.events, "action.result");
    check(action?.data.status === "completed", "the tool ran", action?.data);
    check(action.data.result.output.condition === "Sunny", "its output", action.data.result.output);
    check(result.message.startsWith("get_weather -> "), "the model read the result", result.message);
    const conversation = reduce(conversationReducer, await all(session));
    const state = toolCallState(conversation, action.data.result.callId);
    check(state.status === "completed", "toolCallState", state);
    return { reply: result.message };
  },

  async approval_approve() {
    const { session, request } = await parked(client());
    const result = await settled(await session.respond([{ requestId: request.requestId, optionId: "approve" }]));
    const outcomes = resolutions(await all(session)).map((r) => r.outcome);
    check(JSON.stringify(outcomes) === JSON.stringify(["approved"]), "approved", outcomes);
    const actions = ofType(await all(session), "action.result").map((e) => e.data.status);
    check(JSON.stringify(actions) === JSON.stringify(["completed"]), "the call ran once", actions);
    check(result.status === "waiting" && result.inputRequests.length === 0, "the turn ended", result.status);
    return { reply: result.message };
  },

  async approval_deny() {
    const { session, request } = await parked(client());
    const result = await settled(await session.respond([{ requestId: request.requestId, optionId: "cancel" }]));
    const events = await all(session);
    check(JSON.stringify(resolutions(events).map((r) => r.outcome)) === '["denied"]', "denied", resolutions(events));
    const [action] = ofType(events, "action.result");
    check(action.data.status === "rejected" && action.data.error.code === "TOOL_EXECUTION_DENIED", "rejected", action.data);
    return { reply: result.message };
  },

  async approval_invalid() {
    const { session, request } = await parked(client());
    const result = await settled(await session.respond([{ requestId: request.requestId }]));
    const events = await all(session);
    const [resolution] = resolutions(events);
    check(resolution.outcome === "invalid", "invalid", resolution);
    check(resolution.response?.optionId === undefined, "no optionId echoed", resolution.response);
    check(ofType(events, "approval.settled").length === 0, "no approval.settled", types(events));
    const [action] = ofType(events, "action.result");
    check(action.data.error.message === "Invalid approval response.", "the rejection", action.data.error);
    return { reply: result.message };
  },

  async approval_unknown_request() {
    const { session, request } = await parked(client());
    const response = await session.respond([{ requestId: "aitxt-not-a-request", optionId: "approve" }]);
    await response.result();
    const events = await all(session);
    const [resolution] = resolutions(events);
    check(resolution?.requestId === request.requestId && resolution.outcome === "ignored", "withdrawn", resolution);
    check(ofType(events, "action.result").every((e) => e.data.status === "rejected"), "never ran", types(events));
    check(events.at(-1).type === "session.waiting", "the turn ended", types(events).slice(-3));
    return { received: ofType(events, "message.received").map((e) => e.data.message) };
  },

  async approval_override_by_message() {
    const { session, request } = await parked(client());
    const result = await settled(await session.send("never mind"));
    check(result.status === "waiting" && result.inputRequests.length === 0, "the turn went on", result.status);
    // send().result() follows its delivery id: it sees the withdrawal only when those events carry it
    const seen = types(result.events);
    check(seen.includes("input.resolved") && seen.includes("action.result"), "send() sees the withdrawal", seen);
    const [resolution] = resolutions(result.events);
    check(resolution.requestId === request.requestId && resolution.outcome === "ignored", "ignored", resolution);
    // the withdrawn call keeps the denial's code (eve-observed.md #6)
    const [withdrawn] = ofType(result.events, "action.result");
    check(withdrawn.data.status === "rejected" && withdrawn.data.error.code === "TOOL_EXECUTION_DENIED", "its code", withdrawn.data);
    check(withdrawn.data.result.output.approval.status === "ignored", "its approval status", withdrawn.data.result.output);
    check(result.message === "echo: never mind", "the message steered the turn", result.message);
    return { events: seen.length, code: withdrawn.data.error.code, message: withdrawn.data.error.message };
  },

  async create_background_mode() {
    // eve 0.80.1 answers `mode: "background"` with 202 (eve-observed.md #24); the client has no option for it
    const c = client();
    const body = JSON.stringify({ message: "hello background", mode: "background" });
    const created = await c.fetch("/eve/v1/session", { method: "POST", headers: { "content-type": "application/json" }, body });
    check(created.status === 202, "202", created.status);
    const { sessionId } = await created.json();
    const session = c.sessions.attach(sessionId);
    const events = [];
    for await (const event of session.stream({ startIndex: 0 })) {
      events.push(event);
      if (event.type === "session.waiting") break;
    }
    const reply = ofType(events, "message.completed").at(-1)?.data.message;
    check(reply === "echo: hello background", "an ordinary conversation", reply);
    return { status: created.status, reply };
  },

  async stranded_session() {
    if (!config.stranded) return { skipped: "the server has no stranded session" };
    const c = client();
    const session = c.sessions.attach(config.stranded);
    let refused;
    try {
      await session.send("hello?");
    } catch (error) {
      refused = error;
    }
    check(refused instanceof ClientError && refused.status === 409, "a message is refused", refused?.status);
    const before = await all(session); // a bounded read of its history still works
    check(ofType(before, "message.received").length === 1, "its recorded conversation", types(before));
    const reset = await session.reset();
    check(reset.status === "reset", "a reset retires it", reset);
    const events = await all(session);
    const ended = events.at(-1);
    check(ended.type === "session.failed", "its end is recorded", types(events));
    check(ended.data.code === "session_stranded" && ended.data.details?.trigger === "reset", "as the docs say", ended.data);
    check(ended.data.sessionId === config.stranded && ended.data.usage === undefined, "no usage", ended.data);
    const followed = [];
    for await (const event of session.stream({ startIndex: 0 })) followed.push(event); // a follow ends at it
    check(followed.length === events.length, "a follow replays and ends", types(followed));
    return { refused: refused.status, last: ended.type, code: ended.data.code, trigger: ended.data.details.trigger, transcript: reduce(transcriptReducer(), events).messages.length };
  },

  async reconnect_by_cursor() {
    const c = client();
    const { session, response } = await c.sessions.create({ message: "one two three" });
    await settled(response);
    const events = await all(session);
    const tail = await all(session, 4);
    check(JSON.stringify(tail.map((e) => e.meta.id)) === JSON.stringify(events.slice(4).map((e) => e.meta.id)), "from index 4", tail.length);
    const attached = c.sessions.attach(session.state.sessionId);
    const again = [];
    for await (const event of attached.stream({ startIndex: events.length - 1, follow: false })) again.push(event);
    check(again.length === 1 && again[0].meta.id === events.at(-1).meta.id, "an attached session reads on", types(again));
    const next = await settled(await attached.send("after attach"));
    check(next.message === "echo: after attach", "and sends", next.message);
    return { events: events.length };
  },

  async cancel() {
    const c = client();
    const { session, response } = await c.sessions.create({ message: "/delay 400\n/reply one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen" });
    const seen = [];
    for await (const event of response) {
      seen.push(event);
      if (event.type === "message.appended" && seen.filter((e) => e.type === "message.appended").length === 1) {
        const cancelled = await response.cancel();
        check(cancelled.status === "accepted" || cancelled.status === "cancelled", "cancel accepted", cancelled);
      }
    }
    const events = await all(session);
    check(types(events).includes("turn.cancelled"), "turn.cancelled", types(events));
    check(events.at(-1).type === "session.waiting", "then waiting", types(events).slice(-3));
    const idle = await session.cancel();
    return { idle: idle.status, last: types(events).slice(-2) };
  },

  async controls() {
    const c = client();
    const { session, response } = await c.sessions.create({ message: "remember this" });
    await settled(response);
    await settled(await session.send("and this"));
    const compacted = await session.compact();
    check(compacted.status === "accepted", "compact", compacted);
    const cleared = await session.clear();
    check(cleared.status === "accepted", "clear", cleared);
    const deadline = Date.now() + 10000;
    let events = await all(session);
    while (!types(events).includes("context.cleared") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      events = await all(session);
    }
    check(types(events).includes("compaction.completed") && types(events).includes("context.cleared"), "both ran", types(events));
    const after = await settled(await session.send("what now"));
    check(after.message === "echo: what now", "a turn after the clear", after.message);
    const reset = await session.reset({ reason: "interop" });
    check(reset.status === "reset", "reset", reset);
    let refused;
    try {
      await session.send("after reset");
    } catch (error) {
      refused = error;
    }
    check(refused instanceof ClientError && refused.status === 409, "a reset session refuses messages", refused?.status);
    const ended = await all(session);
    check(ended.at(-1).type === "session.completed", "session.completed last", types(ended).slice(-2));
    check(ended.at(-1).meta.deliveryIds?.length > 0, "session.completed carries delivery ids", ended.at(-1).meta);
    return { compact: compacted.status, clear: cleared.status, reset: reset.status };
  },

  async subagents() {
    if (!config.app.subagent) return { skipped: "the app has no subagent" };
    const c = client();
    const { session, response } = await c.sessions.create({ message: config.app.subagent });
    const result = await settled(response);
    const events = await all(session);
    const started = ofType(events, "agent.started")[0];
    check(started !== undefined, "agent.started", types(events));
    const child = session.agent(started);
    const childEvents = [];
    for await (const event of child.stream({ follow: false })) childEvents.push(event);
    const reply = ofType(childEvents, "message.completed").at(-1)?.data.message;
    check(reply === "Sunny all week.", "the child's reply", reply);
    const conversation = reduce(conversationReducer, events);
    check(Object.keys(conversation.agents).length >= 1, "conversationReducer sees the agent", conversation.agents);
    return { parent: result.message, child: reply };
  },

  async trace() {
    const c = client();
    const theirs = "4bf92f3577b34da6a3ce929d0e0e4736";
    const { session, response } = await c.sessions.create({
      message: "traced",
      headers: { traceparent: `00-${theirs}-00f067aa0ba902b7-01` },
    });
    await settled(response);
    await settled(await session.send("untraced"));
    const events = await all(session);
    const [started] = ofType(events, "session.started");
    const trace = started.data.trace;
    check(/^[0-9a-f]{32}$/.test(trace?.traceId) && /^[0-9a-f]{16}$/.test(trace.spanId), "W3C ids", trace);
    check(trace.traceFlags === 1 && trace.decision?.action === "record", "flags and decision", trace);
    const [first, second] = ofType(events, "turn.started").map((e) => e.data.trace);
    check(JSON.stringify(first) === JSON.stringify(trace), "the first turn reports the session's ids", first);
    check(/^[0-9a-f]{32}$/.test(second?.traceId) && second.traceId !== trace.traceId, "a later turn's own trace", second);
    return { keys: Object.keys(trace).sort(), honoured: trace.traceId === theirs };
  },

  async two_people() {
    if (!config.people?.bob) return { skipped: "the server has one principal" };
    const alice = client();
    const { session, request } = await parked(alice);
    const bob = client({ bearer: config.people.bob }).sessions.attach(session.state.sessionId);
    const bobs = await bob.send("bob here");
    const before = await all(session);
    check(ofType(before, "input.resolved").length === 0, "bob's message withdraws nothing", types(before).slice(-3));
    const approved = await settled(await session.respond([{ requestId: request.requestId, optionId: "approve" }]));
    check(approved.message?.startsWith("send_alert -> "), "alice's turn went on", approved.message);
    const later = await settled(bobs);
    check(later.message === "echo: bob here", "bob's message ran after alice's turn", later.message);
    const events = await all(session);
    check(JSON.stringify(resolutions(events).map((r) => r.outcome)) === '["approved"]', "approved", resolutions(events));
    const [settledBy] = ofType(events, "approval.settled");
    check(settledBy.data.responderPrincipalId === "alice", "alice answered", settledBy.data);
    const received = ofType(events, "message.received").map((e) => e.data.turnId);
    check(JSON.stringify(received) === '["turn_0","turn_1"]', "bob's turn is its own", received);
    return { responder: settledBy.data.responderPrincipalId, turns: received };
  },

  async eve_agent_store() {
    const store = new EveAgentStore({ client: client(), reducer: transcriptReducer() });
    const ready = (count) =>
      new Promise((resolve) => {
        const test = () => store.snapshot.status === "ready" && store.snapshot.data.messages.length >= count;
        if (test()) return resolve();
        const stop = store.subscribe(() => {
          if (test()) {
            stop();
            resolve();
          }
        });
      });
    await store.send({ message: "hello store" });
    await ready(2);
    await store.send({ message: "again" });
    await ready(4);
    const texts = store.snapshot.data.messages.map((m) => `${m.role}:${m.text}`);
    check(JSON.stringify(texts) === JSON.stringify(["user:hello store", "assistant:echo: hello store", "user:again", "assistant:echo: again"]), "the transcript", texts);
    check(store.snapshot.session?.sessionId !== undefined, "the store's session", store.snapshot.session);
    const retired = await store.retire();
    check(retired.status === "reset", "retire", retired);
    return { messages: texts.length };
  },

  async file_parts() {
    const c = client();
    const bytes = new TextEncoder().encode("hello from a file\n");
    const message = createTextWithFileContent({ bytes, mediaType: "text/plain", filename: "notes.txt", text: "read this" });
    const { session, response } = await c.sessions.create({ message });
    await settled(response);
    const [received] = ofType(await all(session), "message.received");
    const file = received.data.parts.find((part) => part.type === "file");
    check(file?.filename === "notes.txt" && file.mediaType === "text/plain" && file.size === bytes.length, "the part", received.data.parts);
    const followUp = await settled(await session.send([{ type: "text", text: "and this" }, { type: "file", data: "data:text/csv;base64,YSxiCjEsMgo=", mediaType: "text/csv", filename: "t.csv" }]));
    const parts = ofType(followUp.events, "message.received")[0]?.data.parts ?? [];
    check(parts.some((p) => p.type === "file" && p.filename === "t.csv" && p.size === 8), "a follow-up's part", parts);
    return { parts: received.data.parts, reply: followUp.message };
  },

  async bearer_auth() {
    const health = await client(null).health();
    const outcomes = {};
    for (const [label, auth] of [["none", null], ["wrong", { bearer: "not-the-token" }]]) {
      try {
        await client(auth).sessions.create({ message: "hi" });
        outcomes[label] = "accepted";
      } catch (error) {
        check(error instanceof ClientError, "a ClientError", String(error));
        outcomes[label] = error.status;
      }
    }
    const { response } = await client().sessions.create({ message: "with the token" });
    const result = await settled(response);
    check(result.message === "echo: with the token", "with the token", result.message);
    return { health: health.status, ...outcomes };
  },
};

function withTimeout(promise, ms) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Failed(`timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

async function run(name) {
  let line;
  try {
    line = { name, ok: true, detail: await withTimeout(scenarios[name](), SCENARIO_TIMEOUT_MS) };
  } catch (error) {
    line = { name, ok: false, error: error instanceof Failed ? error.message : `${error?.name}: ${error?.message}` };
  }
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

// All at once (fast), or one after another (`serial`: a slow server, such as the original's eve dev).
const names = config.only ?? Object.keys(scenarios);
if (config.serial) {
  for (const name of names) await run(name);
} else {
  await Promise.all(names.map(run));
}
process.exit(0);
