"""src/fmt/aten.def, the ATen operators hfx's torch-side formats emit with each argument's name,
kind (positional or keyword-only), type and whether it has a default, held line by line to the
installed torch's own schemas (`torch.ops.aten.<op>.<overload>._schema`): the serialized
programs name arguments from this table, so it must be torch's, not a copy typed by hand."""
import re
from pathlib import Path

import pytest
import torch

DEF = Path(__file__).resolve().parents[2] / "src" / "fmt" / "aten.def"


def _entries():
    text = re.sub(r"/\*.*?\*/", "", DEF.read_text(), flags=re.S)
    out = []
    for m in re.finditer(r"X\((\w+),((?:\s*\"[^\"]*\"\s*,?)+)\)", text):
        parts = re.findall(r"\"([^\"]*)\"((?:\s*\"[^\"]*\")*)", m.group(2))
        strings = []
        for first, rest in parts:  # adjacent literals concatenate, as in C
            strings.append(first + "".join(re.findall(r"\"([^\"]*)\"", rest)))
        out.append((m.group(1), *strings))
    return out


ENTRIES = _entries()


def test_the_table_parses():
    assert len(ENTRIES) >= 40 and all(len(e) == 5 for e in ENTRIES), ENTRIES[:3]
    assert len({e[0] for e in ENTRIES}) == len(ENTRIES), "ids are unique"


@pytest.mark.parametrize("entry", ENTRIES, ids=[e[0] for e in ENTRIES])
def test_schema_matches_the_installed_torch(entry):
    _, op, overload, args, returns = entry
    schema = getattr(getattr(torch.ops.aten, op), overload)._schema
    want = [("*" if a.kwarg_only else "") + f"{a.name}:{a.type}" + ("=" if a.has_default_value() else "")
            for a in schema.arguments]
    assert args.split() == want, f"aten::{op}.{overload}"
    assert returns.split() == [str(r.type) for r in schema.returns], f"aten::{op}.{overload}"


def _module_entries():
    """aten.c's rows of other namespaces' operators (torch.ops.<namespace>), as (id, namespace, op, overload, args)."""
    text = re.sub(r"/\*.*?\*/", "", (DEF.parent / "aten.c").read_text(), flags=re.S)
    out = []
    for m in re.finditer(r"\[(HFX_\w+)\]\s*=\s*\{((?:\s*\"[^\"]*\"\s*,?)+)\}", text):
        strings = [s for s in re.findall(r"\"([^\"]*)\"", m.group(2))]
        if strings[-1].startswith("torch.ops."):
            op, overload, *middle, _returns, module = strings
            out.append((m.group(1), module.removeprefix("torch.ops."), op, overload, "".join(middle)))
    return out


MODULE_ENTRIES = _module_entries()


@pytest.mark.parametrize("entry", MODULE_ENTRIES, ids=[e[0] for e in MODULE_ENTRIES])
def test_other_namespaces_match_the_installed_torch(entry):
    """The quantized_decomposed row (a quantized program's dequantize) against its registered schema."""
    import torch.ao.quantization.fx._decomposed  # noqa: F401 (registers quantized_decomposed)
    _, namespace, op, overload, args = entry
    schema = getattr(getattr(getattr(torch.ops, namespace), op), overload)._schema
    want = [("*" if a.kwarg_only else "") + f"{a.name}:{a.type}" + ("=" if a.has_default_value() else "")
            for a in schema.arguments]
    assert args.split() == want, f"{namespace}::{op}.{overload}"


def test_other_namespaces_are_found():
    assert [e[0] for e in MODULE_ENTRIES] == ["HFX_QD_DEQUANTIZE_PER_CHANNEL", "HFX_QD_DEQUANTIZE_PER_CHANNEL_GROUP"]
