"""What attack.py and stranger.py share: raw-socket HTTP and WebSocket helpers for the page's server of a running
graphhost. `configure(URL)` (the page's URL with its token) sets the server they talk to. Only the standard library:
raw sockets say exactly what is sent."""
import base64
import os
import socket
from urllib.parse import urlparse, parse_qs

HOST = PORT = TOKEN = AUTHORITY = ORIGIN = COOKIE = None


def configure(url):
    """Talks to the server of `url`, the page's URL with its token."""
    global HOST, PORT, TOKEN, AUTHORITY, ORIGIN, COOKIE
    parsed = urlparse(url)
    HOST, PORT = parsed.hostname, parsed.port
    TOKEN = parse_qs(parsed.query)["token"][0]
    AUTHORITY = f"{HOST}:{PORT}"
    ORIGIN = f"http://{AUTHORITY}"
    COOKIE = f"graphhost_token={TOKEN}"


def connect(timeout=5):
    s = socket.create_connection((HOST, PORT), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def request(path="/", headers=None, method="GET", body=b"", version="HTTP/1.1"):
    lines = [f"{method} {path} {version}"] + [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def good_headers():
    return {"Host": AUTHORITY, "Cookie": COOKIE}


def frame(opcode, payload=b"", fin=True, rsv=0, masked=True, length=None, key=None):
    """A WebSocket frame as a client sends it (masked unless told otherwise); `length` may lie about the payload."""
    n = len(payload) if length is None else length
    first = bytes([(0x80 if fin else 0) | (rsv << 4) | opcode])
    bit = 0x80 if masked else 0
    if n < 126:
        head = first + bytes([bit | n])
    elif n < 65536:
        head = first + bytes([bit | 126]) + n.to_bytes(2, "big")
    else:
        head = first + bytes([bit | 127]) + n.to_bytes(8, "big")
    if not masked:
        return head + payload
    key = key if key is not None else (b"\0\0\0\0" if len(payload) > 4096 else os.urandom(4))
    body = payload if key == b"\0\0\0\0" else bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return head + key + body


def open_socket_page(timeout=10):
    """A WebSocket with the right token and Origin; returns the socket after the 101."""
    s = connect(timeout)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(request("/ws", good_headers() | {"Origin": ORIGIN, "Connection": "Upgrade", "Upgrade": "websocket",
                                               "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": key}))
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            raise OSError("closed during the handshake")
        head += chunk
    if not head.startswith(b"HTTP/1.1 101"):
        raise OSError(f"handshake refused: {head[:40]!r}")
    return s, head.split(b"\r\n\r\n", 1)[1]


def read_message(s, pending=b""):
    """Reads one server frame; returns (opcode, payload, rest)."""
    data = pending

    def need(n):
        nonlocal data
        while len(data) < n:
            chunk = s.recv(65536)
            if not chunk:
                raise OSError("closed")
            data += chunk
    need(2)
    n, at = data[1] & 0x7F, 2
    if n == 126:
        need(4)
        n, at = int.from_bytes(data[2:4], "big"), 4
    elif n == 127:
        need(10)
        n, at = int.from_bytes(data[2:10], "big"), 10
    need(at + n)
    return data[0] & 0x0F, data[at:at + n], data[at + n:]
