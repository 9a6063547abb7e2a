#!/usr/bin/env python3
"""A bus plugin in Python, on the eventbus package (clients/python).

It consumes one stage, drops the event types it is told to drop, passes every
other event on unchanged, and for each `message.new` emits a `message.counted`
event to `diag` with a deterministic id (`<name>:<seq>:0`), so that a replay
after a crash republishes the same id and the broker drops the repeat.

    python3 plugin.py --name pyfilter --input in --output out \
        --command tcp://127.0.0.1:7750 --drop typing.start

Run it as a pipeline stage with `eventbus up --pipeline receipt-reducer,external:pyfilter`
(it connects by itself), or let `eventbus up` start it from a config file.
`eventbus.PluginRunner` does the protocol: the durable consume with credit,
publishing with confirms (an event passed on goes by reference, `@SEQ`), the ACK
once the outputs are confirmed, and the resume after a restart.
"""
import argparse
import os
import signal
import sys

# From a checkout, the package beside this example (clients/python/src) is used, so the
# example and the package always match; elsewhere, `pip install clients/python` provides it.
_CHECKOUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python", "src")
if os.path.isdir(os.path.join(_CHECKOUT, "eventbus")):
    sys.path.insert(0, _CHECKOUT)

from eventbus import Delivery, EventBusError, Output, PluginRunner  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--name", default="pyfilter")
    parser.add_argument("--input", default="in")
    parser.add_argument("--output", default="out")
    parser.add_argument("--command", default="tcp://127.0.0.1:7750")
    parser.add_argument("--data-dir", default=None, help="unused: this plugin keeps no state")
    parser.add_argument("--drop", action="append", default=[], help="an event type to drop (repeatable)")
    parser.add_argument("--batch", type=int, default=200)
    args = parser.parse_args()
    drop = set(args.drop)

    def handle(delivery: Delivery, output: Output) -> None:
        if delivery.type in drop:
            return  # filtered: it stops here
        output.forward()  # passed on unchanged: same id, same bytes, by reference where the broker allows
        if delivery.type == "message.new":
            body = delivery.event()
            # The input's time, never the clock's: a replay makes the same event.
            output.emit("message.counted", body["subject"],
                        {"seq": delivery.seq, "message_id": body["data"]["message"]["id"]},
                        time=body.get("time"), to="diag")

    # A stateless plugin: it resumes after its last ACK.
    runner = PluginRunner(args.name, handle, input=args.input, output=args.output, command=args.command,
                          batch=args.batch, source=f"/plugins/{args.name}")
    signal.signal(signal.SIGTERM, lambda *_: runner.stop())
    signal.signal(signal.SIGINT, lambda *_: runner.stop())
    print(f"{args.name}: consuming {args.input}/ -> {args.output}", file=sys.stderr, flush=True)
    try:
        runner.run()
    except EventBusError as error:
        print(f"{args.name}: {error}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
