// headspace's phone page: the agents, live, and the answers that fit each one.
//
// Everything from outside (pane text, names, folders) goes in with textContent,
// never as HTML.  Every answer carries the request this page drew (one
// appearance of a prompt): if the dialog changed since, or was answered and
// asked again, the service sends nothing and says so, and the page redraws.
"use strict";

const client = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
const agents = new Map(); // address -> the agent as the service last said, with .at (when it was said, here)
let problems = [];
let readOnly = false;
let shown = null; // the address of the agent open, or null for the list
let screen = null; // the open agent's last screen
// What the service says is stamped with how many changes it had sent before (rev, counted per epoch):
// a reply read before a change but arriving after that change's event is older, and is not drawn.
let epoch = null;
let screenRev = -1; // the shown screen's
const goneAt = new Map(); // address -> the rev its removal was sent at
let busy = false; // an answer is on its way: its buttons wait
let ticks = null; // a multi-select question's boxes as the user set them here (null: as the pane shows them)
let events = null;
let wasLive = false;
let heard = false; // the service's list was read at least once (before that, no "no agents yet": nothing is known)

const $ = (id) => document.getElementById(id);
const NAMED = new Set(["black", "red", "green", "brown", "yellow", "blue", "magenta", "cyan", "white"]);
const ACTION_NAMES = { approve: "Approve", deny: "Deny", nudge: "Nudge", interrupt: "Interrupt" };

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key.startsWith("data-") || key.startsWith("aria-") || key === "type" || key === "role") node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

// Another service (a restart), or the first one heard: nothing it was told before is kept.
function forget(newEpoch) {
  epoch = newEpoch;
  agents.clear();
  goneAt.clear();
  screenRev = -1;
}

// The agent as the service said it, unless what the page has is newer.
function keep(agent, now) {
  const before = agents.get(agent.address);
  if (before && before.rev > agent.rev) return false;
  if ((goneAt.get(agent.address) ?? -1) > agent.rev) return false;
  agents.set(agent.address, { ...agent, at: now ?? Date.now() });
  return true;
}

function order(a, b) {
  for (let i = 0; i < a.order.length; i++) {
    if (a.order[i] < b.order[i]) return -1;
    if (a.order[i] > b.order[i]) return 1;
  }
  return 0;
}

// How long, as the terminal's Time column says it (detect/clock.py's elapsed): to the second while an agent waits on you.
function ago(agent) {
  if (agent.for === null || agent.for === undefined) return "";
  const s = Math.max(0, Math.floor(agent.for + (Date.now() - agent.at) / 1000));
  const two = (n) => String(n).padStart(2, "0");
  const precise = agent.needs_you;
  if (s < 60) return precise ? `${s}s` : "<1m";
  if (s < 3600) return precise ? `${Math.floor(s / 60)}m${two(s % 60)}s` : `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${two(Math.floor((s % 3600) / 60))}m`;
  const days = Math.floor(s / 86400);
  return days < 100 ? `${days}d${two(Math.floor((s % 86400) / 3600))}h` : `${days}d`;
}

function folder(agent) {
  const parts = (agent.cwd || "").split("/").filter(Boolean);
  return parts.length ? parts[parts.length - 1] : agent.cwd || "";
}

function where(agent) {
  return agent.host && agent.host !== "local" ? `${agent.target} @${agent.host}` : agent.target;
}

// -- the list ------------------------------------------------------------------------------
function drawList() {
  const list = $("agents");
  const sorted = Array.from(agents.values()).sort(order);
  const items = sorted.map((agent) => {
    const open = el(
      "button",
      { type: "button", class: "open", onclick: () => openAgent(agent.address), "aria-label": `Open ${where(agent)}: ${agent.state}` },
      el("span", { class: `state s-${agent.state}`, text: `${agent.glyph} ${agent.state}` }),
      el("span", { class: "target", text: where(agent) }),
      el("span", { class: "time", text: ago(agent) }),
      el("span", { class: "folder", text: folder(agent) }),
      el("span", { class: "line", text: agent.snoozed ? `${agent.snoozed} · ${agent.line || ""}` : agent.line || "" }),
    );
    const kind = agent.needs_you ? " needs" : agent.snoozed ? " snoozed" : "";
    return el("li", { class: `agent${kind}`, "data-pane": agent.address, "data-state": agent.state, "data-snoozed": agent.snoozed ? "yes" : "no" }, open, quickApprove(agent));
  });
  list.replaceChildren(...items);
  $("empty").hidden = items.length > 0 || !heard;
  drawSummary();
}

// A plain permission is approved from the list in one tap: its tool and its exact command in full above the
// button, and Approve only where the card would offer it (never an option that widens what the agent may do:
// the service leaves "approve" out of such a dialog's actions). A change held for review, a question, a plan
// or a multi-select is opened first.
function plain(agent) {
  return agent.state === "permission" && agent.needs_you && !agent.offline && !readOnly && agent.tool && agent.actions.includes("approve") && !agent.multi_select && !agent.proposed;
}

function quickApprove(agent) {
  if (!plain(agent)) return null;
  const call = agent.detail ? `${agent.tool}: ${agent.detail}` : agent.tool;
  return el(
    "div",
    { class: "quick" },
    el("p", { class: "call", text: call }),
    el("button", { type: "button", class: "primary", text: "Approve", "aria-label": `Approve ${call}`, disabled: busy, onclick: () => answer(agent, "approve") }),
  );
}

// After an answer that leaves its agent to the others: the next agent that waits, or the list when none does.
function nextWaiting(answered) {
  return Array.from(agents.values()).sort(order).find((a) => a.needs_you && !a.offline && a.address !== answered) || null;
}

function moveOn(answered, words) {
  const next = nextWaiting(answered);
  const hash = next ? `#agent=${encodeURIComponent(next.address)}` : "";
  if (location.hash !== hash) history.pushState(null, "", hash || location.pathname);
  route();
  say(next ? `${words} Next: ${where(next)}.` : `${words} Nothing else waits.`, "ok");
}

// The header, on the list and on an agent's page alike: how many agents, how many need you, the hosts' problems.
function drawSummary() {
  // Counted as the terminal counts them: a snoozed wait does not need you, and says it is there.
  const all = Array.from(agents.values());
  const needing = all.filter((a) => a.needs_you).length;
  const snoozed = all.filter((a) => a.snoozed).length;
  $("summary").textContent = !heard ? "" : `${all.length} agent${all.length === 1 ? "" : "s"} · ${needing} need${needing === 1 ? "s" : ""} you${snoozed ? ` (${snoozed} snoozed)` : ""}`;
  $("problems").hidden = problems.length === 0;
  $("problems").textContent = problems.join(" · ");
}

// -- one agent -------------------------------------------------------------------------------
function openAgent(address) {
  if (location.hash !== `#agent=${encodeURIComponent(address)}`) location.hash = `agent=${encodeURIComponent(address)}`;
  else route();
}

function route() {
  const match = /^#agent=(.+)$/.exec(location.hash);
  const address = match ? decodeURIComponent(match[1]) : null;
  if (address !== shown) {
    shown = address;
    screen = null;
    screenRev = -1;
    ticks = null;
    say("");
    $("reply-text").value = "";
    $("changes").open = false;
    $("changes-body").replaceChildren();
    post("/api/focus", { client, pane: shown }).catch(() => {});
    if (shown) loadScreen();
  }
  $("list-view").hidden = shown !== null;
  $("agent-view").hidden = shown === null;
  redraw();
}

// A refusal's reason without its own "nothing sent" (the notice says it first).
function refused(reason) {
  return (reason || "").replace(/;? *nothing sent\.?$/i, "");
}

async function loadScreen() {
  const asked = shown;
  const view = $("agent-view");
  view.setAttribute("aria-busy", "true");
  try {
    const response = await fetch(`/api/screen?pane=${encodeURIComponent(asked)}`, { credentials: "same-origin" });
    if (asked !== shown) return;
    if (response.status === 404) {
      agents.delete(asked);
      say("This agent is gone.");
      drawAgent();
      return;
    }
    if (!response.ok) return;
    const body = await response.json();
    if (asked !== shown) return;
    if (epoch !== null && body.epoch !== epoch) return; // another service's: the stream's return reloads everything
    keep(body.agent);
    if (body.rev >= screenRev) {
      screen = body.screen;
      screenRev = body.rev;
    }
    drawAgent();
  } catch (error) {
    /* not live: the banner says so, the stream's return reloads */
  } finally {
    if (asked === shown) view.setAttribute("aria-busy", "false");
  }
}

function say(text, kind) {
  const notice = $("notice");
  notice.hidden = !text;
  notice.textContent = text;
  notice.className = `notice ${kind || ""}`;
}

function drawAgent() {
  drawSummary();
  const agent = agents.get(shown);
  $("agent-title").textContent = agent ? where(agent) : shown;
  const view = $("agent-view");
  view.setAttribute("data-pane", shown);
  view.setAttribute("data-state", agent ? agent.state : "gone");
  if (!agent) {
    $("agent-state").textContent = "gone";
    $("dialog").replaceChildren();
    $("actions").replaceChildren();
    $("reply-form").hidden = true;
    drawScreen();
    return;
  }
  $("agent-state").textContent = [`${agent.glyph} ${agent.state}`, modeWords(agent), folder(agent), ago(agent), agent.agent].filter(Boolean).join(" · ");
  $("changes-sum").textContent = agent.change ? `(this turn: ${agent.change})` : "";
  drawUsage(agent);
  drawDialog(agent);
  drawScreen();
}

// Its context, tokens and estimated cost (the service's words, as the terminal's e says them), as text.
function drawUsage(agent) {
  const box = $("usage");
  const lines = Array.isArray(agent.usage) ? agent.usage : [];
  box.replaceChildren(...lines.flatMap(([label, words]) => [el("dt", {}, String(label)), el("dd", {}, String(words))]));
  box.hidden = lines.length === 0;
}

// A permission mode other than manual, as the agent's line says it ("auto mode", "BYPASS: nothing is checked").
function modeWords(agent) {
  const words = { auto: "auto mode", "accept-edits": "accept edits", plan: "plan mode", bypass: "BYPASS: nothing is checked", "dont-ask": "don't ask" };
  return words[agent.mode] || "";
}

// A dialog Claude's answer hook holds: how long the hook still takes the answer (then keys do: the dialog stays).
// Its end is the hook's own word (its start and its wait), counted here by this phone's clock.
function hookWords(agent) {
  if (!agent.hook_until || !agent.needs_you) return "";
  const left = Math.round(agent.hook_until - Date.now() / 1000);
  if (left > 0) return `Through Claude's hook for ${left} s more, then by keys (the dialog stays).`;
  return `Claude's hook stopped waiting ${-left} s ago: an answer now goes by keys.`;
}

// The calls auto mode blocked, newest first: this turn's in full colour, earlier ones dimmed.
function drawBlocked(agent) {
  const blocked = (agent.blocked || []).slice(-5).reverse();
  if (!blocked.length) return null;
  const items = blocked.map((b) => {
    const at = b.at ? new Date(b.at * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" }) : "";
    const call = b.tool && b.tool !== "Bash" ? `${b.tool}: ${b.detail}` : b.detail || b.tool || "";
    return el("li", { class: b.this_turn ? "now" : "earlier", text: `⊘ ${at} ${call}${b.reason ? " — " + b.reason : ""}` });
  });
  return el("div", { class: "blocked" }, el("p", { class: "part", text: "blocked by auto mode" }), el("ul", {}, ...items));
}

// A path as seen from the agent's folder ("README.md"), when it is in it; else whole.
function inFolder(path, cwd) {
  const folder = cwd ? `${cwd.replace(/\/+$/, "")}/` : "";
  return folder && path.startsWith(folder) && path.length > folder.length ? path.slice(folder.length) : path;
}

// The change a file edit Claude's hook holds would make, above Approve: each file, its +/- counts, its hunks.
function drawChange(agent) {
  const diff = agent.proposed;
  if (!diff || !Array.isArray(diff.files)) return null;
  const parts = [el("p", { class: "part", text: "the change it would make" }), ...diffParts(diff, agent.cwd)];
  return el("div", { class: "change", role: "region", "aria-label": "The change it would make" }, ...parts);
}

// A diff (changes/model.py's Diff.to_dict()): each file, its +/- counts, its hunks, and what the caps left out.
// Paths and lines go in as text; a line's kind is its class (colour) and its first character (+, -, space).
function diffParts(diff, cwd) {
  const parts = [];
  for (const file of diff.files) {
    parts.push(
      el(
        "p",
        { class: "change-file" },
        el("span", { class: "path", text: inFolder(file.path, cwd) }),
        el("span", { class: "add", text: ` +${file.added}` }),
        el("span", { class: "del", text: ` \u2212${file.removed}` }),
        file.status !== "modified" ? el("span", { class: "status", text: ` (${file.status})` }) : null,
      ),
    );
    const rows = [];
    for (const hunk of file.hunks || []) {
      const section = hunk.section ? ` ${hunk.section}` : "";
      rows.push(el("span", { class: "hunk", text: `@@ -${hunk.old_start},${hunk.old_count} +${hunk.new_start},${hunk.new_count} @@${section}` }));
      for (const [kind, text] of hunk.lines || []) {
        rows.push(el("span", { class: kind === "+" ? "add" : kind === "-" ? "del" : "ctx", text: `${kind}${text}` }));
      }
    }
    if (file.more_lines) rows.push(el("span", { class: "more", text: `\u2026 ${file.more_lines} more lines` }));
    if (rows.length) parts.push(el("pre", { class: "diff", tabIndex: 0 }, ...rows));
  }
  if (diff.more_files) parts.push(el("p", { class: "note", text: `\u2026 ${diff.more_files} more files` }));
  if (diff.note) parts.push(el("p", { class: "note", text: diff.note }));
  return parts;
}

// What the open agent changed in its work tree, this turn or since it started: asked when the section opens (GET /api/changes).
let changesScope = "turn";
async function loadChanges() {
  const asked = shown;
  const scope = changesScope;
  const box = $("changes-body");
  if (!asked || !$("changes").open) return;
  box.replaceChildren(el("p", { class: "note", text: "loading\u2026" }));
  const words = scope === "turn" ? "this turn" : "since it started";
  try {
    const response = await fetch(`/api/changes?pane=${encodeURIComponent(asked)}&scope=${scope}`, { credentials: "same-origin" });
    const body = await response.json();
    if (asked !== shown || scope !== changesScope) return;
    const diff = body.diff;
    if (!response.ok || !diff) box.replaceChildren(el("p", { class: "note", text: body.error || "the changes could not be read" }));
    else if (diff.error) box.replaceChildren(el("p", { class: "note", text: diff.error }));
    else if (!diff.files.length && !diff.more_files) box.replaceChildren(el("p", { class: "note", text: `no change ${words}${diff.note ? ` (${diff.note})` : ""}` }));
    else box.replaceChildren(...diffParts(diff, (agents.get(asked) || {}).cwd || ""));
  } catch (error) {
    if (asked === shown) box.replaceChildren(el("p", { class: "note", text: "not live: open it again" }));
  }
}

function setScope(scope) {
  changesScope = scope;
  $("scope-turn").setAttribute("aria-pressed", String(scope === "turn"));
  $("scope-start").setAttribute("aria-pressed", String(scope === "start"));
  loadChanges();
}

function drawDialog(agent) {
  const dialog = $("dialog");
  const actions = $("actions");
  const parts = [];
  const title = agent.question || agent.title || (agent.tool ? `${agent.tool}${agent.detail ? ": " + agent.detail : ""}` : agent.line || "");
  if (agent.part) parts.push(el("p", { class: "part", text: `question ${agent.part[0]} of ${agent.part[1]}` }));
  if (title) parts.push(el("p", { class: "title", text: title }));
  if (agent.tool && agent.detail && !title.includes(agent.detail)) parts.push(el("p", { class: "call", text: `${agent.tool}: ${agent.detail}` }));
  const blocked = drawBlocked(agent);
  if (blocked) parts.push(blocked);
  const hook = hookWords(agent);
  if (hook) parts.push(el("p", { class: "deadline", id: "deadline", text: hook }));
  const change = drawChange(agent);
  if (change) parts.push(change);
  const can = new Set(readOnly || agent.offline ? [] : agent.actions);
  if (agent.multi_select && agent.choices.length) {
    if (ticks === null) ticks = new Set(agent.choices.filter((c) => c.ticked).map((c) => c.key));
    const boxes = agent.choices.filter((choice) => choice.ticked !== null).map((choice) => {
      const box = el("input", { type: "checkbox", checked: ticks.has(choice.key), disabled: !can.has("option") || busy });
      box.addEventListener("change", () => {
        if (box.checked) ticks.add(choice.key);
        else ticks.delete(choice.key);
        drawAgent();
      });
      return el("label", { class: "tick" }, box, el("span", { text: `${choice.key}. ${choice.label}` }));
    });
    parts.push(el("div", { class: "ticks" }, ...boxes));
  } else if (agent.choices.length && can.has("option")) {
    for (const choice of agent.choices) {
      if (choice.same_as && can.has(choice.same_as)) continue; // Approve or Deny below sends it: one button, not two
      const pick = () => {
        // An option that widens what the agent may do is sent only once the user has read what it changes.
        if (choice.widens && !window.confirm(`"${choice.label}" ${choice.widens}. Choose it?`)) return;
        answer(agent, "option", choice.key);
      };
      parts.push(el("button", { type: "button", class: `choice${choice.widens ? " widens" : ""}`, "aria-label": choice.label, disabled: busy, onclick: pick }, el("span", { text: choice.label }), choice.widens ? el("small", { text: `⚠ ${choice.widens}` }) : null));
    }
  } else if (agent.choices.length) {
    parts.push(el("ol", { class: "choices" }, ...agent.choices.map((c) => el("li", { text: c.label }))));
  }
  dialog.replaceChildren(...parts);

  const buttons = [];
  if (agent.multi_select && agent.choices.length && can.has("option")) {
    const keys = agent.choices.filter((c) => c.ticked !== null).map((c) => c.key).filter((k) => ticks.has(k));
    buttons.push(el("button", { type: "button", class: "primary", text: "Submit", disabled: busy || keys.length === 0, onclick: () => answer(agent, "option", keys.join(",")) }));
  }
  for (const action of ["approve", "deny", "nudge", "interrupt"]) {
    if (can.has(action)) {
      buttons.push(el("button", { type: "button", class: action === "approve" ? "primary" : action === "deny" || action === "interrupt" ? "danger" : "", text: ACTION_NAMES[action], disabled: busy, onclick: () => answer(agent, action) }));
    }
  }
  if (!readOnly && !agent.offline && (agent.needs_you || agent.snoozed)) {
    if (agent.snoozed) buttons.push(el("button", { type: "button", class: "snooze", text: "Wake", disabled: busy, onclick: () => snooze(agent, { wake: true }) }));
    else {
      buttons.push(el("button", { type: "button", class: "snooze", text: "Snooze 15m", disabled: busy, onclick: () => snooze(agent, { minutes: 15 }) }));
      buttons.push(el("button", { type: "button", class: "snooze", text: "Snooze till it changes", disabled: busy, onclick: () => snooze(agent, { minutes: 0 }) }));
    }
  }
  actions.replaceChildren(...buttons);
  const form = $("reply-form");
  form.hidden = !can.has("reply") || agent.state === "working" || agent.state === "exited";
  form.querySelector("button").disabled = busy;
  if (readOnly) say("This page is read-only: it shows, it answers nothing.");
}

function drawScreen() {
  const pre = $("screen");
  if (!screen) {
    pre.replaceChildren(el("span", { class: "dim", text: shown && agents.has(shown) ? "(reading the screen…)" : "" }));
    return;
  }
  const lines = [];
  screen.rows.forEach((row, y) => {
    if (y) lines.push("\n");
    for (const [text, fg, bg, flags] of row) {
      if (!fg && !bg && !flags) {
        lines.push(text);
        continue;
      }
      const span = document.createElement("span");
      span.textContent = text;
      let [f, b] = [fg, bg];
      if (flags.includes("r")) [f, b] = [b || "reverse-fg", f || "reverse-bg"];
      colour(span, "color", "fg", f);
      colour(span, "backgroundColor", "bg", b);
      if (flags.includes("b")) span.classList.add("b");
      if (flags.includes("i")) span.classList.add("i");
      if (flags.includes("u")) span.classList.add("u");
      lines.push(span);
    }
  });
  const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
  pre.replaceChildren(...lines);
  if (atBottom) pre.scrollTop = pre.scrollHeight;
}

function colour(span, property, prefix, value) {
  if (!value) return;
  if (value === "reverse-fg" || value === "reverse-bg") span.classList.add(value);
  else if (/^[0-9a-f]{6}$/.test(value)) span.style[property] = `#${value}`;
  else {
    const bright = value.startsWith("bright");
    const name = bright ? value.slice(6) : value;
    if (NAMED.has(name)) span.classList.add(`${prefix}-${bright ? "bright-" : ""}${name}`);
  }
}

// -- answering -------------------------------------------------------------------------------
async function post(path, body) {
  return fetch(path, { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
}

// Put a wait off, or wake it: the service's one set of snoozes, which the terminal shows too.
async function snooze(agent, how) {
  try {
    const response = await post("/api/snooze", { pane: agent.address, ...how });
    const body = await response.json().catch(() => ({}));
    if (response.ok && body.agent) {
      keep(body.agent);
      say(how.wake ? "Woken: it needs you again." : `${body.agent.snoozed}.`, "ok");
    } else say(`Nothing changed: ${body.error || response.statusText}`, "error");
  } catch (error) {
    say("Nothing known: the connection failed.", "error");
  }
  route();
}

function redraw() {
  if (shown) drawAgent();
  else drawList();
}

// One answer, from the agent's card or from the list; delivered and done with that agent, the page goes on (moveOn).
async function answer(agent, intent, option, text) {
  if (busy) return;
  busy = true;
  say(shown === agent.address ? "Sending…" : `Sending to ${where(agent)}…`, "pending");
  redraw();
  let movedOn = false;
  try {
    const response = await post("/api/answer", { pane: agent.address, intent, option: option || "", text: text || "", expect: agent.request || "" });
    const body = await response.json().catch(() => ({}));
    if (response.ok && body.delivered) {
      if (intent === "text") $("reply-text").value = "";
      ticks = null;
      if (body.move_on) {
        busy = false;
        movedOn = true;
        moveOn(agent.address, `Sent: ${body.detail}.`);
      } else say(`Sent: ${body.detail}`, "ok");
    } else if (response.ok) {
      say(`Not confirmed: ${body.detail}`, "error");
    } else if (response.status === 409) {
      const now = shown === agent.address ? "Here is what it shows now." : `${where(agent)}'s row shows it as it is now.`;
      say(`Nothing sent: ${refused(body.error) || "the agent changed"}. ${now}`, "error");
      ticks = null;
    } else {
      say(`Nothing sent: ${refused(body.error) || response.statusText}`, "error");
    }
  } catch (error) {
    say("Nothing known: the connection failed. Check the agent before answering again.", "error");
  } finally {
    busy = false;
    if (movedOn) return;
    if (shown) await loadScreen();
    else drawList();
  }
}

$("reply-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const agent = agents.get(shown);
  const text = $("reply-text").value.trim();
  if (agent && text) answer(agent, "text", "", text);
});
$("changes").addEventListener("toggle", loadChanges);
$("scope-turn").addEventListener("click", () => setScope("turn"));
$("scope-start").addEventListener("click", () => setScope("start"));
$("back").addEventListener("click", () => {
  location.hash = "";
});
window.addEventListener("hashchange", route);

// -- what the rules answered for you, and a way out ------------------------------------------
let ruled = [];
let ruledDue = null;

function clock(ts) {
  const at = new Date(ts * 1000);
  const two = (n) => String(n).padStart(2, "0");
  return `${two(at.getHours())}:${two(at.getMinutes())}`;
}

// The same answer given again and again (one rule, one call, one agent) is one line with its count, and one set of buttons.
function grouped(items) {
  const groups = new Map();
  for (const item of items) {
    const key = JSON.stringify([item.rule, item.decision, item.tool, item.detail, item.pane, item.host, item.state]);
    const group = groups.get(key);
    if (group) {
      group.count += 1;
      group.first = Math.min(group.first, item.ts);
      group.ts = Math.max(group.ts, item.ts);
    } else groups.set(key, { ...item, count: 1, first: item.ts });
  }
  return Array.from(groups.values()).sort((a, b) => b.ts - a.ts);
}

function drawRuled() {
  const items = grouped(ruled).map((item) => {
    const mark = item.decision === "deny" ? "✗" : "✓";
    const where = item.host && item.host !== "local" ? `${item.pane} @${item.host}` : item.pane;
    const ways = [];
    const own = !readOnly && !item.rule.includes("+");
    if (own && item.state === "answering") {
      ways.push(el("button", { type: "button", text: "Pause rule", onclick: () => rulesChange({ action: "pause", rule: item.rule }) }));
    } else if (own && item.state === "paused") {
      ways.push(el("button", { type: "button", text: "Resume rule", onclick: () => rulesChange({ action: "resume", rule: item.rule }) }));
    }
    if (own && (item.state === "answering" || item.state === "paused")) {
      ways.push(el("button", { type: "button", class: "danger", text: "Revoke rule", onclick: () => rulesChange({ action: "revoke", rule: item.rule }) }));
    }
    const when = item.count > 1 ? `${item.count}× ${clock(item.first)}–${clock(item.ts)}` : clock(item.ts);
    return el(
      "li",
      { "data-rule": item.rule, "data-state": item.state, "data-count": String(item.count) },
      el("div", { class: "what", text: `${mark} ${item.tool}: ${item.detail}` }),
      el("div", { class: "who", text: `${when} · ${where} · by rule ${item.rule} (${item.state})` }),
      ways.length ? el("div", { class: "ways" }, ...ways) : null,
    );
  });
  $("ruled-list").replaceChildren(...items);
  $("ruled-empty").hidden = items.length > 0;
  $("ruled-count").textContent = ruled.length ? `(${ruled.length} today)` : "";
  $("pause-all").hidden = readOnly;
}

async function loadRuled() {
  const response = await fetch("/api/ruled", { credentials: "same-origin" });
  if (!response.ok) return;
  const body = await response.json();
  ruled = body.answers;
  drawRuled();
}

// After an agent changed (a rule's answer changes its row): read the list again, at most every 2 s.
function ruledSoon() {
  if (ruledDue !== null) return;
  ruledDue = setTimeout(() => {
    ruledDue = null;
    loadRuled().catch(() => {});
  }, 2000);
}

async function rulesChange(body) {
  const said = $("ruled-said");
  try {
    const response = await post("/api/rules", body);
    const answer = await response.json().catch(() => ({}));
    said.textContent = response.ok ? `${answer.said}.` : `Nothing changed: ${answer.error || response.statusText}`;
    said.className = `notice ${response.ok ? "ok" : "error"}`;
  } catch (error) {
    said.textContent = "Nothing known: the connection failed.";
    said.className = "notice error";
  }
  said.hidden = false;
  await loadRuled().catch(() => {});
}

$("pause-all").addEventListener("click", () => rulesChange({ action: "pause", rule: "" }));

// -- notifications: Web Push to this phone ------------------------------------------------
// The service pushes each wait it rings to the browsers that asked here, unless you pressed a key at a headspace
// terminal in the last minute or so; each push's result is listed below. A push opens its agent's card.
let worker = null; // this page's service worker registration (null: none)
let pushState = null; // what the service said: its key, whether this browser is subscribed, the last results

function pushUnavailable() {
  if (!window.isSecureContext) {
    return "Served without TLS: this browser allows this page no notifications and no install. Serve it over TLS (the README says how: tailscale serve, a reverse proxy, or a private CA on the phone).";
  }
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    return "This browser has no Web Push here. On an iPhone, add the page to the Home Screen (Share, then Add to Home Screen) and open it from there.";
  }
  return "";
}

async function register() {
  if (!window.isSecureContext || !("serviceWorker" in navigator)) return null;
  try {
    worker = await navigator.serviceWorker.register("/sw.js", { scope: "/" });
  } catch (error) {
    worker = null;
  }
  return worker;
}

async function mySubscription() {
  if (!worker || !worker.pushManager) return null;
  return worker.pushManager.getSubscription().catch(() => null);
}

async function loadPush() {
  const mine = await mySubscription(); // "" asks only what the service says of every phone
  const response = await fetch(`/api/push?endpoint=${encodeURIComponent(mine ? mine.endpoint : "")}`, { credentials: "same-origin" });
  if (!response.ok) return;
  pushState = await response.json();
  drawPush();
}

function drawPush() {
  const why = pushUnavailable() || (pushState && pushState.problem ? `Pushes cannot be sent: ${pushState.problem}` : "");
  const on = Boolean(pushState && pushState.subscribed);
  const quiet = pushState ? Math.round(pushState.quiet_after_key) : 0;
  const unless = quiet ? `, unless you pressed a key at a headspace terminal in the last ${quiet} s` : "";
  $("notify-why").textContent = why || (on ? `This phone is notified when an agent needs you${unless}.` : "Get a notification on this phone when an agent needs you.");
  $("notify-on").hidden = Boolean(why) || on || !pushState;
  $("notify-off").hidden = !on;
  $("notify-count").textContent = pushState && pushState.phones ? `(${pushState.phones} subscribed)` : "";
  const results = (pushState && pushState.results) || [];
  $("notify-list").replaceChildren(
    ...results.map((r) =>
      el(
        "li",
        { "data-outcome": r.outcome },
        el("div", { class: "what", text: `${clock(r.at)} ${r.outcome}: ${r.title}` }),
        r.why || r.service ? el("div", { class: "who", text: [r.service, r.why].filter(Boolean).join(": ") }) : null,
      ),
    ),
  );
}

function keyBytes(b64url) {
  const text = atob(b64url.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (b64url.length % 4)) % 4));
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

function notifySaid(text, kind) {
  const said = $("notify-said");
  said.textContent = text;
  said.className = `notice ${kind}`;
  said.hidden = !text;
}

async function subscribed() {
  const options = { userVisibleOnly: true, applicationServerKey: keyBytes(pushState.key) };
  try {
    return await worker.pushManager.subscribe(options);
  } catch (error) {
    // Subscribed before under another key (the service's key was made again): that subscription goes, and a new one is made.
    const old = await mySubscription();
    if (!old) throw error;
    await old.unsubscribe();
    return worker.pushManager.subscribe(options);
  }
}

async function notifyOn() {
  try {
    if (!worker) await register();
    if (!worker) throw new Error("the service worker could not be registered");
    if ((await Notification.requestPermission()) !== "granted") throw new Error("this browser does not allow the page notifications (its site settings)");
    await navigator.serviceWorker.ready;
    const keys = (await subscribed()).toJSON();
    const response = await post("/api/push/subscribe", { endpoint: keys.endpoint, p256dh: keys.keys.p256dh, auth: keys.keys.auth, browser: navigator.userAgent });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error || response.statusText);
    pushState = body;
    notifySaid("This phone will be notified.", "ok");
  } catch (error) {
    notifySaid(`Not notified: ${error.message}`, "error");
  }
  drawPush();
}

async function notifyOff() {
  const mine = await mySubscription();
  if (mine) {
    const response = await post("/api/push/unsubscribe", { endpoint: mine.endpoint });
    if (response.ok) pushState = await response.json();
    await mine.unsubscribe().catch(() => {});
  }
  notifySaid("This phone is no longer notified.", "ok");
  drawPush();
}

$("notify-on").addEventListener("click", notifyOn);
$("notify-off").addEventListener("click", notifyOff);
$("notify").addEventListener("toggle", () => loadPush().catch(() => {}));
// A notification tapped while this page is open, in a browser where the worker could not move it: its card.
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.addEventListener("message", (event) => {
    const url = event.data && typeof event.data.open === "string" ? new URL(event.data.open, location.href) : null;
    if (url && url.origin === location.origin) {
      history.pushState(null, "", url.hash || location.pathname);
      route();
    }
  });
}

// -- while you were away ---------------------------------------------------------------------
// Opened again after a while (by this phone's own record of when it last looked), the page says what each agent
// did meanwhile: turns finished, calls auto mode blocked, what the rules answered, what it spent. Each opens its agent.
const AWAY_AFTER = 10 * 60 * 1000; // ms without a look before the page says what happened meanwhile
const LOOKED = "headspace-looked";

function lastLooked() {
  try {
    const value = Number(localStorage.getItem(LOOKED));
    return Number.isFinite(value) && value > 0 ? value : null;
  } catch (error) {
    return null;
  }
}

function looked() {
  try {
    localStorage.setItem(LOOKED, String(Date.now()));
  } catch (error) {
    // no storage (a private window): no "while you were away"
  }
}

function money(usd) {
  return usd >= 0.01 ? `$${usd.toFixed(2)}` : usd > 0 ? "under $0.01" : "";
}

function awayLines(entry) {
  const lines = [];
  if (entry.finished) lines.push(`finished ${entry.finished === 1 ? "a turn" : `${entry.finished} turns`}, the last at ${clock(entry.finished_last)}`);
  for (const block of entry.blocked) lines.push(`auto mode blocked ${block.tool}: ${block.detail}${block.reason ? ` (${block.reason})` : ""} at ${clock(block.at)}`);
  if (entry.blocked_count > entry.blocked.length) lines.push(`and ${entry.blocked_count - entry.blocked.length} more blocked`);
  for (const answer of entry.ruled) lines.push(`rule ${answer.rule} ${answer.decision === "deny" ? "denied" : "allowed"} ${answer.tool}: ${answer.detail} at ${clock(answer.ts)}`);
  if (entry.ruled_count > entry.ruled.length) lines.push(`and ${entry.ruled_count - entry.ruled.length} more answered by rules`);
  const spent = [money(entry.cost_usd), entry.tokens ? `${entry.tokens.toLocaleString("en")} tokens` : ""].filter(Boolean).join(", ");
  if (spent) lines.push(`spent ${spent}`);
  return lines;
}

function drawAway(body) {
  const entries = body.agents || [];
  $("away-title").textContent = `While you were away (since ${clock(body.since)})`;
  const items = entries.map((entry) => {
    const name = entry.host && entry.host !== "local" ? `${entry.target} @${entry.host}` : entry.target;
    return el(
      "li",
      { "data-pane": entry.address },
      el(
        "button",
        { type: "button", class: "open", onclick: () => openAgent(entry.address), "aria-label": `Open ${name}` },
        el("span", { class: "target", text: `${name} · now ${entry.state}` }),
        ...awayLines(entry).map((line) => el("span", { class: "line", text: line })),
      ),
    );
  });
  if (!items.length) items.push(el("li", { class: "empty", text: "Nothing finished, was blocked, answered by a rule or spent meanwhile." }));
  $("away-list").replaceChildren(...items);
  $("away").hidden = false;
}

async function whileAway() {
  const last = lastLooked();
  looked();
  if (last === null || Date.now() - last < AWAY_AFTER) return;
  const response = await fetch(`/api/away?since=${last / 1000}`, { credentials: "same-origin" });
  if (response.ok) drawAway(await response.json());
}

$("away-done").addEventListener("click", () => {
  $("away").hidden = true;
});
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") whileAway().catch(() => {});
  else looked();
});
setInterval(() => {
  if (document.visibilityState === "visible") looked();
}, 30000);

// -- live ------------------------------------------------------------------------------------
async function loadAgents() {
  const response = await fetch("/api/agents", { credentials: "same-origin" });
  if (response.status === 401 || response.status === 403) {
    setLive(false, "not signed in: open the address 'headspace web' printed");
    return false;
  }
  const body = await response.json();
  const now = Date.now();
  if (body.epoch !== epoch) forget(body.epoch);
  // What changed after this list was read, and reached the page first, stays.
  const listed = new Set(body.agents.map((agent) => agent.address));
  for (const [address, agent] of agents) if (!listed.has(address) && !(agent.rev > body.rev)) agents.delete(address);
  for (const agent of body.agents) keep(agent, now);
  problems = body.problems;
  readOnly = body.read_only;
  heard = true;
  return true;
}

// Not live: what the page shows is greyed and says since when (it may be old: answers still carry
// the request they were drawn for, and the service refuses one that is no longer there).
let offSince = null;
function setLive(live, text) {
  const badge = $("live");
  if (live) offSince = null;
  else if (offSince === null && wasLive) offSince = new Date();
  const two = (n) => String(n).padStart(2, "0");
  const since = offSince ? ` since ${two(offSince.getHours())}:${two(offSince.getMinutes())}:${two(offSince.getSeconds())}` : "";
  badge.textContent = live ? "live" : text ? `${text}${since}` : `offline${since}`;
  badge.title = live ? "" : "not live: reconnecting by itself";
  badge.className = live ? "on" : "off";
  document.body.classList.toggle("stale", !live && wasLive);
}

function retry(mine) {
  setTimeout(async () => {
    if (events !== mine) return;
    const signedIn = await loadAgents().catch(() => null); // false: refused (it says "not signed in"); null: no answer
    if (signedIn === false) retry(mine);
    else follow();
  }, 3000);
}

function follow() {
  if (events) events.close();
  const mine = (events = new EventSource(`/api/events?client=${client}`));
  events.onopen = async () => {
    // After a gap, everything is read again: what changed meanwhile was not heard.
    if (await loadAgents().catch(() => false)) {
      setLive(true);
      if (shown) {
        post("/api/focus", { client, pane: shown }).catch(() => {});
        loadScreen();
      }
      loadRuled().catch(() => {});
      loadPush().catch(() => {});
      if (!wasLive) whileAway().catch(() => {});
      route();
    }
    wasLive = true;
  };
  events.onerror = () => {
    // Opened from the phone's cache with no service to hear from: it says so, and shows no agent (none is kept on the phone).
    setLive(false, wasLive ? "offline" : "not live: no answer from the service");
    // The browser tries again by itself after a network error; after a refusal (a restart's 401, a 429) it gives up: try again here.
    if (mine.readyState === EventSource.CLOSED && events === mine) retry(mine);
  };
  events.onmessage = (message) => {
    const item = JSON.parse(message.data);
    if (item.type === "hello") {
      if (item.epoch !== epoch) forget(item.epoch);
      return;
    }
    if (item.type === "agent") {
      const before = agents.get(item.agent.address);
      if (!keep(item.agent)) return;
      if (item.agent.address === shown && before && before.fingerprint !== item.agent.fingerprint) ticks = null;
      ruledSoon();
    } else if (item.type === "removed") {
      const before = agents.get(item.pane);
      if (before && before.rev > item.rev) return;
      agents.delete(item.pane);
      goneAt.set(item.pane, item.rev);
    } else if (item.type === "pushed") {
      if ($("notify").open) loadPush().catch(() => {});
      return;
    } else if (item.type === "hosts") {
      problems = item.problems;
    } else if (item.type === "screen") {
      if (item.pane === shown && item.rev >= screenRev) {
        screen = item.screen;
        screenRev = item.rev;
        drawScreen();
      }
      return;
    }
    redraw();
  };
}

// The times tick: only their text changes (the list itself is redrawn when an agent does).
setInterval(() => {
  if (shown) {
    const line = $("deadline");
    const agent = agents.get(shown);
    if (line && agent) line.textContent = hookWords(agent);
    return;
  }
  for (const item of $("agents").children) {
    const agent = agents.get(item.getAttribute("data-pane"));
    const time = item.querySelector(".time");
    if (agent && time) time.textContent = ago(agent);
  }
}, 1000);
route();
follow();
drawPush();
register().then(() => loadPush().catch(() => {}));
