#!/usr/bin/env python3
"""A loopback HTTP server for the network-stream tests. Serves files from a folder on 127.0.0.1 and prints
its port. Query options on a file: rate=BYTES_PER_S (throttle), drop=N (close the first connection after N
bytes), stall=S@N (pause S seconds once at byte N), norange=1 (ignore Range headers), hold=NAME (before answering,
create NAME.waiting in the folder and wait until the test creates NAME there).
/missing answers 404; /loop redirects to itself; /moved redirects to /FILE given as ?to=FILE; /empty answers 200 with
an empty body; /silent accepts the connection and never answers.
endless=1 sends a file as an endless stream would: declared live (icy-name), no Content-Length, the connection
closes at its end; with next=NAME, every later connection to it sends NAME instead (a radio that comes back with
other media). close=1 sends a file without Content-Length and closes the connection at its end; chunked=1 sends it
with Transfer-Encoding: chunked (both finite, not declared live).
Each Range request it honours is logged as "NAME START" in ranges.log in the folder.
The Content-Type follows the extension (.m3u8, .ts, .aac, .ogg, .opus, .flac, .wav, .m4a; else audio/mpeg) unless
type=MIME gives one. /live/NAME.m3u8 serves the finite playlist NAME.m3u8 as a live one: a window of 3 segments that
moves on by step=N segments (default 1) at each request, with ENDLIST once it reaches the end (deterministic: no clock);
with failsegment=I, the segment at index I of NAME.m3u8 is listed with fail=2@0. fail=N@K on any request: the
requests K to K+N-1 (counting from 0) of that path and query answer 404 (a server that goes away for a while).
With CERT and KEY arguments it serves HTTPS (for a self-signed certificate, which clients must refuse)."""
import http.server, os, socketserver, ssl, sys, threading, time, urllib.parse

root = sys.argv[1]
done = set()
lock = threading.Lock()
live_requests = {}
TYPES = {".m3u8": "application/vnd.apple.mpegurl", ".ts": "video/mp2t", ".aac": "audio/aac", ".ogg": "audio/ogg",
         ".opus": "audio/ogg", ".flac": "audio/flac", ".wav": "audio/wav", ".m4a": "audio/mp4"}


def live_playlist(name, step, fail_segment=-1):
    """The live view of the finite playlist NAME: the window for this request, as text."""
    lines = open(os.path.join(root, name)).read().splitlines()
    target = next(l for l in lines if l.startswith("#EXT-X-TARGETDURATION"))
    segments = [(lines[i], lines[i + 1]) for i in range(len(lines) - 1) if lines[i].startswith("#EXTINF")]
    with lock:
        count = live_requests.get(name, 0)
        live_requests[name] = count + 1
    first = min(count * step, max(0, len(segments) - 3))
    window = segments[first:first + 3]
    body = ["#EXTM3U", "#EXT-X-VERSION:3", target, f"#EXT-X-MEDIA-SEQUENCE:{first}"]
    for index, (info, uri) in enumerate(window, start=first):
        body += [info, "/" + uri + ("?fail=2@0" if index == fail_segment else "")]
    if first + 3 >= len(segments):
        body.append("#EXT-X-ENDLIST")
    return ("\n".join(body) + "\n").encode()


def once(key):
    with lock:
        if key in done:
            return False
        done.add(key)
        return True


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/loop":
            return self.redirect("/loop")
        if url.path == "/moved":
            return self.redirect("/" + q["to"])
        if url.path == "/empty":
            return self.answer(200, b"", "audio/mpeg")
        if url.path == "/silent":
            time.sleep(60)
            self.close_connection = True
            return
        if "fail" in q:
            count, first = (int(v) for v in q["fail"].split("@"))
            with lock:
                number = live_requests.get(("fail", self.path), 0)
                live_requests[("fail", self.path)] = number + 1
            if first <= number < first + count:
                return self.answer(404, b"gone for now")
        if url.path.startswith("/live/") and url.path.endswith(".m3u8"):
            body = live_playlist(url.path[len("/live/"):], int(q.get("step", 1)), int(q.get("failsegment", -1)))
            return self.answer(200, body, TYPES[".m3u8"])
        path = os.path.join(root, url.path.lstrip("/"))
        if url.path == "/missing" or not os.path.isfile(path):
            return self.answer(404, b"not found")
        if "hold" in q:
            gate = os.path.join(root, q["hold"])
            open(gate + ".waiting", "w").close()
            for _ in range(6000):
                if os.path.exists(gate):
                    break
                time.sleep(0.01)
        if "next" in q and not once(("first", self.path)):
            path = os.path.join(root, q["next"])
        data = open(path, "rb").read()
        start = 0
        rng = self.headers.get("Range")
        if rng and q.get("norange") != "1" and rng.startswith("bytes="):
            start = int(rng[6:].split("-")[0])
            with lock:
                with open(os.path.join(root, "ranges.log"), "a") as log:
                    log.write(f"{url.path.lstrip('/')} {start}\n")
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Type", q.get("type") or TYPES.get(os.path.splitext(url.path)[1], "audio/mpeg"))
        chunked = q.get("chunked") == "1"
        if q.get("endless") == "1" or q.get("close") == "1":
            if q.get("endless") == "1":
                self.send_header("icy-name", "loopback test radio")
            self.send_header("Connection", "close")
            self.close_connection = True
        elif chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        rate = float(q.get("rate", 0))
        drop = int(q.get("drop", -1))
        stall_s, stall_at = (float(q["stall"].split("@")[0]), int(q["stall"].split("@")[1])) if "stall" in q else (0, -1)
        pos, chunk, began = start, 4096, time.time()
        try:
            while pos < len(data):
                if drop >= 0 and pos >= drop and once(("drop", self.path)):
                    self.close_connection = True
                    return
                if stall_at >= 0 and pos >= stall_at and once(("stall", self.path)):
                    time.sleep(stall_s)
                end = min(len(data), pos + chunk)
                if drop >= 0 and pos < drop < end:
                    end = drop
                if chunked:
                    self.wfile.write(b"%x\r\n" % (end - pos) + data[pos:end] + b"\r\n")
                else:
                    self.wfile.write(data[pos:end])
                pos = end
                if rate > 0:
                    ahead = (pos - start) / rate - (time.time() - began)
                    if ahead > 0:
                        time.sleep(ahead)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def answer(self, status, body, content_type=None):
        """A whole response with a body of known length."""
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, to):
        self.send_response(302)
        self.send_header("Location", to)
        self.send_header("Content-Length", "0")
        self.end_headers()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


server = Server(("127.0.0.1", 0), Handler)
if len(sys.argv) > 3:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[2], sys.argv[3])
    server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
