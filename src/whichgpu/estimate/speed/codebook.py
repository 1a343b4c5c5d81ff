"""llama.cpp's lattice-codebook quants (IQ1_S ... IQ3_S) in decode: the lookup work per weight.

The matrix-vector kernels of these types decode each group of 8 weights by looking its index up
in a grid (2,048 entries for IQ1_S/IQ1_M, 256-512 for IQ2/IQ3) and applying signs and block
scales: integer and load work per weight that a card with little ALU per byte of bandwidth cannot
hide behind the read (https://github.com/ggml-org/llama.cpp/pull/8215). The weights decoded per
token are counted tensor by tensor from the file's recipe (models/gguf_recipe.py), so Unsloth's
dynamic files, whose attention and shared experts are K-quants, count only their IQ tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

from whichgpu.estimate import memo
from whichgpu.models.spec import ModelSpec

# ggml types whose matrix-vector kernels look weights up in a lattice codebook (IQ4_NL/IQ4_XS
# use a 16-entry table, as MXFP4 does: not counted here)
LATTICE_TYPES = frozenset({"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S"})
# the file types (and Unsloth's dynamic ones, "ud-iq1_s") whose recipes place such tensors
# (llama.cpp's K-quant and legacy recipes do not)
LATTICE_FTYPES = ("iq1", "iq2", "iq3")


@dataclass(frozen=True)
class Lattice:
    """A file's lattice-codebook tensors (without the token embedding, which is looked up,
    not multiplied): weights and bytes, dense and routed experts."""

    dense_weights: float = 0.0
    dense_bytes: float = 0.0
    expert_weights: float = 0.0
    expert_bytes: float = 0.0



def lattice_of(model: ModelSpec, ftype: str | None, imatrix: bool | None) -> Lattice:
    """The lattice-codebook tensors of ``model`` in the GGUF file type ``ftype`` (none for
    another format)."""
    if not ftype or not ftype.lower().removeprefix("ud-").startswith(LATTICE_FTYPES):
        return Lattice()  # only the IQ1-IQ3 file types place lattice tensors: no recipe read
    return _count(model, ftype, imatrix)


@memo.by_identity(size=64)  # the model by identity, the file type and imatrix by value
def _count(model: ModelSpec, ftype: str, imatrix: bool | None) -> Lattice:
    from whichgpu.models.gguf_recipe import recipe

    dw = db = ew = eb = 0.0
    for t in recipe(model, ftype, imatrix=imatrix).tensors:
        if t.type.upper() not in LATTICE_TYPES or t.tensor.category == "token_embd":
            continue
        if t.tensor.expert:
            ew, eb = ew + t.tensor.params, eb + t.bytes
        else:
            dw, db = dw + t.tensor.params, db + t.bytes
    return Lattice(dw, db, ew, eb)


def lookup_extra_s(lattice: Lattice, expert_share: float, ops_per_weight: float,
                   alu_rate: float, read_rate: float) -> float:
    """Seconds one decode step's lattice-codebook matrix-vector kernels take beyond reading
    their bytes: they take the longer of the read (bytes / ``read_rate``) and the lookups
    (weights x ``ops_per_weight`` / ``alu_rate``, FP32 FLOP-equivalents); ``expert_share`` of
    the routed experts is touched."""
    if not ops_per_weight or not alu_rate or not read_rate:
        return 0.0
    weights = lattice.dense_weights + lattice.expert_weights * expert_share
    read = (lattice.dense_bytes + lattice.expert_bytes * expert_share) / read_rate
    return max(0.0, weights * ops_per_weight / alu_rate - read)
