#!/usr/bin/env python3
"""Builds a TorchServe model archive (.mar) as torch-model-archiver does, for
inferd's tests and for users without TorchServe's tools (docs/TORCHSERVE.md).

The archive is a zip: the serialized model, the handler file, the model file,
the extra files, the config and requirements files at its root, and
MAR-INF/MANIFEST.json describing them. `--extra-entry NAME=FILE` adds a file
under any name (tests use it to write hostile entries such as ../x).

  python3 tools/make_mar.py --model-name m --serialized-file model.pt \
      --handler handler.py --extra-files index_to_name.json --export-path STORE
"""
import argparse
import datetime
import json
import os
import sys
import zipfile


def build(args):
    model = {"modelName": args.model_name, "modelVersion": args.version}
    files = []  # (name in the archive, path on disk)

    def add(path):
        name = os.path.basename(path)
        files.append((name, path))
        return name

    if args.serialized_file:
        model["serializedFile"] = add(args.serialized_file)
    if args.handler:
        model["handler"] = (add(args.handler.split(":")[0]) +
                            (":" + args.handler.split(":", 1)[1] if ":" in args.handler else "")
                            if os.path.isfile(args.handler.split(":")[0]) else args.handler)
    if args.model_file:
        model["modelFile"] = add(args.model_file)
    if args.config_file:
        model["configFile"] = add(args.config_file)
    if args.requirements_file:
        model["requirementsFile"] = add(args.requirements_file)
    for extra in filter(None, (args.extra_files or "").split(",")):
        add(extra)
    manifest = {
        "createdOn": datetime.datetime.now().strftime("%d/%m/%Y %H:%M:%S"),
        "runtime": "python",
        "model": model,
        "archiverVersion": "0.12.0",
    }
    os.makedirs(args.export_path, exist_ok=True)
    out = os.path.join(args.export_path, args.model_name + ".mar")
    if os.path.exists(out) and not args.force:
        sys.exit(f"{out} exists (use --force)")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, path in files:
            z.write(path, name)
        for entry in args.extra_entry or []:
            name, path = entry.split("=", 1)
            with open(path, "rb") as f:
                z.writestr(zipfile.ZipInfo(name), f.read())
        if not args.no_manifest:
            z.writestr("MAR-INF/MANIFEST.json", json.dumps(manifest, indent=2))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-name", required=True)
    p.add_argument("--serialized-file")
    p.add_argument("--handler", help="a handler file (handler.py[:function]) or a default handler name")
    p.add_argument("--model-file")
    p.add_argument("--extra-files", help="comma-separated files")
    p.add_argument("--config-file", help="model-config.yaml")
    p.add_argument("--requirements-file")
    p.add_argument("--version", default="1.0")
    p.add_argument("--export-path", required=True)
    p.add_argument("--force", action="store_true")
    p.add_argument("--extra-entry", action="append", help="NAME=FILE, any entry name (tests)")
    p.add_argument("--no-manifest", action="store_true", help="leave MAR-INF/MANIFEST.json out (tests)")
    print(build(p.parse_args()))


if __name__ == "__main__":
    main()
