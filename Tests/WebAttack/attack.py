#!/usr/bin/env python3
"""Attacks the page's server of a running graphhost (`run --http`), then checks a well-formed client is served.

    attack.py URL REQUESTS SLOW SLOW_SECONDS

URL is the page's URL with its token. The attack, in order: REQUESTS malformed HTTP requests (broken request lines,
headers and framing, oversized headers and bodies, wrong tokens, foreign Origins, rebinding Hosts, truncated
requests) after a well-formed page and WebSocket, SLOW slow connections (slowloris: a header line every second, never finished) held SLOW_SECONDS while a
well-formed client asks for the page, and WebSocket abuse (malformed, oversized and unfinished frames, bad UTF-8,
floods, wrong handshakes, pages that never read). It prints its progress on standard error ("phase NAME") and a JSON
summary as the last line of standard output. Only the standard library: raw sockets say exactly what is sent.
"""
import json, os, random, socket, sys, time

import page_client
page_client.configure(sys.argv[1])
from page_client import (AUTHORITY, COOKIE, HOST, ORIGIN, PORT, TOKEN, connect, frame,  # noqa: E402
                         good_headers, open_socket_page, read_message, request)

REQUESTS, SLOW, SLOW_SECONDS = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
rng = random.Random(7)
summary = {"statuses": {}, "unanswered": 0}


def phase(name):
    print(f"phase {name}", file=sys.stderr, flush=True)


def exchange(data, timeout=3):
    """Sends `data` and returns the response's status code ("closed" when the server hung up without one, "silent"
    when it said nothing within the timeout)."""
    try:
        with connect(timeout) as s:
            try:
                s.sendall(data)
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # the server may refuse and close while a large request is still being sent
            head = b""
            while b"\r\n" not in head:
                chunk = s.recv(4096)
                if not chunk:
                    break
                head += chunk
    except socket.timeout:
        return "silent"
    except OSError:
        return "closed"
    parts = head.split(b" ", 2)
    return parts[1].decode("latin-1") if head.startswith(b"HTTP/") and len(parts) > 1 else "closed"


def malformed():
    """One malformed or refused request, chosen at random."""
    pick = rng.randrange(20)
    paths = ["/", "/page/app.js", "/graph.json", "/graphs", "/ws", "/page/../../etc/passwd", "/%00", "/" + "a" * 9000]
    if pick == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 2000))) + b"\r\n\r\n"
    if pick == 1:
        return rng.choice([b"GET\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n", b"FOO / HTTP/1.1\r\nHost: x\r\n\r\n",
                           b" / HTTP/1.1\r\n\r\n", b"GET  HTTP/1.1\r\n\r\n", b"\r\n\r\n\r\n",
                           b"GET / HTTP/1.1\n\n", b"GET / HTTP/1.1\r\nHost: " + AUTHORITY.encode() + b"\r\n"])
    if pick == 2:
        return request("/" + "x" * rng.choice([5000, 70000, 300000]), good_headers())
    if pick == 3:  # a header without a colon, with a NUL, with a bare CR, with a space before the colon
        bad = rng.choice(["Broken header line", "X-A: \x00\x01", "X-B: a\rb", "X-C : v", ": empty name"])
        return request("/", good_headers()).replace(b"\r\n\r\n", b"\r\n" + bad.encode("latin-1") + b"\r\n\r\n")
    if pick == 4:  # oversized headers: one huge value, or very many
        h = good_headers()
        if rng.random() < 0.5:
            h["X-Big"] = "v" * rng.choice([20000, 100000, 1000000])
        else:
            h.update({f"X-{i}": "v" * 40 for i in range(rng.choice([500, 5000]))})
        return request("/", h)
    if pick == 5:  # an oversized body on a route that takes none
        n = rng.choice([100000, 4000000])
        h = good_headers() | {"Content-Length": str(n)}
        return request(rng.choice(paths[:4]), h, method=rng.choice(["GET", "POST", "PUT"]), body=b"z" * n)
    if pick == 6:  # a body announced far larger than sent, or negative, or twice, or not a number
        cl = rng.choice(["99999999999", "-1", "12, 13", "abc", "1e9", "18446744073709551617"])
        return request("/", good_headers() | {"Content-Length": cl}, method="POST", body=b"short")
    if pick == 7:  # broken chunked bodies
        body = rng.choice([b"zz\r\nabc\r\n0\r\n\r\n", b"fffffffffffffffff\r\n", b"5\r\nab", b"1\r\na\r\n-1\r\n\r\n"])
        h = good_headers() | {"Transfer-Encoding": rng.choice(["chunked", "gzip, chunked", "chunked, chunked"])}
        if rng.random() < 0.3:
            h["Content-Length"] = "3"
        return request("/", h, method="POST", body=body)
    if pick == 8:  # no token, a wrong one, one a byte short or long
        wrong = rng.choice(["", TOKEN[:-1], TOKEN + "0", TOKEN[::-1], "0" * len(TOKEN), TOKEN.upper()])
        return request(rng.choice(paths[:5]) + rng.choice(["", f"?token={wrong}"]),
                       {"Host": AUTHORITY, "Cookie": f"graphhost_token={wrong}"})
    if pick == 9:  # a foreign Origin with the right token
        origin = rng.choice(["http://attacker.example", "null", f"http://{HOST}.attacker.example:{PORT}",
                             f"https://{AUTHORITY}", "http://localhost.attacker.example"])
        return request(rng.choice(paths[:5]), good_headers() | {"Origin": origin})
    if pick == 10:  # DNS rebinding: another name for this address, the right token
        host = rng.choice([f"attacker.example:{PORT}", "attacker.example", f"127.0.0.1.nip.io:{PORT}", "",
                           f"{HOST}:{PORT + 1}", "[::1]:80", "a" * 3000])
        return request(rng.choice(paths[:5]), {"Host": host, "Cookie": COOKIE})
    if pick == 11:  # no Host, or two
        h = {"Cookie": COOKIE}
        if rng.random() < 0.5:
            return request("/", h)
        return request("/", h).replace(b"\r\n\r\n", f"\r\nHost: {AUTHORITY}\r\nHost: evil\r\n\r\n".encode())
    if pick == 12:  # a well-formed request cut short
        whole = request(rng.choice(paths[:4]), good_headers())
        return whole[: rng.randrange(1, len(whole) - 1)]
    if pick == 13:  # many pipelined requests in one write
        return request("/graphs", good_headers()) * rng.choice([50, 400])
    if pick == 14:  # a WebSocket handshake gone wrong
        h = good_headers() | {"Origin": ORIGIN, "Connection": "Upgrade", "Upgrade": "websocket"}
        h |= rng.choice([{}, {"Sec-WebSocket-Version": "13"}, {"Sec-WebSocket-Version": "8", "Sec-WebSocket-Key": "x"},
                         {"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "not base64!"},
                         {"Sec-WebSocket-Version": "13" * 100, "Sec-WebSocket-Key": "A" * 5000}])
        return request("/ws", h)
    if pick == 15:  # other methods, odd URIs
        method = rng.choice(["DELETE", "OPTIONS", "TRACE", "CONNECT", "PATCH", "HEAD", "G\x00T", "GET" * 300])
        target = rng.choice(["*", "http://attacker.example/", "//", "/?" + "&" * 5000, "/page/", "/page/%2e%2e%2f"])
        return request(target, good_headers(), method=method)
    if pick == 16:  # header names and values outside ASCII
        return request("/", good_headers() | {"X-\u00e9": "\u00ff" * 100, "Cookie": COOKIE + "; \u00ff=\u00fe"})
    if pick == 17:  # the token in both places, one wrong; many cookies
        cookies = "; ".join(f"c{i}=v{i}" for i in range(rng.choice([10, 2000]))) + f"; {COOKIE}"
        return request(f"/?token={TOKEN[:-1]}x", {"Host": AUTHORITY, "Cookie": cookies})
    if pick == 18:  # HTTP/1.0 and HTTP/2's preface
        return rng.choice([request("/", good_headers(), version="HTTP/1.0"),
                           b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes(rng.randrange(256) for _ in range(64))])
    return bytes(rng.choice(b"GET /HTTP1.\r\n:Host") for _ in range(rng.randrange(1, 400)))


def well_formed_page():
    """A well-formed client: the page with the cookie gives 200 and its HTML."""
    with connect(10) as s:
        s.sendall(request("/", good_headers() | {"Connection": "close"}))
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return data.startswith(b"HTTP/1.1 200") and b"<html" in data.lower()


def subscribed_page(answered=False):
    """A page subscribed to every feed at the highest rate (the spectrum of the output, "out"); it never reads,
    unless `answered` asks it to wait for graphhost's replies (then what the subscriptions start is running)."""
    s, rest = open_socket_page()
    feeds = [{"feed": "meters"}, {"feed": "load"}, {"feed": "spectrum", "node": "out"}, {"feed": "loudness"},
             {"feed": "transport"}]
    for i, feed in enumerate(feeds):
        s.sendall(frame(1, json.dumps(feed | {"op": "subscribe", "rate": 60, "id": i}).encode()))
    replies = set()
    while answered and len(replies) < len(feeds):
        opcode, payload, rest = read_message(s, rest)
        message = json.loads(payload) if opcode == 1 else {}
        if message.get("type") == "reply":
            if message.get("ok") is not True:
                raise OSError(f"a subscription was refused: {message}")
            replies.add(message.get("id"))
    return s


def well_formed_socket():
    """A well-formed page: the graph arrives first, and a command is answered with ok."""
    s, rest = open_socket_page()
    with s:
        op, payload, rest = read_message(s, rest)
        graph = json.loads(payload)
        s.sendall(frame(1, json.dumps({"op": "graph", "id": 1}).encode()))
        for _ in range(50):
            op, payload, rest = read_message(s, rest)
            message = json.loads(payload)
            if message.get("type") == "reply" and message.get("id") == 1:
                return graph.get("type") == "graph" and message.get("ok") is True
    return False


def socket_abuse():
    """Each abuse on a WebSocket of its own; returns how many the server closed or refused."""
    big = b"x" * (1 << 20)
    cases = [
        [frame(1, b"{}", masked=False)],  # a client frame unmasked
        [frame(3, b"reserved opcode")], [frame(11, b"reserved control")],
        [frame(1, b"{}", rsv=4)],  # a reserved bit
        [frame(9, b"p" * 200)],  # a control frame over 125 bytes
        [frame(9, b"ping", fin=False)],  # a fragmented control frame
        [frame(0, b"continuation with no start")],
        [frame(1, b"\xff\xfe\xc3\x28 not utf-8")],
        [frame(1, b"", length=1 << 62)],  # a length no one can send
        [frame(2, big)],  # a 1 MiB frame, past the limit
        [frame(1, b"{" + b"\"a\":" * 10000)],  # deep, unfinished JSON
        [frame(1, b"[" * 60000)],
        [frame(1, b"a" * 60000, fin=False)] + [frame(0, b"a" * 60000, fin=False) for _ in range(4)],  # never ends
        [frame(1, json.dumps({"op": "set", "node": "eq", "parameter": "band1", "value": 1e308}).encode())],
        [frame(1, json.dumps({"op": "load", "path": "../../../../etc/passwd"}).encode())],
        [frame(1, json.dumps({"op": "subscribe", "feed": "meters", "rate": 1e9}).encode())],
        [frame(1, json.dumps({"op": "response", "node": "nope" * 1000}).encode())],
        [frame(8, b"\x03")],  # a close frame with a one-byte code
        [frame(8, b"\x00\x00bad code")],
        [frame(9, b"ping") for _ in range(2000)],  # a ping flood
        [frame(1, json.dumps({"op": "status", "id": i}).encode()) for i in range(2000)],  # a message flood
    ]
    closed = 0
    for i, frames in enumerate(cases):
        try:
            s, _ = open_socket_page()
        except OSError:
            continue
        with s:
            s.settimeout(3)
            try:
                s.sendall(b"".join(frames))
                s.shutdown(socket.SHUT_WR)
                while s.recv(65536):
                    pass
                closed += 1
            except socket.timeout:
                pass  # the server kept the page open (a flood it answered, a frame it took as a message)
            except OSError:
                closed += 1
    # Pages that subscribe to every feed at the highest rate and never read.
    silent = [subscribed_page() for _ in range(10)]
    # Pages that open and close at once, many times.
    for _ in range(100):
        try:
            s, _ = open_socket_page()
            s.close()
        except OSError:
            pass
    return closed, silent


def main():
    started = time.time()
    # A well-formed page, WebSocket and subscriber first: what graphhost sets up for its first clients (the
    # analysis thread, the event loop's timers) is not the attack's doing.
    summary["servedBefore"] = well_formed_page() and well_formed_socket()
    subscribed_page(answered=True).close()
    phase("malformed")
    for _ in range(REQUESTS):
        status = exchange(malformed())
        summary["statuses"][status] = summary["statuses"].get(status, 0) + 1
    summary["requests"] = REQUESTS
    summary["servedAfterMalformed"] = well_formed_page()

    phase("slow")
    slow = []
    for i in range(SLOW):
        try:
            s = connect()
            s.sendall(f"GET / HTTP/1.1\r\nHost: {AUTHORITY}\r\n".encode())
            slow.append(s)
        except OSError:
            summary["slowRefused"] = summary.get("slowRefused", 0) + 1
    summary["slowOpen"] = len(slow)
    phase("slow-open")
    served, until = [], time.time() + SLOW_SECONDS
    line = 0
    while time.time() < until:
        time.sleep(1)
        line += 1
        for s in slow:
            try:
                s.sendall(f"X-Slow-{line}: {line}\r\n".encode())
            except OSError:
                pass
        served.append(well_formed_page())
    summary["servedDuringSlow"], summary["askedDuringSlow"] = served.count(True), len(served)
    still = 0
    for s in slow:
        # A connection the server closed reads as the end of the stream (or a reset); an open one has nothing to read.
        s.setblocking(False)
        try:
            if s.recv(1):
                still += 1
        except BlockingIOError:
            still += 1
        except OSError:
            pass
        s.close()
    summary["slowStillOpenAtEnd"] = still

    phase("websocket")
    closed, silent = socket_abuse()
    summary["socketAbusesClosed"] = closed
    summary["servedSocketDuringSilentPages"] = well_formed_socket()
    for s in silent:
        s.close()
    summary["served"] = well_formed_page() and well_formed_socket()
    summary["seconds"] = round(time.time() - started, 1)
    phase("done")
    print(json.dumps(summary, sort_keys=True), flush=True)


main()
