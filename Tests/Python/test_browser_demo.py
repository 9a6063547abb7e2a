"""The browser demo in headless Chromium: two users, ticks, badges and a live privacy toggle.

Runs the whole stack from the build folder: `eventbus up` (broker, reducer, privacy
filters) on ipc endpoints, `chat-backend` and `chat-gateway` on ephemeral ports, and
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

    def has_message(self, text):
        return ("[...document.querySelectorAll('li.message .text')]"
                f".some(e => e.textContent === {json.dumps(text)})")

    def badge_is(self, count):
        return f"document.getElementById('badge').dataset.count === '{count}'"

    def screenshot(self, path):
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
        backend, backend_out, _ = start(directory, "backend", [backend_binary, "--http", "127.0.0.1:0",
                                                               "--command", command, "--log-level", "warning"], "backend")
        processes.append(backend)
        backend_url = wait_line(backend_out, r"listening on (http://[0-9.]+:\d+)", backend, "chat-backend").group(1)
        gateway, gateway_out, _ = start(directory, "gateway", [gateway_binary, "--http", "127.0.0.1:0",
                                                               "--command", command, "--log-level", "warning"], "gateway")
        processes.append(gateway)
        gateway_url = wait_line(gateway_out, r"listening on (http://[0-9.]+:\d+)", gateway, "chat-gateway").group(1)
        http("POST", backend_url + "/channels", {"cid": CID, "members": ["alice", "bob"]})

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

        def open_page(user):
            url = f"{gateway_url}/?user={user}&backend={backend_url}"
            target = http("PUT", devtools + "/json/new?about:blank")
            page = Page(target["webSocketDebuggerUrl"])
            page.call("Page.navigate", url=url)
            page.wait("document.body && document.body.dataset.ready === 'true' && "
                      "document.getElementById('status').dataset.state === 'live'", f"{user}'s page to connect", timeout=20)
            return page

        alice, bob = open_page("alice"), open_page("bob")

        # alice sends: bob sees it with an unread badge; bob's page marks it delivered.
        alice.send("hello bob")
        bob.wait(bob.has_message("hello bob"), "bob to receive the message")
        bob.wait(bob.badge_is(1), "bob's unread badge to show 1")
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
        assert bob.eval("document.querySelectorAll('li.message').length") == 3

        shots = os.path.join(str(tmp_path), "browser-demo")
        os.makedirs(shots, exist_ok=True)
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
