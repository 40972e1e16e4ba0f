#!/usr/bin/env python3
"""A minimal OAuth identity provider for the OAUTHBEARER tests, standard library only.

Serves, from --dir:
  POST /token  the client-credentials grant: {"access_token": <token.txt>, "token_type":
               "bearer", "expires_in": ...}, what librdkafka's and the Java client's OIDC login
               ask for (the test signs the tokens and writes token.txt);
  GET  /jwks   jwks.json, the keys the broker verifies with.
Every request is appended to requests.log (method and path), so a test can count JWKS fetches.
With --cert/--key it serves HTTPS. Prints "listening <port>" once bound.
"""

import argparse
import http.server
import json
import os
import ssl
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--cert")
    ap.add_argument("--key")
    args = ap.parse_args()

    def read(name):
        with open(os.path.join(args.dir, name), "rb") as f:
            return f.read()

    class handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, fmt, *a):
            with open(os.path.join(args.dir, "requests.log"), "a") as f:
                f.write("%s %s\n" % (self.command, self.path))

        def answer(self, body, kind="application/json"):
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path.startswith("/jwks"):
                self.answer(read("jwks.json"))
            else:
                self.send_error(404)

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            self.rfile.read(length)
            if not self.path.startswith("/token"):
                self.send_error(404)
                return
            token = read("token.txt").decode().strip()
            self.answer(json.dumps({"access_token": token, "token_type": "bearer",
                                    "expires_in": 3600}).encode())

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    if args.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print("listening %d" % server.server_address[1], flush=True)
    sys.stdout.close()
    server.serve_forever()


if __name__ == "__main__":
    main()
