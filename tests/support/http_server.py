#!/usr/bin/python3
"""A plain HTTP file server for tests: Python's http.server serving
--directory, started and stopped like the emulators (tests/support/
emulator_process.h): it prints "listening http://127.0.0.1:PORT" and "ready",
appends one JSON line per request to --request-log (method, path, status and
the Authorization header), and ignores --tls-dir. Stands for the web server a
site points a BMC's virtual media at, and for a CI system's OIDC token URL."""
import argparse
import functools
import http.server
import json
import signal
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--directory", required=True)
parser.add_argument("--port", type=int, default=0)
parser.add_argument("--request-log")
parser.add_argument("--tls-dir")
args = parser.parse_args()


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_request(self, code="-", size="-"):
        if args.request_log:
            with open(args.request_log, "a", encoding="utf-8") as log:
                log.write(json.dumps({"method": self.command, "path": self.path, "status": int(code),
                                      "authorization": self.headers.get("Authorization")}) + "\n")

    def log_message(self, format, *a):  # noqa: A002 - the base class's name
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port),
                                         functools.partial(Handler, directory=args.directory))
print(f"listening http://127.0.0.1:{server.server_address[1]}", flush=True)
print("ready", flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stopped like the emulators: exit 0
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
