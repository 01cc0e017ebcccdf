"""Browser scenarios for Tests/GraphHostTests/Web/WebPageTests.swift: each opens the page graphhost printed in
headless Chromium, does what a person would, and returns what it saw (the Swift test judges it with what it measured
on graphhost's side).

`scenarios.py --serve` starts one Chromium for many scenarios (the browser tier's): it reads one JSON request a line
on standard input, {"id": N, "scenario": NAME, "arguments": [URL, ...], "environment": {...}} (added to this
process's for the tools a scenario runs), runs each in a fresh tab (the others closed, no cookie left from the one
before) and writes its result as one JSON line on standard output, {"id": N, "result": {...}} or {"id": N, "error":
"..."}; what the scenario says as it goes, and the page's console beside a failure, go to standard error, each
scenario's between a line `scenario N NAME` and one `scenario N done`. A Chromium that died is started again for the
next scenario; the end of standard input (or SIGTERM) closes it and ends the process.

`scenarios.py NAME URL [ARGS...]` runs one scenario in a Chromium of its own and prints its result as one JSON line.
"""
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from page import browser, console, graph, open_page, phone, select, wait

# The environment of the tools a scenario runs (pw-cat, pw-cli): this process's and the request's.
TOOLS_ENVIRONMENT = dict(os.environ)


class Probe:
    """A peer of graphhost's on the same machine, for judging a latency: a thread that asks to sleep 5 ms at a time
    and records each wake, when (ms on the wall clock) and how late (ms beyond the 5 ms). The rule (WebPageTests'
    `latencyAllowed`): each change must show on the page within 100 ms; one that took longer while the probe was
    itself woken more than 50 ms late in that change's interval (`late`) measured the machine, not graphhost, and
    the measurement is made again, at most 3 times in all, before the test fails saying the machine was too busy.
    A change over 100 ms with a quiet probe fails."""
    PERIOD = 0.005

    def __init__(self):
        self.wakes = []
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        before = time.monotonic()
        while not self._stopped.is_set():
            time.sleep(self.PERIOD)
            after = time.monotonic()
            self.wakes.append((time.time() * 1000, (after - before - self.PERIOD) * 1000))
            before = after

    def stop(self):
        """Stops the probe once it woke again (so a late wake over the last change is recorded)."""
        self._stopped.set()
        self._thread.join()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.stop()

    def late(self, start, end):
        """The most the probe was woken late (ms) over [start, end] (ms on the wall clock): the worst wake whose
        lateness, the time it waited beyond its 5 ms, overlaps that interval."""
        return max([late for at, late in self.wakes if at >= start and at - late <= end], default=0.0)

    def summary(self):
        return {"wakes": len(self.wakes), "worst": max([late for _, late in self.wakes], default=0.0)}


def control(path, line):
    """Sends one command line to graphhost's control socket and returns its JSON reply."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall(line.encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data.decode().splitlines()[0])


def osc(port, address, *arguments):
    """Sends one OSC message over UDP to 127.0.0.1:port (strings and int32s)."""
    def padded(raw):
        raw += b"\0"
        return raw + b"\0" * (-len(raw) % 4)
    tags = "," + "".join("i" if isinstance(a, int) else "s" for a in arguments)
    body = b"".join(struct.pack(">i", a) if isinstance(a, int) else padded(a.encode()) for a in arguments)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(padded(address.encode()) + padded(tags.encode()) + body, ("127.0.0.1", port))


def values_at(driver):
    """When the page last applied a `values` message, in ms on the wall clock."""
    return float(driver.execute_script("return document.body.dataset.valuesAt || '0'"))


def scenario_graph(driver, url):
    open_page(driver, url)
    state = graph(driver)
    return dict(nodes=[[n["id"], n["type"]] for n in state["nodes"]],
                links=[[link["from"], link["to"]] for link in state["links"]],
                drawn=[e.get_attribute("data-id") for e in driver.find_elements(By.CSS_SELECTOR, "#graph-view .node")],
                paths=[[e.get_attribute("data-from"), e.get_attribute("data-to")]
                       for e in driver.find_elements(By.CSS_SELECTOR, "#graph-view .link")],
                version=driver.find_element(By.ID, "version").text)


def scenario_band(driver, url, sock, parameter, steps):
    """Moves an EQ band by `steps` half-decibel steps (down when negative) with the arrow keys on its handle in the
    response chart."""
    open_page(driver, url)
    select(driver, "eq")
    handle = driver.find_element(By.CSS_SELECTOR, f'.eq-chart .handle[data-parameter="{parameter}"]')
    before = control(sock, "status")["status"]["position"]
    for _ in range(abs(int(steps))):
        handle.send_keys(Keys.ARROW_UP if int(steps) > 0 else Keys.ARROW_DOWN)
        time.sleep(0.02)  # a person's key repeat, not synchronization
    target = 0.5 * int(steps)
    wait(driver, lambda d: abs(d.execute_script(
        f"return window.graphhost.state.graph.nodes.find(n => n.id === 'eq').state.values['{parameter}']")
        - target) < 1e-6, f"graphhost reports {parameter} at {target} dB")
    after = control(sock, "status")["status"]["position"]
    curve = driver.execute_script("return document.querySelector('.eq-chart .response').getAttribute('points').length")
    return dict(before=before, after=after, curve=curve, error=driver.find_element(By.ID, "control-error").text)


def scenario_elsewhere(driver, url, sock, osc_port):
    """Presets changed through the control socket and through OSC: how long until the page shows each (ms from
    sending the command to the page applying the values that show it), and the most the probe was woken late in
    each of those intervals."""
    open_page(driver, url)
    select(driver, "eq")
    picker = driver.find_element(By.ID, "control-eq-preset")
    presets = [o.get_attribute("value") for o in picker.find_elements(By.TAG_NAME, "option")
               if o.get_attribute("value")]
    intervals = {"socket": [], "osc": []}
    with Probe() as probe:
        for k, name in enumerate(presets[1:11]):
            how = "socket" if k % 2 == 0 else "osc"
            sent = time.time() * 1000
            if how == "socket":
                control(sock, f"preset eq {name}")
            else:
                osc(int(osc_port), "/graphhost/preset", "eq", presets.index(name))
            wait(driver, lambda d: picker.get_attribute("value") == name, f"the page shows preset {name}")
            intervals[how].append((sent, values_at(driver)))
    logged = [e.text for e in driver.find_elements(By.CSS_SELECTOR, '#events li[data-event="command"]')]
    return dict(latencies={how: [end - start for start, end in spans] for how, spans in intervals.items()},
                probe={how: [probe.late(*span) for span in spans] for how, spans in intervals.items()},
                probe_overall=probe.summary(), logged=logged)


def scenario_meters(driver, url):
    """The output's meter while playing, then after the page's pause button, then after play."""
    open_page(driver, url)

    def peak():
        return driver.find_element(By.CSS_SELECTOR, '#meters .meter[data-node="out"]').get_attribute("data-peak")

    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '#meters .meter[data-node="out"]'), "the output's meter")
    playing = []
    for _ in range(10):
        playing.append(peak())
        time.sleep(0.1)  # samples the meter ten times a second
    driver.find_element(By.ID, "play").click()
    wait(driver, lambda d: d.find_element(By.ID, "play").text == "Play", "the button offers Play")
    wait(driver, lambda d: peak() == "-inf", "the output's meter falls to silence")
    fell = time.time()
    driver.find_element(By.ID, "play").click()
    wait(driver, lambda d: peak() != "-inf", "the output's meter rises again")
    return dict(playing=playing, rose_after=time.time() - fell)


def scenario_pages(driver, url, count, seconds):
    """`count` pages open at once (tabs of one browser), each subscribed to meters at 30 Hz, for `seconds`."""
    open_page(driver, url)
    for _ in range(int(count) - 1):
        driver.switch_to.new_window("tab")
        open_page(driver, url)
    print(f"{count} pages open", file=sys.stderr, flush=True)
    time.sleep(float(seconds))  # the pages stay open while graphhost plays
    counts = []
    for handle in driver.window_handles:
        driver.switch_to.window(handle)
        counts.append(driver.execute_script("return document.querySelectorAll('#meters .meter').length"))
    return dict(pages=len(driver.window_handles), meters=counts)


def scenario_phone(driver, url):
    """At 390 px: one column, nothing wider than the screen; every control labelled; the keyboard reaches a node,
    selects it and moves a slider, with a visible focus ring."""
    phone(driver)
    open_page(driver, url)
    width = driver.execute_script("return window.innerWidth")
    sections = driver.find_elements(By.CSS_SELECTOR, "main > section")
    lefts = sorted({round(e.rect["x"]) for e in sections})
    overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    body = driver.find_element(By.TAG_NAME, "body")
    reached = None
    for presses in range(1, 40):
        body.send_keys(Keys.TAB) if presses == 1 else driver.switch_to.active_element.send_keys(Keys.TAB)
        active = driver.switch_to.active_element
        if active.get_attribute("data-id") == "eq":
            reached = presses
            break
    ring = driver.execute_script(
        "const e = document.activeElement.querySelector('rect'); return getComputedStyle(e).strokeWidth")
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#node-controls h3"), "the eq's controls")
    slider = driver.find_element(By.ID, "control-eq-band_5")
    before = driver.execute_script(
        "return window.graphhost.state.graph.nodes.find(n => n.id === 'eq').state.values['band.5']")
    slider.send_keys(Keys.END)
    wait(driver, lambda d: d.execute_script(
        "return window.graphhost.state.graph.nodes.find(n => n.id === 'eq').state.values['band.5']") != before,
        "graphhost reports the band moved by the keyboard")
    outline = driver.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
    unlabelled = driver.execute_script("""return [...document.querySelectorAll('input, select, button')]
        .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim())
        .map(e => e.id || e.outerHTML.slice(0, 60))""")
    after = driver.execute_script(
        "return window.graphhost.state.graph.nodes.find(n => n.id === 'eq').state.values['band.5']")
    return dict(width=width, lefts=lefts, overflow=overflow, reached=reached, ring=ring, outline=outline,
                unlabelled=unlabelled, before=before, after=after)


def scenario_files(driver, url, other):
    """A refused value shows graphhost's error and changes nothing; a graph file beside the running one loads; a
    path outside that folder is refused."""
    open_page(driver, url)
    select(driver, "eq")
    before = driver.execute_script("return window.graphhost.state.graph.nodes.find(n => n.id === 'eq').state.values")
    driver.execute_script("window.graphhost.controls.set('band.5', 99)")
    wait(driver, lambda d: d.find_element(By.ID, "control-error").text, "the page shows the refusal")
    refused = driver.find_element(By.ID, "control-error").text
    after = driver.execute_script("return window.graphhost.state.graph.nodes.find(n => n.id === 'eq').state.values")
    outside = driver.execute_async_script("""const done = arguments[0];
        window.graphhost.connection.request('load', {path: '../etc.json'})
            .then(() => done('loaded'), e => done(e.message))""")
    options = [o.get_attribute("value") for o in driver.find_elements(By.CSS_SELECTOR, "#load-file option")]
    from selenium.webdriver.support.ui import Select
    Select(driver.find_element(By.ID, "load-file")).select_by_value(other)
    driver.find_element(By.ID, "load-button").click()
    wait(driver, lambda d: "karaoke" in d.execute_script(
        "return window.graphhost.state.graph.nodes.map(n => n.id).join(' ')"), "the page shows the loaded graph")
    return dict(refused=refused, unchanged=before == after, outside=outside, options=options,
                nodes=driver.execute_script("return window.graphhost.state.graph.nodes.map(n => n.id)"))


def scenario_peq(driver, url, shape):
    """Drags a parametric band's handle on the response chart up and to the right with the pointer, reads the
    controls' labels and shown values, then picks `shape` from the band's type picker."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.support.ui import Select
    open_page(driver, url)
    select(driver, "peq")

    def values():
        return driver.execute_script("return window.graphhost.state.graph.nodes.find(n => n.id === 'peq').state.values")

    def curve():
        return driver.execute_script("return document.querySelector('.eq-chart .response').getAttribute('points')")

    wait(driver, lambda d: len(curve() or "") > 100, "the chart drew the response")
    before, drawn = values(), curve()
    handle = driver.find_element(By.CSS_SELECTOR, '.eq-chart .handle[data-parameter="band.0.gain"]')
    ActionChains(driver).click_and_hold(handle).move_by_offset(60, -30).pause(0.2).release().perform()
    wait(driver, lambda d: all(values()[p] != before[p] for p in ("band.0.gain", "band.0.frequency")),
         "graphhost reports the new gain and frequency")
    wait(driver, lambda d: curve() != drawn, "the curve redrew")
    dragged = values()
    labels = driver.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('.control')].map(r => "
        "[r.querySelector('input, select')?.id || '', [r.querySelector('label')?.textContent || '',"
        " r.querySelector('output')?.value || '']]))")
    picker = Select(driver.find_element(By.ID, "control-peq-band_0_type"))
    shapes = [[o.text, o.get_attribute("value")] for o in picker.options]
    drawn = curve()
    picker.select_by_visible_text(shape)
    wait(driver, lambda d: values()["band.0.type"] != dragged["band.0.type"], f"graphhost reports the {shape} band")
    wait(driver, lambda d: curve() != drawn, "the curve redrew for the new shape")
    return dict(before=before, after=dragged, labels=labels, shapes=shapes, picked=values()["band.0.type"])


class CommandEvents:
    """graphhost's events on its control socket, read on a thread of its own: `heard` fills with (ms on the wall
    clock when it arrived, command) for each `command` event. A `with` block closes the subscription at its end."""

    def __init__(self, path):
        self.heard = []
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.connect(path)
        self._socket.sendall(b"subscribe\n")
        subscribed = threading.Event()
        threading.Thread(target=self._read, args=(subscribed,), daemon=True).start()
        if not subscribed.wait(10):
            self.close()
            raise AssertionError("graphhost did not answer `subscribe` within 10 s")

    def _read(self, subscribed):
        pending = b""
        while True:
            try:
                chunk = self._socket.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            if lines:
                subscribed.set()
            for line in lines:
                event = json.loads(line.decode()) if line.startswith(b"{") else {}
                if event.get("event") == "command":
                    self.heard.append((time.time() * 1000, event["command"]))

    def close(self):
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._socket.close()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()


def program_change_file(program):
    """A format-0 MIDI file holding one program change on channel 1, 200 ms in (480 ticks a quarter at 120 bpm):
    pw-cat plays from its first cycle, which may come before its link to the control port carries data."""
    track = bytes([0x81, 0x40, 0xC0, program, 0x83, 0x60, 0xFF, 0x2F, 0x00])
    data = b"MThd" + bytes([0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0]) + b"MTrk" + struct.pack(">I", len(track)) + track
    f = tempfile.NamedTemporaryFile(suffix=".mid", delete=False)
    f.write(data)
    f.close()
    return f.name


def scenario_surfaces(driver, url, sock, midi_target, props_node):
    """Presets changed by MIDI program changes (pw-cat --midi into the graph's MIDI control port) and by `pw-cli
    set-param` on the playback node's Props: for each, the ms from the control socket hearing the command event to
    the page applying the values that show it, and the most the probe was woken late in that interval."""
    open_page(driver, url)
    select(driver, "eq")
    picker = driver.find_element(By.ID, "control-eq-preset")
    presets = [o.get_attribute("value") for o in picker.find_elements(By.TAG_NAME, "option")
               if o.get_attribute("value")]
    changes = [("midi", 1, "Rock"), ("pw-cli", "Jazz", "Jazz"), ("midi", 2, "Piano"), ("pw-cli", "Dance", "Dance")]
    intervals = {"midi": [], "pw-cli": []}
    commands = []
    with CommandEvents(sock) as events, Probe() as probe:
        heard = events.heard
        for how, what, name in changes:
            already = len(heard)
            if how == "midi":
                command = ["pw-cat", "--midi", "--playback", program_change_file(what), "--target", midi_target]
            else:
                command = ["pw-cli", "set-param", props_node, "Props",
                           '{ params = [ "eq:preset" %d ] }' % presets.index(what)]
            subprocess.run(command, check=True, capture_output=True, env=TOOLS_ENVIRONMENT)
            wait(driver, lambda d: picker.get_attribute("value") == name, f"the page shows preset {name} ({how})")
            wait(driver, lambda d: len(heard) > already, f"the socket heard the {how} command")
            intervals[how].append((heard[already][0], values_at(driver)))
            commands.append(heard[already][1])
    return dict(latencies={how: [end - start for start, end in spans] for how, spans in intervals.items()},
                probe={how: [probe.late(*span) for span in spans] for how, spans in intervals.items()},
                probe_overall=probe.summary(), commands=commands)


def scenario_lv2(driver, url, preset):
    """An LV2 plugin's controls on the page: the rows it drew (label, unit, input type), its presets; then `preset`
    picked from the page's picker and the node bypassed with its toggle, each until graphhost reports it back."""
    from selenium.webdriver.support.ui import Select
    open_page(driver, url)
    select(driver, "fx")

    def node():
        return driver.execute_script("return window.graphhost.state.graph.nodes.find(n => n.id === 'fx')")

    rows = driver.execute_script(
        "return [...document.querySelectorAll('.control')].map(r => [r.querySelector('input, select')?.id || '',"
        " r.querySelector('label')?.textContent || '', r.querySelector('input, select')?.type || ''])")
    picker = Select(driver.find_element(By.ID, "control-fx-preset"))
    presets = [o.get_attribute("value") for o in picker.options if o.get_attribute("value")]
    before = node()["state"]["values"]
    picker.select_by_value(preset)
    wait(driver, lambda d: node()["state"]["values"] != before, f"graphhost reports {preset}'s values")
    after = node()["state"]["values"]
    driver.find_element(By.ID, "control-fx-bypass").click()
    try:
        wait(driver, lambda d: node()["state"]["bypass"] is True, "graphhost reports the node bypassed")
    except AssertionError as error:
        raise AssertionError(f"{error}; the checkbox is checked: "
                             f"{driver.find_element(By.ID, 'control-fx-bypass').is_selected()}, the error line: "
                             f"'{driver.find_element(By.ID, 'control-error').text}', the events: "
                             f"{[e.text for e in driver.find_elements(By.CSS_SELECTOR, '#events li')]}") from error
    logged = [e.text for e in driver.find_elements(By.CSS_SELECTOR, '#events li[data-event="command"]')]
    return dict(rows=rows, presets=presets, before=before, after=after, logged=logged)


def scenario_watch(driver, url, sock, presets):
    """Watches the page while someone else changes the EQ's preset to each of `presets` (comma-separated), in
    order, each after the page showed the one before: says `watching` on standard error once the page is open and
    the control socket subscribed, `saw NAME` once it shows each; reports for each the ms from the socket hearing
    the command event to the page applying the values that show it, and the most the probe was woken late in that
    interval."""
    open_page(driver, url)
    select(driver, "eq")
    picker = driver.find_element(By.ID, "control-eq-preset")
    intervals, commands = [], []
    with CommandEvents(sock) as events, Probe() as probe:
        heard = events.heard
        print("watching", file=sys.stderr, flush=True)
        for name in presets.split(","):
            already = len(commands)
            wait(driver, lambda d: picker.get_attribute("value") == name, f"the page shows preset {name}")
            wait(driver, lambda d: len(heard) > already, f"the socket heard the command for {name}")
            intervals.append((heard[already][0], values_at(driver)))
            commands.append(heard[already][1])
            print(f"saw {name}", file=sys.stderr, flush=True)
    return dict(latencies=[end - start for start, end in intervals], probe=[probe.late(*span) for span in intervals],
                probe_overall=probe.summary(), commands=commands)


def scenario_transport(driver, url, sock):
    """The transport and what the page shows beside the meters: the title and artist of the playing file, its
    stream's buffer fill, a seek back to 1 s with the stream's slider, a chain picked for the chain node, and the
    loudness and spectrum drawn once their disclosures are opened; each until graphhost reports it back."""
    open_page(driver, url)

    def status():
        return control(sock, "status")["status"]

    def position():
        return next(s["position"] for s in status()["streams"] if s["id"] == "song")

    wait(driver, lambda d: d.find_element(By.ID, "now-playing").text != "", "the page shows what is playing")
    playing = driver.find_element(By.ID, "now-playing").text
    fill = driver.find_element(By.CSS_SELECTOR, '#streams .stream[data-node="song"] .fill').get_attribute("title")
    # Back to 1 s once it played past 3 s: only the seek can take the position below where it was.
    wait(driver, lambda d: position() > 3, "the stream played 3 s")
    before = position()
    seek = driver.find_element(By.ID, "seek-song")
    driver.execute_script("arguments[0].value = 1; arguments[0].dispatchEvent(new Event('change'))", seek)
    wait(driver, lambda d: position() < before - 1, "graphhost's stream went back to 1 s")
    after = position()
    select(driver, "fx/eq")
    picker = driver.find_element(By.ID, "control-fx_eq-chain")
    chains = [o.get_attribute("value") for o in picker.find_elements(By.TAG_NAME, "option")]
    from selenium.webdriver.support.ui import Select
    Select(picker).select_by_value("dry")
    wait(driver, lambda d: status()["chains"]["fx"] == "dry", "graphhost plays chain dry")
    for details in ("loudness-details", "spectrum-details"):
        driver.find_element(By.CSS_SELECTOR, f"#{details} summary").click()
    wait(driver, lambda d: "LUFS" in d.find_element(By.ID, "loudness").text, "the page shows the loudness")
    wait(driver, lambda d: int(d.find_element(By.ID, "spectrum-view").get_attribute("data-bands") or 0) > 0,
         "the page draws the spectrum")
    return dict(playing=playing, fill=fill, before=before, after=after, chains=chains,
                loudness=driver.find_element(By.ID, "loudness").text,
                bands=int(driver.find_element(By.ID, "spectrum-view").get_attribute("data-bands")))


def scenario_reconnect(driver, url, sock):
    """Closes the page's WebSocket and, in the same turn of the page's loop (the socket closing: its `state`),
    raises band.5 of the EQ by half a decibel with the arrow key on its handle; reports the commands graphhost heard
    from then on, the page's error line and, once the page is connected again, the points of the EQ's chart drawn
    again from graphhost's response."""
    open_page(driver, url)
    select(driver, "eq")

    def points():
        return int(driver.execute_script(
            "return document.querySelector('.eq-chart:not([data-before]) .response')?.dataset.points || 0"))

    wait(driver, lambda d: points() > 0, "the chart drew the response")
    with CommandEvents(sock) as events:
        state = driver.execute_script("""document.querySelector(".eq-chart").dataset.before = "true";
            const socket = window.graphhost.connection.socket;
            socket.close();
            document.querySelector('.eq-chart .handle[data-parameter="band.5"]')
                .dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowUp", bubbles: true }));
            return socket.readyState""")
        wait(driver, lambda d: any(c.startswith("set eq band.5") for _, c in events.heard),
             "graphhost heard the change")
        wait(driver, lambda d: d.find_element(By.ID, "connection").get_attribute("data-state") == "open",
             "the page connected again")
        wait(driver, lambda d: points() > 0, "the chart drew the response again")
        heard = [c for _, c in events.heard]
    return dict(state=state, heard=heard, error=driver.find_element(By.ID, "control-error").text, points=points())


# Run by the page from its start (before its own scripts): marks when, in ms on the page's clock (performance.now(),
# from the navigation's start), the socket first opened, the graph was drawn (and where: the top of its view in
# px), the output's meter first showed a level, the transport first showed the stream and the EQ's chart drew its
# response; it selects the EQ (as a click would) the moment its node is drawn.
FIRST_DRAW = """(() => {
  const marks = {};
  window.firstDraw = { marks, top: null };
  const mark = (name) => { if (!(name in marks)) marks[name] = performance.now(); };
  const top = () => document.querySelector("#graph-view").getBoundingClientRect().top;
  new MutationObserver(() => {
    if (document.querySelector('#connection[data-state="open"]')) mark("open");
    if (document.body?.dataset.ready === "true" && !("graph" in marks)) {
      mark("graph");
      window.firstDraw.top = top();
    }
    const eq = document.querySelector('#graph-view .node[data-id="eq"]');
    if (eq && !("selected" in marks)) {
      mark("selected");
      eq.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    }
    if (Number.isFinite(parseFloat(document.querySelector('#meters .meter[data-node="out"]')?.dataset.peak))) {
      mark("meters");
    }
    if (document.querySelector('#streams .stream[data-node="song"]')) mark("transport");
    if (Number(document.querySelector(".eq-chart .response")?.dataset.points) > 0) mark("chart");
  }).observe(document, { subtree: true, childList: true, attributes: true });
})();"""


def scenario_first_draw(driver, url):
    """Opens the page and reports when it drew in full, in ms from the navigation's start on the page's own clock
    (FIRST_DRAW's marks), with the navigation's own times (the document's response, DOMContentLoaded, load), and
    the top of the graph's view when it was first drawn and once the page drew in full."""
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FIRST_DRAW})
    driver.get(url)
    names = ["open", "graph", "meters", "transport", "chart"]

    def marks():
        return driver.execute_script("return window.firstDraw?.marks || {}")

    try:
        wait(driver, lambda d: all(n in marks() for n in names), "the page drew in full")
    except AssertionError as error:
        raise AssertionError(f"{error}; the page's marks (ms): {marks()}") from error
    navigation = driver.execute_script("""const n = performance.getEntriesByType("navigation")[0];
        return {response: n.responseEnd, interactive: n.domInteractive, loaded: n.loadEventEnd}""")
    return dict(marks=marks(), navigation=navigation, top=driver.execute_script("return window.firstDraw.top"),
                top_drawn=driver.execute_script(
                    "return document.querySelector('#graph-view').getBoundingClientRect().top"))


SCENARIOS = {"graph": scenario_graph, "band": scenario_band, "elsewhere": scenario_elsewhere,
             "meters": scenario_meters, "pages": scenario_pages, "phone": scenario_phone, "files": scenario_files,
             "peq": scenario_peq, "surfaces": scenario_surfaces,
             "lv2": scenario_lv2, "watch": scenario_watch,
             "transport": scenario_transport,
             "first-draw": scenario_first_draw, "reconnect": scenario_reconnect}


def print_console(driver):
    lines = console(driver)
    print(f"the page's console ({len(lines)} messages):", *lines, sep="\n  ", file=sys.stderr, flush=True)


def quit_quietly(driver):
    try:
        driver.quit()
    except Exception as error:
        print(f"Chromium's driver did not quit cleanly: {error}", file=sys.stderr, flush=True)


def alive(driver):
    """`driver` if its Chromium still answers, else a new Chromium (the old one ended as far as it can be)."""
    if driver is not None:
        try:
            driver.window_handles
            return driver
        except Exception as error:
            print(f"Chromium did not answer ({error}): starting another", file=sys.stderr, flush=True)
            quit_quietly(driver)
    return browser()


def fresh_tab(driver):
    """One blank tab, the others closed (and with them what a scenario set on them: a device's metrics, a script for
    each new document, a page still connected to graphhost), no cookie kept (one run's token cookie is sent to every
    port of 127.0.0.1)."""
    driver.switch_to.new_window("tab")
    tab = driver.current_window_handle
    for handle in driver.window_handles:
        if handle != tab:
            driver.switch_to.window(handle)
            driver.close()
    driver.switch_to.window(tab)
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})


def serve():
    """The browser tier's Chromium: scenarios as asked on standard input, one at a time (the module's doc). Each
    runs in the blank tab the one before left (`fresh_tab`, once its result is written, so the browser idles between
    tests)."""
    os.setpgrp()  # Chromium and its driver in this process's group, for the test to end them with it if it must

    def terminate(signal_number, frame):
        raise SystemExit(128 + signal_number)

    signal.signal(signal.SIGTERM, terminate)
    results, sys.stdout = sys.stdout, sys.stderr  # standard output carries the results alone
    driver, fresh = None, False
    try:
        for line in iter(sys.stdin.readline, ""):
            request = json.loads(line)
            number, name = request["id"], request["scenario"]
            print(f"scenario {number} {name}", file=sys.stderr, flush=True)
            started = time.monotonic()
            TOOLS_ENVIRONMENT.clear()
            TOOLS_ENVIRONMENT.update(os.environ)
            TOOLS_ENVIRONMENT.update(request.get("environment", {}))
            try:
                known = driver
                driver = alive(driver)
                if driver is known and not fresh:
                    fresh_tab(driver)
                console(driver)  # the messages before this scenario's
                fresh = False
                reply = {"result": SCENARIOS[name](driver, *request["arguments"])}
            except Exception as error:
                traceback.print_exc()
                if driver is not None:
                    print_console(driver)
                reply = {"error": f"{type(error).__name__}: {error}"}
            print(f"scenario {number} done in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
            results.write(json.dumps({"id": number, **reply}) + "\n")
            results.flush()
            try:
                fresh_tab(driver)
                fresh = True
            except Exception as error:
                print(f"the tabs were not closed after scenario {number}: {error}", file=sys.stderr, flush=True)
    finally:
        if driver is not None:
            quit_quietly(driver)


def run_one(name, *arguments):
    """One scenario in a Chromium of its own; its result printed as one JSON line."""
    driver = browser()
    try:
        print(json.dumps(SCENARIOS[name](driver, *arguments)), flush=True)
    except BaseException:
        print_console(driver)
        raise
    finally:
        driver.quit()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        run_one(*sys.argv[1:])
