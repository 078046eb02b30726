"""A handler that leaks: {"hog_mib": N} allocates N MiB, writes every page (so
that it is resident, not just reserved) and keeps it for good, as a leaking
handler would; anything else answers {"ok": true, "held_mib": ...}."""
HELD = []


def handle(data, context):
    if data is None:  # initialize, as TorchServe calls a module-level handle first
        return None
    out = []
    for row in data:
        body = row.get("body")
        if isinstance(body, dict) and body.get("hog_mib"):
            HELD.append(b"\x01" * (int(body["hog_mib"]) << 20))
        out.append({"ok": True, "held_mib": sum(len(b) for b in HELD) >> 20})
    return out
