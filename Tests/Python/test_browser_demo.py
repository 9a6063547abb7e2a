"""The browser demo in headless Chromium: users, ticks, badges, "read by N of M", a live privacy toggle, a thread's badge and a muted channel.

Runs the whole stack from the build folder: `eventbus up` (broker, reducer, privacy
filters) on ipc endpoints, `eventbus-http` (the pages' per-user streams, with app tokens),
`chat-backend` and `chat-gateway` (the pages and their app tokens) on ephemeral ports, and
Chromium driven through the DevTools protocol. Chromium is installed by
`scripts/ensure-deps.sh --test`; if it is missing the test fails, it never skips.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import base64
import urllib.request

import websocket  # websocket-client

from conftest import eventbus_binary, example_binary

CID = "messaging:general"
TEAM = "messaging:team"
JWT_SECRET = "app-token-secret-of-the-browser-demo-test-0123456789"


def http_binary():
    """eventbus-http, a package of its own (edge/http): EVENTBUS_HTTP, as `make test` sets it."""
    path = os.environ.get("EVENTBUS_HTTP") or os.path.join(
        os.path.dirname(__file__), "..", "..", "edge", "http", ".build", "debug", "eventbus-http")
    if not os.path.exists(path):
        raise RuntimeError(f"eventbus-http not found at {path}: run `swift build --package-path edge/http` first")
    return path


def wait_line(path, pattern, process, what, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(path) as f:
            match = re.search(pattern, f.read())
        if match:
            return match
        assert process.poll() is None, f"{what} exited"
        time.sleep(0.05)  # a poll interval
    raise AssertionError(f"{what} did not get ready")


def start(directory, name, args, stdout_name):
    out = open(os.path.join(directory, stdout_name), "w+")
    err = open(os.path.join(directory, stdout_name + ".err"), "w+")
    return subprocess.Popen(args, stdout=out, stderr=err, cwd=directory), out.name, err.name


def http(method, url, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"{}")


class Page:
    """One Chromium tab, driven over its DevTools websocket."""

    def __init__(self, debugger_url):
        self.ws = websocket.create_connection(debugger_url, timeout=20, suppress_origin=True)
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                assert "error" not in reply, reply
                return reply.get("result", {})

    def eval(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def wait(self, expression, what, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.eval(expression):
                return
            time.sleep(0.05)  # a poll interval
        state = self.eval("location.href + ' | ' + (document.getElementById('status') || {}).textContent")
        raise AssertionError(f"timed out waiting for {what}: {expression} (page: {state})")

    def send(self, text):
        self.eval(f"document.getElementById('text').value = {json.dumps(text)};"
                  "document.getElementById('send').click(); true")

    def tick(self, text):
        return self.eval(
            "(() => { const li = [...document.querySelectorAll('li.message.own')]"
            f".find(li => li.querySelector('.text').textContent === {json.dumps(text)});"
            " return li ? li.querySelector('.ticks').dataset.state : null })()")

    def read_by(self, text):
        return self.eval(
            "(() => { const li = [...document.querySelectorAll('li.message.own')]"
            f".find(li => li.querySelector('.text').textContent === {json.dumps(text)});"
            " return li ? li.querySelector('.read-by').textContent : null })()")

    def message_id(self, text):
        return self.eval(
            "(() => { const li = [...document.querySelectorAll('li.message')]"
            f".find(li => li.querySelector('.text').textContent === {json.dumps(text)});"
            " return li ? li.dataset.id : null })()")

    def wait_for(self, read, expected, what, timeout=15):
        """Polls `read()` until it returns `expected`; fails with what it returned last."""
        deadline = time.time() + timeout
        value = read()
        while value != expected and time.time() < deadline:
            time.sleep(0.05)  # a poll interval
            value = read()
        assert value == expected, f"{what}: {value!r}, expected {expected!r}"

    def has_message(self, text):
        return ("[...document.querySelectorAll('li.message .text')]"
                f".some(e => e.textContent === {json.dumps(text)})")

    def badge_is(self, count):
        return f"document.getElementById('badge').dataset.count === '{count}'"

    def screenshot(self, path):
        # A capture waits for a frame, and a tab in the background may never draw one: bring
        # it to the front first (a capture of bob's page behind alice's once waited 90 s).
        self.call("Page.bringToFront")
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        self.ws.close()


def test_browser_demo_shows_ticks_badges_and_privacy_live(tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "chromium is missing: scripts/ensure-deps.sh --test installs it (apt package chromium)"
    backend_binary, gateway_binary = example_binary("chat-backend", "chat-backend"), example_binary("gateway", "chat-gateway")
    directory = tempfile.mkdtemp(prefix="eventbus-demo-")
    command = f"ipc://{directory}/command.sock"
    processes = []
    try:
        up, _, up_err = start(directory, "up", [eventbus_binary(), "up", "--data-dir", os.path.join(directory, "data"),
                                                "--command", command, "--stream", f"ipc://{directory}/stream.sock"], "up")
        processes.append(up)
        wait_line(up_err, r"eventbus ready", up, "eventbus up")
        keygen = subprocess.run([eventbus_binary(), "keygen", "--out", os.path.join(directory, "broker")], capture_output=True)
        assert keygen.returncode == 0, keygen.stderr
        security = os.path.join(directory, "security.yaml")
        with open(security, "w") as f:
            f.write(f'secret_key_file: broker.secret\nclients: []\nhttp_jwt_hs256_secret: "{JWT_SECRET}"\n')
        # The pages come from the gateway's origin and read the stream with fetch: --cors-origin.
        ingress, ingress_out, _ = start(directory, "http", [http_binary(), "--listen", "127.0.0.1:0", "--command", command,
                                                            "--security", security, "--cors-origin", "*",
                                                            "--log-level", "warning"], "http")
        processes.append(ingress)
        stream_url = wait_line(ingress_out, r"listening on (http://[0-9.]+:\d+)", ingress, "eventbus-http").group(1)
        backend, backend_out, _ = start(directory, "backend", [backend_binary, "--http", "127.0.0.1:0",
                                                               "--command", command, "--log-level", "warning"], "backend")
        processes.append(backend)
        backend_url = wait_line(backend_out, r"listening on (http://[0-9.]+:\d+)", backend, "chat-backend").group(1)
        gateway, gateway_out, _ = start(directory, "gateway", [gateway_binary, "--http", "127.0.0.1:0",
                                                               "--command", command, "--stream-url", stream_url,
                                                               "--security", security, "--log-level", "warning"], "gateway")
        processes.append(gateway)
        gateway_url = wait_line(gateway_out, r"listening on (http://[0-9.]+:\d+)", gateway, "chat-gateway").group(1)
        http("POST", backend_url + "/channels", {"cid": CID, "members": ["alice", "bob"]})
        http("POST", backend_url + "/channels", {"cid": TEAM, "members": ["alice", "bob", "carol"]})

        profile = os.path.join(directory, "chromium")
        browser = subprocess.Popen([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                    "--remote-debugging-port=0", "--remote-allow-origins=*",
                                    f"--user-data-dir={profile}", "about:blank"],
                                   stdout=subprocess.DEVNULL, stderr=open(os.path.join(directory, "chromium.err"), "w"))
        processes.append(browser)
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            assert browser.poll() is None and time.time() < deadline, "chromium did not start"
            time.sleep(0.05)  # a poll interval
        devtools = "http://127.0.0.1:" + open(port_file).read().split()[0]

        def open_page(user, cid=CID):
            url = f"{gateway_url}/?user={user}&backend={backend_url}&cid={cid}"
            target = http("PUT", devtools + "/json/new?about:blank")
            page = Page(target["webSocketDebuggerUrl"])
            page.call("Page.navigate", url=url)
            page.wait("document.body && document.body.dataset.ready === 'true' && "
                      "document.getElementById('status').dataset.state === 'live'", f"{user}'s page to connect", timeout=20)
            return page

        # History, as a new user finds it: alice writes before bob has ever opened the page; the
        # message stays at ✓ until bob's page shows it from the history, then turns ✓✓.
        alice = open_page("alice")
        alice.send("before bob")
        alice.wait(alice.has_message("before bob"), "alice's own message")
        alice.wait_for(lambda: alice.read_by("before bob"), "", "a one-to-one message shows no read by")
        assert alice.tick("before bob") == "sent", "nobody has seen it yet"
        bob = open_page("bob")
        assert bob.eval(bob.has_message("before bob")), "bob's page shows the history"
        alice.wait_for(lambda: alice.tick("before bob"), "delivered", "the history shown on bob's page acknowledged as delivered")

        # alice sends: bob sees it with an unread badge; bob's page marks it delivered. The
        # history bob's page showed was delivered, not read: both messages are unread for him.
        alice.send("hello bob")
        bob.wait(bob.has_message("hello bob"), "bob to receive the message")
        bob.wait(bob.badge_is(2), "bob's unread badge to show 2 (the history and the new message)")
        deadline = time.time() + 15
        while alice.tick("hello bob") != "delivered" and time.time() < deadline:
            time.sleep(0.05)  # a poll interval
        assert alice.tick("hello bob") == "delivered"

        # bob reads: alice's tick turns to read, bob's badge to 0.
        bob.eval("document.getElementById('mark-read').click(); true")
        bob.wait(bob.badge_is(0), "bob's badge to clear")
        deadline = time.time() + 15
        while alice.tick("hello bob") != "read" and time.time() < deadline:
            time.sleep(0.05)  # a poll interval
        assert alice.tick("hello bob") == "read"

        # A group: alice's own message shows "read by N of M", M the other members.
        alice_team, bob_team = open_page("alice", TEAM), open_page("bob", TEAM)
        alice_team.send("team hello")
        bob_team.wait(bob_team.has_message("team hello"), "bob to receive the team message")
        alice_team.wait_for(lambda: alice_team.read_by("team hello"), "read by 0 of 2", "nobody has read it")
        alice_team.wait_for(lambda: alice_team.tick("team hello"), "delivered", "bob's page delivered it")
        bob_team.eval("document.getElementById('mark-read').click(); true")
        alice_team.wait_for(lambda: alice_team.read_by("team hello"), "read by 1 of 2", "bob read it")
        http("POST", backend_url + "/channels/" + TEAM + "/read",
             {"user_id": "carol", "message_id": alice_team.message_id("team hello")})
        alice_team.wait_for(lambda: alice_team.read_by("team hello"), "read by 2 of 2", "carol read it too")
        assert not alice.eval(alice.has_message("team hello")), "the general page shows its own channel only"
        shots = os.path.join(str(tmp_path), "browser-demo")
        os.makedirs(shots, exist_ok=True)
        alice_team.screenshot(os.path.join(shots, "alice-team.png"))
        alice_team.close()
        bob_team.close()

        # bob turns read receipts off: a later read shows no read tick for alice.
        bob.eval("const t = document.getElementById('read-receipts'); t.checked = false;"
                 "t.dispatchEvent(new Event('change')); true")
        bob.wait("document.body.dataset.readReceipts === 'false'", "the privacy change to be confirmed")
        alice.send("are you there?")
        bob.wait(bob.has_message("are you there?"), "bob to receive the second message")
        bob.wait(bob.badge_is(1), "bob's badge to show 1 again")
        bob.eval("document.getElementById('mark-read').click(); true")
        bob.wait(bob.badge_is(0), "bob's badge to clear again")
        # A third message, delivered after bob's read: alice's page has seen every frame up to it.
        alice.send("third")
        bob.wait(bob.has_message("third"), "bob to receive the third message")
        deadline = time.time() + 15
        while alice.tick("third") != "delivered" and time.time() < deadline:
            time.sleep(0.05)  # a poll interval
        assert alice.tick("third") == "delivered"
        assert alice.tick("are you there?") == "delivered", "bob's hidden read must not reach alice"
        assert alice.tick("hello bob") == "read"
        assert bob.eval("document.querySelectorAll('li.message').length") == 4
        assert alice.tick("before bob") == "read", "bob's first read covered the history too"

        # A thread: bob replies to alice's "hello bob". Her page shows one thread with unread
        # replies and her channel badge stays 0 (a reply not shown in the channel is not unread
        # there); she reads the thread, the thread badge clears and bob's reply turns read.
        hello = alice.message_id("hello bob")
        bob.eval(f"document.querySelector('li.message[data-id=\"{hello}\"] .reply-button').click(); true")
        bob.send("in the thread")
        alice.wait(alice.has_message("in the thread"), "alice to receive the thread reply")
        alice.wait("document.getElementById('threads').dataset.count === '1'", "alice's thread badge to show 1")
        assert alice.eval(alice.badge_is(0)), "a thread-only reply is not unread in the channel"
        bob.wait_for(lambda: bob.tick("in the thread"), "delivered", "alice's page acknowledged the reply")
        alice.eval("document.getElementById('read-threads').click(); true")
        alice.wait("document.getElementById('threads').dataset.count === '0'", "alice's thread badge to clear")
        bob.wait_for(lambda: bob.tick("in the thread"), "read", "alice's thread read reached bob")

        # alice mutes the channel: bob's next message is unread in it (the badge greyed, "muted") and
        # out of her total over all her channels.
        alice.eval("const m = document.getElementById('muted'); m.checked = true; m.dispatchEvent(new Event('change')); true")
        alice.wait("document.body.dataset.muted === 'true'", "the mute to be confirmed")
        bob.send("while muted")
        alice.wait(alice.has_message("while muted"), "alice to receive a message in the muted channel")
        alice.wait(alice.badge_is(1), "alice's channel badge to show 1")
        alice.wait("document.getElementById('badge').dataset.muted === 'true'", "the badge to show the channel muted")
        assert alice.eval("document.getElementById('total').dataset.count") == "0", "a muted channel is out of the total"

        alice.screenshot(os.path.join(shots, "alice.png"))
        bob.screenshot(os.path.join(shots, "bob.png"))
        assert os.path.getsize(os.path.join(shots, "alice.png")) > 1000
        print("screenshots in", shots)
        alice.close()
        bob.close()
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
        shutil.rmtree(directory, ignore_errors=True)
