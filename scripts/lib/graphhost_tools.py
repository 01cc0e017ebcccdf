"""What graphhost's Python scripts (bench, lv2-sweep, loopback-latency) share: the repository's paths, reading the
WAV files graphhost and PipeWire write (through libsndfile), a private headless PipeWire daemon
(scripts/pipewire-headless), waiting for a condition, and a module-filter-chain configuration."""
import array, ctypes, ctypes.util, os, shlex, subprocess, time
from typing import NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RELEASE_BINARY = os.path.join(ROOT, ".build", "release", "graphhost")
PIPEWIRE_HEADLESS = os.path.join(ROOT, "scripts", "pipewire-headless")


class Audio(NamedTuple):
    """A sound file's samples as 32-bit floats, interleaved."""
    rate: int
    channels: int
    samples: array.array

    def channel(self, index):
        return self.samples[index::self.channels]


class _SFInfo(ctypes.Structure):
    _fields_ = [("frames", ctypes.c_int64), ("samplerate", ctypes.c_int), ("channels", ctypes.c_int),
                ("format", ctypes.c_int), ("sections", ctypes.c_int), ("seekable", ctypes.c_int)]


_SFM_READ = 0x10
_sndfile = None


def _libsndfile():
    global _sndfile
    if _sndfile is None:
        name = ctypes.util.find_library("sndfile")
        if name is None:
            raise OSError("libsndfile is not installed (Debian: libsndfile1; scripts/setup installs it)")
        lib = ctypes.CDLL(name)
        lib.sf_open.restype, lib.sf_open.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_SFInfo)]
        lib.sf_readf_float.restype = ctypes.c_int64
        lib.sf_readf_float.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        lib.sf_strerror.restype, lib.sf_strerror.argtypes = ctypes.c_char_p, [ctypes.c_void_p]
        lib.sf_close.argtypes = [ctypes.c_void_p]
        _sndfile = lib
    return _sndfile


def read_audio(path):
    """The samples of a sound file libsndfile reads (WAV of any sample format, FLAC, Ogg), as floats; float files
    come out exactly as stored, NaN and Inf included. Raises OSError naming the file when it cannot be read."""
    lib, info = _libsndfile(), _SFInfo()
    handle = lib.sf_open(os.fsencode(path), _SFM_READ, ctypes.byref(info))
    if not handle:
        raise OSError(f"{path}: {lib.sf_strerror(None).decode(errors='replace')}")
    try:
        samples = array.array("f", bytes(4 * info.frames * info.channels))
        buffer, _ = samples.buffer_info()
        frames = lib.sf_readf_float(handle, buffer, info.frames)
        del samples[frames * info.channels:]
        return Audio(info.samplerate, info.channels, samples)
    finally:
        lib.sf_close(handle)


def wait_for(condition, timeout=20, interval=0.05):
    """Polls `condition` until it returns true (True) or `timeout` seconds have passed (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return False


class HeadlessPipeWire:
    """A private PipeWire daemon (dbus, pipewire, wireplumber and a null sink) run by scripts/pipewire-headless; `env`
    is the environment of a client of it. Use it in a `with` block, or call `stop`."""

    class Error(RuntimeError):
        pass

    def __init__(self, quantum=None):
        extra = {"PW_QUANTUM": str(quantum)} if quantum else {}
        started = subprocess.run([PIPEWIRE_HEADLESS, "start"], capture_output=True, text=True, env=dict(os.environ, **extra))
        if started.returncode != 0:
            raise HeadlessPipeWire.Error(f"scripts/pipewire-headless start failed: {started.stderr.strip()}")
        self.env = dict(os.environ)
        for line in started.stdout.splitlines():
            words = shlex.split(line)
            if len(words) == 2 and words[0] == "export":
                key, _, value = words[1].partition("=")
                self.env[key] = value
        self.dir = self.env["PW_TEST_DIR"]

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.stop()

    def _call(self, *args, check=True):
        done = subprocess.run([PIPEWIRE_HEADLESS, *args], env=self.env, capture_output=True, text=True)
        if check and done.returncode != 0:
            raise HeadlessPipeWire.Error(f"scripts/pipewire-headless {args[0]} failed: {done.stderr.strip()}")
        return done.stdout

    def add_sink(self, name):
        """A second null sink NAME, once the session manager knows it."""
        self._call("add-sink", self.dir, name)

    def xrun_start(self):
        """Starts pw-profiler; returns once it is connected."""
        self._call("xrun-start", self.dir)

    def xrun_count(self, *nodes):
        """Stops the profiler: (cycles, errors) for each node in order, (0, 0) for one it never saw."""
        lines = self._call("xrun-count", self.dir, *nodes, check=False).splitlines()
        return [tuple(int(v) for v in line.split()) for line in lines]

    def durations(self, node):
        """After `xrun_count`: how long the node ran in each cycle it ran, µs, in order."""
        return [float(v) for v in self._call("durations", self.dir, node).split()]

    def has_node(self, name):
        return f'node.name = "{name}"' in subprocess.run(["pw-cli", "ls", "Node"], env=self.env, capture_output=True,
                                                         text=True).stdout

    def stop(self):
        """Stops the daemons and removes their folder; a second call does nothing."""
        if self.dir:
            subprocess.run([PIPEWIRE_HEADLESS, "stop", self.dir], env=self.env)
            self.dir = None


def filter_chain_config(description, graph, capture, playback):
    """A `pipewire -c` configuration running PipeWire's module-filter-chain in a process of its own: `graph` is its
    filter.graph, `capture` and `playback` the properties of its virtual sink and of its output stream (SPA JSON)."""
    return f"""context.properties = {{ log.level = 0 }}
context.spa-libs = {{ audio.convert.* = audioconvert/libspa-audioconvert support.* = support/libspa-support }}
context.modules = [
  {{ name = libpipewire-module-rt args = {{ }} flags = [ ifexists nofail ] }}
  {{ name = libpipewire-module-protocol-native }}
  {{ name = libpipewire-module-client-node }}
  {{ name = libpipewire-module-adapter }}
  {{ name = libpipewire-module-filter-chain
    args = {{
      node.description = "{description}" media.name = "{description}"
      filter.graph = {{ {graph} }}
      audio.channels = 2 audio.position = [ FL FR ]
      capture.props = {{ {capture} }}
      playback.props = {{ {playback} }}
    }}
  }}
]
"""


def render_or_isolate(command, row):
    """Runs a `graphhost render` command for a plugin sweep's `row`. When it crashes, aborts or hangs graphhost (no
    end within 120 s), it runs again isolated (`--isolate-plugins`), as a user who cannot trust the plugin would run
    it, and row["crash"] says what happened in process; once a row is isolated, its later renders are too.
    row["restarts"] notes a helper that had to restart. Returns the CompletedProcess, or None when it did not end."""
    def attempt(arguments):
        try:
            return subprocess.run(arguments, capture_output=True, text=True, cwd=ROOT, timeout=120)
        except subprocess.TimeoutExpired:
            return None
    isolate = ["--isolate-plugins"] if row.get("crash") else []
    rendered = attempt(command + isolate)
    if not isolate and (rendered is None or rendered.returncode < 0 or rendered.returncode >= 128):
        row["crash"] = "hangs" if rendered is None else "crashes (" + _signal_name(rendered.returncode) + ")"
        rendered = attempt(command + ["--isolate-plugins"])
    if rendered is not None:
        row["restarts"] = row.get("restarts", False) or "the plugin restarts" in rendered.stderr
    return rendered


def crash_note(row):
    """How a sweep's table says that a plugin ran isolated, and why (empty when it ran in process)."""
    if not row.get("crash"):
        return ""
    return f"isolated: it {row['crash']} in process, the plugin's fault" + (
        "; restarted in its helper" if row.get("restarts") else "")


def _signal_name(returncode):
    import signal
    number = -returncode if returncode < 0 else returncode - 128
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
