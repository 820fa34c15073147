"""The .pt2 writer (src/fmt/dynamo/pt2.c) on a hand-built ATen program (tests/pt2/write_pt2.c):
y = (x * w + x).reshape(-1, 2, 2) and z = (x * w + x + c).reshape(x.shape[0] * 4 + 0), x [batch, 4]
with batch a symbol in [1, 64], w the parameter "layer.weight" = [1, 2, 3, 4], c a lifted constant
[10, 20, 30, 40], the flat size a SymInt from sym_size through _operator.mul and _operator.add.
torch.export.load reads the archive; the program runs for any batch in its range with the eager
values, refuses one outside it, names its parameter by its state-dict name, passes the verifier,
and decomposes further."""
import subprocess
from pathlib import Path

import pytest
import torch

from conftest import HFX_BIN

WRITE_PT2 = Path(HFX_BIN).parent / "write_pt2"
W = torch.tensor([1.0, 2.0, 3.0, 4.0])
C = torch.tensor([10.0, 20.0, 30.0, 40.0])


def _eager(x):
    return (x * W + x).reshape(-1, 2, 2), (x * W + x + C).reshape(x.shape[0] * 4)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    out = tmp_path_factory.mktemp("pt2") / "o"
    proc = subprocess.run([str(WRITE_PT2), str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return torch.export.load(str(out / "model.pt2"))


@pytest.mark.parametrize("batch", [1, 3, 64])
def test_program_runs_with_eager_values(program, batch):
    x = torch.randn(batch, 4, generator=torch.Generator().manual_seed(batch))
    got = program.module()(x)
    for g, w in zip(got, _eager(x)):
        torch.testing.assert_close(g, w, rtol=0, atol=0)


def test_program_keeps_its_range(program):
    with pytest.raises(Exception):
        program.module()(torch.randn(65, 4))


def test_program_names_parameters_and_verifies(program):
    assert list(program.state_dict) == ["layer.weight"]
    torch.testing.assert_close(program.state_dict["layer.weight"], W)
    assert [torch.equal(t, C) for t in program.constants.values()] == [True]
    program.validate()  # the verifier torch.export runs on its own programs
    decomposed = program.run_decompositions()
    x = torch.randn(2, 4)
    for g, w in zip(decomposed.module()(x), _eager(x)):
        torch.testing.assert_close(g, w)
