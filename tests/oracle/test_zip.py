"""The zip writer (src/io/zip.c) that .pt2 archives will be written with: archives written by
tests/zip/write_zip.c read back by Python's zipfile (names, bytes, CRC-32) and by PyTorch's own
archive reader (torch._C.PyTorchFileReader, what torch.export.load and torch.load use), with
every entry's data at a multiple of 64 as PyTorch's writer places it."""
import struct
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

from conftest import HFX_BIN

WRITE_ZIP = Path(HFX_BIN).parent / "write_zip"


def _expected(n, seed):
    return ((np.arange(n, dtype=np.uint64) * 31 + seed) % 256).astype(np.uint8).tobytes()


def _write(out, entries, chunk=1000):
    args = [str(WRITE_ZIP), str(out), "a.zip", str(chunk)] + [f"{name}:{n}:{seed}" for name, n, seed in entries]
    args.append("archive/.data/version=3\n")  # what PyTorch's reader looks for first
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return out / "a.zip"


ENTRIES = [("archive/data/weights/weight_0", 8192, 1), ("archive/data/weights/weight_1", 4093, 7),
           ("archive/empty", 0, 0), ("archive/models/model.json", 12345, 3), ("archive/byteorder", 6, 9),
           ("archive/data/unicode-ünï", 100, 5)]


def test_zip_reads_back_in_python_and_torch(tmp_path):
    path = _write(tmp_path / "o", ENTRIES)
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None  # every CRC-32 checks
        assert [i.filename for i in z.infolist()] == [e[0] for e in ENTRIES] + ["archive/.data/version"]
        raw = path.read_bytes()
        for (name, n, seed), info in zip(ENTRIES, z.infolist()[:len(ENTRIES)]):
            assert info.compress_type == zipfile.ZIP_STORED
            assert z.read(name) == _expected(n, seed), name
            name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, name
    import torch
    reader = torch._C.PyTorchFileReader(str(path))
    for name, n, seed in ENTRIES:
        record = name.split("/", 1)[1]  # PyTorch's reader names records below the root folder
        assert bytes(reader.get_record(record)) == _expected(n, seed), name


@pytest.mark.parametrize("chunk", [1, 64, 4096, 1 << 20])
def test_zip_crc_spans_chunks(tmp_path, chunk):
    """The CRC-32 runs over the bulk writer's chunks in order, whatever their size."""
    path = _write(tmp_path / "o", [("r/x", 10007, 11), ("r/y", 300, 2)], chunk=chunk)
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
        assert z.read("r/x") == _expected(10007, 11)
