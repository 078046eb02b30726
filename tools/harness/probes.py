"""What a bench reads from the machine: a process tree's CPU time, /metrics, the load average."""

import os
import re
import urllib.request

HZ = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
SAMPLE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+(\S+)")
LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')


def _stat(pid):
    """The fields of /proc/PID/stat after the command name; None once the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def tree_stats(pid):
    """`pid` and every live process below it (a peer's workers), summed: processes, minor and
    major page faults, resident bytes, CPU seconds (utime + stime); the faults and CPU of
    children they already reaped are included (c* fields). Zeros when `pid` is gone."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(entry)
            if fields:
                children.setdefault(int(fields[1]), []).append((int(entry), fields))
    stats = {"procs": 0, "minflt": 0, "majflt": 0, "rss_bytes": 0, "cpu_s": 0.0}
    root = _stat(pid)
    todo = [(int(pid), root)] if root else []
    ticks = 0
    while todo:
        p, f = todo.pop()
        stats["procs"] += 1
        stats["minflt"] += int(f[7]) + int(f[8])
        stats["majflt"] += int(f[9]) + int(f[10])
        ticks += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
        stats["rss_bytes"] += int(f[21]) * PAGE
        todo.extend(children.get(p, []))
    stats["cpu_s"] = ticks / HZ
    return stats


def cpu_seconds(pid):
    """User + system seconds of `pid`'s process tree (tree_stats)."""
    return tree_stats(pid)["cpu_s"]


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def parse(text):
    """Prometheus text -> [(name, {label: value}, float)]."""
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if m:
            labels = dict(LABEL.findall(m.group(2) or ""))
            samples.append((m.group(1), labels, float(m.group(3))))
    return samples


def scrape(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return parse(r.read().decode("utf-8", "replace"))


def parse_series(text):
    """'NAME' or 'NAME{label="value",...}' (quotes optional) -> (NAME, {label: value})."""
    m = re.match(r"^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?$", text.strip())
    if not m:
        raise ValueError(f"not a metric series: {text!r}")
    pairs = (kv.split("=", 1) for kv in (m.group(2) or "").split(",") if kv.strip())
    return m.group(1), {k.strip(): v.strip().strip('"') for k, v in pairs}


def metric(samples, name, **labels):
    """The sum of the samples called `name` whose labels include `labels`."""
    return sum(v for n, lab, v in samples
               if n == name and all(lab.get(k) == str(want) for k, want in labels.items()))
