// The eventbus chat demo: sends through the chat backend's HTTP API, receives through the
// gateway's websocket. URL: /?user=alice&backend=http://127.0.0.1:8080[&cid=messaging:general]
"use strict";
const params = new URLSearchParams(location.search);
const me = params.get("user") || "alice";
const backend = (params.get("backend") || "http://127.0.0.1:8080").replace(/\/$/, "");
const cid = params.get("cid") || "messaging:general";
const channelPath = backend + "/channels/" + encodeURIComponent(cid);

const list = document.getElementById("messages");
const badge = document.getElementById("badge");
const status = document.getElementById("status");
const readToggle = document.getElementById("read-receipts");
document.getElementById("user").textContent = me;
document.getElementById("channel").textContent = cid;

const messages = new Map(); // id -> {id, user_id, text, order, state, el}
let order = 0;
let lastSeq = null;         // the last websocket SEQ seen: sent again on reconnect
let lastMessageId = null;   // the newest message in the channel

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
  el.className = "message" + (m.user_id === me ? " own" : "");
  el.dataset.id = m.id;
  const from = document.createElement("span");
  from.className = "from";
  from.textContent = m.user_id;
  const text = document.createElement("span");
  text.className = "text";
  text.textContent = m.text || "";
  el.append(from, text);
  const message = {id: m.id, user_id: m.user_id, order: order++, state: null, el};
  if (m.user_id === me) {
    const ticks = document.createElement("span");
    ticks.className = "ticks";
    el.append(ticks);
    message.state = "none";
    setState(message, "sent");
  }
  messages.set(m.id, message);
  list.append(el);
  list.scrollTop = list.scrollHeight;
  lastMessageId = m.id;
  return message;
}

// Every own message up to `id` (inclusive) reached `state` by another user.
function upTo(id, user, state) {
  if (user === me) return;
  const limit = messages.get(id);
  if (!limit) return;
  for (const message of messages.values()) {
    if (message.order <= limit.order) setState(message, state);
  }
}

async function refreshBadge() {
  const counts = await api("GET", backend + "/users/" + encodeURIComponent(me) + "/unread");
  const channel = (counts.channels || []).find(c => c.cid === cid);
  const count = channel ? channel.unread_messages : 0;
  badge.dataset.count = String(count);
  badge.textContent = String(count);
}

async function onEvent(frame) {
  const event = frame.event;
  const data = event.data || {};
  switch (event.type) {
    case "message.new": {
      addMessage(data.message);
      if (data.message.user_id !== me) {
        await api("POST", channelPath + "/delivered", {user_id: me, message_id: data.message.id});
        await refreshBadge();
      }
      break;
    }
    case "message.delivered":
      upTo(data.last_delivered_message_id, data.user_id, "delivered");
      break;
    case "message.read":
      upTo(data.last_read_message_id, data.user_id, "read");
      break;
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

// Frames are handled one at a time, in SEQ order.
let chain = Promise.resolve();
function connect() {
  const url = "ws://" + location.host + "/ws?user_id=" + encodeURIComponent(me) + (lastSeq === null ? "" : "&last_seq=" + lastSeq);
  const socket = new WebSocket(url);
  socket.onopen = () => { status.dataset.state = "live"; status.textContent = "live"; };
  socket.onmessage = (message) => {
    const frame = JSON.parse(message.data);
    lastSeq = frame.seq;
    chain = chain.then(() => onEvent(frame)).catch(error => console.error(error));
  };
  socket.onclose = () => {
    status.dataset.state = "reconnecting";
    status.textContent = "reconnecting";
    setTimeout(connect, 500);
  };
}

document.getElementById("composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = document.getElementById("text");
  const text = input.value.trim();
  if (!text) return;
  input.value = "";
  const reply = await api("POST", channelPath + "/messages", {user_id: me, text});
  addMessage(reply.message);
});

async function markRead() {
  if (lastMessageId === null) return;
  await api("POST", channelPath + "/read", {user_id: me, message_id: lastMessageId});
}
document.getElementById("mark-read").addEventListener("click", markRead);

readToggle.addEventListener("change", async () => {
  await api("PUT", backend + "/users/" + encodeURIComponent(me) + "/privacy", {read_receipts: readToggle.checked});
  document.body.dataset.readReceipts = String(readToggle.checked);
});

async function loadHistory() {
  const history = await api("GET", channelPath + "/messages");
  for (const m of history.messages || []) addMessage(m);
  await refreshBadge();
  document.body.dataset.ready = "true";
}

// The websocket connects at once; its frames are handled after the history is loaded,
// and a message in both is shown once (by id), so nothing falls between the two.
chain = chain.then(loadHistory).catch(error => { status.textContent = String(error); console.error(error); });
connect();
