"""Per-model stamps for make_models.py: DIR/<model>/1/.stamp holds the digest of
the generator scripts that wrote model.pt, so a model is rebuilt when its
generator changes and skipped (instantly) when it does not."""

import os


def stamp_path(model_dir):
    return os.path.join(model_dir, "1", ".stamp")


def is_fresh(model_dir, digest):
    if not os.path.exists(os.path.join(model_dir, "1", "model.pt")):
        return False
    try:
        with open(stamp_path(model_dir)) as f:
            return f.read() == digest
    except OSError:
        return False


def mark_fresh(model_dir, digest):
    with open(stamp_path(model_dir), "w") as f:
        f.write(digest)
