// The eventbus chat demo: sends through the chat backend's HTTP API, receives its user's
// events from eventbus-http's per-user stream (GET /v1/stream, Server-Sent Events) with an app
// token the gateway issues at /session. URL: /?user=alice&backend=http://127.0.0.1:8080[&cid=messaging:general]
"use strict";
const params = new URLSearchParams(location.search);
const me = params.get("user") || "alice";
const backend = (params.get("backend") || "http://127.0.0.1:8080").replace(/\/$/, "");
const cid = params.get("cid") || "messaging:general";
const channelPath = backend + "/channels/" + encodeURIComponent(cid);

const list = document.getElementById("messages");
const badge = document.getElementById("badge");
const threadBadge = document.getElementById("threads");
const totalBadge = document.getElementById("total");
const status = document.getElementById("status");
const readToggle = document.getElementById("read-receipts");
const muteToggle = document.getElementById("muted");
const composer = document.getElementById("composer");
document.getElementById("user").textContent = me;
document.getElementById("channel").textContent = cid;

const messages = new Map(); // id -> {id, user_id, text, order, state, el, parent, shown}
let order = 0;
let lastEventId = null;     // the stream's position: the last id: (a SEQ), sent again as Last-Event-ID
let lastMessageId = null;   // the newest message shown in the channel (a thread-only reply is not one)
const lastReply = new Map(); // thread parent id -> the newest reply's id

async function api(method, path, body) {
  const response = await fetch(path, {
    method, headers: body ? {"Content-Type": "application/json"} : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(method + " " + path + ": " + response.status + " " + JSON.stringify(json));
  return json;
}

const tickText = {sent: "✓", delivered: "✓✓", read: "✓✓"};

function setState(message, state) {
  const rank = {sent: 0, delivered: 1, read: 2};
  if (message.user_id !== me || rank[state] <= rank[message.state]) return;
  message.state = state;
  const ticks = message.el.querySelector(".ticks");
  ticks.dataset.state = state;
  ticks.textContent = tickText[state];
}

function addMessage(m) {
  if (messages.has(m.id)) return messages.get(m.id);
  const el = document.createElement("li");
  el.className = "message" + (m.user_id === me ? " own" : "") + (m.parent_id ? " reply" : "");
  el.dataset.id = m.id;
  if (m.parent_id) el.dataset.parent = m.parent_id;
  const from = document.createElement("span");
  from.className = "from";
  from.textContent = m.user_id + (m.parent_id ? " ↳ in thread" : "");
  const text = document.createElement("span");
  text.className = "text";
  text.textContent = m.text || "";
  el.append(from, text);
  if (!m.parent_id) {
    // Replies go to the message's thread: the composer's next message is one.
    const reply = document.createElement("button");
    reply.type = "button";
    reply.className = "reply-button";
    reply.textContent = "reply";
    reply.addEventListener("click", () => {
      composer.dataset.parent = m.id;
      document.getElementById("text").placeholder = "Reply in the thread of " + (m.text || m.id);
    });
    el.append(reply);
  }
  const shown = !m.parent_id || m.show_in_channel === true;
  const message = {id: m.id, user_id: m.user_id, order: order++, state: null, el, parent: m.parent_id || null, shown};
  if (m.user_id === me) {
    const ticks = document.createElement("span");
    ticks.className = "ticks";
    const readBy = document.createElement("span");
    readBy.className = "read-by";
    el.append(ticks, readBy);
    message.state = "none";
    setState(message, "sent");
  }
  messages.set(m.id, message);
  list.append(el);
  list.scrollTop = list.scrollHeight;
  if (shown) lastMessageId = m.id;
  if (m.parent_id) lastReply.set(m.parent_id, m.id);
  return message;
}

// Whether a watermark of the channel (no `parent`) or of `parent`'s thread passes over
// `message`: a thread has watermarks of its own.
function inScope(message, parent) {
  return parent ? message.parent === parent : message.shown;
}

// Every own message up to `id` (inclusive) reached `state` by another user, in the channel or
// in `parent`'s thread.
function upTo(id, user, state, parent) {
  if (user === me) return;
  const limit = messages.get(id);
  if (!limit) return;
  for (const message of messages.values()) {
    if (inScope(message, parent) && message.order <= limit.order) setState(message, state);
  }
}

// An own message's receipts, as the privacy filters let me see them: its ticks, and on a group
// channel (two or more others whose reads I may see) "read by N of M".
async function refreshReceipts(message) {
  const receipts = await api("GET", channelPath + "/messages/" + encodeURIComponent(message.id) +
                                    "/receipts?viewer=" + encodeURIComponent(me));
  if (receipts.read_count > 0) setState(message, "read");
  else if (receipts.delivered_count > 0) setState(message, "delivered");
  const of = receipts.read_count + receipts.unread_member_count;
  const readBy = message.el.querySelector(".read-by");
  readBy.dataset.read = String(receipts.read_count);
  readBy.dataset.of = String(of);
  readBy.textContent = of >= 2 ? "read by " + receipts.read_count + " of " + of : "";
}

// Tells the backend this page has shown every message up to `id`: the delivered watermark.
async function acknowledgeDelivery(id) {
  await api("POST", channelPath + "/delivered", {user_id: me, message_id: id});
}

// The badges from unread_counts: this channel's unread messages (greyed when muted), its threads
// with unread replies, and the total over every channel of mine but the muted ones.
let unreadThreads = [];     // parent ids of this channel's threads with unread replies for me
async function refreshBadge() {
  const counts = await api("GET", backend + "/users/" + encodeURIComponent(me) + "/unread");
  const channel = (counts.channels || []).find(c => c.cid === cid);
  const count = channel ? channel.unread_messages : 0;
  badge.dataset.count = String(count);
  badge.dataset.muted = String(channel ? channel.muted === true : muteToggle.checked);
  badge.textContent = String(count);
  unreadThreads = channel && channel.unread_thread_parent_ids ? channel.unread_thread_parent_ids : [];
  threadBadge.dataset.count = String(unreadThreads.length);
  threadBadge.textContent = String(unreadThreads.length);
  totalBadge.dataset.count = String(counts.total_unread_count || 0);
  totalBadge.textContent = String(counts.total_unread_count || 0);
}

async function onEvent(frame) {
  const event = frame.event;
  const data = event.data || {};
  // The stream carries all my channels and my own notifications: this page shows one channel.
  if (data.cid !== undefined && data.cid !== cid) return;
  switch (event.type) {
    case "message.new": {
      const message = addMessage(data.message);
      if (data.message.user_id !== me) {
        await acknowledgeDelivery(data.message.id);
        await refreshBadge();
      } else {
        await refreshReceipts(message);
      }
      break;
    }
    case "message.delivered":
      upTo(data.last_delivered_message_id, data.user_id, "delivered", data.parent_id);
      break;
    case "message.read": {
      upTo(data.last_read_message_id, data.user_id, "read", data.parent_id);
      const limit = messages.get(data.last_read_message_id);
      if (limit && data.user_id !== me) {
        for (const message of messages.values()) {
          if (message.user_id === me && inScope(message, data.parent_id) && message.order <= limit.order) {
            await refreshReceipts(message);
          }
        }
      }
      break;
    }
    case "message.deleted": {
      const message = messages.get(data.message_id);
      if (message) message.el.classList.add("deleted");
      await refreshBadge();
      break;
    }
    case "notification.mark_read":
    case "notification.mark_unread":
      await refreshBadge();
      break;
  }
}

// Events are handled one at a time, in SEQ order.
let chain = Promise.resolve();
let session = null;  // {stream, token, expires}: from the gateway's /session
let markOpen;
const streamOpen = new Promise(resolve => { markOpen = resolve; });

function setStatus(state) {
  status.dataset.state = state;
  status.textContent = state;
}

// One Server-Sent Events message (the lines between blank lines) of the stream.
function onMessage(lines) {
  let id = null, type = "message", data = [];
  for (const line of lines) {
    if (line.startsWith(":")) {
      const position = /^: ?eventbus stream after (\d+)/.exec(line);
      if (position) {
        if (lastEventId === null) lastEventId = position[1];
        setStatus("live");
        markOpen();
      }
      continue;
    }
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") id = value;
    else if (field === "event") type = value;
    else if (field === "data") data.push(value);
  }
  if (type === "cut") return "cut";  // fell behind: the stream ends; reconnect from lastEventId
  if (data.length === 0) return null;
  if (id !== null) lastEventId = id;
  const event = JSON.parse(data.join("\n"));
  chain = chain.then(() => onEvent({seq: Number(id), event})).catch(error => console.error(error));
  return null;
}

// Follows the user's stream: fetch, not EventSource, so that the app token goes in the
// Authorization header; on any end it reconnects with Last-Event-ID, losing and repeating nothing.
async function follow() {
  for (;;) {
    try {
      if (session === null || session.expires * 1000 < Date.now() + 60000) {
        session = await api("GET", "/session?user=" + encodeURIComponent(me));
      }
      const headers = {"Authorization": "Bearer " + session.token};
      if (lastEventId !== null) headers["Last-Event-ID"] = lastEventId;
      const response = await fetch(session.stream + "/v1/stream", {headers, cache: "no-store"});
      if (response.status === 401) session = null;
      if (!response.ok) throw new Error("GET /v1/stream: " + response.status + " " + await response.text());
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        buffer = (buffer + value).replace(/\r\n?/g, "\n");
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const lines = buffer.slice(0, end).split("\n");
          buffer = buffer.slice(end + 2);
          onMessage(lines);
        }
      }
    } catch (error) {
      console.error(error);
    }
    setStatus("reconnecting");
    await new Promise(resolve => setTimeout(resolve, 500));
  }
}

document.getElementById("composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = document.getElementById("text");
  const text = input.value.trim();
  if (!text) return;
  input.value = "";
  const body = {user_id: me, text};
  if (composer.dataset.parent) {
    body.parent_id = composer.dataset.parent;
    delete composer.dataset.parent;
    input.placeholder = "Message";
  }
  const reply = await api("POST", channelPath + "/messages", body);
  addMessage(reply.message);
});

async function markRead() {
  if (lastMessageId === null) return;
  await api("POST", channelPath + "/read", {user_id: me, message_id: lastMessageId});
}
document.getElementById("mark-read").addEventListener("click", markRead);

// Reads every thread of this channel with unread replies for me, up to its newest reply.
document.getElementById("read-threads").addEventListener("click", async () => {
  for (const parent of unreadThreads) {
    const newest = lastReply.get(parent);
    if (newest) await api("POST", channelPath + "/read", {user_id: me, message_id: newest});
  }
  await refreshBadge();
});

// Mutes the channel for me: it keeps its own count, out of my total.
muteToggle.addEventListener("change", async () => {
  await api("PUT", channelPath + "/members/" + encodeURIComponent(me) + "/settings", {muted: muteToggle.checked});
  await refreshBadge();
  document.body.dataset.muted = String(muteToggle.checked);
});

readToggle.addEventListener("change", async () => {
  await api("PUT", backend + "/users/" + encodeURIComponent(me) + "/privacy", {read_receipts: readToggle.checked});
  document.body.dataset.readReceipts = String(readToggle.checked);
});

// The history, once the stream is open (so that nothing falls between the two: a message in
// both is shown once, by id). Every message shown is acknowledged as delivered, the history's
// too (one ack of the newest other's message moves the delivered watermark over all before it),
// and my own messages show their receipts so far.
async function loadHistory() {
  const history = await api("GET", channelPath + "/messages");
  for (const m of history.messages || []) addMessage(m);
  const others = [...messages.values()].filter(message => message.user_id !== me && message.shown);
  if (others.length > 0) await acknowledgeDelivery(others[others.length - 1].id);
  for (const message of messages.values()) {
    if (message.user_id === me) await refreshReceipts(message);
  }
  await refreshBadge();
  document.body.dataset.ready = "true";
}

chain = chain.then(() => streamOpen).then(loadHistory).catch(error => { status.textContent = String(error); console.error(error); });
follow();
