"""Tiny GGUF files written with gguf.GGUFWriter (tests of the GGUF reader and of memory terms
read from a GGUF file)."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

H, FF, VOCAB, LAYERS = 64, 128, 100, 2


def q8(rows: int, cols: int) -> np.ndarray:
    data = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    return gguf.quants.quantize(data, gguf.GGMLQuantizationType.Q8_0)


def write_gguf(path: Path, *, head: bool = False, experts: int = 0,
               skip_key: str | None = None) -> Path:
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny-test")
    for key, value in (("block_count", LAYERS), ("context_length", 256),
                       ("embedding_length", H), ("feed_forward_length", FF)):
        if key != skip_key:
            getattr(w, f"add_{key}")(value)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    w.add_token_list([f"t{i}" for i in range(VOCAB)])
    if experts:
        w.add_expert_count(experts)
        w.add_expert_used_count(2)
    w.add_tensor("token_embd.weight", np.zeros((VOCAB, H), dtype=np.float16))
    for i in range(LAYERS):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(H, dtype=np.float32))
        w.add_tensor(p + "attn_q.weight", q8(H, H), raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        w.add_tensor(p + "attn_k.weight", q8(32, H), raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        w.add_tensor(p + "attn_v.weight", q8(32, H), raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        w.add_tensor(p + "attn_output.weight", q8(H, H),
                     raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        w.add_tensor(p + "ffn_norm.weight", np.ones(H, dtype=np.float32))
        if experts:
            w.add_tensor(p + "ffn_gate_inp.weight", np.zeros((experts, H), dtype=np.float32))
            for part, shape in (("gate", (experts, FF, H)), ("up", (experts, FF, H)),
                                ("down", (experts, H, FF))):
                w.add_tensor(p + f"ffn_{part}_exps.weight", np.zeros(shape, dtype=np.float16))
        else:
            w.add_tensor(p + "ffn_gate.weight", q8(FF, H),
                         raw_dtype=gguf.GGMLQuantizationType.Q8_0)
            w.add_tensor(p + "ffn_up.weight", q8(FF, H), raw_dtype=gguf.GGMLQuantizationType.Q8_0)
            w.add_tensor(p + "ffn_down.weight", q8(H, FF),
                         raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    w.add_tensor("output_norm.weight", np.ones(H, dtype=np.float32))
    if head:
        w.add_tensor("output.weight", np.zeros((VOCAB, H), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
