#!/usr/bin/env python3
"""What a stranger can do to the page's server of a running graphhost (`run --http`, or `WebServer` in a test).

    stranger.py URL messages FILE     send each line of FILE (one page message each) on a WebSocket with the token;
                                      print a JSON list of the replies, in order
    stranger.py URL get PATH          print {"status": N, "body": "..."} for GET PATH with the token
    stranger.py URL heads             malformed, doubled-Host and absolute-form requests; print their statuses and
                                      whether each connection was closed after the answer
    stranger.py URL strangers N SECONDS INTERVAL   N strangers repeat a refused request (no token) every INTERVAL
                                      seconds for SECONDS; say "ready" on standard error once each has been refused;
                                      print their counts
    stranger.py URL open              a client with the token opens the page (GET / and the WebSocket's first
                                      message); print the time it took
    stranger.py URL silent N          open N connections from this address that send nothing, then ask with the
                                      token; print how many the server closed (to make room) and kept open

Only the standard library: raw sockets say exactly what is sent (page_client.py, shared with attack.py).
"""
import json, socket, sys, threading, time

import page_client
page_client.configure(sys.argv[1])
from page_client import AUTHORITY, COOKIE, connect, frame, open_socket_page, read_message, request  # noqa: E402


def read_response(s, closed_within=None):
    """The response's status, body and, when `closed_within` seconds are given, whether the server closed the
    connection within them after the response (None when not asked)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            return None, b"", True
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    if closed_within is None:
        return status, body[:length], None
    s.settimeout(closed_within)
    try:
        closed = s.recv(1) == b""
    except socket.timeout:
        closed = False
    except OSError:
        closed = True
    return status, body[:length], closed


def messages(path):
    """Sends each line of `path` with an id; returns the reply to each (the raw reply text)."""
    s, rest = open_socket_page(timeout=60)
    replies = []
    with open(path) as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    for i, line in enumerate(lines):
        s.sendall(frame(1, line.encode()))
        while True:
            opcode, payload, rest = read_message(s, rest)
            if opcode != 1:
                continue
            message = json.loads(payload)
            if message.get("type") == "reply":
                replies.append(payload.decode())
                break
    s.close()
    return replies


def get(path):
    with connect(10) as s:
        s.sendall(request(path, {"Host": AUTHORITY, "Cookie": COOKIE}))
        status, body, _ = read_response(s)
    return {"status": status, "body": body.decode("utf-8", "replace")}


def heads():
    """Each case's status and whether the server closed the connection once it had answered."""
    cases = {
        "malformed": b"GARBAGE\x01 NOT HTTP\r\n\r\n",
        "twoHosts": request("/", {"Host": AUTHORITY, "Cookie": COOKIE} | {"host": "evil.example"}),
        "absoluteOtherHost": request("http://evil.example/", {"Host": AUTHORITY, "Cookie": COOKIE}),
        "absoluteOwnHost": request(f"http://{AUTHORITY}/graphs", {"Host": AUTHORITY, "Cookie": COOKIE}),
        "noToken": request("/graphs", {"Host": AUTHORITY}),
        "withToken": request("/graphs", {"Host": AUTHORITY, "Cookie": COOKIE}),
    }
    result = {}
    for name, data in cases.items():
        with connect(15) as s:
            s.sendall(data)
            status, _, closed = read_response(s, closed_within=2)
            result[name] = {"status": status, "closed": closed}
    return result


def strangers(n, seconds, interval):
    """N strangers repeat a refused request every INTERVAL seconds (on the same connection while the server keeps
    it, else on a new one) for SECONDS; "ready" goes to standard error once every one has been refused."""
    stop = threading.Event()
    refused = [0] * n
    reset = [0] * n
    first_round = threading.Barrier(n + 1)

    def stranger(i):
        waited = False
        while not stop.is_set():
            try:
                with connect(10) as s:
                    while not stop.is_set():
                        s.sendall(request("/", {"Host": AUTHORITY}))
                        status, _, closed = read_response(s, closed_within=10)
                        if status is None:
                            break
                        refused[i] += 1
                        if not waited:
                            waited = True
                            first_round.wait(60)
                        stop.wait(interval)
                        if closed:
                            break
            except threading.BrokenBarrierError:
                break
            except OSError:
                reset[i] += 1
                if reset[i] > 1000:
                    break
        if not waited:
            first_round.wait(60)

    threads = [threading.Thread(target=stranger, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    first_round.wait(60)
    print("ready", file=sys.stderr, flush=True)
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join(30)
    return {"refused": sum(refused), "strangersRefused": sum(1 for r in refused if r > 0), "resets": sum(reset)}


def open_page():
    """A client with the token opens the page: the HTML, then the WebSocket's first message."""
    start = time.monotonic()
    with connect(10) as s:
        s.sendall(request("/", {"Host": AUTHORITY, "Cookie": COOKIE}))
        status, body, _ = read_response(s)
    ws, rest = open_socket_page()
    opcode, payload, rest = read_message(ws, rest)
    took = time.monotonic() - start
    ws.close()
    first = json.loads(payload) if opcode == 1 else {}
    return {"pageStatus": status, "pageHasHTML": b"<html" in body.lower(), "firstMessageHasNodes": "nodes" in first,
            "seconds": took}


def silent(n):
    """N connections that send nothing, then a client with the token: the server takes connections in order on one
    thread, so once the client is answered every silent one was admitted or closed."""
    sockets = [connect(10) for _ in range(n)]
    served = get("/graphs")["status"]
    closed = 0
    for s in sockets:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    for s in sockets:
        s.close()
    return {"closed": closed, "open": n - closed, "servedStatus": served}


def main():
    mode = sys.argv[2]
    if mode == "messages":
        result = messages(sys.argv[3])
    elif mode == "get":
        result = get(sys.argv[3])
    elif mode == "heads":
        result = heads()
    elif mode == "strangers":
        result = strangers(int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]))
    elif mode == "open":
        result = open_page()
    elif mode == "silent":
        result = silent(int(sys.argv[3]))
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
