#!/usr/bin/env python3
"""Downloads one package's tarball from the npm registry, without npm.

  npm_tarball.py NAME@VERSION DIR   -> writes DIR/NAME-VERSION.tgz, prints its path

Reads the version's metadata (registry.npmjs.org/NAME/VERSION, or $NPM_REGISTRY),
fetches dist.tarball and checks it against dist.integrity (sha512), as npm does.
Exits 1 with a one-line reason when the registry cannot be reached within
--timeout seconds, so that a machine without it (some CI) gives up at once
instead of installing npm and waiting out its retries.
"""
import argparse
import base64
import hashlib
import json
import os
import sys
import urllib.request


def fetch(url, timeout):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec", help="NAME@VERSION")
    ap.add_argument("dir")
    ap.add_argument("--timeout", type=float, default=15)
    args = ap.parse_args()
    name, _, version = args.spec.rpartition("@")
    if not name or not version:
        sys.exit(f"npm_tarball: {args.spec}: expected NAME@VERSION")
    registry = os.environ.get("NPM_REGISTRY", "https://registry.npmjs.org").rstrip("/")
    try:
        meta = json.loads(fetch(f"{registry}/{name}/{version}", args.timeout))
        dist = meta["dist"]
        data = fetch(dist["tarball"], args.timeout * 20)
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"npm_tarball: {args.spec} from {registry}: {e}")
    algo, _, digest = dist.get("integrity", "").partition("-")
    if algo != "sha512" or base64.b64decode(digest) != hashlib.sha512(data).digest():
        sys.exit(f"npm_tarball: {args.spec}: the tarball does not match its integrity "
                 f"({dist.get('integrity', 'none given')})")
    path = os.path.join(args.dir, f"{name.replace('/', '-')}-{version}.tgz")
    with open(path, "wb") as f:
        f.write(data)
    print(path)


if __name__ == "__main__":
    main()
