#!/usr/bin/python3
"""Valid but unusual images for the hardening tests: tests/fixtures/images/.

Every image here is a well-formed image that a client may send; the server must
answer each with 200 (tests/e2e/test_hardening.py), and the fuzz targets start
from them (tools/make_fuzz_seeds.py). Made with Debian's python3-pil (and a
few lines of PNG writing for what PIL cannot write: 16-bit RGB). Deterministic:
re-running writes the same bytes.

  /usr/bin/python3 tools/make_unusual_images.py [--out tests/fixtures/images]
"""
import argparse
import io
import os
import struct
import zlib

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def scene(w, h, seed=1):
    """Smooth colour gradients plus a few blocks: photo-like enough to classify."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    r = 128 + 100 * np.sin(x / max(w, 1) * 3.1 + seed)
    g = 128 + 100 * np.cos(y / max(h, 1) * 2.3 + seed)
    b = 128 + 60 * np.sin((x + y) / max(w + h, 1) * 5.0)
    a = np.stack([r, g, b], -1)
    for _ in range(4):
        x0, y0 = rng.integers(0, max(w - 2, 1)), rng.integers(0, max(h - 2, 1))
        a[y0:y0 + h // 4 + 1, x0:x0 + w // 4 + 1] = rng.integers(0, 256, 3)
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8), "RGB")


def png_chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def png16_rgb(img8):
    """A 16-bit RGB PNG whose high bytes are img8's pixels (low bytes vary)."""
    a = np.asarray(img8).astype(np.uint16)
    a16 = (a << 8) | ((a * 7 + 3) & 0xFF)
    h, w, _ = a16.shape
    raw = b"".join(b"\x00" + a16[y].astype(">u2").tobytes() for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
            + png_chunk(b"IDAT", zlib.compress(raw, 9)) + png_chunk(b"IEND", b""))


def exif(orientation):
    e = Image.Exif()
    e[0x0112] = orientation
    return e.tobytes()


def images():
    """name -> bytes."""
    base = scene(96, 72)
    out = {}

    def save(name, img, fmt, **kw):
        buf = io.BytesIO()
        img.save(buf, fmt, **kw)
        out[name] = buf.getvalue()

    save("progressive.jpg", base, "JPEG", quality=90, progressive=True)
    save("progressive_exif6.jpg", base.transpose(Image.Transpose.ROTATE_90), "JPEG",
         quality=90, progressive=True, exif=exif(6))
    # PIL's RGB->CMYK leaves K at 0; real CMYK files carry black in K.
    rgb = np.asarray(base).astype(np.int32)
    k = 255 - rgb.max(-1, keepdims=True)
    cmy = (255 - rgb - k) * 255 // np.maximum(255 - k, 1)
    save("cmyk.jpg", Image.fromarray(np.concatenate([cmy, k], -1).astype(np.uint8), "CMYK"),
         "JPEG", quality=92)
    save("gray.jpg", base.convert("L"), "JPEG", quality=92)
    save("subsampled_odd_17x13.jpg", scene(17, 13, 2), "JPEG", quality=85, subsampling=2)
    save("full_chroma.jpg", base, "JPEG", quality=95, subsampling=0)
    save("exif3.jpg", base.transpose(Image.Transpose.ROTATE_180), "JPEG", quality=90,
         exif=exif(3))
    save("exif8.jpg", base.transpose(Image.Transpose.ROTATE_270), "JPEG", quality=90,
         exif=exif(8))
    save("one_by_one.jpg", scene(1, 1, 3), "JPEG", quality=90)
    save("one_by_one.png", scene(1, 1, 4), "PNG")
    save("wide_300x2.png", scene(300, 2, 5), "PNG")
    save("palette.png", base.convert("P", palette=Image.Palette.ADAPTIVE, colors=16), "PNG")
    pal = base.convert("P", palette=Image.Palette.ADAPTIVE, colors=8)
    save("palette_transparent.png", pal, "PNG", transparency=0)
    save("bilevel.png", base.convert("1"), "PNG")
    save("gray16.png", Image.fromarray((np.asarray(base.convert("L")).astype(np.uint16) * 257),
                                       "I;16"), "PNG")
    out["rgb48.png"] = png16_rgb(base)
    rgba = base.copy()
    rgba.putalpha(128)
    save("rgba.png", rgba, "PNG")
    save("gray_alpha.png", rgba.convert("LA"), "PNG")
    save("bmp24.bmp", base, "BMP")
    save("bmp_palette.bmp", base.convert("P", palette=Image.Palette.ADAPTIVE, colors=16), "BMP")
    save("lossy.webp", base, "WEBP", quality=80)
    save("lossless.webp", base, "WEBP", lossless=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "images"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    made = images()
    # PIL's own RGB for the CMYK file (Adobe-inverted CMYK, Pillow's
    # cmyk2rgb): the decoder's unit test compares with it byte for byte.
    made["cmyk.jpg.rgb"] = Image.open(io.BytesIO(made["cmyk.jpg"])).convert("RGB").tobytes()
    for name, data in sorted(made.items()):
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(made)} images to {args.out}")


if __name__ == "__main__":
    main()
